// ShardRoute: see shard_route.h.
#include "npac/npacd/core/shard_route.h"

#include "npac/npacd/core/association_manager.h"
#include "npac/npacd/core/core_shards.h"

namespace npac::npacd {

void ShardRoute::join(CoreShards& shards, std::size_t index) {
  shards_ = &shards;
  index_ = index;
}

AssociationManager& ShardRoute::ownerOf(const std::string& spid) const {
  return shards_ != nullptr ? shards_->shard(shards_->shardOf(spid)) : self_;
}

AssociationManager& ShardRoute::inboundHome() const {
  return shards_ != nullptr && index_ != 0 ? shards_->shard(0) : self_;
}

std::int64_t ShardRoute::nextAssociationId(std::int64_t* local) const {
  return shards_ != nullptr ? shards_->nextAssociationId() : ++*local;
}

}  // namespace npac::npacd
