// ProviderCounting: see provider_counting.h.
#include "npac/npacd/core/provider_counting.h"

#include "npac/npacd/core/row_facts.h"

namespace npac::npacd {
namespace as = npac::associations;

void ProviderCounting::setCounting(bool on) {
  if (!on) {
    counters_.reset();
    in_flight_series_.clear();
  } else if (!counters_) {
    counters_ = std::make_unique<ProviderCounters>();
  }
}

std::optional<PduSeries> ProviderCounting::written(const db::QueuedMessage& row, bool confirmed,
                                                   bool retransmission) {
  if (!counters_) return std::nullopt;
  const PduSeries series{routingFunction(row.function_mask),
                         static_cast<std::uint8_t>(ProviderCounters::operationIndex(row.opcode))};
  counters_->count(ProviderCounters::kSent, series.function, series.operation);
  if (retransmission) counters_->count(ProviderCounters::kRetransmitted, series.function, series.operation);
  if (confirmed) in_flight_series_[row.id] = series;
  return series;
}

void ProviderCounting::failed(const db::QueuedMessage& row) {
  if (!counters_) return;
  counters_->count(ProviderCounters::kFailed, routingFunction(row.function_mask),
                   ProviderCounters::operationIndex(row.opcode));
}

void ProviderCounting::answered(db::MessageId message, ProviderCounters::Outcome outcome) {
  if (!counters_) return;
  PduSeries series;
  if (auto it = in_flight_series_.find(message); it != in_flight_series_.end()) {
    series = it->second;
    in_flight_series_.erase(it);
  }
  counters_->count(outcome, series.function, series.operation);
}

void ProviderCounting::acknowledged(const PduSeries& series) {
  if (counters_) counters_->count(ProviderCounters::kAcknowledged, series.function, series.operation);
}

void ProviderCounting::responseRtt(double seconds) {
  if (counters_) counters_->response_rtt.observe(seconds);
}

void ProviderCounting::heartbeatRtt(double seconds) {
  if (counters_) counters_->heartbeat_rtt.observe(seconds);
}

void ProviderCounting::recoverySession() {
  if (counters_) ++counters_->recovery_sessions;
}

void ProviderCounting::picked(db::AssociationId association, as::AssociationFunction function, bool retransmission,
                              db::TimeMs at) {
  recent_[next_pick_++ % kRecentPicks] = RecentPick{association, function, retransmission, at};
}

std::vector<ProviderEgressView::Pick> ProviderCounting::recent() const {
  std::vector<ProviderEgressView::Pick> out;
  const std::uint64_t first = next_pick_ > kRecentPicks ? next_pick_ - kRecentPicks : 0;
  for (std::uint64_t i = first; i < next_pick_; ++i) {
    const RecentPick& pick = recent_[i % kRecentPicks];
    out.push_back({pick.association, as::FunctionMask::of({pick.function}).toString(), pick.at, pick.retransmission});
  }
  return out;
}

}  // namespace npac::npacd
