#include "dispatch/traffic_table.h"

#include <algorithm>
#include <numeric>

namespace npac::dispatch {
namespace {

constexpr std::uint64_t kWhole = 100;

// Hamilton / largest remainder: floors, then +1 to the largest remainders (ties to the
// earlier entity). Used only when the EAGLE tables' rule cannot give a column within ±1 %.
std::vector<std::uint32_t> largestRemainder(const std::vector<std::uint64_t>& w,
                                            std::uint64_t total) {
  std::vector<std::uint32_t> out(w.size());
  std::vector<std::size_t> order(w.size());
  std::uint64_t given = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    out[i] = static_cast<std::uint32_t>(w[i] * kWhole / total);
    given += out[i];
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return (w[a] * kWhole) % total > (w[b] * kWhole) % total;
  });
  for (std::size_t k = 0; given < kWhole && k < order.size(); ++k, ++given) ++out[order[k]];
  return out;
}

}  // namespace

std::vector<std::uint32_t> loadPercents(const std::vector<std::uint64_t>& weights) {
  std::vector<std::uint32_t> out(weights.size(), 0);
  const std::uint64_t total = std::accumulate(weights.begin(), weights.end(), std::uint64_t{0});
  if (total == 0) return out;
  std::size_t last = weights.size();
  for (std::size_t i = weights.size(); i-- > 0;) {
    if (weights[i] != 0) {
      last = i;
      break;
    }
  }
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < last; ++i) {
    // Round half up: floor(100·w/total + 1/2) = (200·w + total) / (2·total).
    out[i] = static_cast<std::uint32_t>((2 * kWhole * weights[i] + total) / (2 * total));
    sum += out[i];
  }
  // The residue must itself be a valid share within ±1 % of the last entity's exact share.
  const std::uint64_t exact = kWhole * weights[last];  // in units of 1/total percent
  if (sum > kWhole || (kWhole - sum) * total > exact + total ||
      (kWhole - sum) * total + total < exact) {
    return largestRemainder(weights, total);
  }
  out[last] = static_cast<std::uint32_t>(kWhole - sum);
  return out;
}

}  // namespace npac::dispatch
