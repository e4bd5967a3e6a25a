#include "npac/npacd/core/provider_leases.h"

#include <chrono>

#include <spdlog/spdlog.h>

#include "db/storage_health.h"
#include "db/transaction.h"

namespace npac::npacd {
namespace {

db::TimeMs toMs(associations::Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace

associations::Duration ProviderLeases::timeout() const {
  return std::chrono::duration_cast<associations::Duration>(registry_.get(tunables::kProviderLeaseTimeout));
}

db::Result<db::LeaseOutcome> ProviderLeases::take(const std::string& spid) {
  return db::LeaseStore(db_).acquire(spid, node_, clock_.wallMs(), toMs(timeout()));
}

void ProviderLeases::hold(const std::string& spid, std::int64_t epoch, associations::TimePoint taken_at) {
  held_[spid] = Held{epoch, taken_at};
}

std::optional<std::int64_t> ProviderLeases::epoch(const std::string& spid) const {
  auto it = held_.find(spid);
  if (it == held_.end()) return std::nullopt;
  return it->second.epoch;
}

bool ProviderLeases::valid(const std::string& spid) const {
  auto it = held_.find(spid);
  if (it == held_.end()) return false;
  return clock_.now() - it->second.renewed_at < timeout() * 4 / 5;
}

db::Status ProviderLeases::renewNow(const std::string& spid) {
  auto it = held_.find(spid);
  if (it == held_.end()) {
    return db::Status::make(db::Status::Code::kFenced, "node '" + node_ + "' holds no lease on provider " + spid);
  }
  const associations::TimePoint started = clock_.now();
  db::Status status =
      db::LeaseStore(db_).renew(spid, node_, it->second.epoch, clock_.wallMs(), toMs(timeout()));
  if (status.isOk()) {
    noteRenewed(spid, it->second, started);
  } else if (status.code() == db::Status::Code::kFenced) {
    held_.erase(it);
  }
  return status;
}

// Every due lease in ONE transaction (one fsync at --durability full, however many
// providers: with 2,500 bound providers and the default 5 s timeout, one commit per tick
// instead of 1,500 a second). A lease counts as renewed only once that transaction
// committed; a fenced one is lost whatever the others do.
std::vector<ProviderLeases::Lost> ProviderLeases::renewDue() {
  std::vector<Lost> lost;
  const associations::TimePoint now = clock_.now();
  const associations::Duration period = timeout() / 3;
  std::vector<std::string> due;
  for (const auto& [spid, held] : held_) {
    if (now - held.renewed_at >= period) due.push_back(spid);
  }
  if (due.empty()) return lost;
  db::Transaction batch(db_);
  db::Status status = batch.begin();
  std::vector<std::string> renewed;
  std::vector<std::pair<std::string, db::Status>> failed;
  for (const std::string& spid : due) {
    db::Status one = status.isOk() ? db::LeaseStore(db_).renew(spid, node_, held_[spid].epoch, clock_.wallMs(),
                                                                toMs(timeout()))
                                   : status;
    if (one.isOk()) {
      renewed.push_back(spid);
    } else if (one.code() == db::Status::Code::kFenced) {
      held_.erase(spid);
      lost.push_back(Lost{spid, one});
    } else {
      failed.emplace_back(spid, one);
    }
  }
  if (status.isOk() && !renewed.empty()) status = batch.commit();
  for (const std::string& spid : renewed) {
    if (!status.isOk()) {
      failed.emplace_back(spid, status);
      continue;
    }
    noteRenewed(spid, held_[spid], now);
  }
  for (const auto& [spid, why] : failed) {
    if (valid(spid) || held_[spid].warned) continue;
    // Not renewed and past what this node's clock allows: it acts for the provider no
    // more until a renewal succeeds (said once, and once when it is renewed again).
    held_[spid].warned = true;
    spdlog::warn("provider {}: lease not renewed ({}); delivery paused until it is", spid, db::toString(why.code()));
  }
  return lost;
}

void ProviderLeases::noteRenewed(const std::string& spid, Held& held, associations::TimePoint started) {
  if (held.warned) spdlog::info("provider {}: lease renewed again; delivery resumes", spid);
  held.renewed_at = started;
  held.warned = false;
}

void ProviderLeases::release(const std::vector<std::string>& spids) {
  if (spids.empty()) return;
  db::Transaction batch(db_);
  db::Status status = batch.begin();
  std::size_t held = 0, released = 0;
  for (const std::string& spid : spids) {
    auto it = held_.find(spid);
    if (it == held_.end()) continue;
    ++held;
    if (status.isOk()) {
      db::Status one = db::LeaseStore(db_).release(spid, node_, it->second.epoch, clock_.wallMs());
      if (!one.isOk()) {
        spdlog::warn("provider {}: cannot release the lease ({}); it lapses by itself", spid, one.toString());
      } else {
        ++released;
      }
    }
    held_.erase(it);
  }
  if (status.isOk() && released > 0) status = batch.commit();
  if (!status.isOk()) {
    // They lapse by themselves after provider_lease_timeout.
    spdlog::warn("cannot release {} provider lease(s) ({}); they lapse by themselves", held,
                 status.toString());
  }
}

std::vector<std::string> ProviderLeases::heldSpids() const {
  std::vector<std::string> out;
  for (const auto& [spid, held] : held_) out.push_back(spid);
  return out;
}

}  // namespace npac::npacd
