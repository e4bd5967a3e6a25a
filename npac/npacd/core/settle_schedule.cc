#include "npac/npacd/core/settle_schedule.h"

#include <spdlog/spdlog.h>

namespace npac::npacd {

void SettleSchedule::settleAfter(const std::vector<const ProgressWrite*>& acknowledged) {
  for (const ProgressWrite* write : acknowledged) {
    const ProgressWrite& w = *write;
    Settling& entry = settling_[w.spid];
    entry.acks += w.ids.size();
    if (entry.acks < kSettleEveryAcks && w.at - entry.last < kSettleEveryMs) continue;
    db::Result<db::MessageId> mark = queue_.settle(w.spid, w.at);
    if (!mark.isOk()) {
      spdlog::warn("outbound queue: moving provider {}'s settled mark failed ({}); tried again with its next "
                   "acknowledgements", w.spid, mark.status().toString());
      continue;
    }
    entry = Settling{0, w.at};
    ++settles_;
  }
}

}  // namespace npac::npacd
