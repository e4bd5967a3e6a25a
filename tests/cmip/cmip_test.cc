// CMIP (X.711) known-answer vectors, operation round trips through ROSE, CMIPUserInfo,
// and malformed input.
#include <catch2/catch.hpp>

#include "cmip/cmip.h"
#include "cmip/cmip_operations.h"
#include "cmip/rose.h"
#include "tests/cmip/upper_test_util.h"

using namespace npac::cmip;
using npac::cmip::testing::hex;
using npac::cmip::testing::RandomValues;

namespace {

ObjectInstance systemDn(const std::string& name) {
  ObjectInstance inst;
  EncodeBuffer buf(0);
  BerWriter w(buf);
  w.writeString(name, kTagPrintableString);
  inst.rdns = {{Ava{Oid{2, 9, 3, 2, 7, 4}, OpaqueBer{buf.toVector()}}}};
  return inst;
}

CmipInvoke roundTripInvoke(const CmipInvoke& inv) {
  auto bytes = encodeRoseApdu(toRose(inv));
  auto rose = decodeRoseApdu(bytes);
  REQUIRE(rose.isOk());
  auto back = fromRose(std::get<RoseInvoke>(*rose));
  INFO(back.status().toString());
  REQUIRE(back.isOk());
  CHECK(encodeRoseApdu(toRose(*back)) == bytes);
  return *back;
}

}  // namespace

TEST_CASE("EventReportArgument encodes class, instance, event type and [8] info", "[cmip]") {
  EventReportArgument a;
  a.managedObjectClass = ObjectClass::local(5);
  a.managedObjectInstance.form = ObjectInstance::Form::kNonSpecific;
  a.managedObjectInstance.nonSpecific = {'a', 'b'};
  a.eventType = EventTypeId::local(3);
  a.eventInfo = OpaqueBer{{0x05, 0x00}};
  auto want = hex("30 0E 81 01 05 83 02 61 62 87 01 03 A8 02 05 00");
  CHECK(encodeArgument(a).bytes == want);
  auto back = decodeArgument(CmipOpcode::kEventReport, want);
  REQUIRE(back.isOk());
  CHECK(std::get<EventReportArgument>(*back) == a);
}

TEST_CASE("GetArgument encodes a distinguished name, scope and attribute id list", "[cmip]") {
  GetArgument g;
  g.selection.baseClass = ObjectClass::global(Oid{2, 9, 3, 2, 3, 13});
  g.selection.baseInstance = systemDn("NP");
  g.selection.scope = Scope{Scope::Kind::kNamedNumbers, 2};
  g.attributeIdList = std::vector<AttributeId>{AttributeId::local(7)};
  auto want = hex("30 22 80 05 59 03 02 03 0D A2 0F 31 0D 30 0B 06 05 59 03 02 07 04 13 02 4E 50"
                  " A7 03 02 01 02 AC 03 81 01 07");
  CHECK(encodeArgument(g).bytes == want);
  auto back = decodeArgument(CmipOpcode::kGet, want);
  REQUIRE(back.isOk());
  CHECK(std::get<GetArgument>(*back) == g);
}

TEST_CASE("ActionArgument puts the action type and [4] argument in actionInfo [12]", "[cmip]") {
  ActionArgument a;
  a.selection.baseClass = ObjectClass::local(1);
  a.selection.baseInstance.form = ObjectInstance::Form::kNonSpecific;
  a.actionType = ActionTypeId::global(Oid{1, 2, 3});
  a.actionInfoArg = OpaqueBer{{0x05, 0x00}};
  // 81 01 01 | 83 00 | AC 08 { 82 02 2A 03 | A4 02 05 00 }
  auto want = hex("30 0F 81 01 01 83 00 AC 08 82 02 2A 03 A4 02 05 00");
  CHECK(encodeArgument(a).bytes == want);
  auto back = decodeArgument(CmipOpcode::kActionConfirmed, want);
  REQUIRE(back.isOk());
  CHECK(std::get<ActionArgument>(*back) == a);
}

TEST_CASE("M-EVENT-REPORT confirmed invoke round-trips through ROSE", "[cmip]") {
  CmipInvoke inv;
  inv.invokeId = 42;
  inv.opcode = CmipOpcode::kEventReportConfirmed;
  EventReportArgument a;
  a.managedObjectClass = ObjectClass::global(Oid{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 3, 1});
  a.managedObjectInstance = systemDn("npac");
  a.eventTime = GeneralizedTime::parse("20261129150000Z").value();
  a.eventType = EventTypeId::global(Oid{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 5, 9});
  a.eventInfo = OpaqueBer{std::vector<uint8_t>{0x04, 0x03, 1, 2, 3}};
  inv.argument = a;
  CHECK(roundTripInvoke(inv) == inv);
}

TEST_CASE("Every CMIP operation kind round-trips through ROSE with a linked id", "[cmip]") {
  Selection sel;
  sel.baseClass = ObjectClass::local(9);
  sel.baseInstance = systemDn("x");
  sel.synchronization = CmisSync::kAtomic;
  sel.filter = OpaqueBer{{0xA9, 0x00}};  // and {} written explicitly
  External ac;
  ac.direct_reference = Oid{1, 2, 3};
  ac.data = {0x05, 0x00};
  sel.accessControl = ac;

  SetArgument set{sel, {Modification{1, AttributeId::local(3), OpaqueBer{{0x02, 0x01, 0x05}}},
                        Modification{std::nullopt, AttributeId::global(Oid{1, 2}), std::nullopt}}};
  CreateArgument create;
  create.managedObjectClass = ObjectClass::local(4);
  create.managedObjectInstance = systemDn("sup");
  create.instanceIsSuperior = true;
  create.referenceObjectInstance = systemDn("ref");
  create.attributeList = std::vector<Attribute>{{AttributeId::local(1), OpaqueBer{{0x05, 0x00}}}};
  LinkedReplyArgument linked;
  linked.kind = LinkedReplyKind::kGetResult;
  linked.body = AttributeListResult{ReplyHeader{ObjectClass::local(1), std::nullopt, std::nullopt},
                                    std::vector<Attribute>{}};
  LinkedReplyArgument linkedError;
  linkedError.kind = LinkedReplyKind::kProcessingFailure;
  linkedError.body = std::vector<uint8_t>{0x81, 0x01, 0x01};

  std::vector<std::pair<CmipOpcode, CmipArgument>> cases = {
      {CmipOpcode::kGet, GetArgument{sel, std::nullopt}},
      {CmipOpcode::kSet, set},
      {CmipOpcode::kSetConfirmed, set},
      {CmipOpcode::kAction, ActionArgument{sel, ActionTypeId::local(1), std::nullopt}},
      {CmipOpcode::kCreate, create},
      {CmipOpcode::kDelete, DeleteArgument{sel}},
      {CmipOpcode::kLinkedReply, linked},
      {CmipOpcode::kLinkedReply, linkedError},
      {CmipOpcode::kCancelGet, CancelGetArgument{17}},
  };
  for (const auto& [op, arg] : cases) {
    CmipInvoke inv{7, 3, op, arg};
    INFO(cmipOpcodeName(op));
    CHECK(checkArgumentMatchesOpcode(op, arg).isOk());
    CHECK(roundTripInvoke(inv) == inv);
  }
}

TEST_CASE("Confirmed results round-trip through ReturnResult", "[cmip]") {
  ReplyHeader h{ObjectClass::local(1), systemDn("a"), GeneralizedTime::fromUnixMillis(1'700'000'000'250)};
  std::vector<CmipResult> results = {
      {1, CmipOpcode::kEventReportConfirmed,
       EventReportResult{h, EventReportResult::EventReply{EventTypeId::local(2), OpaqueBer{{0x05, 0x00}}}}},
      {2, CmipOpcode::kGet, AttributeListResult{h, std::vector<Attribute>{{AttributeId::local(5), OpaqueBer{{0x01, 0x01, 0xFF}}}}}},
      {3, CmipOpcode::kActionConfirmed,
       ActionResult{h, ActionResult::ActionReply{ActionTypeId::global(Oid{1, 2, 5}), OpaqueBer{{0x05, 0x00}}}}},
      {4, CmipOpcode::kDelete, DeleteResult{ReplyHeader{}}},
      {5, std::nullopt, std::monostate{}},
  };
  for (const auto& res : results) {
    auto bytes = encodeRoseApdu(toRose(res));
    auto rose = decodeRoseApdu(bytes);
    REQUIRE(rose.isOk());
    auto back = fromRose(std::get<RoseReturnResult>(*rose));
    INFO(back.status().toString());
    REQUIRE(back.isOk());
    CHECK(*back == res);
  }
}

TEST_CASE("CMIP errors map to ReturnError codes 0..23 with names", "[cmip]") {
  CmipErrorReply e{InvokeId{8}, CmipError::kNoSuchObjectInstance, OpaqueBer{{0x83, 0x00}}};
  auto rose = toRose(e);
  CHECK(encodeRoseApdu(rose) == hex("A3 08 02 01 08 02 01 01 83 00"));
  auto back = fromRose(rose);
  REQUIRE(back.isOk());
  CHECK(*back == e);
  CHECK(std::string(cmipErrorName(CmipError::kNoSuchObjectClass)) == "noSuchObjectClass");
  CHECK(std::string(cmipErrorName(CmipError::kProcessingFailure)) == "processingFailure");
  CHECK(std::string(cmipErrorName(CmipError::kOperationCancelled)) == "operationCancelled");
  RoseReturnError unknown{InvokeId{1}, Code::local(24), std::nullopt};
  CHECK(fromRose(unknown).status().code() == ErrorCode::kCmipBadArgument);
}

TEST_CASE("An opcode outside X.711 is an unknown CMIP operation", "[cmip]") {
  RoseInvoke inv{1, std::nullopt, Code::local(11), OpaqueBer{{0x30, 0x00}}};
  CHECK(fromRose(inv).status().code() == ErrorCode::kCmipUnknownOperation);
  inv.opcode = Code{Oid{1, 2, 3}};
  CHECK(fromRose(inv).status().code() == ErrorCode::kCmipUnknownOperation);
}

TEST_CASE("EventReportArgument without an event type is missing a mandatory element", "[cmip]") {
  auto r = decodeArgument(CmipOpcode::kEventReport, hex("30 07 81 01 05 83 02 61 62"));
  REQUIRE_FALSE(r.isOk());
  CHECK(r.status().code() == ErrorCode::kBerMissingElement);
}

TEST_CASE("An argument with the wrong instance tag is rejected", "[cmip]") {
  auto r = decodeArgument(CmipOpcode::kEventReport, hex("30 07 81 01 05 85 02 61 62"));
  REQUIRE_FALSE(r.isOk());
  CHECK(r.status().code() == ErrorCode::kBerUnexpectedTag);
}

TEST_CASE("An action argument without actionInfo is a bad CMIP argument", "[cmip]") {
  auto r = decodeArgument(CmipOpcode::kAction, hex("30 05 81 01 01 83 00"));
  REQUIRE_FALSE(r.isOk());
  CHECK(r.status().code() == ErrorCode::kCmipBadArgument);
}

TEST_CASE("An invoke of a confirmed operation without argument is a bad CMIP argument", "[cmip]") {
  RoseInvoke inv{1, std::nullopt, Code::local(3), std::nullopt};
  CHECK(fromRose(inv).status().code() == ErrorCode::kCmipBadArgument);
}

TEST_CASE("Argument type mismatching the opcode is refused before encoding", "[cmip]") {
  CHECK(checkArgumentMatchesOpcode(CmipOpcode::kGet, DeleteArgument{}).code() ==
        ErrorCode::kCmipBadArgument);
}

TEST_CASE("Every CMIP operation invoked with an argument of the wrong type is a mistyped argument", "[cmip]") {
  // A bare INTEGER where the operation wants its SEQUENCE (or [n] linked reply); for
  // M-CANCEL-GET, whose argument is an INTEGER, an empty SEQUENCE.
  for (int32_t op = 0; op <= kMaxCmipOpcode; ++op) {
    const bool cancel = op == static_cast<int32_t>(CmipOpcode::kCancelGet);
    RoseInvoke inv{9, std::nullopt, Code::local(op),
                   OpaqueBer{cancel ? hex("30 00") : hex("02 01 2A")}};
    INFO("opcode " << op);
    auto decoded = fromRose(inv);
    REQUIRE_FALSE(decoded.isOk());
    CHECK(decoded.status().code() == ErrorCode::kCmipBadArgument);
    RoseReject reject = rejectInvoke(inv, decoded.status());
    CHECK(reject.invokeId == InvokeId{9});
    CHECK(reject.kind == RejectProblemKind::kInvoke);
    CHECK(reject.problem == kMistypedArgument);
  }
}

TEST_CASE("An argument that breaks its operation's grammar is a mistyped argument naming the BER fault", "[cmip]") {
  RoseInvoke inv{4, std::nullopt, Code::local(0), OpaqueBer{hex("30 07 81 01 05 83 02 61 62")}};
  auto decoded = fromRose(inv);
  REQUIRE_FALSE(decoded.isOk());
  CHECK(decoded.status().code() == ErrorCode::kCmipBadArgument);
  CHECK(decoded.status().message().find("kBerMissingElement") != std::string::npos);
  CHECK(rejectInvoke(inv, decoded.status()).problem == kMistypedArgument);
}

TEST_CASE("An invoke whose opcode X.711 does not define is rejected as an unrecognized operation", "[cmip]") {
  RoseInvoke inv{42, std::nullopt, Code::local(42), OpaqueBer{hex("30 00")}};
  auto decoded = fromRose(inv);
  REQUIRE_FALSE(decoded.isOk());
  RoseReject reject = rejectInvoke(inv, decoded.status());
  CHECK(reject.invokeId == InvokeId{42});
  CHECK(reject.kind == RejectProblemKind::kInvoke);
  CHECK(reject.problem == kUnrecognizedOperation);
  CHECK(encodeRoseApdu(RoseApdu{reject}) == hex("A4 06 02 01 2A 81 01 01"));
}

TEST_CASE("The NPAC SMS object instance is the distinguished name CN=NPAC", "[cmip]") {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  writeObjectInstance(w, npacSmsInstance());
  const auto want = hex("a2 0f 31 0d 30 0b 06 03 55 04 03 13 04 4e 50 41 43");
  CHECK(buf.toVector() == want);
  BerReader r(want);
  auto back = readObjectInstance(r);
  REQUIRE(back.isOk());
  CHECK(*back == npacSmsInstance());
  CHECK_FALSE(ObjectInstance{} == npacSmsInstance());  // the empty DN is another object
}

TEST_CASE("CMIPUserInfo encodes protocol version and an explicit [2] accessControl", "[cmip]") {
  CmipUserInfo info;
  info.protocolVersion = BitString::withBits(2);
  info.protocolVersion->setBit(kCmipVersion1Bit);
  info.protocolVersion->setBit(kCmipVersion2Bit);
  External ac;
  ac.direct_reference = Oid{1, 2};
  ac.data = {0x05, 0x00};
  info.accessControl = ac;
  auto want = hex("30 0F 80 02 06 C0 A2 09 28 07 06 01 2A A0 02 05 00");
  CHECK(encodeCmipUserInfo(info) == want);
  auto back = decodeCmipUserInfo(want);
  REQUIRE(back.isOk());
  CHECK(*back == info);
  CHECK(back->supportsVersion2());
}

TEST_CASE("CMIPUserInfo with an unknown element is bad user information", "[cmip]") {
  auto r = decodeCmipUserInfo(hex("30 03 84 01 00"));
  REQUIRE_FALSE(r.isOk());
  CHECK(r.status().code() == ErrorCode::kAcseBadUserInformation);
}

TEST_CASE("CMIPAbortInfo round-trips its abort source", "[cmip]") {
  CmipAbortInfo info{CmipAbortSource::kServiceProvider, std::nullopt};
  CHECK(encodeCmipAbortInfo(info) == hex("30 03 80 01 01"));
  auto back = decodeCmipAbortInfo(hex("30 03 80 01 01"));
  REQUIRE(back.isOk());
  CHECK(*back == info);
  CHECK(decodeCmipAbortInfo(hex("30 03 80 01 02")).status().code() == ErrorCode::kAcseBadUserInformation);
}

TEST_CASE("Random CMIP invokes round-trip and re-encode canonically", "[cmip][property]") {
  RandomValues rv(711);
  auto id = [&] { return rv.coin() ? GlobalOrLocal::global(rv.oid()) : GlobalOrLocal::local(rv.range(-5, 5000)); };
  auto inst = [&] {
    ObjectInstance i;
    i.form = static_cast<ObjectInstance::Form>(rv.range(2, 4));
    if (i.form == ObjectInstance::Form::kNonSpecific) {
      i.nonSpecific = rv.bytes(static_cast<size_t>(rv.range(0, 10)));
    } else {
      for (int r = rv.range(0, 3); r > 0; --r) {
        RelativeDistinguishedName rdn;
        for (int k = rv.range(1, 2); k > 0; --k) rdn.push_back(Ava{rv.oid(), rv.opaque()});
        i.rdns.push_back(rdn);
      }
    }
    return i;
  };
  auto attrs = [&] {
    std::vector<Attribute> v;
    for (int k = rv.range(0, 3); k > 0; --k) v.push_back({id(), rv.opaque()});
    return v;
  };
  auto selection = [&] {
    Selection s;
    s.baseClass = id();
    s.baseInstance = inst();
    if (rv.coin()) s.synchronization = static_cast<CmisSync>(rv.range(0, 1));
    if (rv.coin()) s.scope = Scope{static_cast<Scope::Kind>(rv.range(0, 2)), rv.range(0, 9)};
    return s;
  };
  for (int i = 0; i < 400; ++i) {
    CmipInvoke inv;
    inv.invokeId = static_cast<int32_t>(rv.range(0, INT32_MAX));
    if (rv.coin()) inv.linkedId = static_cast<int32_t>(rv.range(0, 1000));
    switch (rv.range(0, 5)) {
      case 0: {
        EventReportArgument a{id(), inst(), std::nullopt, id(), std::nullopt};
        if (rv.coin()) a.eventTime = rv.time();
        if (rv.coin()) a.eventInfo = rv.opaque();
        inv.opcode = rv.coin() ? CmipOpcode::kEventReport : CmipOpcode::kEventReportConfirmed;
        inv.argument = a;
        break;
      }
      case 1: {
        GetArgument g{selection(), std::nullopt};
        if (rv.coin()) g.attributeIdList = std::vector<AttributeId>{id(), id()};
        inv.opcode = CmipOpcode::kGet;
        inv.argument = g;
        break;
      }
      case 2: {
        SetArgument s{selection(), {}};
        for (int k = rv.range(1, 3); k > 0; --k) {
          s.modificationList.push_back({rv.coin() ? std::optional<int64_t>(rv.range(0, 3)) : std::nullopt,
                                        id(), rv.coin() ? std::optional(rv.opaque()) : std::nullopt});
        }
        inv.opcode = rv.coin() ? CmipOpcode::kSet : CmipOpcode::kSetConfirmed;
        inv.argument = s;
        break;
      }
      case 3: {
        ActionArgument a{selection(), id(), std::nullopt};
        if (rv.coin()) a.actionInfoArg = rv.opaque();
        inv.opcode = rv.coin() ? CmipOpcode::kAction : CmipOpcode::kActionConfirmed;
        inv.argument = a;
        break;
      }
      case 4: {
        CreateArgument c;
        c.managedObjectClass = id();
        if (rv.coin()) {
          c.managedObjectInstance = inst();
          c.instanceIsSuperior = rv.coin();
        }
        if (rv.coin()) c.attributeList = attrs();
        inv.opcode = CmipOpcode::kCreate;
        inv.argument = c;
        break;
      }
      default:
        inv.opcode = CmipOpcode::kDelete;
        inv.argument = DeleteArgument{selection()};
    }
    INFO("iteration " << i << " " << cmipOpcodeName(inv.opcode));
    CHECK(roundTripInvoke(inv) == inv);
  }
}

TEST_CASE("Mutated ACSE, ROSE, CMIP and bind encodings never crash the decoders", "[cmip][malformed]") {
  // Seed inputs: one valid encoding per decoder; each is flipped, truncated and
  // extended at random. Every outcome must be a value or an error Status; a value must
  // re-encode to something that decodes to the same value (no half-decoded state).
  RandomValues rv(8327);
  EventReportArgument er{ObjectClass::global(Oid{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90, 3, 1}), systemDn("npac"),
                         GeneralizedTime::parse("20261129150000Z").value(),
                         EventTypeId::local(4), OpaqueBer{{0x30, 0x03, 0x02, 0x01, 0x07}}};
  auto rose = encodeRoseApdu(toRose(CmipInvoke{9, 4, CmipOpcode::kEventReportConfirmed, er}));
  CmipUserInfo ui;
  ui.protocolVersion = BitString::withBits(2);
  External ext;
  ext.indirect_reference = 3;
  ext.data = {0x30, 0x00};
  ui.userInfo = ext;
  auto userInfo = encodeCmipUserInfo(ui);
  int decodedOk = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> v = (i % 2) ? rose : userInfo;
    switch (rv.range(0, 2)) {
      case 0:
        for (int k = rv.range(1, 3); k > 0; --k) v[rv.range(0, v.size() - 1)] ^= static_cast<uint8_t>(rv.range(1, 255));
        break;
      case 1: v.resize(rv.range(0, v.size() - 1)); break;
      default: v.insert(v.begin() + rv.range(0, v.size()), static_cast<uint8_t>(rv.range(0, 255)));
    }
    if (i % 2) {
      auto r = decodeRoseApdu(v);
      if (!r.isOk()) continue;
      ++decodedOk;
      auto again = decodeRoseApdu(encodeRoseApdu(*r));
      REQUIRE(again.isOk());
      CHECK(*again == *r);
      if (auto* inv = std::get_if<RoseInvoke>(&*r)) {
        auto typed = fromRose(*inv);
        if (typed.isOk()) {
          auto back = fromRose(toRose(*typed));
          REQUIRE(back.isOk());
          CHECK(*back == *typed);
        }
      }
    } else {
      auto r = decodeCmipUserInfo(v);
      if (!r.isOk()) continue;
      ++decodedOk;
      auto again = decodeCmipUserInfo(encodeCmipUserInfo(*r));
      REQUIRE(again.isOk());
      CHECK(*again == *r);
    }
  }
  CHECK(decodedOk > 0);  // some mutations (e.g. inside opaque values) stay valid
}

TEST_CASE("Set, Create and Delete arguments, a linked reply and results have X.711 tags",
          "[cmip]") {
  ObjectInstance none;
  none.form = ObjectInstance::Form::kNonSpecific;
  Selection sel{ObjectClass::local(1), none, std::nullopt, std::nullopt, std::nullopt, std::nullopt};

  // modificationList [12] IMPLICIT SET OF { modifyOperator [2] addValues, id [1] 3, value }
  SetArgument set{sel, {Modification{1, AttributeId::local(3), OpaqueBer{{0x02, 0x01, 0x05}}}}};
  CHECK(encodeArgument(set).bytes == hex("30 12 81 01 01 83 00 AC 0B 30 09 82 01 01 81 01 03 02 01 05"));

  // superiorObjectInstance [8] (explicit), attributeList [7] IMPLICIT SET OF Attribute
  CreateArgument create;
  create.managedObjectClass = ObjectClass::local(4);
  create.managedObjectInstance = none;
  create.instanceIsSuperior = true;
  create.attributeList = std::vector<Attribute>{{AttributeId::local(1), OpaqueBer{{0x05, 0x00}}}};
  CHECK(encodeArgument(create).bytes == hex("30 10 81 01 04 A8 02 83 00 A7 07 30 05 81 01 01 05 00"));

  // synchronization [6] IMPLICIT atomic, scope [7] { baseToNthLevel [2] 1 }, filter and {}
  DeleteArgument del{Selection{ObjectClass::local(2), none, std::nullopt, CmisSync::kAtomic,
                               Scope{Scope::Kind::kBaseToNthLevel, 1}, OpaqueBer{{0xA9, 0x00}}}};
  auto delBytes = hex("30 0F 81 01 02 83 00 86 01 01 A7 03 82 01 01 A9 00");
  CHECK(encodeArgument(del).bytes == delBytes);
  CHECK(std::get<DeleteArgument>(decodeArgument(CmipOpcode::kDelete, delBytes).value()) == del);

  // getResult [0] IMPLICIT GetResult { class, attributeList [6] IMPLICIT SET OF }
  LinkedReplyArgument linked{LinkedReplyKind::kGetResult,
                             AttributeListResult{ReplyHeader{ObjectClass::local(1), std::nullopt, std::nullopt},
                                                 std::vector<Attribute>{{AttributeId::local(2), OpaqueBer{{0x02, 0x01, 0x09}}}}}};
  auto linkedBytes = hex("A0 0D 81 01 01 A6 08 30 06 81 01 02 02 01 09");
  CHECK(encodeArgument(linked).bytes == linkedBytes);
  CHECK(std::get<LinkedReplyArgument>(decodeArgument(CmipOpcode::kLinkedReply, linkedBytes).value()) == linked);

  // ActionResult { class, actionReply [6] IMPLICIT { actionType [3] 5, [4] { NULL } } }
  ActionResult ar{ReplyHeader{ObjectClass::local(1), std::nullopt, std::nullopt},
                  ActionResult::ActionReply{ActionTypeId::local(5), OpaqueBer{{0x05, 0x00}}}};
  CHECK(encodeResult(ar).bytes == hex("30 0C 81 01 01 A6 07 83 01 05 A4 02 05 00"));
  // EventReportResult { eventReply SEQUENCE { eventType [7] 2 } }
  EventReportResult er{ReplyHeader{}, EventReportResult::EventReply{EventTypeId::local(2), std::nullopt}};
  CHECK(encodeResult(er).bytes == hex("30 05 30 03 87 01 02"));
}
