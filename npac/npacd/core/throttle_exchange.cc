// ThrottleExchange: provisioned throttle groups read, and counts exchanged between nodes,
// through the shared database; see throttle_exchange.h.
#include "npac/npacd/core/throttle_exchange.h"

#include <spdlog/spdlog.h>

#include "db/throttle_group_store.h"

namespace npac::npacd {

ThrottleExchange::ThrottleExchange(std::unique_ptr<db::Database> db, ThrottleGroups& groups)
    : db_(std::move(db)), groups_(groups), share_counts_(db_->backend() == db::Backend::kPostgres) {}

db::Result<std::unique_ptr<ThrottleExchange>> ThrottleExchange::start(std::unique_ptr<db::Database> db,
                                                                      ThrottleGroups& groups) {
  std::unique_ptr<ThrottleExchange> exchange(new ThrottleExchange(std::move(db), groups));
  if (db::Status first = exchange->cycle(); !first.isOk()) return first;
  groups.setReloadHook([raw = exchange.get()] { raw->wake(); });
  exchange->thread_ = std::thread([raw = exchange.get()] { raw->run(); });
  return exchange;
}

ThrottleExchange::~ThrottleExchange() { stop(); }

void ThrottleExchange::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  groups_.setReloadHook(nullptr);
  if (share_counts_) {
    db::Status forgotten = db::ThrottleGroupStore(*db_).forgetNode(groups_.node());
    if (!forgotten.isOk()) {
      spdlog::warn("throttle groups: could not remove this node's counts at stop ({}); the other nodes count it "
                   "as unreachable until its reports are an hour old",
                   forgotten.toString());
    }
  }
}

void ThrottleExchange::wake() {
  {
    std::lock_guard lock(mu_);
    reload_ = true;
  }
  cv_.notify_all();
}

void ThrottleExchange::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, kReportPeriod, [this] { return stopping_ || reload_; });
    if (stopping_) break;
    reload_ = false;
    lock.unlock();
    (void)cycle();  // a failure is logged there, once; the next period tries again
    lock.lock();
  }
}

db::Status ThrottleExchange::cycle() {
  db::ThrottleGroupStore store(*db_);
  const auto said = [this](const db::Status& status) {
    if (!status.isOk() && !failing_) {
      spdlog::warn("throttle groups: {} — the groups in force stay as they were; peer nodes' counts age and count "
                   "as unreachable after {} ms",
                   status.toString(), kStaleReport.count());
      failing_ = true;
    }
    return status;
  };
  auto groups = store.list();
  if (!groups.isOk()) return said(groups.status());
  groups_.apply(std::move(groups).value());
  if (share_counts_) {
    const associations::TimePoint now = groups_.clock().now();
    if (db::Status written = store.report(groups_.node(), groups_.localReports(now)); !written.isOk()) {
      return said(written);
    }
    const associations::TimePoint read_at = groups_.clock().now();
    auto reports = store.reports();
    if (!reports.isOk()) return said(reports.status());
    groups_.applyReports(reports.value(), read_at);
  }
  if (failing_) {
    spdlog::info("throttle groups: the database answers again; counts exchanged with the other nodes");
    failing_ = false;
  }
  return db::Status::ok();
}

}  // namespace npac::npacd
