// The "current load %" column (EAGLE "Weighted GTT Load Sharing", Tables 2-1 and 2-4).
#include <catch2/catch.hpp>

#include <numeric>

#include "dispatch/traffic_table.h"

using namespace npac::dispatch;

TEST_CASE("EAGLE Table 2-1 load percentages: the last entity absorbs the residue",
          "[traffic_table][eagle]") {
  CHECK(loadPercents({40, 30, 10, 30}) == std::vector<std::uint32_t>{36, 27, 9, 28});
}

TEST_CASE("EAGLE Table 2-4 load percentages round half up", "[traffic_table][eagle]") {
  CHECK(loadPercents({40, 0, 10, 30}) == std::vector<std::uint32_t>{50, 0, 13, 37});
}

TEST_CASE("A trailing entity with no traffic never takes the residue", "[traffic_table]") {
  CHECK(loadPercents({1, 1, 1, 0}) == std::vector<std::uint32_t>{33, 33, 34, 0});
}

TEST_CASE("All-zero weights give an all-zero column", "[traffic_table]") {
  CHECK(loadPercents({0, 0}) == std::vector<std::uint32_t>{0, 0});
  CHECK(loadPercents({}).empty());
}

TEST_CASE("Many small members still sum to 100 within one percent each", "[traffic_table]") {
  for (std::size_t n : {3u, 7u, 150u, 333u, 4096u}) {
    std::vector<std::uint64_t> w(n, 1);
    w[0] = 5;
    const auto p = loadPercents(w);
    const std::uint64_t total = std::accumulate(w.begin(), w.end(), std::uint64_t{0});
    CHECK(std::accumulate(p.begin(), p.end(), 0u) == 100u);
    for (std::size_t i = 0; i < n; ++i) {
      const double exact = 100.0 * static_cast<double>(w[i]) / static_cast<double>(total);
      CHECK(std::abs(static_cast<double>(p[i]) - exact) <= 1.0);
    }
  }
}
