// The raw limit npacd's delivery is compared with (docs/OPERATIONS.md, "Load figures"):
// plain loopback TCP moving the frames npacd's load test moves, with no decoding, no
// dispatch and no SQLite.
//
//   BM_RawOneWay      one connection, one write() per 80-byte frame, a reader that only
//                     counts bytes: the most a socket can carry frame by frame.
//   BM_RawRoundTrip   the same frames, and the receiving side answers every frame with a
//                     40-byte frame (as the provider answers each confirmed event report)
//                     that the sending side reads back: request, answer, one write each.
//
// Counter `frames_per_second` is what bench/npacd_load.sh reports next to npacd's
// delivered-and-acknowledged PDUs per second. Real time (threads block on sockets).
#include <benchmark/benchmark.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kFrame = 80;   // TPKT + COTP DT + session + presentation + ROSE Invoke
constexpr std::size_t kAnswer = 40;  // the provider's ReturnResult, framed
constexpr int kFrames = 20000;       // as bench/npacd_load.sh's default N

struct Pair {
  int a = -1;  // the NPAC side
  int b = -1;  // the provider side
  ~Pair() {
    if (a >= 0) close(a);
    if (b >= 0) close(b);
  }
};

void noDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A connected loopback TCP pair (127.0.0.1, ephemeral port).
void connectPair(Pair& pair) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("loopback listen failed");
  }
  pair.a = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(pair.a, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("loopback connect failed");
  }
  pair.b = accept(listener, nullptr, nullptr);
  close(listener);
  noDelay(pair.a);
  noDelay(pair.b);
}

void writeAll(int fd, const std::uint8_t* data, std::size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w <= 0) throw std::runtime_error("write failed");
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Reads until `total` bytes arrived; returns false on EOF/error.
bool readBytes(int fd, std::size_t total) {
  std::vector<std::uint8_t> buffer(1 << 16);
  std::size_t got = 0;
  while (got < total) {
    ssize_t r = read(fd, buffer.data(), buffer.size());
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

std::vector<std::uint8_t> tpkt(std::size_t size) {
  std::vector<std::uint8_t> frame(size, 0);
  frame[0] = 0x03;
  frame[2] = static_cast<std::uint8_t>(size >> 8);
  frame[3] = static_cast<std::uint8_t>(size & 0xFF);
  return frame;
}

void BM_RawOneWay(benchmark::State& state) {
  const auto frame = tpkt(kFrame);
  for (auto _ : state) {
    Pair pair;
    connectPair(pair);
    std::thread reader([&] { readBytes(pair.b, kFrames * kFrame); });
    for (int i = 0; i < kFrames; ++i) writeAll(pair.a, frame.data(), frame.size());
    reader.join();
  }
  state.counters["frames_per_second"] =
      benchmark::Counter(static_cast<double>(kFrames) * state.iterations(), benchmark::Counter::kIsRate);
}

void BM_RawRoundTrip(benchmark::State& state) {
  const auto frame = tpkt(kFrame);
  const auto answer = tpkt(kAnswer);
  for (auto _ : state) {
    Pair pair;
    connectPair(pair);
    // The provider: reads frames (by TPKT length) and answers each one.
    std::thread provider([&] {
      std::vector<std::uint8_t> buffer(1 << 16);
      std::size_t pending = 0;
      int answered = 0;
      while (answered < kFrames) {
        ssize_t r = read(pair.b, buffer.data(), buffer.size());
        if (r <= 0) return;
        pending += static_cast<std::size_t>(r);
        for (; pending >= kFrame; pending -= kFrame, ++answered) {
          writeAll(pair.b, answer.data(), answer.size());
        }
      }
    });
    std::thread answers([&] { readBytes(pair.a, kFrames * kAnswer); });
    for (int i = 0; i < kFrames; ++i) writeAll(pair.a, frame.data(), frame.size());
    answers.join();
    provider.join();
  }
  state.counters["frames_per_second"] =
      benchmark::Counter(static_cast<double>(kFrames) * state.iterations(), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_RawOneWay)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);
BENCHMARK(BM_RawRoundTrip)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

BENCHMARK_MAIN();
