// BindQueue: which waiting binds are decided together in one transaction (group-committed
// binds, npac/npacd/core/bind_queue.h).
#include "npac/npacd/core/bind_queue.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace npac::npacd;

namespace {

// A waiting bind of `spid`, told apart by its sequence number.
PendingBind bindOf(const std::string& spid, std::uint64_t sequence) {
  PendingBind bind;
  bind.request.spid = spid;
  bind.request.sequence_number = sequence;
  return bind;
}

std::vector<std::pair<std::string, std::uint64_t>> names(const std::vector<PendingBind>& batch) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (const PendingBind& bind : batch) out.emplace_back(bind.request.spid, bind.request.sequence_number);
  return out;
}

using Names = std::vector<std::pair<std::string, std::uint64_t>>;

}  // namespace

TEST_CASE("A batch holds every waiting bind of different providers, in arrival order") {
  BindQueue queue;
  queue.add(bindOf("0003", 1));
  queue.add(bindOf("0001", 2));
  queue.add(bindOf("0002", 3));
  CHECK(names(queue.takeBatch()) == Names{{"0003", 1}, {"0001", 2}, {"0002", 3}});
  CHECK(queue.empty());
}

TEST_CASE("A provider's second bind waits for the next batch, decided after its first") {
  BindQueue queue;
  queue.add(bindOf("0001", 1));
  queue.add(bindOf("0002", 2));
  queue.add(bindOf("0001", 3));
  queue.add(bindOf("0001", 4));
  queue.add(bindOf("0003", 5));
  CHECK(names(queue.takeBatch()) == Names{{"0001", 1}, {"0002", 2}, {"0003", 5}});
  REQUIRE(queue.size() == 2);
  CHECK(names(queue.takeBatch()) == Names{{"0001", 3}});
  CHECK(names(queue.takeBatch()) == Names{{"0001", 4}});
  CHECK(queue.empty());
  CHECK(queue.takeBatch().empty());
}

TEST_CASE("A batch holds at most its maximum and the rest keep their places") {
  BindQueue queue;
  for (std::uint64_t i = 0; i < 5; ++i) queue.add(bindOf("000" + std::to_string(i), i));
  CHECK(names(queue.takeBatch(2)) == Names{{"0000", 0}, {"0001", 1}});
  CHECK(names(queue.takeBatch(2)) == Names{{"0002", 2}, {"0003", 3}});
  CHECK(names(queue.takeBatch(2)) == Names{{"0004", 4}});
}

TEST_CASE("Binds received later join the waiting ones behind them") {
  BindQueue queue;
  queue.add(bindOf("0001", 1));
  queue.add(bindOf("0001", 2));
  CHECK(names(queue.takeBatch()) == Names{{"0001", 1}});
  queue.add(bindOf("0002", 3));
  queue.add(bindOf("0001", 4));
  CHECK(names(queue.takeBatch()) == Names{{"0001", 2}, {"0002", 3}});
  CHECK(names(queue.takeBatch()) == Names{{"0001", 4}});
}
