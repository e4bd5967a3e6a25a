#include "npac/npacd/core/bind_queue.h"

#include <set>
#include <string>

namespace npac::npacd {

std::vector<PendingBind> BindQueue::takeBatch(std::size_t max) {
  std::vector<PendingBind> batch;
  std::set<std::string> providers;
  std::deque<PendingBind> later;
  while (!waiting_.empty()) {
    PendingBind bind = std::move(waiting_.front());
    waiting_.pop_front();
    if (batch.size() < max && providers.insert(bind.request.spid).second) {
      batch.push_back(std::move(bind));
    } else {
      later.push_back(std::move(bind));
    }
  }
  waiting_ = std::move(later);
  return batch;
}

}  // namespace npac::npacd
