// SimOptions: everything one npac-soa-sim run is told on the command line, as plain
// values, and the parsers for the textual forms the CLI accepts ("50ms", "2=50ms",
// "soa-management,notifications", "now-10m"). main.cc fills it; Simulation reads it.
//
// Parsers return Result<T> (common/status.h): a value, or a kBadOption Status whose
// message is a sentence naming what was wrong. They run once at start-up.
//
// Threading: plain values and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmip/ber.h"
#include "cmip/npac_bind.h"
#include "common/status.h"

namespace npac::soasim {

using Millis = std::chrono::milliseconds;

// How an association is dropped by --drop-after.
enum class DropMode {
  kTcp,    // close the TCP connection with SO_LINGER 0 (RST): no release, no ABRT. The
           // peer's stack may discard what it had not read yet, answers included.
  kClose,  // close the TCP connection normally (FIN): no release, no ABRT
  kAbort,  // send an ACSE ABRT (source acse-service-user), then close
};

// Where the answer to an NPAC request is written (--answer-on).
enum class AnswerOn {
  kSame,  // on the association the request arrived on
  kNext,  // on the next association of the run that is up, round robin from the one it
          // arrived on (NANC 353 7.b.iv: a response may come back on any association)
};

// What --send-requests sends.
enum class RequestKind { kAction, kCreate };

// What one association does, from --from/--delay/--silent/--drop-after (1-based index).
struct AssociationPlan {
  std::string local_address;  // bound before connect, so the NPAC sees this NSAP
  Millis answer_delay{0};
  bool silent = false;                 // never answer anything, heartbeats included
  std::optional<uint64_t> drop_after;  // drop after this many received messages
};

struct RecoveryPlan {
  bool enabled = false;
  bool all_unacknowledged = true;  // SWIM; otherwise the time range below
  cmip::GeneralizedTime from, to;
  // --recovery-hold: once every recovered message has arrived, wait this long before
  // lnpRecoveryComplete (the provider's processing time). The NPAC must hold what it gets
  // meanwhile. 0 sends it at once; --duration and a signal still end the run.
  Millis hold{0};
};

// One NPAC address (--npac HOST:PORT).
struct NpacAddress {
  std::string host;
  uint16_t port = 0;
  std::string text() const { return std::string(host).append(":").append(std::to_string(port)); }
};

// What the simulator does when a bind fails or an association is lost (--npac given more
// than once, or --rebind-attempts): the NPAC runs from two sites, and a provider that
// loses one, or is refused by one, binds to the next address it knows.
struct RebindPolicy {
  bool enabled = false;
  uint32_t attempts = 10;  // binds in a row that may fail, the first one included
  Millis delay{500};       // before each bind after the first
};

struct SimOptions {
  // --npac, in the order given; never empty (default 127.0.0.1:10102).
  std::vector<NpacAddress> npac_addresses{NpacAddress{"127.0.0.1", 10102}};
  RebindPolicy rebind;

  // The bind (docs/npac-bind.asn1 LnpAccessControl).
  std::string spid;
  cmip::SystemType system_type = cmip::SystemType::kSoa;
  std::string user_id = "npac-soa-sim";
  std::string key_file;
  int64_t key_list = 1;
  int64_t key_id = 1;
  cmip::AssociationFunctionMask functions;
  std::optional<uint64_t> sequence;  // first sequence number; default time-based
  // Added to the clock for the bind's departure time (--departure-offset): rehearses the
  // NPAC's departure_time_window rule with a skewed clock. Signed; 0 sends "now".
  Millis departure_offset{0};
  // The NPAC's side of mutual authentication (docs/SOA-SIM.md "Verifying the NPAC"): the
  // NPAC public keys this provider installed (--npac-key FILE, repeatable, each file one
  // or more PEM public keys), or --no-npac-verify for rehearsals. One of them is required.
  std::vector<std::string> npac_key_files;
  bool no_npac_verify = false;

  std::vector<AssociationPlan> associations;
  DropMode drop_mode = DropMode::kTcp;
  AnswerOn answer_on = AnswerOn::kSame;
  RecoveryPlan recovery;
  uint64_t send_requests = 0;
  RequestKind request_kind = RequestKind::kAction;
  // --send-raw-invoke HEX: ROSE Invokes sent as given on association 1 once bound, each
  // waiting for its reply (rehearses what the NPAC answers to an operation or argument it
  // cannot decode). Checked at start-up to be a ROSE Invoke with a present invoke id.
  std::vector<std::vector<uint8_t>> raw_invokes;

  std::optional<uint64_t> expect;
  Millis duration{std::chrono::seconds(60)};
  Millis bind_timeout{std::chrono::seconds(5)};
  Millis release_timeout{std::chrono::seconds(2)};
  bool keep_going = false;    // continue with the associations that bound
  bool keep_running = false;  // goals met: keep answering until --duration or a signal
  std::string report_file;    // empty: stdout
};

// "50ms", "2s", "1m", "1h30m" (common/duration.h) or a bare number of milliseconds.
Result<Millis> parseDuration(std::string_view text);
// "-10m", "+2h", "30s": parseDuration with an optional sign (none means +).
Result<Millis> parseSignedDuration(std::string_view text);
// "2=50ms" → {2, "50ms"}; "50ms" → {0, "50ms"} (0 = every association).
Result<std::pair<size_t, std::string>> parseIndexed(std::string_view text);
// "soa-management,notifications": names of common/vocabulary.h ('_' or '-'), separated
// by ',' or by '|' as the admin API prints an association's functions.
Result<cmip::AssociationFunctionMask> parseFunctions(std::string_view text);
// "soa", "lsms", "soa-and-lsms".
Result<cmip::SystemType> parseSystemType(std::string_view text);
// "20261129150000Z", "now", "now-10m" (relative to `now_millis`, Unix milliseconds).
Result<cmip::GeneralizedTime> parseTime(std::string_view text, int64_t now_millis);
// "a1 0b 02 01 07 …" or "a10b0201…": hex octets, blanks or ':' allowed between them.
Result<std::vector<uint8_t>> parseHex(std::string_view text);
// "127.0.0.1:10102" or "host:port": a non-empty host of letters, digits, '.', '-', '_'
// (a name or an IPv4 address) and a port 1-65535.
Result<std::pair<std::string, uint16_t>> parseHostPort(std::string_view text);

}  // namespace npac::soasim
