// Writes the seed corpus for fuzz_upper_layers and fuzz_ber into the directory given as
// argv[1]: each known-good client stream prefix in modes 0 and 1, the server stream in
// mode 2, and each APDU-bearing frame on its own.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz/known_streams.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [BER_CORPUS_DIR]\n", argv[0]);
    return 2;
  }
  const npac::fuzz::KnownStreams k = npac::fuzz::knownStreams();
  int n = 0;
  auto write = [&](const std::string& dir, uint8_t mode, uint8_t chunk, const std::vector<uint8_t>& body) {
    std::ofstream f(dir + "/seed-" + std::to_string(n++), std::ios::binary);
    const char head[] = {static_cast<char>(mode), static_cast<char>(chunk)};
    if (mode != 0xFF) f.write(head, 2);
    f.write(reinterpret_cast<const char*>(body.data()), static_cast<std::streamsize>(body.size()));
  };
  std::vector<uint8_t> all;
  for (const auto& w : k.client_writes) {
    all.insert(all.end(), w.begin(), w.end());
    write(argv[1], 0, 0x3F, all);
    write(argv[1], 0, 0x00, w);
  }
  for (size_t i = 2; i < k.client_writes.size(); ++i) write(argv[1], 1, 0x3F, k.client_writes[i]);
  std::vector<uint8_t> server;
  for (const auto& w : k.server_writes) server.insert(server.end(), w.begin(), w.end());
  write(argv[1], 2, 0x3F, server);
  if (argc > 2) {
    // BER seeds: the TLVs inside each frame (skip TPKT 4 + COTP DT 3 + GT/DT 4 octets).
    for (const auto& w : k.client_writes)
      if (w.size() > 11) write(argv[2], 0xFF, 0, std::vector<uint8_t>(w.begin() + 11, w.end()));
  }
  std::printf("wrote %d seeds\n", n);
  return 0;
}
