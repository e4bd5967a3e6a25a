#include "npac/npacd/core/core_shards.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "npac/npacd/core/association_manager.h"

namespace npac::npacd {
namespace {

// The answers of every thread to one question, merged once the last one is in. The
// answers arrive on the threads' own io_contexts, hence the mutex.
template <typename T>
class Gather {
 public:
  using Merge = std::function<void(std::vector<db::Result<T>>)>;
  Gather(std::size_t expected, Merge merge) : expected_(expected), merge_(std::move(merge)) {
    answers_.reserve(expected);
  }
  void add(std::size_t index, db::Result<T> answer) {
    std::unique_lock lock(mutex_);
    answers_.emplace_back(index, std::move(answer));
    if (answers_.size() < expected_) return;
    std::sort(answers_.begin(), answers_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<db::Result<T>> ordered;
    ordered.reserve(answers_.size());
    for (auto& [i, a] : answers_) ordered.push_back(std::move(a));
    lock.unlock();
    merge_(std::move(ordered));
  }

 private:
  std::mutex mutex_;
  std::size_t expected_;
  Merge merge_;
  std::vector<std::pair<std::size_t, db::Result<T>>> answers_;
};

}  // namespace

std::size_t coreThreadOf(const std::string& spid, std::size_t threads) {
  if (threads <= 1) return 0;
  std::uint32_t hash = 2166136261u;  // FNV-1a, 32 bits
  for (unsigned char c : spid) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash % threads;
}

CoreShards::CoreShards(std::vector<AssociationManager*> shards, db::QueueWriter& writer,
                       std::int64_t last_association_id)
    : shards_(std::move(shards)), writer_(writer), next_association_id_(last_association_id) {
  for (std::size_t i = 0; i < shards_.size(); ++i) shards_[i]->joinShards(*this, i);
}

void CoreShards::shutdown(std::function<void()> done) {
  auto left = std::make_shared<std::atomic<std::size_t>>(shards_.size());
  auto finished = std::make_shared<std::function<void()>>(std::move(done));
  for (AssociationManager* shard : shards_) {
    shard->shutdown([left, finished] {
      if (left->fetch_sub(1) == 1) (*finished)();
    });
  }
}

void CoreShards::submit(std::vector<OutboundMessage> messages, SubmitDone done) {
  // One submission, one commit, whatever threads its providers live on; each thread is
  // told of its own providers' new rows.
  submitToQueue(writer_, std::move(messages), std::move(done),
                [this](std::vector<db::QueuedMessage> rows) {
                  std::vector<std::vector<db::QueuedMessage>> rows_of(shards_.size());
                  for (db::QueuedMessage& row : rows) rows_of[shardOf(row.spid)].push_back(std::move(row));
                  for (std::size_t k = 0; k < shards_.size(); ++k) {
                    if (!rows_of[k].empty()) shards_[k]->inbox().announceSubmitted(std::move(rows_of[k]));
                  }
                });
}

void CoreShards::pollInbound(InboundPoll poll, PollDone done) {
  shards_[0]->service().pollInbound(std::move(poll), std::move(done));
}

void CoreShards::respond(InboundRequestId id, InboundResponse response, RespondDone done) {
  shards_[0]->service().respond(id, std::move(response), std::move(done));
}

void CoreShards::listAssociations(ListDone done) {
  auto gather = std::make_shared<Gather<std::vector<AssociationInfo>>>(
      shards_.size(), [done = std::move(done)](std::vector<db::Result<std::vector<AssociationInfo>>> lists) {
        std::vector<AssociationInfo> all;
        for (auto& list : lists) {
          if (!list.isOk()) return done(list.status());
          for (AssociationInfo& info : list.value()) all.push_back(std::move(info));
        }
        std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
        done(std::move(all));
      });
  for (std::size_t i = 0; i < shards_.size(); ++i) {
    shards_[i]->service().listAssociations([gather, i](db::Result<std::vector<AssociationInfo>> list) {
      gather->add(i, std::move(list));
    });
  }
}

void CoreShards::queueView(std::string spid, QueueViewDone done) {
  AssociationManager& shard = owner(spid);
  shard.service().queueView(std::move(spid), std::move(done));
}

void CoreShards::egressView(std::string spid, EgressViewDone done) {
  AssociationManager& shard = owner(spid);
  shard.service().egressView(std::move(spid), std::move(done));
}

void CoreShards::abortAssociation(db::AssociationId id, std::string actor, StatusDone done) {
  abortFrom(0, id, std::move(actor), std::move(done));
}

// Association ids say nothing of their thread: each is asked in turn until one has it.
void CoreShards::abortFrom(std::size_t index, db::AssociationId id, std::string actor, StatusDone done) {
  CoreService& service = shards_[index]->service();
  service.abortAssociation(id, actor, [this, index, id, actor, done = std::move(done)](db::Status status) {
    if (status.code() != db::Status::Code::kNotFound || index + 1 == shards_.size()) return done(status);
    abortFrom(index + 1, id, actor, done);
  });
}

void CoreShards::releaseProvider(std::string spid, std::string reason, CountDone done) {
  AssociationManager& shard = owner(spid);
  shard.service().releaseProvider(std::move(spid), std::move(reason), std::move(done));
}

void CoreShards::metrics(bool providers, MetricsDone done) {
  auto gather = std::make_shared<Gather<CoreMetrics>>(
      shards_.size(), [done = std::move(done)](std::vector<db::Result<CoreMetrics>> parts) {
        for (auto& part : parts) {
          if (!part.isOk()) return done(part.status());
        }
        // Thread 0 holds the listener; the rest add their providers and binds.
        CoreMetrics out = std::move(parts[0].value());
        for (std::size_t i = 1; i < parts.size(); ++i) {
          CoreMetrics& m = parts[i].value();
          out.draining = out.draining || m.draining;
          out.storage_ok = out.storage_ok && m.storage_ok;
          out.delivery_rounds_memory += m.delivery_rounds_memory;
          out.delivery_rounds_database += m.delivery_rounds_database;
          out.binds_accepted += m.binds_accepted;
          out.bind_commits += m.bind_commits;
          for (const auto& [code, n] : m.binds_refused) out.binds_refused[code] += n;
          for (auto& p : m.providers) out.providers.push_back(std::move(p));
        }
        std::sort(out.providers.begin(), out.providers.end(),
                  [](const auto& a, const auto& b) { return a.spid < b.spid; });
        done(std::move(out));
      });
  for (std::size_t i = 0; i < shards_.size(); ++i) {
    shards_[i]->service().metrics(providers,
                                  [gather, i](db::Result<CoreMetrics> m) { gather->add(i, std::move(m)); });
  }
}

}  // namespace npac::npacd
