// npacd end to end: the answer to a provider's request is an outbound message, and
// POST /v1/inbound/{id}/response names its id so the application can follow it with
// GET /v1/messages/{id}. Real binary, SQLite, loopback, npac-soa-sim.
#include "tests/npac/npacd/npacd_fixture.h"

#include "cmip/rose.h"
#include "db/nsap_store.h"

using namespace npacd_test;

TEST_CASE("the answer to an inbound request names its queued message id and GET /v1/messages shows that answer") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto asking = npacd.sim("0001", key, {"--from", "127.0.0.2", "--send-requests", "1", "--duration", "2s"});
  std::vector<Json> requests;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (requests.empty() && std::chrono::steady_clock::now() < deadline) {
    Reply polled = npacd.call(http::verb::get, "/v1/inbound?wait=1s&max=1");
    REQUIRE(polled.status == 200);
    for (const Json& r : polled.body["requests"]) requests.push_back(r);
  }
  REQUIRE(requests.size() == 1);
  CHECK(asking->wait() == 6);  // it left unanswered: the answer waits in the queue
  const std::uint64_t request_id = requests[0]["id"].get<std::uint64_t>();

  Reply answered = npacd.call(http::verb::post, "/v1/inbound/" + std::to_string(request_id) + "/response",
                              Json{{"outcome", "result"}});
  INFO(answered.body.dump());
  REQUIRE(answered.status == 200);
  CHECK(answered.body["request"] == request_id);
  REQUIRE(answered.body["message_id"].is_number_integer());

  const std::int64_t message_id = answered.body["message_id"].get<std::int64_t>();
  Reply message = npacd.call(http::verb::get, "/v1/messages/" + std::to_string(message_id));
  INFO(message.body.dump());
  REQUIRE(message.status == 200);
  CHECK(message.body["id"] == message_id);
  CHECK(message.body["spid"] == "0001");
  CHECK(message.body["state"] == "queued");
  // Its PDU is the ROSE ReturnResult for the provider's invoke id (X.880).
  auto pdu = npac::db::fromHex(message.body["pdu"].get<std::string>());
  REQUIRE(pdu);
  auto apdu = npac::cmip::decodeRoseApdu(*pdu);
  REQUIRE(apdu.isOk());
  auto* result = std::get_if<npac::cmip::RoseReturnResult>(&apdu.value());
  REQUIRE(result != nullptr);
  CHECK(result->invokeId.present == requests[0]["invoke_id"].get<std::int32_t>());
}
