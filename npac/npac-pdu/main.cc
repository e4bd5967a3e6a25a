// npac-pdu: decode, encode and sample TPKT frames of the NPAC CMIP profile.
//
//   npac-pdu decode [FILE] [--hex|--binary]   frames → JSON on stdout
//   npac-pdu encode [FILE] [--hex] [-o OUT]   JSON → frames
//   npac-pdu sample KIND [--hex|--json] [-o OUT]
//
// A FILE is read as binary and stdin as hex text unless told otherwise. Malformed input
// prints one line "npac-pdu: <reason>" on stderr and exits 1; usage errors exit 2.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "npac/npac-pdu/frames.h"
#include "npac/version.h"

namespace {

using npac::pdu::Json;

int failWith(const std::string& message) {
  std::cerr << "npac-pdu: " << message << "\n";
  return 1;
}

bool readInput(const std::string& path, std::string& out) {
  if (path.empty() || path == "-") {
    out.assign(std::istreambuf_iterator<char>(std::cin), {});
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), {});
  return true;
}

// Hex text holds hex digits, spaces and line ends only; a control or non-ASCII byte means
// the frames themselves were piped in (a TPKT starts 03 00, RFC 1006 §6).
bool looksBinary(const std::string& raw) {
  for (unsigned char c : raw) {
    const bool text_space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
    if ((c < 0x20 && !text_space) || c >= 0x7F) return true;
  }
  return false;
}

int writeOutput(const std::string& path, const std::vector<uint8_t>& bytes, bool hex) {
  std::string data = hex ? npac::pdu::toHex(bytes) + "\n" : std::string(bytes.begin(), bytes.end());
  if (path.empty() || path == "-") {
    std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
    std::cout.flush();
    return std::cout ? 0 : failWith("cannot write to stdout");
  }
  std::ofstream out(path, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return out ? 0 : failWith("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"npac-pdu: decode, encode and sample NPAC CMIP/OSI frames (TPKT streams)"};
  app.set_version_flag("--version", npac::versionLine("npac-pdu"));
  app.require_subcommand(1);

  std::string decodeFile;
  bool decodeHex = false, decodeBinary = false;
  auto* decode = app.add_subcommand("decode", "TPKT frames (binary FILE, or hex text on stdin) to JSON");
  decode->add_option("file", decodeFile, "input file (binary); stdin (hex text) when omitted");
  decode->add_flag("--hex", decodeHex, "the input is hex text");
  decode->add_flag("--binary", decodeBinary, "the input is binary");

  std::string encodeFile, encodeOut;
  bool encodeHex = false;
  auto* encode = app.add_subcommand("encode", "JSON (as printed by decode) to TPKT frames");
  encode->add_option("file", encodeFile, "JSON input; stdin when omitted");
  encode->add_flag("--hex", encodeHex, "write hex text instead of binary");
  encode->add_option("-o,--output", encodeOut, "output file; stdout when omitted");

  std::string kind, sampleOut;
  bool sampleHex = false, sampleJson = false;
  auto* sample = app.add_subcommand("sample", "write the canonical frame of KIND");
  std::string kinds;
  for (const auto& k : npac::pdu::sampleKinds()) kinds += (kinds.empty() ? "" : " ") + k;
  sample->add_option("kind", kind, "one of: " + kinds)->required();
  sample->add_flag("--hex", sampleHex, "write hex text instead of binary");
  sample->add_flag("--json", sampleJson, "write the frame's JSON instead of its bytes");
  sample->add_option("-o,--output", sampleOut, "output file; stdout when omitted");

  CLI11_PARSE(app, argc, argv);

  if (*decode) {
    std::string raw;
    if (!readInput(decodeFile, raw)) return failWith("cannot read " + decodeFile);
    bool fromStdin = decodeFile.empty() || decodeFile == "-";
    bool asHex = decodeHex || (fromStdin && !decodeBinary);
    std::vector<uint8_t> bytes;
    if (asHex) {
      if (looksBinary(raw)) return failWith("binary input: use --binary or a file argument");
      auto hex = npac::pdu::fromHex(raw);
      if (!hex.isOk()) return failWith(hex.status().message());
      bytes = std::move(hex).value();
    } else {
      bytes.assign(raw.begin(), raw.end());
    }
    auto doc = npac::pdu::decodeFrames(bytes);
    if (!doc.isOk()) return failWith(doc.status().toString());
    std::cout << doc->dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    return 0;
  }
  if (*encode) {
    std::string text;
    if (!readInput(encodeFile, text)) return failWith("cannot read " + encodeFile);
    Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
      return failWith("JSON: " + (encodeFile.empty() ? std::string("stdin") : encodeFile) + " is not valid JSON");
    }
    auto frames = npac::pdu::encodeFrames(doc);
    if (!frames.isOk()) return failWith(frames.status().message());
    return writeOutput(encodeOut, frames.value(), encodeHex);
  }
  auto doc = npac::pdu::sampleJson(kind);
  if (!doc.isOk()) return failWith(doc.status().message());
  if (sampleJson) {
    std::string s = doc->dump(2) + "\n";
    return writeOutput(sampleOut, std::vector<uint8_t>(s.begin(), s.end()), false);
  }
  auto frames = npac::pdu::encodeFrames(doc.value());
  if (!frames.isOk()) return failWith(frames.status().message());
  return writeOutput(sampleOut, frames.value(), sampleHex);
}
