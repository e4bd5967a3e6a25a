// npacd_loadgen: the NPAC application's side of a load run. It submits N confirmed
// notifications to npacd's POST /v1/messages (docs/API.md "Messages") in batches over C
// HTTP/1.1 keep-alive connections, then waits until npacd has every one acknowledged by
// the provider, and prints one line
//
//   RESULT system=npacd durability=… mode=… n=… secs=… rate=… p50_ms=… p99_ms=… loadgen_cpu_s=… …
//
// for bench/compare.sh to read. With --spids A,B,C the messages are spread round-robin
// over those providers (message i to the (i mod P)-th), each message to one of them, as
// bench/threads.sh needs to load many providers at once; --spid is the one-provider case.
// With --broadcast-to all it sends N broadcasts instead
// (POST /v1/broadcasts, docs/API.md "Broadcasts": one message to every provider that takes
// the function), one per request, and waits for every provider's acknowledgement of each.
//
// Modes.
//   burst   closed loop: each connection sends its next batch as soon as the answer to
//           its previous one has arrived. The throughput figure. A message's latency is
//           counted from the moment its batch was written.
//   rate    open loop: batch k is due at start + k·B/R seconds, on a schedule computed
//           from the start and never from the previous answer, so slow answers do not
//           slow the offered load. A message's latency is counted from its batch's due
//           time, not from when a connection was free to send it: a backlog of due
//           batches shows in the latency instead of being hidden ("coordinated
//           omission", Gil Tene, "How NOT to Measure Latency").
//
// Acknowledgement times are the queue rows' acknowledged_at (db/clock.h: milliseconds
// since the epoch; schema 9 on, the `at` of the delivery progress record that acknowledged
// the row, folded as npacd folds them — db/delivery_progress.h), read with SELECTs only from npacd's database once every answer is in
// — its SQLite file or, for `--db postgresql://…`, its PostgreSQL database, both through
// npac::db::Database (db/database.h); the admin API shows a message's acknowledged_at one id per request only. So
// latencies have 1 ms resolution (the RESULT line says ack_resolution_ms=1). A run is
// timed like the peers' (../shared/peers/run_peers.sh beside the checkout): from the first submission
// until both the last submission's answer and the last acknowledgement.
//
// Exit status: 0 every message accepted and acknowledged; 1 something refused, failed or
// not acknowledged within --timeout; 2 bad flags. Always stops by itself (--timeout).
//
// Threading: one thread runs one io_context; every connection is a coroutine on it, so
// nothing is shared between threads. The database reads run on the main thread after it.
#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>

#include "db/database.h"
#include "db/postgres_connection.h"
#include "db/delivery_progress.h"
#include "db/outbound_queue.h"
#include "db/progress_log.h"
#include "db/statement.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/api/pdu_batch.h"
#include <sstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

struct Options {
  std::string api = "127.0.0.1:10180";
  std::string token_file;
  std::string db;
  std::vector<std::string> spids{"0001"};  // message i goes to spids[i mod size]
  std::string durability = "unknown";  // only labels the RESULT line: npacd's --durability
  std::string mode = "burst";
  std::string from;  // local address of the HTTP connections
  std::string function = "notifications";
  std::string broadcast_to;  // "all": N broadcasts, one per request, instead of messages
  std::string format = "json";  // "pdu-batch": POST /v1/pdu-batches, the same PDUs encoded
  size_t n = 100000;
  size_t batch = 1000;
  size_t connections = 8;
  double rate = 0;  // messages per second, --mode rate
  size_t pdu_bytes = 300;
  double timeout_s = 120;
};

// The stored PDU (a ROSE Invoke of an M-EVENT-REPORT, X.880 / X.711) of the message below
// with a zero-length information OCTET STRING, measured from the queue rows; the
// information's length is the target minus this, and the RESULT line's pdu_bytes is the
// stored size actually measured.
constexpr size_t kInvokeWithoutInformation = 62;
constexpr size_t kTagBytes = 12;  // "seq=" and 8 decimal digits: each message is distinct

double systemMs() {
  using namespace std::chrono;
  return duration<double, std::milli>(system_clock::now().time_since_epoch()).count();
}

double cpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

// The information field: one BER OCTET STRING (X.690 §8.7) holding the message's
// sequence number and filler, sized so the stored PDU is about opts.pdu_bytes.
std::string informationHex(size_t index, size_t content_len) {
  char tag[kTagBytes + 1];
  std::snprintf(tag, sizeof tag, "seq=%08zu", index % 100000000);
  std::string content(tag, kTagBytes);
  content.resize(content_len, 'x');
  std::string header = "\x04";
  if (content_len < 0x80) {
    header.push_back(static_cast<char>(content_len));
  } else if (content_len <= 0xff) {
    header += "\x81";
    header.push_back(static_cast<char>(content_len));
  } else {
    header += "\x82";
    header.push_back(static_cast<char>(content_len >> 8));
    header.push_back(static_cast<char>(content_len & 0xff));
  }
  return hex(header + content);
}

// Batch bodies, built before the clock starts so the loadgen's own JSON work is not in
// the timed run. Message fields as in docs/API.md "Messages".
std::vector<std::string> buildBatches(const Options& opts) {
  size_t overhead = kInvokeWithoutInformation + kTagBytes;
  size_t content_len = opts.pdu_bytes > overhead ? opts.pdu_bytes - kInvokeWithoutInformation : kTagBytes;
  // The information's own length octets grow with it (1, 2 or 3 of them).
  content_len -= content_len >= 0x100 ? 2 : content_len >= 0x80 ? 1 : 0;
  const std::string common = R"("function":")" + opts.function + R"(","operation":"event-report","confirmed":true,)"
                             R"("object_class":"1.3.6.1.4.1.103.7.0.0.1.3",)"
                             R"("instance":{"dn":[[{"id":"2.5.4.3","value":"13044e504143"}]]},)"
                             R"("type":"1.3.6.1.4.1.103.7.0.0.5.1","information":")";
  // One message head per provider (a broadcast names none: "to":"all").
  std::vector<std::string> heads;
  if (opts.broadcast_to.empty()) {
    for (const auto& spid : opts.spids) heads.push_back(R"({"spid":")" + spid + "\"," + common);
  } else {
    heads.push_back(R"({"to":"all",)" + common);
  }
  auto head = [&](size_t i) -> const std::string& { return heads[i % heads.size()]; };
  std::vector<std::string> batches;
  for (size_t first = 0; first < opts.n; first += opts.batch) {
    size_t last = std::min(opts.n, first + opts.batch);
    bool broadcast = !opts.broadcast_to.empty();
    std::string body = broadcast ? "" : R"({"messages":[)";
    body.reserve((last - first) * (heads[0].size() + 2 * content_len + 16) + 16);
    if (opts.format == "pdu-batch") {
      // The same messages, encoded by npacd's own JSON reader (json.h), so both formats
      // carry identical PDUs (docs/API.md "PDU batches").
      std::vector<std::uint8_t> octets;
      for (size_t i = first; i < last; ++i) {
        auto parsed = npac::npacd::parseMessage(nlohmann::json::parse(head(i) + informationHex(i, content_len) + "\"}"));
        if (!parsed.isOk()) throw std::runtime_error("cannot encode a message: " + parsed.status().message());
        const auto& m = parsed->message;
        npac::npacd::appendPduBatchRecord(octets, m.spid, static_cast<std::uint8_t>(m.function_mask), 0, "", m.pdu);
      }
      batches.emplace_back(octets.begin(), octets.end());
      continue;
    }
    for (size_t i = first; i < last; ++i) {
      if (i != first) body += ',';
      body += head(i);
      body += informationHex(i, content_len);
      body += "\"}";
    }
    if (!broadcast) body += "]}";
    batches.push_back(std::move(body));
  }
  return batches;
}

// What the submission phase learnt: per accepted message its id and submit time.
struct Submitted {
  std::vector<int64_t> ids;
  std::vector<double> submit_ms;  // system clock, fractional ms
  std::vector<size_t> provider;   // index into Options::spids (0 for every broadcast row)
  size_t refused = 0;             // messages (broadcasts) in requests not answered 201
  std::string first_error;
  double first_send_ms = 0;
  double last_answer_ms = 0;
};

class Submitter {
 public:
  Submitter(asio::io_context& io, const Options& opts, std::vector<std::string> batches, std::string token,
            tcp::endpoint api)
      : io_(io), opts_(opts), batches_(std::move(batches)), token_(std::move(token)), api_(api),
        deadline_(SteadyClock::now() + std::chrono::milliseconds(static_cast<int64_t>(opts.timeout_s * 1000))) {}

  // Spawns the connections; io.run() returns when every batch is answered or given up.
  void start() {
    start_steady_ = SteadyClock::now();
    start_system_ms_ = systemMs();
    result_.first_send_ms = start_system_ms_;
    for (size_t c = 0; c < opts_.connections; ++c) {
      asio::co_spawn(io_, connection(c), asio::detached);
    }
  }
  Submitted& result() { return result_; }
  size_t unsent() const { return batches_.size() - std::min(next_, batches_.size()); }

 private:
  void fail(size_t batch, const std::string& why) {
    result_.refused += batchSize(batch);
    if (result_.first_error.empty()) result_.first_error = why;
  }
  size_t batchSize(size_t k) const { return std::min(opts_.batch, opts_.n - k * opts_.batch); }

  // The ids of a 201: POST /v1/messages {"ids":[…]} one per message sent; POST
  // /v1/broadcasts {"messages":[{"id":…},…],"providers":P} one per provider.
  std::optional<std::vector<int64_t>> answeredIds(const std::string& body, size_t sent) const {
    auto answer = nlohmann::json::parse(body, nullptr, false);
    std::vector<int64_t> ids;
    if (answer.is_discarded() || !answer.is_object()) return std::nullopt;
    if (opts_.broadcast_to.empty()) {
      if (!answer.contains("ids") || !answer["ids"].is_array() || answer["ids"].size() != sent) return std::nullopt;
      for (const auto& id : answer["ids"]) {
        if (!id.is_number_integer()) return std::nullopt;
        ids.push_back(id.get<int64_t>());
      }
      return ids;
    }
    if (!answer.contains("messages") || !answer["messages"].is_array() || !answer.contains("providers") ||
        answer["messages"].size() != answer["providers"]) {
      return std::nullopt;
    }
    for (const auto& m : answer["messages"]) {
      if (!m.is_object() || !m.contains("id") || !m["id"].is_number_integer()) return std::nullopt;
      ids.push_back(m["id"].get<int64_t>());
    }
    return ids;
  }

  asio::awaitable<void> connection(size_t index) {
    beast::tcp_stream stream(io_);
    beast::flat_buffer buffer;
    bool connected = false;
    asio::steady_timer due(io_);
    while (next_ < batches_.size() && SteadyClock::now() < deadline_) {
      size_t k = next_++;
      double submit_ms;
      if (opts_.mode == "rate") {
        // Due at start + k·B/R, whatever happened to the batches before it.
        auto offset = std::chrono::duration<double>(static_cast<double>(k * opts_.batch) / opts_.rate);
        due.expires_at(start_steady_ + std::chrono::duration_cast<SteadyClock::duration>(offset));
        co_await due.async_wait(asio::use_awaitable);
        submit_ms = start_system_ms_ + offset.count() * 1000;
      } else {
        submit_ms = systemMs();
      }
      stream.expires_at(deadline_);
      try {
        if (!connected) {
          if (!opts_.from.empty()) {
            stream.socket().open(api_.protocol());
            stream.socket().bind(tcp::endpoint(asio::ip::make_address(opts_.from), 0));
          }
          co_await stream.async_connect(api_, asio::use_awaitable);
          stream.socket().set_option(tcp::no_delay(true));
          connected = true;
        }
        const bool binary = opts_.format == "pdu-batch";
        http::request<http::string_body> request{
            http::verb::post,
            binary ? "/v1/pdu-batches" : opts_.broadcast_to.empty() ? "/v1/messages" : "/v1/broadcasts", 11};
        request.set(http::field::host, api_.address().to_string());
        request.set(http::field::authorization, "Bearer " + token_);
        request.set(http::field::content_type,
                    binary ? std::string(npac::npacd::kPduBatchMediaType) : std::string("application/json"));
        request.keep_alive(true);
        request.body() = std::move(batches_[k]);
        request.prepare_payload();
        if (opts_.mode != "rate") submit_ms = systemMs();
        co_await http::async_write(stream, request, asio::use_awaitable);
        http::response<http::string_body> response;
        co_await http::async_read(stream, buffer, response, asio::use_awaitable);
        result_.last_answer_ms = std::max(result_.last_answer_ms, systemMs());
        if (response.result() != http::status::created) {
          fail(k, "batch " + std::to_string(k) + " answered " + std::to_string(response.result_int()) + ": " +
                      response.body().substr(0, 300));
          if (!response.keep_alive()) break;
          continue;
        }
        auto ids = answeredIds(response.body(), batchSize(k));
        if (!ids) {
          fail(k, "batch " + std::to_string(k) + ": answer without one id per message: " +
                      response.body().substr(0, 300));
          continue;
        }
        for (size_t j = 0; j < ids->size(); ++j) {
          result_.ids.push_back((*ids)[j]);
          result_.submit_ms.push_back(submit_ms);
          result_.provider.push_back(opts_.broadcast_to.empty() ? (k * opts_.batch + j) % opts_.spids.size() : 0);
        }
        if (!response.keep_alive()) {
          stream.socket().close();
          connected = false;
        }
      } catch (const std::exception& e) {
        fail(k, "connection " + std::to_string(index) + ", batch " + std::to_string(k) + ": " + e.what());
        break;  // this connection is done; the others take the remaining batches
      }
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  asio::io_context& io_;
  const Options& opts_;
  std::vector<std::string> batches_;
  std::string token_;
  tcp::endpoint api_;
  SteadyClock::time_point deadline_;
  SteadyClock::time_point start_steady_;
  double start_system_ms_ = 0;
  size_t next_ = 0;  // the next batch to send: one thread, no lock
  Submitted result_;
};

// The queue rows of the accepted ids, read through npac::db::Database (db/database.h):
// npacd's SQLite file or its PostgreSQL database (a postgresql:// URL), with the same
// SQL on both. Only SELECTs: the schema is neither created nor migrated
// (OpenOptions::apply_schema off), a missing file is not created.
class QueueReader {
 public:
  explicit QueueReader(const std::string& location) {
    npac::db::OpenOptions options;
    options.apply_schema = false;
    options.create_if_missing = false;
    options.busy_timeout = std::chrono::milliseconds(2000);
    auto opened = npac::db::Database::open(location, options);
    if (!opened) {
      error_ = "cannot open " + location + " for reading: " + opened.status().toString();
      return;
    }
    db_ = std::move(opened).value();
  }
  const std::string& error() const { return error_; }

  struct Counts {
    size_t acknowledged = 0;
    size_t failed = 0;
  };
  // Counts by state over [low, high] (the ids are npacd's AUTOINCREMENT, one run).
  std::optional<Counts> counts(int64_t low, int64_t high) {
    std::vector<Folded> folded;
    if (!fold(low, high, folded)) return std::nullopt;
    Counts counts;
    for (const Folded& row : folded) {
      if (row.state == npac::db::MessageState::kAcknowledged) ++counts.acknowledged;
      if (row.state == npac::db::MessageState::kFailed) ++counts.failed;
    }
    return counts;
  }
  // Whether row id is still queued or sent (false once acknowledged or failed, or on error).
  bool queuedOrSent(int64_t id) {
    std::vector<Folded> folded;
    if (!fold(id, id, folded) || !folded.front().present) return false;
    return folded.front().state == npac::db::MessageState::kQueued ||
           folded.front().state == npac::db::MessageState::kSent;
  }
  // acknowledged_at and length(pdu) per id in [low, high]; -1 where not acknowledged.
  bool rows(int64_t low, int64_t high, std::vector<int64_t>& acked_at, std::vector<int64_t>& pdu_len) {
    std::vector<Folded> folded;
    if (!fold(low, high, folded)) return false;
    acked_at.assign(folded.size(), -1);
    pdu_len.assign(folded.size(), 0);
    for (size_t i = 0; i < folded.size(); ++i) {
      if (folded[i].state != npac::db::MessageState::kAcknowledged) continue;
      acked_at[i] = folded[i].progress.acknowledged_at.value_or(-1);
      pdu_len[i] = folded[i].pdu_len;
    }
    return true;
  }

 private:
  struct Folded {
    bool present = false;
    npac::db::MessageState state = npac::db::MessageState::kQueued;
    npac::db::MessageProgress progress;
    int64_t pdu_len = 0;
  };
  // The rows [low, high] as npacd sees them: each row's state columns, then (schema 9 on,
  // the write-once log) the delivery progress records that name it (db/delivery_progress.h).
  // length() of a BLOB (SQLite) or a bytea (PostgreSQL) is its size in bytes either way.
  bool fold(int64_t low, int64_t high, std::vector<Folded>& out) {
    out.assign(static_cast<size_t>(high - low + 1), Folded{});
    std::set<std::string> spids;
    bool ok = query("SELECT q.id, q.spid, q.state, q.attempts, q.sent_at, q.acknowledged_at, q.association_id, "
                    "q.retransmission, q.failed_at, length(b.pdu) FROM outbound_queue AS q "
                    "JOIN message_bodies AS b ON b.id = q.body_id WHERE q.id BETWEEN ? AND ?",
                    {low, high}, [&](const npac::db::Statement& s) {
                      Folded& row = out[static_cast<size_t>(s.columnInt64(0) - low)];
                      row.present = true;
                      spids.insert(s.columnText(1));
                      auto state = npac::db::parseMessageState(s.columnText(2));
                      row.progress.state = state.value_or(npac::db::MessageState::kQueued);
                      row.progress.attempts = static_cast<int>(s.columnInt64(3));
                      if (!s.columnIsNull(5)) row.progress.acknowledged_at = s.columnInt64(5);
                      row.pdu_len = s.columnInt64(9);
                    });
    if (!ok) return false;
    if (hasRecords()) {
      npac::db::ProgressLog log(*db_);
      for (const std::string& spid : spids) {
        auto records = log.after(spid, low - 1);
        if (!records) {
          error_ = "reading the delivery progress records: " + records.status().toString();
          return false;
        }
        for (const npac::db::ProgressRecord& record : *records) {
          for (npac::db::MessageId id : record.ids) {
            if (id < low || id > high || !out[static_cast<size_t>(id - low)].present) continue;
            npac::db::applyEvent(record, out[static_cast<size_t>(id - low)].progress);
          }
        }
      }
    }
    for (Folded& row : out) row.state = row.progress.state;
    return true;
  }
  // Whether the file has delivery progress records (schema 9, the write-once log): an
  // npacd of an earlier schema keeps every state on its rows.
  bool hasRecords() {
    if (!has_records_) {
      auto probe = db_->prepare("SELECT seq FROM delivery_progress WHERE seq < 0");
      has_records_ = probe.isOk() && probe->step().isOk();
    }
    return *has_records_;
  }
  std::optional<bool> has_records_;

 private:
  template <typename Row>
  bool query(const char* sql, std::initializer_list<int64_t> params, Row row) {
    if (!db_) return false;
    auto prepared = db_->prepare(sql);
    if (!prepared) {
      error_ = "reading the queue: " + prepared.status().toString();
      return false;
    }
    npac::db::Statement& s = *prepared;
    int index = 0;
    for (int64_t p : params) s.bindInt64(index++, p);
    for (;;) {
      auto more = s.step();
      if (!more) {
        error_ = "reading the queue: " + more.status().toString();
        return false;
      }
      if (!*more) return true;
      row(s);
    }
  }

  std::unique_ptr<npac::db::Database> db_;
  std::string error_;
};

// "127.0.0.1:10180" or "http://127.0.0.1:10180"; HTTPS is not spoken here.
std::optional<tcp::endpoint> parseApi(std::string text, std::string& why) {
  if (text.rfind("https://", 0) == 0) {
    why = "--api: https is not supported by the load generator; use npacd's plain loopback API";
    return std::nullopt;
  }
  if (text.rfind("http://", 0) == 0) text = text.substr(7);
  if (!text.empty() && text.back() == '/') text.pop_back();
  auto colon = text.rfind(':');
  if (colon == std::string::npos) {
    why = "--api: expected HOST:PORT, got '" + text + "'";
    return std::nullopt;
  }
  beast::error_code ec;
  auto address = asio::ip::make_address(text.substr(0, colon), ec);
  std::string port = text.substr(colon + 1);
  if (ec || port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) == 0 || std::stoul(port) > 65535) {
    why = "--api: expected a numeric IP address and a port 1-65535, got '" + text + "'";
    return std::nullopt;
  }
  return tcp::endpoint(address, static_cast<unsigned short>(std::stoul(port)));
}

int usage(const std::string& why) {
  std::cerr << "npacd_loadgen: " << why << "\nRun with --help for the flags.\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  CLI::App app{"npacd_loadgen: submit N notifications to npacd's POST /v1/messages and wait for every "
               "acknowledgement (bench/compare.sh)"};
  app.add_option("--api", opts.api, "npacd's admin API, HOST:PORT (plain HTTP)")->capture_default_str();
  app.add_option("--token-file", opts.token_file, "file holding an application or operator token (<db>.token)")
      ->required();
  app.add_option("--db", opts.db,
                 "npacd's --db: its SQLite file or a postgresql:// URL, read (SELECTs only) for acknowledged_at")
      ->required();
  std::string spid = opts.spids.front();
  app.add_option("--spid", spid, "the provider the notifications go to")->capture_default_str();
  std::vector<std::string> spid_list;
  app.add_option("--spids", spid_list,
                 "A,B,C,...: several providers, the notifications spread round-robin over them (message i "
                 "to the (i mod P)-th), instead of --spid")
      ->delimiter(',');
  app.add_option("--durability", opts.durability, "npacd's --durability, to label the RESULT line")
      ->capture_default_str();
  app.add_option("--mode", opts.mode, "burst (closed loop) or rate (open loop, --rate)")
      ->check(CLI::IsMember({"burst", "rate"}))
      ->capture_default_str();
  app.add_option("--rate", opts.rate, "rate mode: messages (broadcasts) per second offered")->check(CLI::PositiveNumber);
  app.add_option("-n,--messages", opts.n, "messages (broadcasts) to submit")->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  app.add_option("--batch", opts.batch, "messages per POST (the API takes 1-1000)")->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--connections", opts.connections,
                 "concurrent keep-alive connections (the API serves 32 per client address)")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  app.add_option("--pdu-bytes", opts.pdu_bytes, "target size of each stored PDU")
      ->check(CLI::Range(kInvokeWithoutInformation + kTagBytes + 2, size_t{60000}))
      ->capture_default_str();
  app.add_option("--function", opts.function, "the association function the notifications need")
      ->check(CLI::IsMember({"soa-management", "lsms-data-download", "network-data-management", "notifications",
                             "queries"}))
      ->capture_default_str();
  app.add_option("--broadcast-to", opts.broadcast_to,
                 "all: send N broadcasts (POST /v1/broadcasts, one per request) to every provider taking "
                 "--function, instead of N messages to --spid")
      ->check(CLI::IsMember({"all"}));
  app.add_option("--format", opts.format,
                 "json: POST /v1/messages; pdu-batch: POST /v1/pdu-batches, the same PDUs already encoded")
      ->check(CLI::IsMember({"json", "pdu-batch"}))
      ->capture_default_str();
  app.add_option("--from", opts.from, "local IP address of the HTTP connections");
  app.add_option("--timeout", opts.timeout_s, "seconds: give up and exit 1 after this long")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage(e.what());
  }
  if (opts.mode == "rate" && opts.rate <= 0) return usage("--mode rate needs --rate R (messages per second)");
  if (opts.mode == "burst" && opts.rate > 0) return usage("--rate is for --mode rate only");
  if (!opts.broadcast_to.empty()) {
    if (app.count("--batch") > 0) return usage("--batch is for messages: a broadcast is one request each");
    if (app.count("--spid") > 0 || app.count("--spids") > 0) {
      return usage("--spid and --spids are for messages: --broadcast-to names the providers");
    }
    if (opts.format != "json") return usage("--format pdu-batch is for messages: a broadcast is JSON");
    opts.batch = 1;
  }
  if (app.count("--spid") > 0 && app.count("--spids") > 0) return usage("--spid and --spids: give one of them");
  opts.spids = spid_list.empty() ? std::vector<std::string>{spid} : spid_list;
  for (size_t i = 0; i < opts.spids.size(); ++i) {
    const std::string& s = opts.spids[i];
    // The SPID goes into the JSON text as it is: letters and digits only keep it a string.
    if (s.empty() || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) != 0; })) {
      return usage("--spid/--spids: '" + s + "' is not a SPID (letters and digits)");
    }
    if (std::find(opts.spids.begin(), opts.spids.begin() + static_cast<std::ptrdiff_t>(i), s) !=
        opts.spids.begin() + static_cast<std::ptrdiff_t>(i)) {
      return usage("--spids: " + s + " is given twice");
    }
  }
  std::string why;
  auto api = parseApi(opts.api, why);
  if (!api) return usage(why);
  if (!opts.from.empty()) {
    beast::error_code ec;
    asio::ip::make_address(opts.from, ec);
    if (ec) return usage("--from: not an IP address: '" + opts.from + "'");
  }
  std::string token;
  {
    std::ifstream file(opts.token_file);
    if (!file) return usage("--token-file: cannot read " + opts.token_file);
    std::getline(file, token);
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
    if (token.empty()) return usage("--token-file: " + opts.token_file + " holds no token");
  }
  if (!npac::db::isPostgresUrl(opts.db) && !std::ifstream(opts.db)) return usage("--db: cannot read " + opts.db);
  // Opened before the clock starts, so a malformed or unreachable URL (or a file that
  // holds no database) is refused before anything is submitted.
  QueueReader reader(opts.db);
  if (!reader.error().empty()) return usage("--db: " + reader.error());

  auto batches = buildBatches(opts);
  size_t batch_count = batches.size();
  asio::io_context io;
  Submitter submitter(io, opts, std::move(batches), token, *api);
  double cpu0 = cpuSeconds();
  auto deadline = SteadyClock::now() + std::chrono::milliseconds(static_cast<int64_t>(opts.timeout_s * 1000));
  submitter.start();
  io.run();
  Submitted& sub = submitter.result();
  size_t unsent = submitter.unsent();
  size_t unsent_messages = unsent == 0 ? 0 : opts.n - std::min(opts.n, (batch_count - unsent) * opts.batch);

  // Wait for the acknowledgements: poll the counts (bounded by --timeout), then read the rows.
  std::string error = reader.error();
  size_t accepted = sub.ids.size();
  std::vector<int64_t> acked_at, pdu_len;
  int64_t low = 0, high = -1;
  if (accepted > 0 && error.empty()) {
    low = *std::min_element(sub.ids.begin(), sub.ids.end());
    high = *std::max_element(sub.ids.begin(), sub.ids.end());
    // Each provider's newest row: rows leave a provider's queue in id order within a
    // priority, so while one of these is not yet acknowledged the run is not over.
    std::vector<int64_t> newest(opts.spids.size(), -1);
    for (size_t i = 0; i < accepted; ++i) newest[sub.provider[i]] = std::max(newest[sub.provider[i]], sub.ids[i]);
    size_t watched = 0;  // newest[0 .. watched) are known to be acknowledged or failed
    for (;;) {
      // Counting the whole range costs this process (and the machine npacd shares) a scan
      // per poll: while a provider's newest row is not yet acknowledged only that row is
      // read, and a provider found done is not read again.
      while (watched < newest.size() && (newest[watched] < 0 || !reader.queuedOrSent(newest[watched]))) ++watched;
      if (SteadyClock::now() < deadline && watched < newest.size()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      auto counts = reader.counts(low, high);
      if (!counts) break;
      if (counts->failed > 0) {
        error = std::to_string(counts->failed) + " messages failed (state 'failed' in the queue)";
        break;
      }
      if (counts->acknowledged >= accepted || SteadyClock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!reader.rows(low, high, acked_at, pdu_len) && error.empty()) error = reader.error();
  }
  double cpu_s = cpuSeconds() - cpu0;

  std::vector<double> latencies;
  latencies.reserve(accepted);
  double last_ack_ms = 0, pdu_total = 0;
  for (size_t i = 0; i < accepted && !acked_at.empty(); ++i) {
    size_t at = static_cast<size_t>(sub.ids[i] - low);
    if (acked_at[at] < 0) continue;
    latencies.push_back(static_cast<double>(acked_at[at]) - sub.submit_ms[i]);
    last_ack_ms = std::max(last_ack_ms, static_cast<double>(acked_at[at]));
    pdu_total += static_cast<double>(pdu_len[at]);
  }
  size_t unacked = accepted - latencies.size();
  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double p) {
    if (latencies.empty()) return 0.0;
    return latencies[std::min(latencies.size() - 1, static_cast<size_t>(p * static_cast<double>(latencies.size())))];
  };
  double end_ms = std::max(last_ack_ms, sub.last_answer_ms);
  double secs = std::max(1e-3, (end_ms - sub.first_send_ms) / 1000);
  bool ok = error.empty() && sub.refused == 0 && unsent_messages == 0 && unacked == 0;

  if (!sub.first_error.empty()) std::cerr << "npacd_loadgen: refused: " << sub.first_error << "\n";
  if (unsent_messages > 0) std::cerr << "npacd_loadgen: " << unsent_messages << " messages not sent (timeout)\n";
  if (!error.empty()) std::cerr << "npacd_loadgen: " << error << "\n";
  if (unacked > 0) std::cerr << "npacd_loadgen: " << unacked << " accepted messages not acknowledged within --timeout\n";
  std::ostringstream line;
  line.setf(std::ios::fixed);
  line.precision(3);
  line << "RESULT system=npacd durability=" << opts.durability << " mode=" << opts.mode << " format=" << opts.format
       << (opts.broadcast_to.empty() ? "" : "-broadcast") << " ok=" << (ok ? 1 : 0)
       << " n=" << latencies.size() << " secs=" << secs;
  line.precision(0);
  line << " rate=" << static_cast<double>(latencies.size()) / secs;
  line.precision(1);
  line << " p50_ms=" << pct(0.50) << " p99_ms=" << pct(0.99) << " max_ms=" << (latencies.empty() ? 0 : latencies.back());
  line.precision(3);
  line << " loadgen_cpu_s=" << cpu_s << " submit_secs=" << std::max(0.0, (sub.last_answer_ms - sub.first_send_ms) / 1000);
  line.precision(0);
  line << " offered_rate=" << (opts.mode == "rate" ? opts.rate : 0.0)
       << (opts.broadcast_to.empty() ? " submitted=" : " broadcasts=") << opts.n
       << " refused=" << sub.refused + unsent_messages << " unacked=" << unacked << " batch=" << opts.batch
       << " connections=" << opts.connections << " pdu_bytes=" << (latencies.empty() ? 0 : pdu_total / latencies.size())
       << " ack_resolution_ms=1";
  std::cout << line.str() << std::endl;
  return ok ? 0 : 1;
}
