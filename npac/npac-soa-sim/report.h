// RunReport: what one npac-soa-sim run saw, and its JSON form (docs/SOA-SIM.md "The
// report"). Simulation fills the records as events happen; toJson() is called once at
// the end, and the document goes to stdout or --report FILE.
//
// `received` is the exact order in which the NPAC's invokes arrived, over every
// association (heartbeats are counted per association but left out of the order, so the
// order of real messages does not depend on timing).
//
// Threading: plain values, filled from the simulation's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npac::soasim {

struct ReceivedRecord {
  uint64_t seq = 0;          // 1-based arrival order over all associations
  size_t association = 0;    // 1-based, the order of --from
  std::string local_address;
  std::string npac;  // the NPAC address of the association it arrived on
  int32_t invoke_id = 0;
  std::string operation;
  std::string type;          // event / action type OID, or the object class
  std::string info_hex;
  bool retransmission = false;          // same invoke id and argument seen before
  std::optional<uint64_t> duplicate_of;  // seq of the first copy
  bool during_recovery = false;
  bool answered = false;  // our answer was written
  size_t answered_on = 0;  // the association it was written on (0: not answered)
  std::string decode_error;
  int64_t at_ms = 0;  // since the run started (informative)
};

struct RequestRecord {
  int32_t invoke_id = 0;
  std::string operation;
  size_t sent_on = 0;
  std::optional<size_t> reply_on;  // may differ from sent_on (NANC 353 7.b.iv)
  std::string reply;               // "returnResult", "returnError", "reject", or "" (none yet)
  std::string purpose;             // "request", "raw-invoke", "recovery-request", "recovery-complete"
  uint64_t resent = 0;             // sent again after a re-bind (the first association was lost)
  // When the reply is a ROSE Reject: its problem family ("general", "invoke",
  // "returnResult", "returnError"), value and X.880 name.
  std::string reject_kind;
  std::optional<int32_t> reject_problem;
  std::string reject_name;
  // When the reply is a ROSE ReturnError: its X.711 error code and name.
  std::optional<int32_t> error_code;
  std::string error_name;
};

struct BindRecord {
  bool attempted = false;
  bool accepted = false;
  std::string outcome;  // accepted, rejected, connect-failed, timeout, aborted, protocol-error
  std::optional<int32_t> result;             // AARE result
  std::string diagnostic_source;             // acse-service-user / acse-service-provider
  std::optional<int32_t> diagnostic;
  std::string diagnostic_name;
  // The NPAC's exact reason, when its AARE carries an LnpBindRefusal
  // (cmip/npac_bind_refusal.h): the code ("key-revoked") and the sentence.
  std::string refusal_reason;
  std::string refusal_text;
  // Whether the accepting AARE's NPAC access control verified with an installed NPAC
  // key: nullopt when not checked (--no-npac-verify, or the bind was not accepted).
  std::optional<bool> npac_verified;
  std::string npac_reason;  // why not, when false
  // The verified access control: the NPAC's system id, key and sequence number.
  std::string npac_system_id;
  int64_t npac_key_list = 0;
  int64_t npac_key_id = 0;
  int64_t npac_sequence = 0;
  std::string detail;
};

// One bind of an association: with re-binding there may be several.
struct BindAttemptRecord {
  std::string npac;     // host:port
  std::string outcome;  // as BindRecord::outcome
  std::string detail;
  int64_t at_ms = 0;  // since the run started
};

struct AssociationRecord {
  size_t index = 0;
  std::string local_address;
  uint16_t local_port = 0;
  std::string nsap;  // RFC 1277 NSAP of local_address, as the NPAC derives it
  uint64_t sequence_number = 0;
  std::string departure_time;  // the bind's, YYYYMMDDHHMMSSZ (shifted by --departure-offset)
  bool recovery_mode = false;
  int64_t answer_delay_ms = 0;
  bool silent = false;
  std::optional<uint64_t> drop_after;
  std::string npac;  // the NPAC address of its last bind
  BindRecord bind;   // the last bind
  std::vector<BindAttemptRecord> binds;  // every bind, in order
  uint64_t rebinds = 0;  // times it was lost and re-bound (or tried to)
  uint64_t received = 0;   // NPAC invokes, heartbeats excluded
  uint64_t answered = 0;
  uint64_t heartbeats = 0;
  uint64_t requests_sent = 0;
  uint64_t replies_received = 0;  // replies to our requests that arrived here
  uint64_t unmatched_replies = 0;
  std::string end_reason;  // released, released-by-peer, aborted-by-peer, dropped-tcp, ...
  std::string end_detail;
};

struct RecoveryRecord {
  bool requested = false;
  std::string range;  // "all-unacknowledged" or "FROM..TO"
  std::optional<int64_t> message_count;
  uint64_t received_during = 0;
  int64_t hold_ms = 0;                  // --recovery-hold
  uint64_t received_while_holding = 0;  // NPAC invokes in the hold: the NPAC should send none
  bool completed = false;
  std::string error;
};

struct RunReport {
  std::string npac;                         // the first --npac
  std::vector<std::string> npac_addresses;  // every --npac, in order
  std::vector<std::string> bound_to;        // the addresses a bind was accepted at, first time order
  std::string spid;
  std::string system_type;
  std::string functions;
  std::string key_algorithm;
  // Wall-clock time the run started (each record's at_ms counts from it), so the
  // arrivals of several runs can be laid on one time line.
  int64_t started_at_unix_ms = 0;
  std::optional<uint64_t> expect;
  uint64_t send_requests = 0;
  std::vector<AssociationRecord> associations;
  std::vector<ReceivedRecord> received;
  std::vector<RequestRecord> requests;
  std::optional<RecoveryRecord> recovery;
  std::string stop_reason;
  bool goals_met = false;
  int exit_code = 0;
  std::vector<std::string> errors;

  nlohmann::ordered_json toJson() const;
};

}  // namespace npac::soasim
