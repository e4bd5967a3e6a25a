// npac-provider-farm: many service providers' associations to one npacd from one process
// (bench/provider_farm.h), the answering side of bench/scale.sh and of the submission load
// benchmarks. Each SPID of --spid-file binds --associations associations with the one
// Ed25519 key --key (provisioned for every provider), answers the NPAC as npac-soa-sim
// does, and writes a JSON report. Never run by `make test`.
#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>

#include <boost/asio/ip/address.hpp>
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "bench/provider_farm.h"
#include "cmip/npac_bind.h"

using namespace npac::farm;
namespace soasim = npac::soasim;

namespace {

constexpr const char* kExitCodes =
    "Exit codes: 0 the run ended as asked (--expect met, or --duration / a signal without "
    "--expect) with every bind accepted; 1 internal error; 2 usage error (the message says "
    "which flag), also when the descriptor limit cannot hold every association; 3 a key file "
    "is unreadable or unusable; 4 a bind could not connect, timed out or was aborted; 5 a bind "
    "was rejected by the NPAC (the first refusal's diagnostic on stderr and in the report); "
    "6 --expect not met at --duration or on a signal; 7 every association ended before "
    "--expect was met; 9 an accepting AARE did not authenticate the NPAC. Bind failures "
    "(9, 5, 4, in that order) take precedence: the other associations run on regardless.";

constexpr size_t kMaxAssociationsPerProvider = 64;  // max_associations_per_sp's upper bound
constexpr size_t kMaxThreads = 64;
constexpr rlim_t kDescriptorSlack = 64;  // stdio, the report, the key files, resolver

// One 4-character SPID per line; blank lines and lines starting with '#' are skipped.
std::string readSpids(const std::string& path, std::vector<std::string>& spids) {
  std::ifstream in(path);
  if (!in) return "--spid-file: cannot read '" + path + "'";
  std::set<std::string> seen;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    line = line.substr(start);
    if (line.size() != npac::cmip::kSystemIdLength) {
      return "--spid-file '" + path + "' line " + std::to_string(n) + ": '" + line +
             "' is not a 4-character SPID";
    }
    // Two providers with one SPID would replace each other's associations.
    if (!seen.insert(line).second) {
      return "--spid-file '" + path + "' line " + std::to_string(n) + ": SPID " + line + " is listed twice";
    }
    spids.push_back(line);
  }
  if (spids.empty()) return "--spid-file '" + path + "' lists no SPID";
  return "";
}

// Raises the soft descriptor limit to what every association needs, up to the hard limit.
std::string ensureDescriptors(size_t associations) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return "";
  const rlim_t need = static_cast<rlim_t>(associations) + kDescriptorSlack;
  if (limit.rlim_cur >= need) return "";
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < need) {
    return std::to_string(associations) + " associations need " + std::to_string(need) +
           " file descriptors, the hard limit (ulimit -Hn) is " + std::to_string(limit.rlim_max);
  }
  limit.rlim_cur = need;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return "cannot raise the descriptor limit to " + std::to_string(need);
  return "";
}

std::string defaultFunctions(npac::cmip::SystemType t) {
  switch (t) {
    case npac::cmip::SystemType::kLsms: return "lsms-data-download,notifications";
    case npac::cmip::SystemType::kSoaAndLsms: return "soa-management,lsms-data-download,notifications";
    default: return "soa-management,notifications";
  }
}

}  // namespace

int main(int argc, char** argv) {
  FarmOptions o;
  std::string npac = "127.0.0.1:10102", spid_file, key_file, system_type = "soa", functions;
  std::vector<std::string> npac_key_files, from;
  std::string duration = "60s", bind_timeout = "10s", release_timeout = "5s", log_level = "warn";
  uint64_t expect = 0;

  CLI::App app{"npac-provider-farm: many providers' associations to one npacd, in one process"};
  app.footer(kExitCodes);
  app.add_option("--npac", npac, "npacd's association address HOST:PORT")->capture_default_str();
  app.add_option("--spid-file", spid_file, "one 4-character SPID per line: the providers")->required();
  app.add_option("--key", key_file, "the providers' private key (PKCS#8 PEM), provisioned for every one")->required();
  app.add_option("--npac-key", npac_key_files, "the NPAC's public key(s), to verify its signed bind answers")
      ->required();
  app.add_option("--associations", o.associations, "associations per provider (K)")->capture_default_str();
  app.add_option("--from", from, "local addresses, cycled per association; at least K of them (one NSAP each)");
  app.add_option("--system-type", system_type, "soa, lsms or soa-and-lsms")->capture_default_str();
  app.add_option("--functions", functions, "association functions (default: the system type's usual ones)");
  app.add_option("--key-list", o.key_list, "the key's list id")->capture_default_str();
  app.add_option("--key-id", o.key_id, "the key's id in its list")->capture_default_str();
  app.add_option("--connect-rate", o.connect_rate, "binds started per second over the farm, 0 = unpaced")
      ->capture_default_str();
  app.add_option("--concurrent-binds", o.concurrent_binds, "binds in flight at once over the farm")
      ->capture_default_str();
  app.add_option("--expect", expect, "stop after N NPAC messages received and answered (heartbeats not counted)");
  app.add_option("--duration", duration, "hard cap on the run")->capture_default_str();
  app.add_option("--bind-timeout", bind_timeout, "connect + AARE deadline per association")->capture_default_str();
  app.add_option("--release-timeout", release_timeout, "wait for the RLREs at the end")->capture_default_str();
  app.add_option("--threads", o.threads, "io_context threads (providers are split between them)")
      ->capture_default_str();
  app.add_option("--report", o.report_file, "write the JSON report here instead of stdout");
  app.add_option("--ready-file", o.ready_file, "write the bind phase's summary here once every bind has ended");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  auto usage = [](const std::string& why) {
    std::cerr << "npac-provider-farm: " << why << "\n";
    return kExitUsage;
  };
  auto level = spdlog::level::from_str(log_level);
  if (level == spdlog::level::off && log_level != "off") return usage("--log-level: '" + log_level + "' is not a level");
  spdlog::set_default_logger(spdlog::stderr_color_mt("npac-provider-farm"));
  spdlog::set_level(level);

  auto hp = soasim::parseHostPort(npac);
  if (!hp.isOk()) return usage("--npac: " + hp.status().message());
  o.npac_host = hp->first;
  o.npac_port = hp->second;
  if (std::string e = readSpids(spid_file, o.spids); !e.empty()) return usage(e);
  if (o.associations < 1 || o.associations > kMaxAssociationsPerProvider) {
    return usage("--associations must be 1.." + std::to_string(kMaxAssociationsPerProvider));
  }
  if (!from.empty()) o.from = from;
  if (o.from.size() < o.associations) {
    // Two associations of a provider from one NSAP replace each other (NANC 386).
    return usage("--from: " + std::to_string(o.associations) + " associations per provider need at least " +
                 std::to_string(o.associations) + " local addresses, one NSAP each (got " +
                 std::to_string(o.from.size()) + ")");
  }
  for (const std::string& a : o.from) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(a, ec);
    if (ec) return usage("--from: '" + a + "' is not an IP address");
  }
  auto st = soasim::parseSystemType(system_type);
  if (!st.isOk()) return usage("--system-type: " + st.status().message());
  o.system_type = st.value();
  auto fn = soasim::parseFunctions(functions.empty() ? defaultFunctions(o.system_type) : functions);
  if (!fn.isOk()) return usage("--functions: " + fn.status().message());
  o.functions = fn.value();
  if (!(o.connect_rate >= 0)) return usage("--connect-rate must be 0 (unpaced) or a positive number of binds/s");
  if (o.concurrent_binds < 1) return usage("--concurrent-binds must be at least 1");
  if (o.threads < 1 || o.threads > kMaxThreads) return usage("--threads must be 1.." + std::to_string(kMaxThreads));
  if (app.count("--expect") > 0) {
    if (expect < 1) return usage("--expect must be at least 1");
    o.expect = expect;
  }
  for (auto [text, target, flag] : {std::tuple{&duration, &o.duration, "--duration"},
                                    std::tuple{&bind_timeout, &o.bind_timeout, "--bind-timeout"},
                                    std::tuple{&release_timeout, &o.release_timeout, "--release-timeout"}}) {
    auto d = soasim::parseDuration(*text);
    if (!d.isOk()) return usage(std::string(flag) + ": " + d.status().message());
    if (d->count() <= 0) return usage(std::string(flag) + " must be more than 0");
    *target = d.value();
  }
  if (std::string e = ensureDescriptors(o.spids.size() * o.associations); !e.empty()) return usage(e);

  auto key = soasim::loadProviderKey(key_file);
  if (!key.isOk()) {
    std::cerr << "npac-provider-farm: " << key.status().message() << "\n";
    return kExitKey;
  }
  auto npac_keys = soasim::loadNpacKeys(npac_key_files);
  if (!npac_keys.isOk()) {
    std::cerr << "npac-provider-farm: " << npac_keys.status().message() << "\n";
    return kExitKey;
  }

  FarmReport report;
  int code = runFarm(o, key.value(), npac_keys.value(), report);
  if (!report.first_refusal.empty()) std::cerr << "npac-provider-farm: first refusal: " << report.first_refusal << "\n";
  if (!report.first_failure.empty()) std::cerr << "npac-provider-farm: first failure: " << report.first_failure << "\n";
  std::string doc = report.toJson().dump(2) + "\n";
  if (o.report_file.empty()) {
    std::cout << doc << std::flush;
    return code;
  }
  std::FILE* f = std::fopen(o.report_file.c_str(), "wb");
  bool ok = f != nullptr && std::fwrite(doc.data(), 1, doc.size(), f) == doc.size();
  if (f != nullptr) ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::cerr << "npac-provider-farm: cannot write the report to '" << o.report_file << "'\n";
    return code == kExitOk ? kExitInternal : code;
  }
  return code;
}
