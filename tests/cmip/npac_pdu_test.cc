// npac-pdu end to end: for every sample kind, sample → decode → encode gives the same
// bytes (binary file and hex-on-stdin paths); malformed input is refused with a message
// on stderr and exit status 1, never a crash.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "tests/cmip/process_util.h"

using namespace npac::cmip::testing;

namespace {

const std::vector<std::string> kKinds = {"cr", "cc", "aarq", "aare-accept", "aare-reject", "rlrq",
                                         "rlre", "abrt", "event-report", "action", "get", "set",
                                         "create", "delete", "result", "error", "reject"};

void writeFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
}

// Runs npac-pdu decode on `hexInput` (stdin); returns exit code and stderr text.
std::pair<int, std::string> decodeHex(const ScratchDir& dir, const std::string& hexInput) {
  writeFile(dir.file("in.hex"), hexInput);
  auto r = runCommand(npacPduPath() + " decode < " + dir.file("in.hex") + " 2>" + dir.file("err.txt") +
                      " >/dev/null");
  std::ifstream err(dir.file("err.txt"));
  return {r.exit_code, std::string(std::istreambuf_iterator<char>(err), {})};
}

}  // namespace

TEST_CASE("npac-pdu sample, decode and encode reproduce every kind's bytes", "[npac-pdu]") {
  ScratchDir dir("npac-pdu");
  const std::string pdu = npacPduPath();
  for (const auto& kind : kKinds) {
    INFO("kind " << kind);
    std::string bin = dir.file(kind + ".bin"), json = dir.file(kind + ".json");
    REQUIRE(runCommand(pdu + " sample " + kind + " -o " + bin).exit_code == 0);
    REQUIRE(runCommand(pdu + " decode " + bin + " > " + json).exit_code == 0);
    auto again = runCommand(pdu + " encode " + json);
    REQUIRE(again.exit_code == 0);
    std::ifstream in(bin, std::ios::binary);
    std::vector<uint8_t> original((std::istreambuf_iterator<char>(in)), {});
    CHECK(!original.empty());
    CHECK(again.out == original);

    auto hex = runCommand(pdu + " sample " + kind + " --hex");
    REQUIRE(hex.exit_code == 0);
    auto viaHex = runCommand(pdu + " sample " + kind + " --hex | " + pdu + " decode | " + pdu + " encode --hex");
    REQUIRE(viaHex.exit_code == 0);
    CHECK(viaHex.text() == hex.text());
  }
}

TEST_CASE("npac-pdu decode shows the layers of an event report", "[npac-pdu]") {
  auto r = runCommand(npacPduPath() + " sample event-report --hex | " + npacPduPath() + " decode");
  REQUIRE(r.exit_code == 0);
  std::string text = r.text();
  CHECK(text.find("\"session\"") != std::string::npos);
  CHECK(text.find("\"ppdu\": \"TD\"") != std::string::npos);
  CHECK(text.find("\"operation\": \"m-EventReport-Confirmed\"") != std::string::npos);
  CHECK(text.find("\"global\": \"1.3.6.1.4.1.103.7.0.0.90.5.1\"") != std::string::npos);
}

TEST_CASE("npac-pdu decode refuses a truncated frame with a message and status 1", "[npac-pdu]") {
  ScratchDir dir("npac-pdu");
  auto hex = runCommand(npacPduPath() + " sample action --hex").text();
  hex = hex.substr(0, hex.size() - 11);  // drop the newline and five octets
  auto [code, err] = decodeHex(dir, hex);
  CHECK(code == 1);
  CHECK(err.find("npac-pdu: ") == 0);
  CHECK(err.find("kTpktTruncated") != std::string::npos);
}

TEST_CASE("npac-pdu decode refuses a wrong TPKT version", "[npac-pdu]") {
  ScratchDir dir("npac-pdu");
  auto [code, err] = decodeHex(dir, "0400000702f080");
  CHECK(code == 1);
  CHECK(err.find("kTpktBadVersion") != std::string::npos);
}

TEST_CASE("npac-pdu decode refuses a corrupted APDU inside a valid frame", "[npac-pdu]") {
  ScratchDir dir("npac-pdu");
  // TPKT + DT + GT/DT + TD on context 3 holding A1 05 02 01 01 02 (an Invoke cut short).
  auto [code, err] = decodeHex(dir, "0300001a02f08001000100610d300b020103a006a10402010102");
  CHECK(code == 1);
  CHECK(err.find("npac-pdu: ") == 0);
}

TEST_CASE("npac-pdu decode refuses input that is not hex", "[npac-pdu]") {
  ScratchDir dir("npac-pdu");
  auto [code, err] = decodeHex(dir, "03 00 zz");
  CHECK(code == 1);
  CHECK(err.find("hex") != std::string::npos);
}

TEST_CASE("npac-pdu decode of binary frames on stdin says to use --binary or a file argument", "[npac-pdu]") {
  ScratchDir dir("npac-pdu");
  REQUIRE(runCommand(npacPduPath() + " sample event-report -o " + dir.file("er.bin")).exit_code == 0);
  auto r = runCommand(npacPduPath() + " decode < " + dir.file("er.bin") + " 2>&1");
  CHECK(r.exit_code == 1);
  CHECK(r.text() == "npac-pdu: binary input: use --binary or a file argument\n");
}

TEST_CASE("npac-pdu decode --binary reads binary frames from stdin", "[npac-pdu]") {
  ScratchDir dir("npac-pdu");
  REQUIRE(runCommand(npacPduPath() + " sample event-report -o " + dir.file("er.bin")).exit_code == 0);
  auto r = runCommand(npacPduPath() + " decode --binary < " + dir.file("er.bin"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.text().find("m-EventReport-Confirmed") != std::string::npos);
}

TEST_CASE("npac-pdu encode refuses an association function that is not a name", "[npac-pdu]") {
  ScratchDir dir("npac-pdu");
  auto sample = runCommand(npacPduPath() + " sample aarq --json");
  REQUIRE(sample.exit_code == 0);
  std::string json = sample.text();
  const std::string functions = "\"association_functions\": [";
  const auto at = json.find(functions);
  REQUIRE(at != std::string::npos);
  json.insert(at + functions.size(), "7, ");
  writeFile(dir.file("aarq.json"), json);
  auto r = runCommand(npacPduPath() + " encode " + dir.file("aarq.json") + " 2>&1 >/dev/null");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.text(), Catch::StartsWith("npac-pdu: ") && Catch::EndsWith("association function must be a name, not 7\n"));
}

TEST_CASE("npac-pdu encode refuses JSON without frames and an unknown sample kind", "[npac-pdu]") {
  ScratchDir dir("npac-pdu");
  writeFile(dir.file("bad.json"), "{\"frame\": []}");
  auto no_frames = runCommand(npacPduPath() + " encode " + dir.file("bad.json") + " 2>&1 >/dev/null");
  CHECK(no_frames.exit_code == 1);
  CHECK(no_frames.text() == "npac-pdu: the document must be {\"frames\": [...]}\n");
  writeFile(dir.file("bad2.json"), "{\"frames\": [{\"cotp\": {\"type\": \"DT\"}, \"session\": {\"type\": \"XX\"}}]}");
  auto bad_session = runCommand(npacPduPath() + " encode " + dir.file("bad2.json") + " 2>&1 >/dev/null");
  CHECK(bad_session.exit_code == 1);
  CHECK_THAT(bad_session.text(), Catch::StartsWith("npac-pdu: frame 0: "));
  writeFile(dir.file("bad3.json"), "not json");
  auto not_json = runCommand(npacPduPath() + " encode " + dir.file("bad3.json") + " 2>&1 >/dev/null");
  CHECK(not_json.exit_code == 1);
  CHECK(not_json.text() == "npac-pdu: JSON: " + dir.file("bad3.json") + " is not valid JSON\n");
  auto nonsense = runCommand(npacPduPath() + " sample nonsense 2>&1 >/dev/null");
  CHECK(nonsense.exit_code == 1);
  CHECK(nonsense.text() == "npac-pdu: unknown sample kind \"nonsense\"\n");
}

TEST_CASE("npac-pdu decodes DT segments into one SDU and encodes them at the same cuts",
          "[npac-pdu]") {
  ScratchDir dir("npac-pdu");
  auto whole = runCommand(npacPduPath() + " sample event-report").out;
  REQUIRE(whole.size() > 90);
  std::vector<uint8_t> sdu(whole.begin() + 7, whole.end());  // after TPKT (4) + DT (3)
  std::string stream;
  size_t cuts[] = {0, 40, 80, sdu.size()};
  for (int i = 0; i < 3; ++i) {
    size_t len = cuts[i + 1] - cuts[i] + 3;
    std::string tpdu = {'\x02', '\xF0', static_cast<char>(i == 2 ? 0x80 : 0x00)};
    tpdu.append(sdu.begin() + cuts[i], sdu.begin() + cuts[i + 1]);
    stream += std::string{'\x03', '\x00', static_cast<char>((len + 4) >> 8), static_cast<char>((len + 4) & 0xFF)} + tpdu;
  }
  writeFile(dir.file("seg.bin"), stream);
  auto json = runCommand(npacPduPath() + " decode " + dir.file("seg.bin"));
  REQUIRE(json.exit_code == 0);
  CHECK(json.text().find("\"eot\": false") != std::string::npos);
  CHECK(json.text().find("m-EventReport-Confirmed") != std::string::npos);
  writeFile(dir.file("seg.json"), json.text());
  auto again = runCommand(npacPduPath() + " encode " + dir.file("seg.json"));
  REQUIRE(again.exit_code == 0);
  CHECK(again.text() == stream);
  // Without its final EOT segment the stream is refused.
  writeFile(dir.file("cut.bin"), stream.substr(0, stream.size() - (sdu.size() - 80 + 7)));
  CHECK(runCommand(npacPduPath() + " decode " + dir.file("cut.bin") + " 2>/dev/null").exit_code == 1);
}
