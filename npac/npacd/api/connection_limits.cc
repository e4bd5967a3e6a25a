#include "npac/npacd/api/connection_limits.h"

#include <algorithm>

namespace npac::npacd {

namespace {

ConnectionLimits::Limits atLeastOne(ConnectionLimits::Limits limits) {
  limits.max_connections = std::max<std::size_t>(limits.max_connections, 1);
  limits.max_per_client = std::max<std::size_t>(limits.max_per_client, 1);
  limits.max_per_credential = std::max<std::size_t>(limits.max_per_credential, 1);
  limits.max_anonymous = std::max<std::size_t>(limits.max_anonymous, 1);
  return limits;
}

}  // namespace

const char* toString(RequestPriority priority) {
  switch (priority) {
    case RequestPriority::kAnonymous: return "anonymous";
    case RequestPriority::kReader: return "reader";
    case RequestPriority::kApplication: return "application";
    case RequestPriority::kOperator: return "operator";
  }
  return "anonymous";
}

ConnectionLimits::ConnectionLimits(Limits limits) : limits_(atLeastOne(limits)) {}

std::vector<ConnectionAccount*> ConnectionLimits::accept(ConnectionAccount& account) {
  account.arrival = ++arrivals_;
  account.priority = RequestPriority::kAnonymous;
  account.credential.reset();
  account.pool = ConnectionAccount::Pool::kAnonymous;
  count(account);
  std::vector<ConnectionAccount*> closed;
  // The newest connection is never the oldest while another shares its pool, so it stays.
  while (anonymous_per_client_[account.address] > limits_.max_per_client) {
    ConnectionAccount* oldest = oldestAnonymous(&account.address);
    uncount(*oldest);
    closed.push_back(oldest);
  }
  while (anonymous_.size() > limits_.max_anonymous) {
    ConnectionAccount* oldest = oldestAnonymous(nullptr);
    uncount(*oldest);
    closed.push_back(oldest);
  }
  return closed;
}

ConnectionLimits::Admission ConnectionLimits::admit(ConnectionAccount& account, RequestPriority priority,
                                                    std::optional<std::size_t> credential) {
  Admission out;
  if (priority == RequestPriority::kAnonymous) return out;  // stays where it is
  const bool credentialed = account.pool == ConnectionAccount::Pool::kCredentialed;
  if (credentialed && account.priority == priority && account.credential == credential) return out;

  if (refusedPerSource(account, priority, credential, out)) return out;
  // Operators may hold every place; the other roles together all but operator_reserve.
  const bool was_operator = credentialed && account.priority == RequestPriority::kOperator;
  const std::size_t others = credentialed_.size() - (credentialed ? 1 : 0);
  const std::size_t other_non_operators = non_operators_ - (credentialed && !was_operator ? 1 : 0);
  const std::size_t reserve = std::min(limits_.operator_reserve, limits_.max_connections);
  std::size_t needed = others >= limits_.max_connections ? others - limits_.max_connections + 1 : 0;
  bool reserve_binds = false;
  if (priority != RequestPriority::kOperator && other_non_operators >= limits_.max_connections - reserve) {
    const std::size_t over = other_non_operators - (limits_.max_connections - reserve) + 1;
    reserve_binds = over >= needed && reserve > 0;
    needed = std::max(needed, over);
  }
  if (needed > 0) {
    // Room from the longest-idle connections that are not an operator's — only if enough
    // of them are idle, so nothing is closed for a request that is refused anyway.
    std::size_t candidates = 0;
    for (const ConnectionAccount* other : credentialed_) {
      if (other != &account && other->idle && other->priority != RequestPriority::kOperator) ++candidates;
    }
    if (candidates < needed) {
      out.refusal = reserve_binds ? Refusal::kOperatorReserve : Refusal::kFull;
      out.holding = reserve_binds ? other_non_operators : others;
      return out;
    }
    for (std::size_t i = 0; i < needed; ++i) {
      ConnectionAccount* idle = longestIdleNonOperator(&account);
      uncount(*idle);
      out.closed_for_room.push_back(idle);
    }
  }
  uncount(account);
  account.priority = priority;
  account.credential = credential;
  account.pool = ConnectionAccount::Pool::kCredentialed;
  count(account);
  return out;
}

bool ConnectionLimits::refusedPerSource(const ConnectionAccount& account, RequestPriority priority,
                                        std::optional<std::size_t> credential, Admission& out) const {
  const bool credentialed = account.pool == ConnectionAccount::Pool::kCredentialed;
  // Each limit counts the others: this connection's own place is given up if admitted.
  auto client = per_client_.find({account.address, priority});
  const std::size_t same_client = (client == per_client_.end() ? 0 : client->second) -
                                  (credentialed && account.priority == priority ? 1 : 0);
  if (same_client >= limits_.max_per_client) {
    out.refusal = Refusal::kPerClient;
    out.holding = same_client;
    return true;
  }
  if (credential) {
    auto holders = per_credential_.find(*credential);
    const std::size_t same_credential = (holders == per_credential_.end() ? 0 : holders->second) -
                                        (credentialed && account.credential == credential ? 1 : 0);
    if (same_credential >= limits_.max_per_credential) {
      out.refusal = Refusal::kPerCredential;
      out.holding = same_credential;
      return true;
    }
  }
  return false;
}

void ConnectionLimits::remove(ConnectionAccount& account) { uncount(account); }

ConnectionAccount* ConnectionLimits::takeForRoom() {
  ConnectionAccount* victim = oldestAnonymous(nullptr);
  if (victim == nullptr) victim = longestIdleNonOperator(nullptr);
  if (victim != nullptr) uncount(*victim);
  return victim;
}

ConnectionAccount* ConnectionLimits::oldestAnonymous(const std::string* address) const {
  ConnectionAccount* oldest = nullptr;
  for (ConnectionAccount* account : anonymous_) {
    if (address != nullptr && account->address != *address) continue;
    if (oldest == nullptr || account->arrival < oldest->arrival) oldest = account;
  }
  return oldest;
}

ConnectionAccount* ConnectionLimits::longestIdleNonOperator(const ConnectionAccount* except) const {
  ConnectionAccount* oldest = nullptr;
  for (ConnectionAccount* account : credentialed_) {
    if (account == except || !account->idle || account->priority == RequestPriority::kOperator) continue;
    if (oldest == nullptr || account->idle_mark < oldest->idle_mark) oldest = account;
  }
  return oldest;
}

void ConnectionLimits::count(ConnectionAccount& account) {
  if (account.pool == ConnectionAccount::Pool::kAnonymous) {
    anonymous_.insert(&account);
    ++anonymous_per_client_[account.address];
  } else if (account.pool == ConnectionAccount::Pool::kCredentialed) {
    credentialed_.insert(&account);
    if (account.priority != RequestPriority::kOperator) ++non_operators_;
    ++per_client_[{account.address, account.priority}];
    if (account.credential) ++per_credential_[*account.credential];
  }
}

void ConnectionLimits::uncount(ConnectionAccount& account) {
  auto decrement = [](auto& map, const auto& key) {
    if (auto it = map.find(key); it != map.end() && --it->second == 0) map.erase(it);
  };
  if (account.pool == ConnectionAccount::Pool::kAnonymous) {
    anonymous_.erase(&account);
    decrement(anonymous_per_client_, account.address);
  } else if (account.pool == ConnectionAccount::Pool::kCredentialed) {
    credentialed_.erase(&account);
    if (account.priority != RequestPriority::kOperator) --non_operators_;
    decrement(per_client_, std::make_pair(account.address, account.priority));
    if (account.credential) decrement(per_credential_, *account.credential);
  }
  account.pool = ConnectionAccount::Pool::kNone;
}

}  // namespace npac::npacd
