// The admin API in-process for tests: a real SQLite file in a fresh temporary directory,
// a TunableRegistry on its own connection, and AdminApi listening on an ephemeral
// loopback port with its io_context on a background thread. call() is a blocking HTTP/1.1
// client over real TCP (Beast), one connection per call unless a stream is reused.
//
// Every call authenticates (npac/npacd/api/access.h) with a real token from the real
// TokenStore: the token named by call()'s `actor`, else by the body's "actor", else the
// operator token "test-operator" — so a test that says who makes a change finds that name
// in the audit log, as the actor now is always the token's name. Such tokens are created
// on first use, with the operator role. test-operator's secret is also in <db>.token
// (tokenFile(), mode 0600) for npacctl. callWith() sends any Authorization header, or none.
// QueuedApiFixture adds provisioned providers and a core whose submissions a real
// QueueWriter commits.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "db/database.h"
#include "db/queue_writer.h"
#include "db/token_store.h"
#include "npac/npacd/api/admin_api.h"
#include "tunables/registry.h"

namespace npac::npacd::testing {

namespace http = boost::beast::http;
// The short names every admin API test uses; a test file takes them with the fixtures by
// one `using namespace testing;`.
using nlohmann::json;
using V = http::verb;

struct Reply {
  int status = 0;
  nlohmann::json body;
  std::string raw;
  std::string www_authenticate;  // the WWW-Authenticate header, "" when absent
  std::string errorCode() const {
    return body.is_object() && body.contains("error") ? body["error"].value("code", "") : "";
  }
  std::string errorMessage() const {
    return body.is_object() && body.contains("error") ? body["error"].value("message", "") : "";
  }
};

class AdminApiFixture {
 public:
  explicit AdminApiFixture(HttpServer::Options http = {},
                           std::chrono::milliseconds event_keepalive = kEventKeepalive) {
    std::string pattern = (std::filesystem::temp_directory_path() / "npac-api-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir_ = pattern;
    api_db = openConnection();
    registry_db = openConnection();
    tunables::Status opened = tunables::TunableRegistry::open(*registry_db, clock(), &registry);
    REQUIRE(opened.isOk());
    http.address = "127.0.0.1";
    http.port = 0;
    AdminApi::Options options{http};
    options.event_keepalive = event_keepalive;
    auto started = AdminApi::start(io, options, *api_db, *registry, clock());
    INFO(started.status().toString());
    REQUIRE(started.isOk());
    api = std::move(started).value();
    port = api->port();
    tokens_db_ = openConnection();
    default_token_ = token(kDefaultTokenName);
    const int fd = ::open(tokenFile().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    const std::string line = default_token_ + "\n";
    REQUIRE(::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
    ::close(fd);
    work_ = std::make_unique<Work>(io.get_executor());
    thread_ = std::thread([this] { io.run(); });
  }
  ~AdminApiFixture() {
    std::promise<void> stopped;
    boost::asio::post(io, [&] {
      api->stop();
      stopped.set_value();
    });
    stopped.get_future().wait();
    work_.reset();
    io.stop();
    thread_.join();
    api.reset();
    registry.reset();
    registry_db.reset();
    tokens_db_.reset();
    api_db.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  AdminApiFixture(const AdminApiFixture&) = delete;
  AdminApiFixture& operator=(const AdminApiFixture&) = delete;

  std::string path() const { return dir_ + "/npacd.db"; }
  std::string dir() const { return dir_; }
  std::string tokenFile() const { return path() + ".token"; }

  static constexpr const char* kDefaultTokenName = "test-operator";
  // The secret of the token `name`, created with `role` on first use (a later call with
  // another role returns the first token).
  std::string token(const std::string& name, db::TokenRole role = db::TokenRole::kOperator) const {
    std::lock_guard lock(tokens_mutex_);
    if (auto it = tokens_.find(name); it != tokens_.end()) return it->second;
    db::TokenStore store(*tokens_db_);
    auto issued = store.create(name, role, "test-fixture", kNow);
    INFO(issued.status().toString());
    REQUIRE(issued.isOk());
    tokens_[name] = issued->secret;
    return issued->secret;
  }
  std::string apiAddress() const { return "127.0.0.1:" + std::to_string(port); }

  // The fixed instant every store write is stamped with.
  static constexpr db::TimeMs kNow = 1'796'000'000'000;  // 2026-11-30T...
  static db::Clock clock() {
    return [] { return kNow; };
  }

  std::unique_ptr<db::Database> openConnection() const {
    auto opened = db::Database::open(path());
    INFO(opened.status().toString());
    REQUIRE(opened.isOk());
    return std::move(opened).value();
  }

  // Runs `fn` on the API thread and waits for it (attachCore, stop).
  void onApiThread(std::function<void()> fn) {
    std::promise<void> done;
    boost::asio::post(io, [&] {
      fn();
      done.set_value();
    });
    done.get_future().wait();
  }

  Reply call(http::verb method, const std::string& target, const std::string& body = "",
             const std::string& actor = "") const {
    std::string name = actor;
    if (name.empty() && !body.empty()) {
      nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
      if (parsed.is_object() && parsed.contains("actor") && parsed["actor"].is_string()) {
        name = parsed["actor"].get<std::string>();
      }
    }
    if (!db::isValidTokenName(name)) name = kDefaultTokenName;
    return callWith("Bearer " + token(name), method, target, body, actor);
  }
  // `authorization` nullopt: no Authorization header.
  Reply callWith(const std::optional<std::string>& authorization, http::verb method, const std::string& target,
                 const std::string& body = "", const std::string& actor = "") const {
    boost::asio::io_context client_io;
    boost::beast::tcp_stream stream(client_io);
    stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    http::request<http::string_body> request{method, target, 11};
    request.set(http::field::host, "127.0.0.1");
    if (authorization) request.set(http::field::authorization, *authorization);
    if (!actor.empty()) request.set("X-Npac-Actor", actor);
    if (!body.empty()) {
      request.set(http::field::content_type, "application/json");
      request.body() = body;
    }
    request.prepare_payload();
    http::write(stream, request);
    return read(stream);
  }
  Reply call(http::verb method, const std::string& target, const nlohmann::json& body) const {
    return call(method, target, body.dump());
  }
  // A body of any media type (call() sends JSON), with the operator token.
  // Provisions provider `spid` ("Provider SPID", of `system_type`) through the API.
  void addProvider(const std::string& spid, const std::string& system_type = "soa") const {
    Reply r = call(http::verb::post, "/v1/providers",
                   nlohmann::json{{"spid", spid}, {"name", "Provider " + spid}, {"system_type", system_type}});
    INFO(r.raw);
    REQUIRE(r.status == 201);
  }
  Reply callTyped(const std::string& content_type, http::verb method, const std::string& target,
                  const std::string& body) const {
    boost::asio::io_context client_io;
    boost::beast::tcp_stream stream(client_io);
    stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    http::request<http::string_body> request{method, target, 11};
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::authorization, "Bearer " + token(kDefaultTokenName));
    request.set(http::field::content_type, content_type);
    request.body() = body;
    request.prepare_payload();
    http::write(stream, request);
    return read(stream);
  }

  static Reply read(boost::beast::tcp_stream& stream) {
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    Reply reply;
    reply.status = static_cast<int>(response.result_int());
    reply.raw = response.body();
    reply.body = nlohmann::json::parse(reply.raw, nullptr, false);
    if (auto it = response.find(http::field::www_authenticate); it != response.end()) {
      reply.www_authenticate = std::string(it->value());
    }
    return reply;
  }

  boost::asio::io_context io;
  std::unique_ptr<db::Database> api_db;
  std::unique_ptr<db::Database> registry_db;
  std::unique_ptr<tunables::TunableRegistry> registry;
  std::unique_ptr<AdminApi> api;
  std::uint16_t port = 0;

 private:
  using Work = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::string dir_;
  std::unique_ptr<db::Database> tokens_db_;  // the test thread's connection for token()
  mutable std::mutex tokens_mutex_;
  mutable std::map<std::string, std::string> tokens_;  // name → secret
  std::string default_token_;
  std::unique_ptr<Work> work_;
  std::thread thread_;
};

// A CoreService for the core routes: submit() goes to a real QueueWriter (group commit on
// its own connection, completing on the writer thread); pollInbound answers request 41
// from another thread, or holds the completion while hold_polls is set; the other
// operations record what they were asked.
class QueueBackedCore : public CoreService {
 public:
  explicit QueueBackedCore(db::QueueWriter& writer) : writer_(writer) {}
  void submit(std::vector<OutboundMessage> messages, SubmitDone done) override {
    std::vector<db::NewMessage> rows;
    for (OutboundMessage& m : messages) {
      std::lock_guard lock(mutex);
      seen_.keys.push_back(m.key.value_or(""));
      rows.push_back(std::move(m.message));
    }
    writer_.submitOutcomes(std::move(rows), std::move(done));  // completes on the writer thread
  }
  void pollInbound(InboundPoll poll, PollDone done) override {
    if (hold_polls) {
      std::lock_guard lock(mutex);
      held_polls.push_back(std::move(done));
      return;
    }
    InboundRequest request;
    request.id = 41;
    request.spid = poll.spid;
    request.invoke_id = 9;
    request.opcode = cmip::CmipOpcode::kActionConfirmed;
    std::thread([done, request] { done(std::vector<InboundRequest>{request}); }).detach();
  }
  void respond(InboundRequestId id, InboundResponse response, RespondDone done) override {
    if (id != 41) return done(db::Status::notFound("no such request"));
    db::MessageId answer_id = 0;
    {
      std::lock_guard lock(mutex);
      seen_.last_response = response;
      answer_id = ++seen_.answers;  // stands for the id the real core's queue assigns
    }
    done(answer_id);
  }
  void listAssociations(ListDone done) override { done(std::vector<AssociationInfo>{}); }
  // The view set in queue_views for `spid`; else, with no live core behind this one, the
  // provider reads as never bound in this run. Completes from another thread, as the core.
  void queueView(std::string spid, QueueViewDone done) override {
    ProviderQueueView view;
    view.spid = spid;
    {
      std::lock_guard lock(mutex);
      if (auto it = queue_views.find(spid); it != queue_views.end()) view = it->second;
    }
    std::thread([done, view] { done(view); }).detach();
  }
  void abortAssociation(db::AssociationId id, std::string actor, StatusDone done) override {
    {
      std::lock_guard lock(mutex);
      seen_.aborted = std::to_string(id) + " by " + actor;
    }
    done(db::Status::ok());
  }
  void releaseProvider(std::string spid, std::string reason, CountDone done) override {
    {
      std::lock_guard lock(mutex);
      seen_.released = spid + ": " + reason;
    }
    done(0);
  }

  // What the core was asked, copied under the mutex (the API thread writes it).
  struct Seen {
    std::vector<std::string> keys;  // each submitted message's key, "" when none
    std::optional<InboundResponse> last_response;
    db::MessageId answers = 0;  // how many answers respond() took
    std::string aborted;  // "<id> by <actor>"
    std::string released;  // "<spid>: <reason>" (provider disabled)
  };
  Seen seen() {
    std::lock_guard lock(mutex);
    return seen_;
  }

  bool hold_polls = false;  // set before attaching
  std::map<std::string, ProviderQueueView> queue_views;  // under `mutex`
  std::mutex mutex;
  std::vector<PollDone> held_polls;

 private:
  db::QueueWriter& writer_;
  Seen seen_;
};

// The admin API with providers provisioned through POST /v1/providers and a
// QueueBackedCore attached whose submissions go to a real QueueWriter (group commit) on
// the same SQLite file: the set-up of the tests of the submitting routes (messages,
// broadcasts, PDU batches). Built and destroyed on the test thread; the core is attached
// and detached on the API thread.
class QueuedApiFixture {
 public:
  struct Provider {
    std::string spid;
    std::string system_type;  // "soa", "lsms", "soa-and-lsms"
    bool enabled = true;      // false: disabled once every provider is added, before the core
  };
  // One SOA, 0001.
  QueuedApiFixture() : QueuedApiFixture({Provider{"0001", "soa"}}) {}
  explicit QueuedApiFixture(const std::vector<Provider>& providers, HttpServer::Options http = {}) : f(http) {
    for (const Provider& p : providers) {
      Reply added = f.call(V::post, "/v1/providers",
                           json{{"spid", p.spid}, {"name", "P" + p.spid}, {"system_type", p.system_type}});
      INFO(added.raw);
      REQUIRE(added.status == 201);
    }
    for (const Provider& p : providers) {
      if (!p.enabled) REQUIRE(f.call(V::post, "/v1/providers/" + p.spid + "/disable", std::string("{}")).status == 200);
    }
    auto started = db::QueueWriter::start(f.path(), {}, AdminApiFixture::clock());
    INFO(started.status().toString());
    REQUIRE(started.isOk());
    writer = std::move(started).value();
    core = std::make_unique<QueueBackedCore>(*writer);
    f.onApiThread([&] { f.api->attachCore(core.get()); });
  }
  ~QueuedApiFixture() {
    f.onApiThread([&] { f.api->attachCore(nullptr); });
  }
  QueuedApiFixture(const QueuedApiFixture&) = delete;
  QueuedApiFixture& operator=(const QueuedApiFixture&) = delete;

  // How many rows outbound_queue holds, read on a fresh connection of the SQLite file.
  std::int64_t rowCount() const {
    auto connection = f.openConnection();
    auto query = connection->prepare("SELECT count(*) FROM outbound_queue");
    REQUIRE(query.isOk());
    REQUIRE(query->step().isOk());
    return query->columnInt64(0);
  }

  AdminApiFixture f;
  std::unique_ptr<db::QueueWriter> writer;
  std::unique_ptr<QueueBackedCore> core;
};

}  // namespace npac::npacd::testing
