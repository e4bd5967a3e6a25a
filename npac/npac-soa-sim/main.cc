// npac-soa-sim: plays one service provider's SOA or LSMS against npacd — binds K
// associations from chosen local addresses with a signed NPAC bind, answers the NPAC,
// drops, recovers and sends requests on cue, and prints what it saw as JSON.
// `npac-soa-sim keygen` makes the provider's key pair. docs/SOA-SIM.md is the manual.
#include <sys/stat.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cmip/rose.h"
#include "npac/npac-soa-sim/simulation.h"
#include "npac/version.h"

using namespace npac::soasim;

namespace {

constexpr const char* kExitCodes =
    "Exit codes: 0 goals met (or none set); 1 internal error; 2 usage error; 3 key file "
    "unreadable or unusable; 4 cannot connect / bind timed out / local address unusable; "
    "5 bind rejected by the NPAC (AARE diagnostic on stderr); 6 goals not met at --duration "
    "or on a signal; 7 every association ended before the goals were met; 8 recovery "
    "sequence failed; 9 the NPAC did not authenticate itself (its access control in the "
    "accepting AARE is missing, not npac, or verifies with no --npac-key); 10 re-bind attempts exhausted (--rebind-attempts binds in a row "
    "failed, over every --npac address).";

// --departure-offset is for skews an operator could meet, not for dates far off.
constexpr Millis kMaxDepartureOffset = std::chrono::hours(24 * 366);

struct RawOptions {
  std::vector<std::string> npac;  // empty: 127.0.0.1:10102
  std::string rebind_attempts, rebind_delay;
  std::string system_type = "soa";
  std::string functions;
  std::vector<std::string> from, delay, drop_after, raw_invokes;
  std::vector<size_t> silent;
  std::string drop_mode = "tcp";
  std::string answer_on = "same";
  std::string request_kind = "action";
  bool recover_all = false;
  std::string recover_from, recover_to;
  std::string recovery_hold;
  std::string departure_offset = "0";
  std::string duration = "60s", bind_timeout = "5s", release_timeout = "2s";
  std::string log_level = "info";
};

std::string defaultFunctions(npac::cmip::SystemType t) {
  switch (t) {
    case npac::cmip::SystemType::kLsms: return "lsms-data-download,notifications";
    case npac::cmip::SystemType::kSoaAndLsms: return "soa-management,lsms-data-download,notifications";
    default: return "soa-management,notifications";
  }
}

// Fills `o` from the raw strings; returns an error sentence or "".
std::string resolve(const RawOptions& raw, SimOptions& o) {
  if (!raw.npac.empty()) {
    o.npac_addresses.clear();
    for (const std::string& text : raw.npac) {
      auto hp = parseHostPort(text);
      if (!hp.isOk()) return "--npac: " + hp.status().message();
      o.npac_addresses.push_back(NpacAddress{hp->first, hp->second});
    }
  }
  // Two sites known, or attempts asked for: a failed bind or a lost association moves to
  // the next address. One address and no --rebind-attempts: a failure ends the run.
  o.rebind.enabled = o.npac_addresses.size() > 1 || !raw.rebind_attempts.empty();
  if (!raw.rebind_attempts.empty()) {
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(raw.rebind_attempts.data(), raw.rebind_attempts.data() + raw.rebind_attempts.size(), n);
    if (ec != std::errc() || end != raw.rebind_attempts.data() + raw.rebind_attempts.size() || n == 0 || n > 1000000) {
      return "--rebind-attempts: '" + raw.rebind_attempts + "' is not a count 1-1000000";
    }
    o.rebind.attempts = static_cast<uint32_t>(n);
  }
  if (!raw.rebind_delay.empty()) {
    auto d = parseDuration(raw.rebind_delay);
    if (!d.isOk()) return "--rebind-delay: " + d.status().message();
    o.rebind.delay = d.value();
  }
  if (o.spid.size() != npac::cmip::kSystemIdLength) return "--spid must be exactly 4 characters (e.g. 0001)";
  if (o.key_file.empty()) return "--key FILE is required (make one with: npac-soa-sim keygen --out sp.pem)";
  if (o.npac_key_files.empty() && !o.no_npac_verify) {
    return "--npac-key FILE is required: the NPAC's public key, to verify the NPAC's signature in its "
           "bind response (export it with: npacctl npac-key export LIST KEY --out npac.pub.pem); "
           "--no-npac-verify skips the check, for rehearsals only";
  }
  if (!o.npac_key_files.empty() && o.no_npac_verify) return "--npac-key and --no-npac-verify exclude each other";
  auto st = parseSystemType(raw.system_type);
  if (!st.isOk()) return "--system-type: " + st.status().message();
  o.system_type = st.value();
  auto fn = parseFunctions(raw.functions.empty() ? defaultFunctions(o.system_type) : raw.functions);
  if (!fn.isOk()) return "--functions: " + fn.status().message();
  o.functions = fn.value();

  std::vector<std::string> from = raw.from.empty() ? std::vector<std::string>{"127.0.0.1"} : raw.from;
  for (const std::string& a : from) o.associations.push_back(AssociationPlan{a, Millis(0), false, std::nullopt});
  const size_t k = o.associations.size();
  auto checkIndex = [&](size_t i, const char* flag) -> std::string {
    return i > k ? std::string(flag) + ": association " + std::to_string(i) + " does not exist (there are " +
                       std::to_string(k) + " --from)"
                 : "";
  };
  for (const std::string& d : raw.delay) {
    auto ix = parseIndexed(d);
    if (!ix.isOk()) return "--delay: " + ix.status().message();
    if (auto e = checkIndex(ix->first, "--delay"); !e.empty()) return e;
    auto ms = parseDuration(ix->second);
    if (!ms.isOk()) return "--delay: " + ms.status().message();
    for (size_t i = 0; i < k; ++i)
      if (ix->first == 0 || ix->first == i + 1) o.associations[i].answer_delay = ms.value();
  }
  for (size_t s : raw.silent) {
    if (s == 0) return "--silent: association indexes start at 1";
    if (auto e = checkIndex(s, "--silent"); !e.empty()) return e;
    o.associations[s - 1].silent = true;
  }
  for (const std::string& d : raw.drop_after) {
    auto ix = parseIndexed(d);
    if (!ix.isOk()) return "--drop-after: " + ix.status().message();
    if (auto e = checkIndex(ix->first, "--drop-after"); !e.empty()) return e;
    uint64_t n = 0;
    try {
      n = std::stoull(ix->second);
    } catch (...) {
      return "--drop-after: '" + ix->second + "' is not a message count";
    }
    if (n == 0) return "--drop-after: the count must be at least 1";
    for (size_t i = 0; i < k; ++i)
      if (ix->first == 0 || ix->first == i + 1) o.associations[i].drop_after = n;
  }
  o.answer_on = raw.answer_on == "next" ? AnswerOn::kNext : AnswerOn::kSame;
  o.drop_mode = raw.drop_mode == "abort" ? DropMode::kAbort : raw.drop_mode == "close" ? DropMode::kClose : DropMode::kTcp;
  o.request_kind = raw.request_kind == "create" ? RequestKind::kCreate : RequestKind::kAction;
  for (const std::string& text : raw.raw_invokes) {
    auto bytes = parseHex(text);
    if (!bytes.isOk()) return "--send-raw-invoke: " + bytes.status().message();
    auto apdu = npac::cmip::decodeRoseApdu(bytes.value());
    if (!apdu.isOk()) return "--send-raw-invoke: not a ROSE APDU: " + apdu.status().toString();
    if (!std::holds_alternative<npac::cmip::RoseInvoke>(*apdu)) {
      return std::string("--send-raw-invoke: a ROSE Invoke [1] is needed, got ") + npac::cmip::roseApduName(*apdu);
    }
    o.raw_invokes.push_back(std::move(bytes).value());
  }

  if (raw.recover_all || !raw.recover_from.empty() || !raw.recover_to.empty()) o.recovery.enabled = true;
  if (o.recovery.enabled) {
    if (raw.recover_all && (!raw.recover_from.empty() || !raw.recover_to.empty())) {
      return "--recover-all and --recover-from/--recover-to exclude each other";
    }
    o.recovery.all_unacknowledged = raw.recover_from.empty() && raw.recover_to.empty();
    if (!o.recovery.all_unacknowledged) {
      int64_t now = std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch()).count();
      auto from = parseTime(raw.recover_from.empty() ? "now-1h" : raw.recover_from, now);
      if (!from.isOk()) return "--recover-from: " + from.status().message();
      auto to = parseTime(raw.recover_to.empty() ? "now" : raw.recover_to, now);
      if (!to.isOk()) return "--recover-to: " + to.status().message();
      o.recovery.from = from.value();
      o.recovery.to = to.value();
    }
  }
  if (!raw.recovery_hold.empty()) {
    if (!o.recovery.enabled) return "--recovery-hold needs --recovery (it delays lnpRecoveryComplete)";
    auto hold = parseDuration(raw.recovery_hold);
    if (!hold.isOk()) return "--recovery-hold: " + hold.status().message();
    o.recovery.hold = hold.value();
  }
  auto duration = [](const std::string& text, Millis& target, const char* flag) -> std::string {
    auto d = parseDuration(text);
    if (!d.isOk()) return std::string(flag).append(": ").append(d.status().message());
    target = d.value();
    return "";
  };
  if (auto e = duration(raw.duration, o.duration, "--duration"); !e.empty()) return e;
  if (auto e = duration(raw.bind_timeout, o.bind_timeout, "--bind-timeout"); !e.empty()) return e;
  if (auto e = duration(raw.release_timeout, o.release_timeout, "--release-timeout"); !e.empty()) return e;
  auto offset = parseSignedDuration(raw.departure_offset);
  if (!offset.isOk()) return "--departure-offset: " + offset.status().message();
  if (offset.value() > kMaxDepartureOffset || offset.value() < -kMaxDepartureOffset) {
    return "--departure-offset: " + raw.departure_offset + " is more than a year away from the clock";
  }
  o.departure_offset = offset.value();
  if (o.sequence && *o.sequence > kMaxSequenceNumber) return "--sequence must be at most 4294967295";
  return "";
}

bool writeFile(const std::string& path, const std::string& text, mode_t mode) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  ::chmod(path.c_str(), mode);
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

int keygen(const std::string& algorithm_name, const std::string& out, std::string pub_out, int rsa_bits) {
  // The spelling npacctl and npacd use; "rsa" is read as rsa-sha256 (signature.h).
  auto algorithm = npac::associations::signatureAlgorithmFromString(algorithm_name);
  if (!algorithm) {
    std::cerr << "npac-soa-sim keygen: --algorithm must be " << npac::associations::kSignatureAlgorithmNames
              << ", not '" << algorithm_name << "'\n";
    return kExitUsage;
  }
  auto pair = npac::associations::generateKeyPair(*algorithm, rsa_bits);
  if (!pair.isOk()) {
    std::cerr << "npac-soa-sim keygen: " << pair.status().message() << "\n";
    return kExitKey;
  }
  if (pub_out.empty()) pub_out = out + ".pub";
  if (!writeFile(out, pair.value().private_pem, 0600)) {
    std::cerr << "npac-soa-sim keygen: cannot write '" << out << "'\n";
    return kExitKey;
  }
  if (!writeFile(pub_out, pair.value().public_pem, 0644)) {
    std::cerr << "npac-soa-sim keygen: cannot write '" << pub_out << "'\n";
    return kExitKey;
  }
  std::cout << "private key (" << npac::associations::toString(*algorithm) << "): " << out << "\n"
            << "public key for the NPAC operator's key list: " << pub_out << "\n";
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"npac-soa-sim: one service provider's SOA or LSMS against npacd (docs/SOA-SIM.md)"};
  app.set_version_flag("--version", npac::versionLine("npac-soa-sim"));
  app.footer(kExitCodes);
  SimOptions o;
  RawOptions raw;
  app.add_option("--npac", raw.npac,
                 "NPAC address host:port (default 127.0.0.1:10102); repeatable: the NPAC's sites, "
                 "tried in order, the next one when a bind fails or an association is lost")
      ->type_name("HOST:PORT");
  app.add_option("--rebind-attempts", raw.rebind_attempts,
                 "binds in a row that may fail before the run gives up (exit 10), the first "
                 "included (default 10; giving it turns re-binding on with one --npac too)")
      ->type_name("N");
  app.add_option("--rebind-delay", raw.rebind_delay, "wait before each re-bind (default 500ms)")->type_name("DURATION");
  app.add_option("--spid", o.spid, "service provider id, 4 characters (LnpAccessControl systemId)");
  app.add_option("--system-type", raw.system_type, "soa, lsms or soa-and-lsms")->capture_default_str();
  app.add_option("--user-id", o.user_id, "LnpAccessControl userId")->capture_default_str();
  app.add_option("--key", o.key_file, "private key PEM (PKCS#8, Ed25519 or RSA; algorithm detected)");
  app.add_option("--key-list", o.key_list, "key list id")->capture_default_str();
  app.add_option("--key-id", o.key_id, "key id within the list")->capture_default_str();
  app.add_option("--npac-key", o.npac_key_files,
                 "NPAC public key(s) PEM to verify the NPAC's signed bind response with; repeatable, "
                 "a file may hold several keys (e.g. during an NPAC key rotation)");
  app.add_flag("--no-npac-verify", o.no_npac_verify,
               "do not verify the NPAC's bind response (rehearsals only: the NPAC is not authenticated)");
  app.add_option("--functions", raw.functions,
                 "association functions, comma separated: soa-management, lsms-data-download, "
                 "network-data-management, notifications, queries (default by system type)");
  app.add_option("--from", raw.from, "local address of one association, repeat for K associations (default 127.0.0.1)");
  app.add_option("--sequence", o.sequence, "first bind sequence number (default: tenths of a second since 2025-01-01)");
  app.add_option("--departure-offset", raw.departure_offset,
                 "shift the bind's departure time from the clock, signed: -10m, +2h (rehearses "
                 "the NPAC's departure_time_window; at most a year either way)")
      ->capture_default_str();
  app.add_flag("--recovery", o.recovery.enabled, "bind the first association in recovery mode and run the recovery sequence");
  app.add_flag("--recover-all", raw.recover_all, "recovery request: everything not acknowledged (SWIM; the default)");
  app.add_option("--recover-from", raw.recover_from, "recovery time range start: YYYYMMDDHHMMSSZ, now, now-10m");
  app.add_option("--recover-to", raw.recover_to, "recovery time range end (default now)");
  app.add_option("--recovery-hold", raw.recovery_hold,
                 "once the recovered messages are in, wait this long before lnpRecoveryComplete "
                 "(the NPAC holds new messages meanwhile; default 0)");
  app.add_option("--delay", raw.delay, "answer delay, [I=]DURATION (e.g. 2=50ms); repeatable");
  app.add_option("--silent", raw.silent, "association I never answers (heartbeats included); repeatable");
  app.add_option("--drop-after", raw.drop_after, "[I=]N: drop association I after N received messages; repeatable");
  app.add_option("--drop-mode", raw.drop_mode,
                 "tcp (TCP reset, no release), close (TCP FIN, no release) or abort (ACSE ABRT)")
      ->check(CLI::IsMember({"tcp", "close", "abort"}))
      ->capture_default_str();
  app.add_option("--answer-on", raw.answer_on,
                 "same (answer on the association the request came on) or next (on the next "
                 "association that is up, round robin; heartbeats stay on their own)")
      ->check(CLI::IsMember({"same", "next"}))
      ->capture_default_str();
  app.add_option("--send-requests", o.send_requests, "send N confirmed requests of our own, round robin");
  app.add_option("--request-kind", raw.request_kind, "action (M-ACTION) or create (M-CREATE)")
      ->check(CLI::IsMember({"action", "create"}))
      ->capture_default_str();
  app.add_option("--send-raw-invoke", raw.raw_invokes,
                 "send this ROSE Invoke (hex) on association 1 once bound and wait for its reply; "
                 "repeatable (e.g. a1 08 02 01 07 02 01 2a 30 00: opcode 42)");
  app.add_option("--expect", o.expect, "stop after N NPAC messages received and answered (heartbeats not counted)");
  app.add_option("--duration", raw.duration, "hard cap on the run")->capture_default_str();
  app.add_option("--bind-timeout", raw.bind_timeout, "connect + AARE deadline per association")->capture_default_str();
  app.add_option("--release-timeout", raw.release_timeout, "wait for RLRE")->capture_default_str();
  app.add_flag("--keep-going", o.keep_going, "continue with the associations that bound when a bind fails");
  app.add_flag("--keep-running", o.keep_running, "when the goals are met keep answering until --duration or a signal");
  app.add_option("--report", o.report_file, "write the JSON report here instead of stdout");
  app.add_option("--log-level", raw.log_level, "trace, debug, info, warn, error, off")->capture_default_str();

  std::string kg_algorithm = "ed25519", kg_out, kg_pub;
  int kg_bits = npac::associations::kMinRsaBits;
  CLI::App* kg = app.add_subcommand("keygen", "make a provider key pair (private PEM + public PEM for the NPAC)");
  kg->add_option("--algorithm", kg_algorithm, "ed25519 or rsa-sha256 (RSA-SHA256, --rsa-bits)")->capture_default_str();
  kg->add_option("--out", kg_out, "private key file (mode 0600)")->required();
  kg->add_option("--public-out", kg_pub, "public key file (default OUT.pub)");
  kg->add_option("--rsa-bits", kg_bits, "RSA modulus size")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  auto logger = spdlog::stderr_color_mt("npac-soa-sim");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(raw.log_level));

  if (kg->parsed()) return keygen(kg_algorithm, kg_out, kg_pub, kg_bits);

  if (std::string err = resolve(raw, o); !err.empty()) {
    std::cerr << "npac-soa-sim: " << err << "\n";
    return kExitUsage;
  }
  auto key = loadProviderKey(o.key_file);
  if (!key.isOk()) {
    std::cerr << "npac-soa-sim: " << key.status().message() << "\n";
    return kExitKey;
  }
  auto npac_keys = loadNpacKeys(o.npac_key_files);
  if (!npac_keys.isOk()) {
    std::cerr << "npac-soa-sim: " << npac_keys.status().message() << "\n";
    return kExitKey;
  }
  if (o.no_npac_verify) {
    std::cerr << "npac-soa-sim: warning: --no-npac-verify: the NPAC's bind response is not verified, "
                 "anyone answering on " << o.npac_addresses.front().text()
              << (o.npac_addresses.size() > 1 ? " (or the other --npac)" : "") << " is taken for the NPAC\n";
  }
  std::string report_file = o.report_file;
  Simulation sim(std::move(o), std::move(key).value(), std::move(npac_keys).value());
  int code = sim.run();
  for (const std::string& e : sim.report().errors) std::cerr << "npac-soa-sim: " << e << "\n";
  std::string doc = sim.report().toJson().dump(2) + "\n";
  if (report_file.empty()) {
    std::cout << doc << std::flush;
  } else if (!writeFile(report_file, doc, 0644)) {
    std::cerr << "npac-soa-sim: cannot write the report to '" << report_file << "'\n";
    return code == kExitOk ? kExitInternal : code;
  }
  return code;
}
