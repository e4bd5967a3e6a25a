// CoreInbox: see core_inbox.h. Every entry posts onto the core thread's io_context.
#include "npac/npacd/core/core_inbox.h"

#include <unistd.h>

#include <map>
#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "db/provider_store.h"
#include "npac/npacd/core/delivery_scheduler.h"
#include "npac/npacd/core/delivery_store.h"
#include "npac/npacd/core/inbound_broker.h"
#include "npac/npacd/core/provider_cores.h"
#include "npac/npacd/core/shard_route.h"

namespace npac::npacd {
namespace asio = boost::asio;

void CoreInbox::announceSubmitted(std::vector<db::QueuedMessage> rows) {
  asio::post(parts_.io, [this, rows = std::move(rows)]() mutable {
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
      parts_.store.committed(spid, std::move(committed));
      // A provider that never bound in this run has no core yet: its rows wait queued.
      if (ProviderCore* provider = parts_.providers.find(spid)) provider->onSubmitted(ids);
    }
  });
}

void CoreInbox::announceAnswer(db::QueuedMessage row) {
  asio::post(parts_.io, [this, row = std::move(row)]() mutable {
    const std::string spid = row.spid;
    std::vector<db::QueuedMessage> rows;
    rows.push_back(std::move(row));
    parts_.store.committed(spid, std::move(rows));
    // Not onSubmitted(): a provider in recovery is answered, not held (NANC 351).
    parts_.delivery.wake(spid);
  });
}

void CoreInbox::adopt(Session::Handoff handoff) {
  asio::post(parts_.io, [this, handoff = std::make_shared<Session::Handoff>(std::move(handoff))]() mutable {
    const int fd = handoff->fd;
    boost::system::error_code ec;
    asio::ip::tcp::socket socket(parts_.io);
    socket.assign(handoff->protocol_v6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4(), fd, ec);
    if (ec) {
      spdlog::warn("association from {}: cannot take over its connection on core thread {}: {}",
                   handoff->peer, parts_.route.index(), ec.message());
      ::close(fd);
      return;
    }
    auto session = std::make_shared<Session>(std::move(socket), std::move(*handoff), parts_.owner,
                                             parts_.timers.makeTimer());
    session->resume();
  });
}

void CoreInbox::postInbound(InboundRequest request) {
  asio::post(parts_.io, [this, request = std::move(request)]() mutable { parts_.inbound.add(std::move(request)); });
}

void CoreInbox::postSubmittedElsewhere(std::string spid) {
  asio::post(parts_.io, [this, spid = std::move(spid)] {
    parts_.store.forgetReady(spid);
    parts_.delivery.wake(spid);
  });
}

void CoreInbox::postWakeAll() {
  asio::post(parts_.io, [this] {
    parts_.store.forgetAllReady();
    parts_.providers.wakeAll();
  });
}

void CoreInbox::postProviderChanged(std::string spid) {
  asio::post(parts_.io, [this, spid = std::move(spid)] {
    ProviderCore* provider = parts_.providers.find(spid);
    if (provider == nullptr || provider->associationCount() == 0 || provider->allReleasing()) return;
    auto stored = db::ProviderStore(parts_.db).get(spid);
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

}  // namespace npac::npacd
