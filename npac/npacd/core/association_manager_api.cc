// AssociationManager: the thread-safe entries other threads use ("Sharding" in
// association_manager.h: the QueueWriter's committed rows, node notifications), each
// posted onto the core io_context, and setCounting. The admin API's calls are CoreFacade's
// (core_facade.cc).
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "npac/npacd/core/association_manager.h"

#include "db/provider_store.h"

namespace npac::npacd {
namespace asio = boost::asio;

void AssociationManager::announceSubmitted(std::vector<db::QueuedMessage> rows) {
  asio::post(io_, [this, rows = std::move(rows)]() mutable {
    std::map<std::string, std::vector<db::QueuedMessage>> by_spid;
    for (db::QueuedMessage& row : rows) {
      std::string spid = row.spid;
      by_spid[spid].push_back(std::move(row));
    }
    for (auto& [spid, committed] : by_spid) {
      std::vector<db::MessageId> ids;
      ids.reserve(committed.size());
      for (const db::QueuedMessage& row : committed) ids.push_back(row.id);
      // The store keeps them for delivery whether or not the provider has a core now.
      store_.committed(spid, std::move(committed));
      // A provider that never bound in this run has no core yet: its rows wait queued.
      if (ProviderCore* provider = core(spid)) provider->onSubmitted(ids);
    }
  });
}

void AssociationManager::announceAnswer(db::QueuedMessage row) {
  asio::post(io_, [this, row = std::move(row)]() mutable {
    const std::string spid = row.spid;
    std::vector<db::QueuedMessage> rows;
    rows.push_back(std::move(row));
    store_.committed(spid, std::move(rows));
    // Not onSubmitted(): a provider in recovery is answered, not held (NANC 351).
    wakeDelivery(spid);
  });
}








void AssociationManager::postWakeAll() {
  asio::post(io_, [this] {
    store_.forgetAllReady();
    for (auto& [spid, c] : cores_) wakeDelivery(spid);
  });
}

void AssociationManager::postProviderChanged(std::string spid) {
  asio::post(io_, [this, spid = std::move(spid)] {
    ProviderCore* provider = core(spid);
    if (provider == nullptr || !provider->bound() || provider->allReleasing()) return;
    auto stored = db::ProviderStore(db_).get(spid);
    if (stored.isOk() && stored->enabled) return;
    if (!stored.isOk() && !stored.status().isNotFound()) {
      spdlog::warn("SPID {}: changed on another node, but its record cannot be read: {}", spid,
                   stored.status().toString());
      return;
    }
    spdlog::info("SPID {}: disabled on another npacd node: releasing its {} association(s) once their "
                 "outstanding requests are answered; undelivered messages stay queued",
                 spid, provider->associationCount());
    provider->releaseAll(kReleaseProviderDisabled);
  });
}

void AssociationManager::setCounting(bool on) {
  counting_ = on;
  admission_.setCounting(on);
  for (auto& [spid, provider] : cores_) provider->setCounting(on);
}


}  // namespace npac::npacd
