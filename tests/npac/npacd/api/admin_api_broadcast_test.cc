// POST /v1/broadcasts over real loopback HTTP, a real SQLite file and a real QueueWriter
// group commit (QueueBackedCore): who "all" and a list reach, the one PDU every row
// stores, the answer after the one commit, all or nothing, idempotent retries and every
// malformed body's own refusal.
#include <catch2/catch.hpp>

#include "associations/bind_facts.h"
#include "cmip/rose.h"
#include "db/statement.h"
#include "npac/npacd/api/broadcast.h"
#include "npac/npacd/api/request.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"

namespace npac::npacd {
namespace {

using namespace testing;

// One message's content (no spid) sent on `function` to `to`.
json broadcast(const json& to, const std::string& function = "lsms-data-download") {
  return {{"function", function},
          {"to", to},
          {"operation", "event-report"},
          {"object_class", "1.3.6.1.4.1.103.7.0.0.1.3"},
          {"instance", {{"dn", json::array({json::array({{{"id", "2.5.4.3"}, {"value", "13044e504143"}}})})}}},
          {"type", "1.3.6.1.4.1.103.7.0.0.5.1"},
          {"information", "040461637431"}};
}

struct StoredRow {
  std::int64_t id = 0;
  std::string spid;
  db::Bytes pdu;
  std::string state;
  std::string idempotency_key;
};

// The admin API with a core whose submissions go to a real writer, and these providers:
//   0001 soa   0002 lsms   0003 lsms (disabled)   0004 soa-and-lsms   0005 lsms
struct BroadcastFixture : QueuedApiFixture {
  explicit BroadcastFixture(HttpServer::Options http = {})
      : QueuedApiFixture({{"0001", "soa"}, {"0002", "lsms"}, {"0003", "lsms", false}, {"0004", "soa-and-lsms"},
                          {"0005", "lsms"}},
                         http) {}
  // Every outbound row, by id, read on a fresh connection of the SQLite file.
  std::vector<StoredRow> rows() {
    auto connection = f.openConnection();
    auto query = connection->prepare(
        "SELECT q.id, q.spid, b.pdu, q.state, coalesce(q.idempotency_key, '') FROM outbound_queue AS q "
        "JOIN message_bodies AS b ON b.id = q.body_id ORDER BY q.id");
    REQUIRE(query.isOk());
    std::vector<StoredRow> out;
    for (;;) {
      auto row = query->step();
      REQUIRE(row.isOk());
      if (!*row) return out;
      out.push_back({query->columnInt64(0), query->columnText(1), query->columnBlob(2), query->columnText(3),
                     query->columnText(4)});
    }
  }
  std::vector<std::string> spidsOf(const std::vector<StoredRow>& rows) {
    std::vector<std::string> out;
    for (const StoredRow& r : rows) out.push_back(r.spid);
    return out;
  }
};

// The i-th of 36^4 distinct SPIDs: i in base 36, four digits.
std::string spidNumber(std::size_t i) {
  const char* digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string spid;
  for (std::size_t n = i, k = 0; k < 4; ++k, n /= 36) spid.insert(spid.begin(), digits[n % 36]);
  return spid;
}

std::vector<std::string> answeredSpids(const Reply& r) {
  std::vector<std::string> out;
  for (const json& m : r.body["messages"]) out.push_back(m["spid"].get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("A broadcast to all reaches exactly the enabled providers whose system type binds for its function") {
  BroadcastFixture b;
  Reply r = b.f.call(V::post, "/v1/broadcasts", broadcast("all"));
  INFO(r.raw);
  REQUIRE(r.status == 201);
  // 0001 is an SOA (no LSMS data download), 0003 is disabled.
  const std::vector<std::string> expected{"0002", "0004", "0005"};
  CHECK(r.body["providers"] == 3);
  CHECK(answeredSpids(r) == expected);
  CHECK(b.spidsOf(b.rows()) == expected);
}

TEST_CASE("A broadcast of notifications to all reaches every enabled SOA and LSMS") {
  BroadcastFixture b;
  Reply r = b.f.call(V::post, "/v1/broadcasts", broadcast("all", "notifications"));
  INFO(r.raw);
  REQUIRE(r.status == 201);
  CHECK(answeredSpids(r) == std::vector<std::string>{"0001", "0002", "0004", "0005"});
}

TEST_CASE("The broadcast recipient rule is the bind's function-mask rule for every system type and function") {
  for (common::SystemType type : common::kSystemTypes) {
    for (common::AssociationFunction function : common::kAssociationFunctions) {
      INFO(common::toString(type) << " " << common::toString(function));
      CHECK(systemTypeTakes(type, 1u << static_cast<unsigned>(function)) ==
            associations::allowedFunctions(type).has(function));
    }
  }
}

TEST_CASE("A broadcast to a list reaches exactly the providers named in the order given") {
  BroadcastFixture b;
  Reply r = b.f.call(V::post, "/v1/broadcasts", broadcast(json::array({"0005", "0003", "0002"})));
  INFO(r.raw);
  REQUIRE(r.status == 201);
  // Named explicitly, the disabled 0003 gets its row: it waits queued until enabled.
  CHECK(answeredSpids(r) == std::vector<std::string>{"0005", "0003", "0002"});
  std::vector<StoredRow> rows = b.rows();
  REQUIRE(rows.size() == 3);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(r.body["messages"][i]["id"] == rows[i].id);
    CHECK(r.body["messages"][i]["spid"] == rows[i].spid);
    CHECK(r.body["messages"][i]["duplicate"] == false);
  }
}

TEST_CASE("Every provider's row of a broadcast stores the same PDU, a ROSE Invoke with the placeholder invoke id") {
  BroadcastFixture b;
  REQUIRE(b.f.call(V::post, "/v1/broadcasts", broadcast("all")).status == 201);
  std::vector<StoredRow> rows = b.rows();
  REQUIRE(rows.size() == 3);
  for (const StoredRow& row : rows) CHECK(row.pdu == rows.front().pdu);
  auto apdu = cmip::decodeRoseApdu(rows.front().pdu);
  REQUIRE(apdu.isOk());
  auto* invoke = std::get_if<cmip::RoseInvoke>(&apdu.value());
  REQUIRE(invoke != nullptr);
  CHECK(invoke->invokeId == kPlaceholderInvokeId);
}

TEST_CASE("A broadcast is answered only once every provider's row is committed in one batch") {
  BroadcastFixture b;
  const std::uint64_t batches_before = b.writer->committedBatches();
  Reply r = b.f.call(V::post, "/v1/broadcasts", broadcast("all"));
  REQUIRE(r.status == 201);
  // Read at once on another connection: each answered id is a committed, queued row.
  std::vector<StoredRow> rows = b.rows();
  REQUIRE(rows.size() == r.body["messages"].size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].id == r.body["messages"][i]["id"]);
    CHECK(rows[i].state == "queued");
  }
  CHECK(b.writer->committedBatches() == batches_before + 1);
  CHECK(b.writer->committedMessages() == 3);
}

TEST_CASE("A broadcast one of whose rows cannot be stored stores none of them") {
  BroadcastFixture b;
  // 0005 already holds key act-1 for other content: its row of the broadcast is refused,
  // and with it the rows of 0002 and 0004.
  json other = broadcast(nullptr);
  other.erase("to");
  other["spid"] = "0005";
  other["information"] = "0400";
  other["idempotency_key"] = "act-1";
  REQUIRE(b.f.call(V::post, "/v1/messages", other).status == 201);
  json keyed = broadcast("all");
  keyed["idempotency_key"] = "act-1";
  Reply r = b.f.call(V::post, "/v1/broadcasts", keyed);
  INFO(r.raw);
  CHECK(r.status == 409);
  CHECK(r.errorCode() == "conflict");
  CHECK(b.spidsOf(b.rows()) == std::vector<std::string>{"0005"});
}

TEST_CASE("A keyed broadcast repeated answers 200 with every provider's original id and adds no row") {
  BroadcastFixture b;
  json keyed = broadcast("all");
  keyed["idempotency_key"] = "activation-17";
  Reply first = b.f.call(V::post, "/v1/broadcasts", keyed);
  INFO(first.raw);
  REQUIRE(first.status == 201);
  Reply again = b.f.call(V::post, "/v1/broadcasts", keyed);
  INFO(again.raw);
  REQUIRE(again.status == 200);
  REQUIRE(again.body["messages"].size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(again.body["messages"][i]["spid"] == first.body["messages"][i]["spid"]);
    CHECK(again.body["messages"][i]["id"] == first.body["messages"][i]["id"]);
    CHECK(again.body["messages"][i]["duplicate"] == true);
  }
  std::vector<StoredRow> rows = b.rows();
  CHECK(rows.size() == 3);
  for (const StoredRow& row : rows) CHECK(row.idempotency_key == "activation-17");
}

TEST_CASE("Each malformed broadcast body is refused 400 with its own code and nothing is queued") {
  BroadcastFixture b;
  struct Case {
    const char* what;
    json body;
    const char* code;
  };
  json no_function = broadcast("all");
  no_function.erase("function");
  json no_to = broadcast("all");
  no_to.erase("to");
  json with_spid = broadcast("all");
  with_spid["spid"] = "0002";
  json bad_operation = broadcast("all");
  bad_operation["operation"] = "fly";
  json bad_key = broadcast("all");
  bad_key["idempotency_key"] = "has space";
  const std::vector<Case> cases{
      {"missing function", no_function, "invalid_function"},
      {"unknown function", broadcast("all", "lsms-download"), "invalid_function"},
      {"to missing", no_to, "invalid_recipients"},
      {"to another string", broadcast("everyone"), "invalid_recipients"},
      {"to a number", broadcast(7), "invalid_recipients"},
      {"to an object", broadcast(json{{"spid", "0002"}}), "invalid_recipients"},
      {"to an empty list", broadcast(json::array()), "invalid_recipients"},
      {"a bad SPID", broadcast(json::array({"0002", "00x"})), "invalid_spid"},
      {"a SPID that is not a string", broadcast(json::array({2})), "invalid_spid"},
      {"a duplicate SPID", broadcast(json::array({"0002", "0005", "0002"})), "duplicate_recipient"},
      {"a spid field", with_spid, "invalid_broadcast"},
      {"a messages list", json{{"messages", json::array()}, {"function", "notifications"}, {"to", "all"}},
       "invalid_broadcast"},
      {"a bad operation", bad_operation, "invalid_message"},
      {"a bad idempotency key", bad_key, "invalid_idempotency_key"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Reply r = b.f.call(V::post, "/v1/broadcasts", c.body);
    INFO(r.raw);
    CHECK(r.status == 400);
    CHECK(r.errorCode() == c.code);
    CHECK_FALSE(r.errorMessage().empty());
  }
  CHECK(b.rows().empty());
}

TEST_CASE("A broadcast naming an unprovisioned SPID is refused 404 naming it and nothing is queued") {
  BroadcastFixture b;
  Reply r = b.f.call(V::post, "/v1/broadcasts", broadcast(json::array({"0002", "0009"})));
  CHECK(r.status == 404);
  CHECK(r.errorCode() == "provider_not_found");
  CHECK_THAT(r.errorMessage(), Catch::Contains("to[1]") && Catch::Contains("0009"));
  CHECK(b.rows().empty());
}

TEST_CASE("A broadcast naming a provider whose system type never binds for its function is refused 409") {
  BroadcastFixture b;
  Reply r = b.f.call(V::post, "/v1/broadcasts", broadcast(json::array({"0002", "0001"})));
  CHECK(r.status == 409);
  CHECK(r.errorCode() == "function_not_allowed");
  CHECK_THAT(r.errorMessage(), Catch::Contains("0001") && Catch::Contains("soa"));
  CHECK(b.rows().empty());
}

TEST_CASE("A broadcast to all that matches no enabled provider is refused 409 no_recipients") {
  BroadcastFixture b;
  for (const char* spid : {"0002", "0004", "0005"}) {
    REQUIRE(b.f.call(V::post, std::string("/v1/providers/") + spid + "/disable", std::string("{}")).status == 200);
  }
  Reply r = b.f.call(V::post, "/v1/broadcasts", broadcast("all"));
  CHECK(r.status == 409);
  CHECK(r.errorCode() == "no_recipients");
  CHECK_THAT(r.errorMessage(), Catch::Contains("lsms-data-download"));
  CHECK(b.rows().empty());
}

TEST_CASE("A broadcast naming more providers than the fan-out bound is refused 413 too_many_recipients") {
  BroadcastFixture b;
  json to = json::array();
  for (std::size_t i = 0; i <= kMaxBroadcastProviders; ++i) to.push_back(spidNumber(i));
  Reply r = b.f.call(V::post, "/v1/broadcasts", broadcast(to));
  CHECK(r.status == 413);
  CHECK(r.errorCode() == "too_many_recipients");
  CHECK_THAT(r.errorMessage(), Catch::Contains(std::to_string(kMaxBroadcastProviders)));
  CHECK(b.rows().empty());
}

TEST_CASE("All that resolves to more providers than the fan-out bound is refused 413") {
  BroadcastRequest request;
  request.to_all = true;
  request.content.message.function_mask = 1u << static_cast<unsigned>(common::AssociationFunction::kNotifications);
  std::vector<db::ServiceProvider> provisioned(kMaxBroadcastProviders + 1);
  for (std::size_t i = 0; i < provisioned.size(); ++i) {
    provisioned[i] = db::ServiceProvider{spidNumber(i), "P", db::SystemType::kLsms, true};
  }
  Result<std::vector<std::string>> recipients = resolveRecipients(request, provisioned);
  REQUIRE_FALSE(recipients.isOk());
  CHECK(recipients.status().code() == StatusCode::kTooManyRecipients);
  const ApiResponse answer = statusResponse(recipients.status());
  CHECK(answer.status == ApiStatus::kPayloadTooLarge);
  CHECK_THAT(answer.body, Catch::Contains("\"too_many_recipients\""));
}

TEST_CASE("A broadcast body over the request size limit is refused 413 body_too_large") {
  HttpServer::Options small;
  small.body_limit = 4096;
  BroadcastFixture b(small);
  json big = broadcast("all");
  big["information"] = "04" + std::string(8190, '0');
  Reply r = b.f.call(V::post, "/v1/broadcasts", big);
  CHECK(r.status == 413);
  CHECK(r.errorCode() == "body_too_large");
  CHECK(b.rows().empty());
}

TEST_CASE("A broadcast body that is not UTF-8 is refused 400 bad_utf8") {
  BroadcastFixture b;
  Reply r = b.f.call(V::post, "/v1/broadcasts", std::string("{\"function\":\"notifications\",\"to\":[\"00\xff\x31\"]}"));
  CHECK(r.status == 400);
  CHECK(r.errorCode() == "bad_utf8");
  CHECK(b.rows().empty());
}

TEST_CASE("An application token may broadcast and a reader token is refused 403") {
  BroadcastFixture b;
  const std::string application = b.f.token("app", db::TokenRole::kApplication);
  const std::string reader = b.f.token("viewer", db::TokenRole::kReader);
  CHECK(b.f.callWith("Bearer " + reader, V::post, "/v1/broadcasts", broadcast("all").dump()).status == 403);
  CHECK(b.rows().empty());
  CHECK(b.f.callWith("Bearer " + application, V::post, "/v1/broadcasts", broadcast("all").dump()).status == 201);
  CHECK(b.rows().size() == 3);
}

TEST_CASE("A broadcast without a core attached is answered 503 and queues nothing") {
  BroadcastFixture b;
  b.f.onApiThread([&] { b.f.api->attachCore(nullptr); });
  Reply r = b.f.call(V::post, "/v1/broadcasts", broadcast("all"));
  CHECK(r.status == 503);
  CHECK(r.errorCode() == "core_unavailable");
  CHECK(b.rows().empty());
}

}  // namespace npac::npacd
