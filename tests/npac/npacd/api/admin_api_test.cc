// The admin API over real loopback HTTP against a real SQLite file: provisioning,
// validation errors with their specific reasons, tunables (persisted, audited, notified),
// the core routes with and without a core, and HTTP-level failures.
#include <atomic>
#include <future>
#include <mutex>

#include <catch2/catch.hpp>

#include "associations/signature.h"
#include "cmip/cmip_operations.h"
#include "db/audit_store.h"
#include "db/queue_writer.h"
#include "npac/npacd/api/json.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"

namespace npac::npacd {
namespace {

using testing::AdminApiFixture;
using testing::QueueBackedCore;
using testing::Reply;
using nlohmann::json;
using V = boost::beast::http::verb;

void addProvider(AdminApiFixture& f, const std::string& spid, const std::string& type = "soa") {
  Reply r = f.call(V::post, "/v1/providers",
                   json{{"spid", spid}, {"name", "Provider " + spid}, {"system_type", type}, {"actor", "alice"}});
  INFO(r.raw);
  REQUIRE(r.status == 201);
}

std::vector<db::AuditEntry> audit(AdminApiFixture& f) {
  auto connection = f.openConnection();
  db::AuditStore store(*connection);
  auto entries = store.recent(100);
  REQUIRE(entries.isOk());
  return entries.value();
}

json notification(const std::string& spid) {
  return {{"spid", spid},
          {"function", "notifications"},
          {"priority", 3},
          {"operation", "event-report"},
          {"confirmed", true},
          {"object_class", "1.3.6.1.4.1.103.7.0.0.1.3"},
          {"instance", {{"dn", json::array({json::array({{{"id", "2.5.4.3"}, {"value", "13044e504143"}}})})}}},
          {"type", "1.3.6.1.4.1.103.7.0.0.5.1"},
          {"information", "0400"}};
}

TEST_CASE("A provider is added, listed, shown, disabled and enabled, each change audited") {
  AdminApiFixture f;
  addProvider(f, "0001");
  Reply list = f.call(V::get, "/v1/providers");
  REQUIRE(list.status == 200);
  REQUIRE(list.body["providers"].size() == 1);
  CHECK(list.body["providers"][0]["spid"] == "0001");
  CHECK(list.body["providers"][0]["system_type"] == "soa");
  CHECK(list.body["providers"][0]["enabled"] == true);
  CHECK(list.body["providers"][0]["srr"] == false);

  Reply off = f.call(V::post, "/v1/providers/0001/disable", "", "bob");
  REQUIRE(off.status == 200);
  CHECK(off.body["enabled"] == false);
  Reply shown = f.call(V::get, "/v1/providers/0001");
  REQUIRE(shown.status == 200);
  CHECK(shown.body["enabled"] == false);
  CHECK(shown.body["nsaps"].empty());
  CHECK(f.call(V::post, "/v1/providers/0001/enable", json{{"actor", "bob"}}).status == 200);
  CHECK(f.call(V::get, "/v1/providers/0001").body["enabled"] == true);

  auto entries = audit(f);  // newest first
  REQUIRE(entries.size() == 3);
  CHECK(entries[2].action == "provider.add");
  CHECK(entries[2].actor == "alice");
  CHECK(entries[1].action == "provider.disable");
  CHECK(entries[1].actor == "bob");
  CHECK(entries[1].old_value == "enabled");
  CHECK(entries[1].new_value == "disabled");
  CHECK(entries[0].action == "provider.enable");
}

TEST_CASE("A bad SPID, a bad system type, a duplicate and a missing token are each refused with their reason") {
  AdminApiFixture f;
  Reply bad_spid = f.call(V::post, "/v1/providers",
                          json{{"spid", "00-1"}, {"name", "x"}, {"system_type", "soa"}, {"actor", "a"}});
  CHECK(bad_spid.status == 400);
  CHECK(bad_spid.errorCode() == "invalid_spid");
  CHECK_THAT(bad_spid.errorMessage(), Catch::Contains("00-1"));
  Reply bad_type = f.call(V::post, "/v1/providers",
                          json{{"spid", "0001"}, {"name", "x"}, {"system_type", "pbx"}, {"actor", "a"}});
  CHECK(bad_type.status == 400);
  CHECK(bad_type.errorCode() == "invalid_system_type");
  CHECK_THAT(bad_type.errorMessage(), Catch::Contains("soa, lsms, soa-and-lsms, npac"));
  Reply no_token = f.callWith(std::nullopt, V::post, "/v1/providers",
                              json{{"spid", "0001"}, {"name", "x"}, {"system_type", "soa"}}.dump());
  CHECK(no_token.status == 401);
  CHECK(no_token.errorCode() == "unauthenticated");
  addProvider(f, "0001");
  Reply duplicate = f.call(V::post, "/v1/providers",
                           json{{"spid", "0001"}, {"name", "x"}, {"system_type", "soa"}, {"actor", "a"}});
  CHECK(duplicate.status == 409);
  CHECK(duplicate.errorCode() == "provider_exists");
  Reply unknown = f.call(V::get, "/v1/providers/0009");
  CHECK(unknown.status == 404);
  CHECK(unknown.errorCode() == "provider_not_found");
}

TEST_CASE("An NSAP given as an IPv4 address is stored as its RFC 1277 NSAP, listed and removed") {
  AdminApiFixture f;
  addProvider(f, "0001");
  Reply added = f.call(V::post, "/v1/providers/0001/nsaps",
                       json{{"address", "127.0.0.2"}, {"weight", 10}, {"relative_cost", 1}, {"actor", "a"}});
  INFO(added.raw);
  REQUIRE(added.status == 201);
  CHECK(added.body["nsap"] == "540072872203127000000002");
  Reply list = f.call(V::get, "/v1/providers/0001/nsaps");
  REQUIRE(list.body["nsaps"].size() == 1);
  CHECK(list.body["nsaps"][0]["address"] == "127.0.0.2");
  CHECK(list.body["nsaps"][0]["weight"] == 10);
  CHECK(f.call(V::post, "/v1/providers/0001/nsaps", json{{"nsap", "540072872203127000000002"}, {"actor", "a"}}).status ==
        409);
  Reply bad = f.call(V::post, "/v1/providers/0001/nsaps", json{{"address", "300.1.1.1"}, {"actor", "a"}});
  CHECK(bad.status == 400);
  CHECK(bad.errorCode() == "invalid_nsap");
  Reply bad_weight = f.call(V::post, "/v1/providers/0001/nsaps", json{{"address", "127.0.0.3"}, {"weight", 100}, {"actor", "a"}});
  CHECK(bad_weight.errorCode() == "invalid_nsap");
  CHECK_THAT(bad_weight.errorMessage(), Catch::Contains("1..99"));
  CHECK(f.call(V::delete_, "/v1/providers/0001/nsaps/127.0.0.2", "", "a").status == 200);
  CHECK(f.call(V::get, "/v1/providers/0001/nsaps").body["nsaps"].empty());
  CHECK(f.call(V::delete_, "/v1/providers/0001/nsaps/127.0.0.2", "", "a").errorCode() == "nsap_not_found");
}

TEST_CASE("A key is added with not_after defaulting to now plus key_lifetime, listed and revoked") {
  AdminApiFixture f;
  addProvider(f, "0001");
  auto pair = associations::generateKeyPair(associations::SignatureAlgorithm::kEd25519);
  REQUIRE(pair.isOk());
  Reply added = f.call(V::post, "/v1/providers/0001/keys",
                       json{{"key_list_id", 1}, {"key_id", 2}, {"algorithm", "ed25519"},
                            {"public_key_pem", pair.value().public_pem}, {"actor", "a"}});
  INFO(added.raw);
  REQUIRE(added.status == 201);
  CHECK(added.body["not_before"] == formatTime(AdminApiFixture::kNow));
  CHECK(added.body["not_after"] == formatTime(AdminApiFixture::kNow + 365LL * 24 * 3600 * 1000));
  CHECK(added.body["state"] == "active");
  Reply list = f.call(V::get, "/v1/providers/0001/keys");
  REQUIRE(list.body["keys"].size() == 1);
  CHECK(list.body["keys"][0]["public_key_pem"] == pair.value().public_pem);
  Reply revoked = f.call(V::post, "/v1/providers/0001/keys/1/2/revoke", json{{"actor", "a"}});
  REQUIRE(revoked.status == 200);
  CHECK(revoked.body["state"] == "revoked");
  CHECK(f.call(V::post, "/v1/providers/0001/keys/1/3/revoke", json{{"actor", "a"}}).errorCode() == "key_not_found");
}

TEST_CASE("A public key that is not PEM, or not of the declared algorithm, is refused with the OpenSSL reason") {
  AdminApiFixture f;
  addProvider(f, "0001");
  Reply garbage = f.call(V::post, "/v1/providers/0001/keys",
                         json{{"key_list_id", 1}, {"key_id", 1}, {"algorithm", "rsa-sha256"},
                              {"public_key_pem", "-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n"},
                              {"actor", "a"}});
  CHECK(garbage.status == 400);
  CHECK(garbage.errorCode() == "invalid_key");
  CHECK_THAT(garbage.errorMessage(), Catch::Contains("public_key_pem"));
  auto ed = associations::generateKeyPair(associations::SignatureAlgorithm::kEd25519);
  REQUIRE(ed.isOk());
  Reply wrong = f.call(V::post, "/v1/providers/0001/keys",
                       json{{"key_list_id", 1}, {"key_id", 1}, {"algorithm", "rsa-sha256"},
                            {"public_key_pem", ed.value().public_pem}, {"actor", "a"}});
  CHECK(wrong.status == 400);
  CHECK_THAT(wrong.errorMessage(), Catch::Contains(describe(StatusCode::kWrongAlgorithm)));
  CHECK(f.call(V::get, "/v1/providers/0001/keys").body["keys"].empty());
}

TEST_CASE("Tunable errors keep the registry's specific reason: unknown name, out of range, wrong scope") {
  AdminApiFixture f;
  Reply unknown = f.call(V::put, "/v1/tunables/no_such", json{{"value", "1"}, {"actor", "a"}});
  CHECK(unknown.status == 404);
  CHECK(unknown.errorCode() == "unknown_tunable");
  Reply range = f.call(V::put, "/v1/tunables/congestion_window", json{{"value", 0}, {"actor", "a"}});
  CHECK(range.status == 400);
  CHECK(range.errorCode() == "out_of_range");
  CHECK_THAT(range.errorMessage(), Catch::Contains("congestion_window") && Catch::Contains("1..10000"));
  Reply scope = f.call(V::put, "/v1/tunables/srr", json{{"value", "on"}, {"actor", "a"}});
  CHECK(scope.status == 400);
  CHECK(scope.errorCode() == "wrong_scope");
  Reply type = f.call(V::put, "/v1/tunables/response_timeout", json{{"value", "soon"}, {"actor", "a"}});
  CHECK(type.errorCode() == "wrong_type");
  CHECK(f.call(V::get, "/v1/tunables/congestion_window").body["value"] == "100");
}

TEST_CASE("A tunable is set, read back, listed with its override, and cleared back to its default") {
  AdminApiFixture f;
  Reply set = f.call(V::put, "/v1/tunables/congestion_window", json{{"value", "250"}, {"actor", "carol"}});
  INFO(set.raw);
  REQUIRE(set.status == 200);
  CHECK(f.call(V::get, "/v1/tunables/congestion_window").body["value"] == "250");
  Reply per_sp = f.call(V::put, "/v1/tunables/congestion_window", json{{"value", "7"}, {"spid", "0002"}, {"actor", "c"}});
  REQUIRE(per_sp.status == 200);
  CHECK(f.call(V::get, "/v1/tunables/congestion_window?spid=0002").body["value"] == "7");
  Reply all = f.call(V::get, "/v1/tunables");
  REQUIRE(all.status == 200);
  CHECK(all.body["tunables"].size() == tunables::kTunableCount);
  CHECK(all.body["overrides"].size() == 2);
  CHECK(f.call(V::delete_, "/v1/tunables/congestion_window", "", "carol").status == 200);
  CHECK(f.call(V::get, "/v1/tunables/congestion_window").body["value"] == "100");
}

TEST_CASE("SRR switched on through the provider route is persisted, audited and notified to subscribers") {
  AdminApiFixture f;
  addProvider(f, "0001");
  std::mutex mutex;
  std::vector<std::string> seen;
  auto subscription = f.registry->subscribe(tunables::kSrr, "0001", [&](const tunables::TunableRegistry::Change& c) {
    std::lock_guard lock(mutex);
    seen.push_back(c.spid + "=" + (std::get<bool>(c.new_value) ? "on" : "off") + " by " + c.actor);
  });
  Reply on = f.call(V::put, "/v1/providers/0001/srr", json{{"on", true}, {"actor", "dave"}});
  INFO(on.raw);
  REQUIRE(on.status == 200);
  CHECK(on.body["srr"] == true);
  {
    std::lock_guard lock(mutex);
    CHECK(seen == std::vector<std::string>{"0001=on by dave"});
  }
  CHECK(f.call(V::get, "/v1/tunables/srr?spid=0001").body["value"] == "on");
  // Persisted: a registry opened afresh on another connection reads it.
  auto connection = f.openConnection();
  std::unique_ptr<tunables::TunableRegistry> fresh;
  REQUIRE(tunables::TunableRegistry::open(*connection, AdminApiFixture::clock(), &fresh).isOk());
  CHECK(fresh->get(tunables::kSrr, "0001"));
  fresh.reset();
  auto entries = audit(f);
  REQUIRE_FALSE(entries.empty());
  CHECK(entries[0].actor == "dave");
  CHECK(entries[0].new_value == "on");
  CHECK_THAT(entries[0].subject, Catch::Contains("srr"));
  CHECK(f.call(V::put, "/v1/providers/0009/srr", json{{"on", true}, {"actor", "d"}}).errorCode() == "provider_not_found");
}

TEST_CASE("Without a core attached the message, inbound and association routes answer 503") {
  AdminApiFixture f;
  addProvider(f, "0001");
  for (auto [method, target] : std::vector<std::pair<V, std::string>>{{V::get, "/v1/inbound?wait=1s"},
                                                                      {V::get, "/v1/associations"},
                                                                      {V::post, "/v1/associations/1/abort"}}) {
    Reply r = f.call(method, target, "", "ops");
    INFO(target);
    CHECK(r.status == 503);
    CHECK(r.errorCode() == "core_unavailable");
  }
  Reply submit = f.call(V::post, "/v1/messages", notification("0001"));
  CHECK(submit.status == 503);
  CHECK(submit.errorCode() == "core_unavailable");
  Reply answer = f.call(V::post, "/v1/inbound/5/response", json{{"outcome", "result"}});
  CHECK(answer.errorCode() == "core_unavailable");
}

TEST_CASE("Malformed JSON, an oversized body, an unknown route and a wrong method get clear errors") {
  HttpServer::Options small;
  small.body_limit = 1024;
  AdminApiFixture f(small);
  Reply bad = f.call(V::post, "/v1/providers", std::string("{\"spid\": "));
  CHECK(bad.status == 400);
  CHECK(bad.errorCode() == "bad_json");
  Reply array = f.call(V::post, "/v1/providers", std::string("[1,2]"));
  CHECK(array.errorCode() == "bad_json");
  Reply big = f.call(V::post, "/v1/providers", std::string(2048, ' '));
  CHECK(big.status == 413);
  CHECK(big.errorCode() == "body_too_large");
  Reply route = f.call(V::get, "/v1/nothing");
  CHECK(route.status == 404);
  CHECK(route.errorCode() == "unknown_route");
  Reply method = f.call(V::delete_, "/v1/providers");
  CHECK(method.status == 405);
}

TEST_CASE("One keep-alive connection carries several requests") {
  AdminApiFixture f;
  boost::asio::io_context client_io;
  boost::beast::tcp_stream stream(client_io);
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), f.port));
  for (int i = 0; i < 3; ++i) {
    boost::beast::http::request<boost::beast::http::string_body> request{V::get, "/v1/tunables/srr", 11};
    request.set(boost::beast::http::field::host, "x");
    request.set(boost::beast::http::field::authorization, "Bearer " + f.token(AdminApiFixture::kDefaultTokenName));
    request.keep_alive(true);
    boost::beast::http::write(stream, request);
    Reply r = AdminApiFixture::read(stream);
    CHECK(r.status == 200);
    CHECK(r.body["value"] == "off");
  }
}

TEST_CASE("Submitted messages get ids once committed, and are stored as a ROSE Invoke with invoke id 0") {
  AdminApiFixture f;
  addProvider(f, "0001");
  auto writer = db::QueueWriter::start(f.path(), {}, AdminApiFixture::clock());
  REQUIRE(writer.isOk());
  QueueBackedCore core(*writer.value());
  f.onApiThread([&] { f.api->attachCore(&core); });

  json batch = {{"messages", json::array({notification("0001"), notification("0001")})}};
  batch["messages"][1]["key"] = "3035551212";
  Reply submitted = f.call(V::post, "/v1/messages", batch);
  INFO(submitted.raw);
  REQUIRE(submitted.status == 201);
  REQUIRE(submitted.body["ids"].size() == 2);
  CHECK(core.seen().keys == std::vector<std::string>{"", "3035551212"});
  std::int64_t id = submitted.body["ids"][1].get<std::int64_t>();

  Reply status = f.call(V::get, "/v1/messages/" + std::to_string(id));
  REQUIRE(status.status == 200);
  CHECK(status.body["state"] == "queued");
  CHECK(status.body["priority"] == 3);
  CHECK(status.body["functions"] == "notifications");
  auto pdu = db::fromHex(status.body["pdu"].get<std::string>());
  REQUIRE(pdu);
  auto apdu = cmip::decodeRoseApdu(*pdu);
  REQUIRE(apdu.isOk());
  auto& invoke = std::get<cmip::RoseInvoke>(apdu.value());
  CHECK(invoke.invokeId == kPlaceholderInvokeId);
  auto typed = cmip::fromRose(invoke);
  REQUIRE(typed.isOk());
  CHECK(typed.value().opcode == cmip::CmipOpcode::kEventReportConfirmed);
  auto& report = std::get<cmip::EventReportArgument>(typed.value().argument);
  CHECK(report.eventType.oid().toString() == "1.3.6.1.4.1.103.7.0.0.5.1");
  CHECK(report.eventInfo->bytes == std::vector<std::uint8_t>{0x04, 0x00});
  // The core re-encodes it with the real invoke id.
  auto sent = withInvokeId(*pdu, 77);
  REQUIRE(sent.isOk());
  CHECK(std::get<cmip::RoseInvoke>(cmip::decodeRoseApdu(sent.value()).value()).invokeId == 77);

  CHECK(f.call(V::get, "/v1/messages/999999").errorCode() == "message_not_found");
  f.onApiThread([&] { f.api->attachCore(nullptr); });
}

TEST_CASE("A message naming an unknown provider, function or malformed BER is refused before the core") {
  AdminApiFixture f;
  addProvider(f, "0001");
  json unknown_sp = notification("0002");
  CHECK(f.call(V::post, "/v1/messages", unknown_sp).errorCode() == "provider_not_found");
  json bad_function = notification("0001");
  bad_function["function"] = "billing";
  Reply r1 = f.call(V::post, "/v1/messages", bad_function);
  CHECK(r1.errorCode() == "invalid_message");
  CHECK_THAT(r1.errorMessage(), Catch::Contains("billing"));
  json bad_ber = notification("0001");
  bad_ber["information"] = "3005020101";  // SEQUENCE claims 5 octets, 3 follow
  Reply r2 = f.call(V::post, "/v1/messages", json{{"messages", json::array({notification("0001"), bad_ber})}});
  CHECK(r2.status == 400);
  CHECK_THAT(r2.errorMessage(), Catch::StartsWith("messages[1]: information"));
  json unconfirmed_create = notification("0001");
  unconfirmed_create["operation"] = "create";
  unconfirmed_create["confirmed"] = false;
  CHECK_THAT(f.call(V::post, "/v1/messages", unconfirmed_create).errorMessage(), Catch::Contains("always confirmed"));
}

TEST_CASE("Inbound requests are long-polled and answered through the core and an unknown one is 404") {
  AdminApiFixture f;
  auto writer = db::QueueWriter::start(f.path(), {}, AdminApiFixture::clock());
  REQUIRE(writer.isOk());
  QueueBackedCore core(*writer.value());
  f.onApiThread([&] { f.api->attachCore(&core); });
  Reply polled = f.call(V::get, "/v1/inbound?wait=30s&max=10&spid=0001");
  INFO(polled.raw);
  REQUIRE(polled.status == 200);
  REQUIRE(polled.body["requests"].size() == 1);
  CHECK(polled.body["requests"][0]["operation"] == "m-Action-Confirmed");
  CHECK(f.call(V::get, "/v1/inbound?wait=2m").errorCode() == "invalid_wait");
  Reply answered = f.call(V::post, "/v1/inbound/41/response",
                          json{{"outcome", "error"}, {"error_code", "noSuchAction"}, {"actor", "app"}});
  REQUIRE(answered.status == 200);
  auto last = core.seen().last_response;
  REQUIRE(last);
  CHECK(last->error == cmip::CmipError::kNoSuchAction);
  CHECK(last->actor == "app");
  CHECK(f.call(V::post, "/v1/inbound/42/response", json{{"outcome", "result"}}).errorCode() == "request_not_found");
  CHECK(f.call(V::post, "/v1/associations/3/abort", "", "ops").status == 200);
  CHECK(core.seen().aborted == "3 by ops");
  f.onApiThread([&] { f.api->attachCore(nullptr); });
}

TEST_CASE("Each operation is queued as its X.711 argument inside a ROSE Invoke with the placeholder invoke id") {
  auto decode = [](const json& message) {
    Result<OutboundMessage> parsed = parseMessage(message);
    INFO(parsed.status().message());
    REQUIRE(parsed.isOk());
    auto apdu = cmip::decodeRoseApdu(parsed->message.pdu);
    REQUIRE(apdu.isOk());
    CHECK(std::get<cmip::RoseInvoke>(apdu.value()).invokeId == kPlaceholderInvokeId);
    auto typed = cmip::fromRose(std::get<cmip::RoseInvoke>(apdu.value()));
    REQUIRE(typed.isOk());
    CHECK(typed.value().opcode == parsed->opcode);
    return typed.value();
  };
  json base = notification("0001");
  json unconfirmed = base;
  unconfirmed["confirmed"] = false;
  CHECK(decode(unconfirmed).opcode == cmip::CmipOpcode::kEventReport);

  json action = base;
  action["operation"] = "action";
  action["type"] = 3;  // local form
  cmip::CmipInvoke a = decode(action);
  CHECK(a.opcode == cmip::CmipOpcode::kActionConfirmed);
  auto& action_arg = std::get<cmip::ActionArgument>(a.argument);
  CHECK(action_arg.actionType.localValue() == 3);
  CHECK(action_arg.selection.baseClass.oid().toString() == "1.3.6.1.4.1.103.7.0.0.1.3");
  CHECK(action_arg.selection.baseInstance.rdns.at(0).at(0).id.toString() == "2.5.4.3");
  CHECK(action_arg.actionInfoArg->bytes == std::vector<std::uint8_t>{0x04, 0x00});

  json set = base;
  set["operation"] = "set";
  set["attributes"] = json::array({{{"id", "1.3.6.1.4.1.103.7.0.0.3.9"}, {"value", "020105"}}});
  cmip::SetArgument set_arg = std::get<cmip::SetArgument>(decode(set).argument);
  REQUIRE(set_arg.modificationList.size() == 1);
  CHECK(set_arg.modificationList[0].attributeValue->bytes == std::vector<std::uint8_t>{0x02, 0x01, 0x05});

  json get = base;
  get["operation"] = "get";
  get["attributes"] = json::array({{{"id", "1.3.6.1.4.1.103.7.0.0.3.9"}}});
  CHECK(std::get<cmip::GetArgument>(decode(get).argument).attributeIdList->size() == 1);

  json create = base;
  create["operation"] = "create";
  create["instance"] = {{"non_specific", "0102"}};
  cmip::CreateArgument create_arg = std::get<cmip::CreateArgument>(decode(create).argument);
  CHECK(create_arg.managedObjectInstance->nonSpecific == std::vector<std::uint8_t>{0x01, 0x02});

  json del = base;
  del["operation"] = "delete";
  CHECK(std::holds_alternative<cmip::DeleteArgument>(decode(del).argument));
}

TEST_CASE("An inbound response is encoded as a ReturnResult or ReturnError carrying the request's invoke id") {
  InboundRequest request;
  request.invoke_id = 31;
  request.opcode = cmip::CmipOpcode::kActionConfirmed;
  InboundResponse error;
  error.kind = InboundResponse::Kind::kError;
  error.error = cmip::CmipError::kNoSuchAction;
  auto e = cmip::decodeRoseApdu(encodeInboundResponse(request, error));
  REQUIRE(e.isOk());
  auto& return_error = std::get<cmip::RoseReturnError>(e.value());
  CHECK(return_error.invokeId.present == 31);
  CHECK(return_error.errcode.localValue() == static_cast<std::int32_t>(cmip::CmipError::kNoSuchAction));
  InboundResponse result;
  result.result = cmip::OpaqueBer{{0x30, 0x00}};
  auto r = cmip::decodeRoseApdu(encodeInboundResponse(request, result));
  REQUIRE(r.isOk());
  auto& return_result = std::get<cmip::RoseReturnResult>(r.value());
  CHECK(return_result.invokeId.present == 31);
  REQUIRE(return_result.result);
  CHECK(return_result.result->opcode.localValue() == static_cast<std::int32_t>(cmip::CmipOpcode::kActionConfirmed));
  CHECK(return_result.result->result.bytes == std::vector<std::uint8_t>{0x30, 0x00});
}

TEST_CASE("A pending long poll holds up neither other connections nor the API thread") {
  AdminApiFixture f;
  auto writer = db::QueueWriter::start(f.path(), {}, AdminApiFixture::clock());
  REQUIRE(writer.isOk());
  QueueBackedCore core(*writer.value());
  core.hold_polls = true;
  f.onApiThread([&] { f.api->attachCore(&core); });
  auto poll = std::async(std::launch::async, [&] { return f.call(V::get, "/v1/inbound?wait=30s"); });
  for (;;) {  // until the core holds the poll's completion
    {
      std::lock_guard lock(core.mutex);
      if (core.held_polls.size() == 1) break;
    }
    std::this_thread::yield();
  }
  addProvider(f, "0001");  // answered while the poll waits
  CHECK(f.call(V::get, "/v1/providers").body["providers"].size() == 1);
  CoreService::PollDone done;
  {
    std::lock_guard lock(core.mutex);
    done = core.held_polls[0];
  }
  done(std::vector<InboundRequest>{});  // the wait elapsed with nothing
  Reply answered = poll.get();
  CHECK(answered.status == 200);
  CHECK(answered.body["requests"].empty());
  f.onApiThread([&] { f.api->attachCore(nullptr); });
}

}  // namespace
}  // namespace npac::npacd
