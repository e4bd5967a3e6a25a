#include "bench/provider_farm.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "cmip/npac_bind_refusal.h"
#include "npac/npac-soa-sim/association_client.h"
#include "npac/npac-soa-sim/provider_messages.h"

namespace npac::farm {
namespace {

namespace asio = boost::asio;
using asio::awaitable;
using asio::redirect_error;
using asio::use_awaitable;
using Clock = std::chrono::steady_clock;
using soasim::AssociationClient;
using soasim::BindOutcome;

int64_t unixMillis() {
  return std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double secondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Ends we caused ourselves; any other end is the NPAC's (release, abort) or the link's.
bool ownEnd(const std::string& reason) {
  return reason == "released" || reason == "release-timeout" || reason == "stopped";
}

// "rejected-permanent, acse-service-user diagnostic 3: unknown-spid — SPID 0001 is not
// provisioned": the AARE's result and diagnostic (X.227 §7.1.5.4) and the NPAC's
// LnpBindRefusal (cmip/npac_bind_refusal.h) when it carries one.
std::string refusalText(const cmip::Aare& aare) {
  std::string s = aare.result == cmip::AssociateResult::kRejectedPermanent ? "rejected-permanent" : "rejected-transient";
  s += aare.diagnostic.source == cmip::DiagnosticSource::kServiceUser ? ", acse-service-user" : ", acse-service-provider";
  s += " diagnostic " + std::to_string(aare.diagnostic.value);
  auto refusal = cmip::bindRefusalFrom(aare);
  if (refusal.isOk() && refusal->has_value()) {
    s += ": " + (*refusal)->reason;
    if (!(*refusal)->text.empty()) s += " — " + (*refusal)->text;
  }
  return s;
}

class Shard;

// What the shards share: the options, the totals, the stop flag and the bind summary.
struct Shared {
  Shared(const FarmOptions& o, const soasim::ProviderKey& k, const soasim::NpacKeyRing& n, uint64_t sequence,
         FarmReport& r)
      : options(o), key(k), npac_keys(n), first_sequence(sequence), report(r) {}

  const FarmOptions& options;
  const soasim::ProviderKey& key;
  const soasim::NpacKeyRing& npac_keys;
  asio::ip::tcp::endpoint npac;
  uint64_t first_sequence = 0;
  FarmReport& report;

  std::atomic<uint64_t> received{0};
  std::atomic<int64_t> pending_answers{0};  // queued, not yet written
  std::atomic<uint64_t> up{0};
  std::atomic<size_t> shards_binding{0};
  std::atomic<bool> stopping{false};
  std::vector<Shard*> shards;

  std::mutex mutex;  // guards everything below and report's bind fields
  std::optional<Clock::time_point> bind_started, bind_ended;
  std::vector<double> latencies_ms;
  std::string stop_reason;

  void stop(const std::string& reason);
  void checkGoals();
  // Called by each shard when its binds are done; the last one summarises them.
  void bindPhaseEnded();
  void summariseBinds();  // bind_phase_seconds, binds/s, latencies; the --ready-file
};

class Shard : public soasim::AssociationObserver {
 public:
  Shard(Shared& shared, size_t index) : shared_(shared), index_(index), progress_(io_) {
    const FarmOptions& o = shared_.options;
    const size_t k = o.associations;
    for (size_t p = index_; p < o.spids.size(); p += o.threads) providers_.push_back(Provider{p, 0, 0, 0});
    clients_.resize(providers_.size() * k);
    pending_.assign(clients_.size(), 0);
    for (size_t slot = 0; slot < clients_.size(); ++slot) {
      size_t global = providers_[slot / k].global * k + slot % k;
      clients_[slot] = std::make_shared<AssociationClient>(io_.get_executor(), slot + 1,
                                                            o.from[global % o.from.size()], *this);
    }
    binders_ = std::max<size_t>(1, (o.concurrent_binds + o.threads - 1) / o.threads);
    rate_ = o.connect_rate / static_cast<double>(o.threads);
  }

  asio::io_context& io() { return io_; }
  void notify() { progress_.cancel(); }

  void start() {
    asio::co_spawn(io_, main(), [this](std::exception_ptr e) {
      if (e) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          spdlog::error("shard {}: internal error: {}", index_, ex.what());
          internal_error_ = true;
        }
        io_.stop();
      }
    });
  }
  bool internalError() const { return internal_error_; }

  void onApdu(size_t index, const cmip::RoseApdu& apdu) override {
    const auto* invoke = std::get_if<cmip::RoseInvoke>(&apdu);
    if (invoke == nullptr) return;  // the farm sends no requests: nothing else is expected
    Provider& provider = providers_[(index - 1) / shared_.options.associations];
    soasim::InvokeDescription d = soasim::describeInvoke(*invoke);
    auto answer = soasim::answerFor(*invoke, cmip::GeneralizedTime::fromUnixMillis(unixMillis() / 1000 * 1000));
    if (d.heartbeat) {
      ++provider.heartbeats;
      if (answer) clients_[index - 1]->send(*answer);
      return;
    }
    ++provider.received;
    if (answer) {
      ++pending_[index - 1];
      shared_.pending_answers.fetch_add(1);
      clients_[index - 1]->send(*answer, Millis(0), 1);
    }
    shared_.received.fetch_add(1);
    shared_.checkGoals();
  }

  void onWritten(size_t index, uint64_t tag) override {
    if (tag == 0 || pending_[index - 1] == 0) return;
    --pending_[index - 1];
    ++providers_[(index - 1) / shared_.options.associations].answered;
    shared_.pending_answers.fetch_sub(1);
    shared_.checkGoals();
  }

  void onEnded(size_t index) override {
    // Answers still queued on an association that is gone will never be written.
    shared_.pending_answers.fetch_sub(static_cast<int64_t>(pending_[index - 1]));
    pending_[index - 1] = 0;
    if (!ownEnd(clients_[index - 1]->endReason())) ++ended_by_peer_;
    if (shared_.up.fetch_sub(1) == 1 && shared_.shards_binding.load() == 0) shared_.stop("all-associations-down");
    shared_.checkGoals();
    notify();
  }

  // Folded into the report once every shard's thread has finished.
  // `r.answered_per_provider_min` starts at the largest value (runFarm).
  void addTo(FarmReport& r) const {
    for (const Provider& p : providers_) {
      r.received += p.received;
      r.answered += p.answered;
      r.heartbeats += p.heartbeats;
      r.answered_per_provider_min = std::min(r.answered_per_provider_min, p.answered);
      r.answered_per_provider_max = std::max(r.answered_per_provider_max, p.answered);
    }
    r.ended_by_peer += ended_by_peer_;
  }

 private:
  struct Provider {
    size_t global;  // index in --spid-file
    uint64_t received, answered, heartbeats;
  };

  awaitable<void> main() {
    size_t running = binders_;
    for (size_t b = 0; b < binders_; ++b) {
      asio::co_spawn(io_, binder(), [this, &running](std::exception_ptr) {
        --running;
        notify();
      });
    }
    co_await waitFor([&] { return running == 0; });
    shared_.bindPhaseEnded();
    co_await waitFor([&] { return shared_.stopping.load(); });
    co_await releaseAll();
    io_.stop();
  }

  awaitable<void> waitFor(const std::function<bool()>& done) {
    while (!done()) {
      boost::system::error_code ec;
      progress_.expires_at(Clock::time_point::max());
      co_await progress_.async_wait(redirect_error(use_awaitable, ec));
    }
  }

  // One of the shard's --concurrent-binds: takes the next provider and binds its K
  // associations one after another, until no provider is left. A provider's binds never
  // overlap: association j signs sequence number first_sequence + j, and npacd refuses a
  // number not above the last it accepted for the key (docs/OPERATIONS.md check 7), so
  // they must arrive in order — as npac-soa-sim binds its own.
  awaitable<void> binder() {
    const size_t k = shared_.options.associations;
    asio::steady_timer pace(io_);
    while (!shared_.stopping.load() && next_provider_ < providers_.size()) {
      const size_t local = next_provider_++;
      for (size_t j = 0; j < k && !shared_.stopping.load(); ++j) {
        if (rate_ > 0) {
          const uint64_t n = binds_started_++;
          if (n == 0) paced_from_ = Clock::now();
          auto at = paced_from_ + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(static_cast<double>(n) / rate_));
          if (at > Clock::now()) {
            pace.expires_at(at);
            boost::system::error_code ec;
            co_await pace.async_wait(redirect_error(use_awaitable, ec));
            if (shared_.stopping.load()) break;
          }
        }
        co_await bindOne(local * k + j);
      }
    }
  }

  awaitable<void> bindOne(size_t slot) {
    const FarmOptions& o = shared_.options;
    const size_t j = slot % o.associations;
    const Provider& provider = providers_[slot / o.associations];
    soasim::BindParameters p{o.spids[provider.global],
                             o.system_type,
                             o.user_id,
                             o.key_list,
                             o.key_id,
                             o.functions,
                             false,
                             shared_.first_sequence + j,
                             cmip::GeneralizedTime::fromUnixMillis(unixMillis() / 1000 * 1000)};
    std::shared_ptr<AssociationClient> client = clients_[slot];
    auto started = Clock::now();
    {
      std::lock_guard lock(shared_.mutex);
      if (!shared_.bind_started) shared_.bind_started = started;
      ++shared_.report.bind_attempts;
    }
    auto ac = soasim::signedAccessControl(p, shared_.key);
    if (!ac.isOk()) {
      failed(slot, "provider " + p.spid + ": the bind cannot be signed: " + ac.status().message(),
             shared_.report.binds_failed);
      co_return;
    }
    BindOutcome outcome = co_await client->bind(shared_.npac, soasim::makeAarq(ac.value()), o.bind_timeout);
    if (outcome.kind == BindOutcome::Kind::kAccepted) {
      auto npac = soasim::verifyNpacAnswer(*outcome.aare, shared_.npac_keys);
      if (!npac.isOk()) {
        co_await client->refuseAccepted("npac-unverified");
        failed(slot, "provider " + p.spid + " from " + client->localAddress() + ": the NPAC is not authenticated: " +
                         npac.status().message(), shared_.report.binds_unverified);
        co_return;
      }
      client->start();
      shared_.up.fetch_add(1);
      std::lock_guard lock(shared_.mutex);
      ++shared_.report.binds_ok;
      shared_.latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
      shared_.bind_ended = std::max(shared_.bind_ended.value_or(Clock::now()), Clock::now());
      co_return;
    }
    if (outcome.kind == BindOutcome::Kind::kRejected && outcome.aare) {
      std::string why = "provider " + p.spid + " from " + client->localAddress() + ": " + refusalText(*outcome.aare);
      std::lock_guard lock(shared_.mutex);
      if (shared_.report.first_refusal.empty()) shared_.report.first_refusal = why;
      ++shared_.report.binds_refused;
      shared_.bind_ended = std::max(shared_.bind_ended.value_or(Clock::now()), Clock::now());
      clients_[slot].reset();
      co_return;
    }
    failed(slot, "provider " + p.spid + " from " + client->localAddress() + ": " + outcome.detail,
           shared_.report.binds_failed);
  }

  void failed(size_t slot, const std::string& why, uint64_t& counter) {
    std::lock_guard lock(shared_.mutex);
    if (shared_.report.first_failure.empty()) shared_.report.first_failure = why;
    ++counter;
    shared_.bind_ended = std::max(shared_.bind_ended.value_or(Clock::now()), Clock::now());
    clients_[slot].reset();
  }

  awaitable<void> releaseAll() {
    for (auto& c : clients_)
      if (c) c->requestRelease();
    bool timed_out = false;
    asio::steady_timer deadline(io_, shared_.options.release_timeout);
    deadline.async_wait([this, &timed_out](boost::system::error_code ec) {
      if (!ec) {
        timed_out = true;
        notify();
      }
    });
    co_await waitFor([&] {
      return timed_out ||
             std::none_of(clients_.begin(), clients_.end(), [](const auto& c) { return c && c->up(); });
    });
    deadline.cancel();
    for (auto& c : clients_)
      if (c && c->up()) c->close("release-timeout");
  }

  Shared& shared_;
  size_t index_;
  asio::io_context io_;
  asio::steady_timer progress_;
  std::vector<Provider> providers_;
  std::vector<std::shared_ptr<AssociationClient>> clients_;  // slot = local provider × K + j
  std::vector<uint32_t> pending_;                            // per slot: answers not yet written
  size_t binders_ = 1;
  double rate_ = 0;
  size_t next_provider_ = 0;  // local index of the next provider to bind
  uint64_t binds_started_ = 0;  // for --connect-rate
  Clock::time_point paced_from_;
  uint64_t ended_by_peer_ = 0;
  bool internal_error_ = false;
};

void Shared::stop(const std::string& reason) {
  if (stopping.exchange(true)) return;
  {
    std::lock_guard lock(mutex);
    stop_reason = reason;
  }
  for (Shard* s : shards) asio::post(s->io(), [s] { s->notify(); });
}

void Shared::checkGoals() {
  if (!options.expect || stopping.load()) return;
  if (received.load() >= *options.expect && pending_answers.load() <= 0) stop("goals-met");
}

void Shared::bindPhaseEnded() {
  if (shards_binding.fetch_sub(1) != 1) return;
  summariseBinds();
  // Nothing bound (or everything already gone): nothing can arrive any more.
  if (up.load() == 0) stop("all-associations-down");
}

void Shared::summariseBinds() {
  std::lock_guard lock(mutex);
  if (bind_started && bind_ended) report.bind_phase_seconds = secondsBetween(*bind_started, *bind_ended);
  if (report.bind_phase_seconds > 0) report.binds_per_second = static_cast<double>(report.binds_ok) / report.bind_phase_seconds;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  if (!latencies_ms.empty()) {
    auto pct = [&](double q) { return latencies_ms[std::min(latencies_ms.size() - 1, static_cast<size_t>(q * latencies_ms.size()))]; };
    report.bind_latency_p50_ms = pct(0.5);
    report.bind_latency_p99_ms = pct(0.99);
    report.bind_latency_max_ms = latencies_ms.back();
  }
  spdlog::info("bind phase: {} of {} bound in {:.2f} s ({:.0f} binds/s), {} refused, {} failed", report.binds_ok,
               report.bind_attempts, report.bind_phase_seconds, report.binds_per_second, report.binds_refused,
               report.binds_failed + report.binds_unverified);
  if (!options.ready_file.empty()) {
    std::string tmp = options.ready_file + ".tmp";
    if (std::FILE* f = std::fopen(tmp.c_str(), "wb")) {
      std::string doc = report.bindJson().dump(2) + "\n";
      bool ok = std::fwrite(doc.data(), 1, doc.size(), f) == doc.size();
      if (std::fclose(f) == 0 && ok) std::rename(tmp.c_str(), options.ready_file.c_str());
    }
  }
}

int exitCode(const FarmOptions& o, const FarmReport& r) {
  if (r.binds_unverified > 0) return kExitNpacUnverified;
  if (r.binds_refused > 0) return kExitBindRejected;
  if (r.binds_failed > 0) return kExitConnect;
  if (o.expect) {
    if (r.stop_reason == "goals-met") return kExitOk;
    return r.stop_reason == "all-associations-down" ? kExitAllLost : kExitGoalsNotMet;
  }
  if (r.stop_reason == "all-associations-down" && r.ended_by_peer > 0) return kExitAllLost;
  return kExitOk;
}

}  // namespace

nlohmann::ordered_json FarmReport::bindJson() const {
  nlohmann::ordered_json j;
  j["providers"] = providers;
  j["associations_per_provider"] = associations_per_provider;
  j["bind_attempts"] = bind_attempts;
  j["binds_ok"] = binds_ok;
  j["binds_refused"] = binds_refused;
  j["binds_failed"] = binds_failed;
  j["binds_unverified"] = binds_unverified;
  j["first_refusal"] = first_refusal;
  j["first_failure"] = first_failure;
  j["bind_phase_seconds"] = bind_phase_seconds;
  j["binds_per_second"] = binds_per_second;
  j["bind_latency_ms"] = {{"p50", bind_latency_p50_ms}, {"p99", bind_latency_p99_ms}, {"max", bind_latency_max_ms}};
  return j;
}

nlohmann::ordered_json FarmReport::toJson() const {
  nlohmann::ordered_json j = bindJson();
  j["received"] = received;
  j["answered"] = answered;
  j["heartbeats"] = heartbeats;
  j["answered_per_provider"] = {{"min", answered_per_provider_min}, {"max", answered_per_provider_max}};
  j["ended_by_peer"] = ended_by_peer;
  j["cpu_seconds"] = cpu_seconds;
  j["run_seconds"] = run_seconds;
  j["stop_reason"] = stop_reason;
  j["exit_code"] = exit_code;
  return j;
}

int runFarm(const FarmOptions& o, const soasim::ProviderKey& key, const soasim::NpacKeyRing& npac_keys,
            FarmReport& report) {
  report = FarmReport{};
  report.providers = o.spids.size();
  report.associations_per_provider = o.associations;
  const auto run_started = Clock::now();

  Shared shared(o, key, npac_keys, soasim::timeBasedSequence(unixMillis()), report);
  boost::system::error_code ec;
  auto address = asio::ip::make_address(o.npac_host, ec);
  if (ec) {
    asio::io_context resolve_io;
    asio::ip::tcp::resolver resolver(resolve_io);
    auto results = resolver.resolve(o.npac_host, std::to_string(o.npac_port), ec);
    if (ec || results.empty()) {
      report.first_failure = "cannot resolve '" + o.npac_host + "': " + ec.message();
      report.exit_code = kExitConnect;
      return report.exit_code;
    }
    shared.npac = *results.begin();
  } else {
    shared.npac = asio::ip::tcp::endpoint(address, o.npac_port);
  }

  std::vector<std::unique_ptr<Shard>> shards;
  for (size_t s = 0; s < o.threads; ++s) shards.push_back(std::make_unique<Shard>(shared, s));
  for (auto& s : shards) shared.shards.push_back(s.get());
  shared.shards_binding = shards.size();

  asio::io_context& first = shards.front()->io();
  asio::signal_set signals(first, SIGINT, SIGTERM);
  signals.async_wait([&shared](boost::system::error_code e, int sig) {
    if (!e) {
      spdlog::info("signal {}: releasing every association", sig);
      shared.stop("signal");
    }
  });
  asio::steady_timer duration(first, o.duration);
  duration.async_wait([&shared](boost::system::error_code e) {
    if (!e) shared.stop("duration");
  });

  for (auto& s : shards) s->start();
  std::vector<std::thread> threads;
  for (size_t s = 1; s < shards.size(); ++s) threads.emplace_back([&, s] { shards[s]->io().run(); });
  // Shard 0 also carries the signals and the --duration timer: they must not keep it
  // running once its work is done, so its main() stops the context itself.
  first.run();
  for (auto& t : threads) t.join();

  bool internal = false;
  report.answered_per_provider_min = UINT64_MAX;
  for (auto& s : shards) {
    internal = internal || s->internalError();
    s->addTo(report);
  }
  if (o.spids.empty()) report.answered_per_provider_min = 0;
  report.stop_reason = shared.stop_reason;
  report.run_seconds = secondsBetween(run_started, Clock::now());
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) == 0) {
    report.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  }
  report.exit_code = internal ? kExitInternal : exitCode(o, report);

  // The next run with this key must start above the last sequence number used here
  // (bind_request.h: association j of every provider used first_sequence + j).
  int64_t wait = soasim::millisWhenSequencePassed(shared.first_sequence + o.associations - 1) - unixMillis();
  if (wait > 0) std::this_thread::sleep_for(Millis(wait));
  return report.exit_code;
}

}  // namespace npac::farm
