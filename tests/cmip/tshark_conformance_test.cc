// Wireshark conformance: every npac-pdu sample kind, inside the whole conversation that
// leads to it (TCP handshake, CR, CC, AARQ, AARE, …) on its own TCP stream to port 102,
// written to one pcap and decoded by tshark — an independent implementation of TPKT,
// COTP, session, presentation, ACSE and CMIP. No frame may be malformed or carry error
// expert info, warnings are allowed only for "dissector for OID not implemented" (our
// NPAC object identifiers are private), and the fields must say what we meant.
//
// tshark is a build dependency (Makefile PACKAGES); this test fails when it is missing.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cmip/pcap_writer.h"
#include "tests/cmip/process_util.h"

using namespace npac::cmip::testing;

namespace {

// epan/proto.h expert severities and groups as tshark prints them.
constexpr long kSeverityWarn = 0x00600000;
constexpr long kSeverityError = 0x00800000;
constexpr long kGroupUndecoded = 0x05000000;

struct Expectation {
  std::string kind;
  bool fromClient;
  std::string info;  // substring of the Info column
  std::vector<std::pair<std::string, std::string>> fields;
};

const std::string kNpac = "1.3.6.1.4.1.103.7.0.0";

// The fields we meant, one line per kind (names from `tshark -G fields`, tshark 4.0).
const std::vector<Expectation>& expectations() {
  static const std::vector<Expectation> kAll = {
      {"cr", true, "CR TPDU", {{"cotp.type", "0x0e"}, {"cotp.class", "0"}, {"cotp.tpdu_size", "2048"}, {"cotp.srcref", "0x0001"}}},
      {"cc", false, "CC TPDU", {{"cotp.type", "0x0d"}, {"cotp.destref", "0x0001"}, {"cotp.srcref", "0x0002"}, {"cotp.tpdu_size", "2048"}}},
      {"aarq", true, "CMIP-A-ASSOCIATE",
       {{"ses.type", "13"}, {"pres.abstract_syntax_name", "2.2.1.0.1,2.9.1.1.4"},
        {"pres.presentation_context_identifier", "1,3,1"}, {"acse.aSO_context_name", "2.9.0.0.2"},
        {"acse.ap_title_form2", kNpac + ".90.10.1"}, {"acse.aso_qualifier_form2", "1"},
        {"acse.indirect_reference", "3"}, {"cmip.protocolVersion", "40"}}},
      {"aare-accept", false, "CMIP-A-ASSOCIATE",
       {{"ses.type", "14"}, {"pres.result", "0,0"}, {"acse.aSO_context_name", "2.9.0.0.2"},
        {"acse.result", "0"}, {"acse.service_user", "0"}, {"cmip.protocolVersion", "40"}}},
      // The refusal (LnpBindRefusal) rides in CMIPUserInfo.userInfo; tshark 4.0 shows the
      // CMIPUserInfo but not inside that EXTERNAL (its syntax is ours).
      {"aare-reject", false, "CMIP-A-ASSOCIATE",
       {{"ses.type", "12"}, {"ses.reason_code", "2"}, {"acse.result", "1"}, {"acse.service_user", "13"},
        {"acse.indirect_reference", "3"}, {"cmip.protocolVersion", "40"}}},
      {"rlrq", true, "Release-Request", {{"ses.type", "9"}, {"acse.reason", "0"}}},
      {"rlre", false, "Release-Response", {{"ses.type", "10"}, {"acse.reason", "0"}}},
      {"abrt", true, "Abort", {{"ses.type", "25"}, {"acse.abort_source", "0"}}},
      {"event-report", false, "Invoke m_EventReport_Confirmed",
       {{"ses.type", "1,1"}, {"pres.presentation_context_identifier", "3"}, {"cmip.present", "1"},
        {"cmip.local", "1"}, {"cmip.eventType_OID", kNpac + ".90.5.1"}, {"cmip.globalForm", kNpac + ".90.3.1"}}},
      {"action", true, "Invoke m_Action_Confirmed",
       {{"cmip.present", "2"}, {"cmip.local", "7"}, {"cmip.actionType_OID", kNpac + ".90.6.1"}}},
      {"get", true, "Invoke m_Get",
       {{"cmip.present", "3"}, {"cmip.local", "3"}, {"cmip.globalForm", kNpac + ".90.3.1," + kNpac + ".2.1"}}},
      {"set", true, "Invoke m_Set_Confirmed", {{"cmip.present", "4"}, {"cmip.local", "5"}}},
      {"create", true, "Invoke m_Create", {{"cmip.present", "5"}, {"cmip.local", "8"}}},
      {"delete", true, "Invoke m_Delete", {{"cmip.present", "6"}, {"cmip.local", "9"}}},
      {"result", false, "ReturnResult m_Action_Confirmed",
       {{"cmip.present", "2"}, {"cmip.local", "7"}, {"cmip.actionType_OID", kNpac + ".90.6.1"}}},
      {"error", false, "ReturnError accessDenied", {{"cmip.present", "3"}, {"cmip.local", "2"}}},
      {"reject", false, "Reject", {{"cmip.present", "4"}, {"cmip.invoke", "2"}}},
  };
  return kAll;
}

// The frames leading to `kind` on its stream.
std::vector<std::string> conversationFor(const std::string& kind) {
  if (kind == "cr") return {"cr"};
  if (kind == "cc") return {"cr", "cc"};
  if (kind == "aarq") return {"cr", "cc", "aarq"};
  if (kind == "aare-accept" || kind == "aare-reject") return {"cr", "cc", "aarq", kind};
  if (kind == "rlre") return {"cr", "cc", "aarq", "aare-accept", "rlrq", "rlre"};
  return {"cr", "cc", "aarq", "aare-accept", kind};
}

bool sentByClient(const std::string& kind) {
  for (const auto& e : expectations()) {
    if (e.kind == kind) return e.fromClient;
  }
  return true;
}

std::vector<uint8_t> sampleBytes(const std::string& kind) {
  auto r = runCommand(npacPduPath() + " sample " + kind);
  INFO("npac-pdu sample " << kind);
  REQUIRE(r.exit_code == 0);
  REQUIRE(!r.out.empty());
  return r.out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

}  // namespace

TEST_CASE("tshark is installed (the conformance oracle must not be skipped)", "[tshark]") {
  auto r = runCommand("tshark -v 2>/dev/null");
  INFO("tshark is required: make installs it (Debian package tshark)");
  REQUIRE(r.exit_code == 0);
  CHECK(r.text().find("TShark") != std::string::npos);
}

TEST_CASE("Every npac-pdu sample decodes in tshark without malformed or error expert info, "
          "with the fields we meant", "[tshark]") {
  REQUIRE(runCommand("tshark -v >/dev/null 2>&1").exit_code == 0);
  ScratchDir dir("npac-tshark");
  PcapWriter pcap;
  std::map<std::string, std::vector<uint8_t>> samples;
  std::map<size_t, std::string> lastFrameOf;  // pcap frame number → kind
  uint16_t port = 40000;
  for (const auto& e : expectations()) {
    TcpStream stream(pcap, 0x7F000001, port++, 0x7F000002, 102);
    stream.handshake();
    for (const auto& k : conversationFor(e.kind)) {
      if (!samples.count(k)) samples[k] = sampleBytes(k);
      if (sentByClient(k)) {
        stream.fromClient(samples[k]);
      } else {
        stream.fromServer(samples[k]);
      }
    }
    lastFrameOf[pcap.packetCount()] = e.kind;
  }
  std::string file = dir.file("samples.pcap");
  REQUIRE(pcap.save(file));

  std::vector<std::string> fields{"frame.number", "_ws.col.Info", "_ws.malformed", "_ws.expert.severity",
                                  "_ws.expert.group", "_ws.expert.message"};
  std::set<std::string> unique;
  for (const auto& e : expectations()) {
    for (const auto& [f, v] : e.fields) {
      if (unique.insert(f).second) fields.push_back(f);
    }
  }
  std::string cmd = "tshark -r " + file + " -T fields -E separator='|' -E occurrence=a -E aggregator=,";
  for (const auto& f : fields) cmd += " -e " + f;
  auto out = runCommand(cmd + " 2>/dev/null");
  REQUIRE(out.exit_code == 0);

  std::map<std::string, std::map<std::string, std::string>> byKind;
  size_t frames = 0;
  for (const auto& line : split(out.text(), '\n')) {
    if (line.empty()) continue;
    auto cols = split(line, '|');
    REQUIRE(cols.size() == fields.size());
    ++frames;
    INFO("frame " << cols[0] << ": " << cols[1] << " expert: " << cols[5]);
    CHECK(cols[2].empty());  // _ws.malformed
    auto severities = split(cols[3], ',');
    auto groups = split(cols[4], ',');
    for (size_t i = 0; i < severities.size(); ++i) {
      if (severities[i].empty()) continue;
      long severity = std::stol(severities[i]);
      CHECK(severity < kSeverityError);
      if (severity >= kSeverityWarn) {
        REQUIRE(i < groups.size());
        CHECK(std::stol(groups[i]) == kGroupUndecoded);
      }
    }
    size_t number = std::stoul(cols[0]);
    if (lastFrameOf.count(number)) {
      auto& m = byKind[lastFrameOf[number]];
      for (size_t i = 0; i < fields.size(); ++i) m[fields[i]] = cols[i];
    }
  }
  CHECK(frames == pcap.packetCount());

  for (const auto& e : expectations()) {
    INFO("sample " << e.kind);
    REQUIRE(byKind.count(e.kind) == 1);
    const auto& got = byKind[e.kind];
    CHECK(got.at("_ws.col.Info").find(e.info) != std::string::npos);
    for (const auto& [field, want] : e.fields) {
      INFO("field " << field);
      CHECK(got.at(field) == want);
    }
  }

  // The AARQ carries the NPAC access control in CMIPUserInfo.accessControl.
  auto ac = runCommand("tshark -r " + file + " -Y cmip.accessControl_element -T fields -e frame.number 2>/dev/null");
  REQUIRE(ac.exit_code == 0);
  std::set<std::string> withAccessControl;
  for (const auto& n : split(ac.text(), '\n')) {
    if (!n.empty()) withAccessControl.insert(n);
  }
  for (const auto& [number, kind] : lastFrameOf) {
    if (kind == "aarq") CHECK(withAccessControl.count(std::to_string(number)) == 1);
  }
  CHECK_FALSE(withAccessControl.empty());
}
