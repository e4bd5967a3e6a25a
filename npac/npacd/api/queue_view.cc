#include "npac/npacd/api/queue_view.h"

#include <algorithm>
#include <array>

#include "npac/npacd/api/json.h"
#include "npac/npacd/core/provider_core.h"  // routingFunction

namespace npac::npacd {

using nlohmann::json;
namespace as = npac::associations;

namespace {

const ProviderQueueView::FunctionWait* coreWait(const ProviderQueueView& live, as::AssociationFunction function) {
  const std::string name(as::toString(function));
  for (const ProviderQueueView::FunctionWait& wait : live.waits) {
    if (wait.function == name) return &wait;
  }
  return nullptr;
}

json optionalString(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

}  // namespace

as::AssociationFunction waitFunctionOf(std::uint32_t function_mask) { return routingFunction(function_mask); }

std::optional<std::string> waitReasonFor(const ProviderQueueView* live, as::AssociationFunction function) {
  if (live == nullptr) return std::string(waitReasonName(WaitReason::kNotBound));
  if (const ProviderQueueView::FunctionWait* wait = coreWait(*live, function)) {
    return std::string(waitReasonName(wait->reason));
  }
  if (!live->bound) return std::string(waitReasonName(WaitReason::kNotBound));
  return std::nullopt;
}

json queueViewJson(const std::string& spid, const db::QueueSummary& summary, const ProviderQueueView* live,
                   db::TimeMs now) {
  using db::MessageState;
  json counts = json::array();
  std::array<std::size_t, as::kFunctionCount> queued_by_function{};
  std::array<std::optional<db::TimeMs>, as::kFunctionCount> oldest_by_function{};
  for (const db::QueueCount& c : summary.counts) {
    counts.push_back({{"state", db::toString(c.state)},
                      {"function_mask", c.function_mask},
                      {"functions", as::FunctionMask(static_cast<std::uint8_t>(c.function_mask)).toString()},
                      {"count", c.count},
                      {"oldest_created_at", formatTime(c.oldest_created_at)}});
    if (c.state != MessageState::kQueued) continue;
    const auto f = static_cast<std::size_t>(waitFunctionOf(c.function_mask));
    queued_by_function[f] += c.count;
    if (!oldest_by_function[f] || c.oldest_created_at < *oldest_by_function[f]) {
      oldest_by_function[f] = c.oldest_created_at;
    }
  }
  auto age = [now](db::TimeMs at) { return std::max<db::TimeMs>(0, now - at); };

  // One entry per function with queued rows or a wait the core reports, in function order.
  json waits = json::array();
  for (std::size_t f = 0; f < as::kFunctionCount; ++f) {
    const auto function = static_cast<as::AssociationFunction>(f);
    const ProviderQueueView::FunctionWait* reported = live != nullptr ? coreWait(*live, function) : nullptr;
    if (queued_by_function[f] == 0 && reported == nullptr) continue;
    waits.push_back({{"function", std::string(as::toString(function))},
                     {"queued", queued_by_function[f]},
                     {"oldest_queued_age_ms", oldest_by_function[f] ? json(age(*oldest_by_function[f])) : json(nullptr)},
                     {"reason", optionalString(waitReasonFor(live, function))},
                     {"core_waiting", reported != nullptr ? json(reported->waiting) : json(nullptr)}});
  }

  const std::optional<db::TimeMs> oldest = summary.oldestQueuedAt();
  json out = {{"spid", spid},
              {"live", live != nullptr},
              {"bound", live != nullptr && live->bound},
              {"counts", counts},
              {"totals",
               {{"queued", summary.total(MessageState::kQueued)},
                {"sent", summary.total(MessageState::kSent)},
                {"acknowledged", summary.total(MessageState::kAcknowledged)},
                {"failed", summary.total(MessageState::kFailed)}}},
              {"oldest_queued_at", oldest ? json(formatTime(*oldest)) : json(nullptr)},
              {"oldest_queued_age_ms", oldest ? json(age(*oldest)) : json(nullptr)},
              {"waits", waits}};
  // What only a live core knows is null without one, rather than a guess.
  json associations = json::array();
  if (live != nullptr) {
    for (const ProviderQueueView::AssociationLoad& a : live->associations) {
      associations.push_back(
          {{"id", a.id}, {"outstanding", a.outstanding}, {"congested", a.congested}, {"silent", a.silent}});
    }
  }
  out["throttle"] = live != nullptr ? throttleJson(*live) : json(nullptr);
  out["storage_ok"] = live != nullptr ? json(live->storage_ok) : json(nullptr);
  out["associations"] = associations;
  return out;
}

json throttleJson(const ProviderQueueView& live) {
  return {{"level", live.throttle_level},
          {"detail", live.throttle_detail},
          {"group", live.throttle_group.empty() ? json(nullptr) : json(live.throttle_group)},
          {"group_level", live.throttle_group_level}};
}

}  // namespace npac::npacd
