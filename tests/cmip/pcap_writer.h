// A minimal libpcap file writer for the Wireshark conformance test: Ethernet II, IPv4
// (RFC 791, header checksum) and TCP (RFC 793, checksum over the pseudo-header) with
// consistent sequence numbers, so tshark reassembles and dissects each stream as real
// traffic. One TcpStream per conversation; handshake() writes SYN, SYN-ACK, ACK.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace npac::cmip::testing {

class PcapWriter {
 public:
  // pcap global header: magic, v2.4, UTC, snaplen 65535, LINKTYPE_ETHERNET (1).
  PcapWriter() {
    put32(0xA1B2C3D4);
    put16(2);
    put16(4);
    put32(0);
    put32(0);
    put32(65535);
    put32(1);
  }
  void addPacket(const std::vector<uint8_t>& frame) {
    put32(1'764'428'400 + seconds_++);  // one packet per second, from 2025-11-29
    put32(0);
    put32(static_cast<uint32_t>(frame.size()));
    put32(static_cast<uint32_t>(frame.size()));
    bytes_.insert(bytes_.end(), frame.begin(), frame.end());
  }
  bool save(const std::string& path) const {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
    return static_cast<bool>(out);
  }
  size_t packetCount() const { return static_cast<size_t>(seconds_); }

 private:
  void put16(uint16_t v) { bytes_.insert(bytes_.end(), {uint8_t(v), uint8_t(v >> 8)}); }
  void put32(uint32_t v) { bytes_.insert(bytes_.end(), {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)}); }
  std::vector<uint8_t> bytes_;
  uint32_t seconds_ = 0;
};

class TcpStream {
 public:
  static constexpr uint8_t kFin = 0x01, kSyn = 0x02, kPsh = 0x08, kAck = 0x10;

  TcpStream(PcapWriter& pcap, uint32_t clientIp, uint16_t clientPort, uint32_t serverIp, uint16_t serverPort)
      : pcap_(pcap), client_{clientIp, clientPort, 1000}, server_{serverIp, serverPort, 500000} {}

  void handshake() {
    send(client_, server_, kSyn, {}, false);
    client_.seq += 1;
    send(server_, client_, kSyn | kAck, {}, true);
    server_.seq += 1;
    send(client_, server_, kAck, {}, true);
  }
  void fromClient(const std::vector<uint8_t>& data) { push(client_, server_, data); }
  void fromServer(const std::vector<uint8_t>& data) { push(server_, client_, data); }

 private:
  struct End {
    uint32_t ip;
    uint16_t port;
    uint32_t seq;
  };

  void push(End& from, End& to, const std::vector<uint8_t>& data) {
    send(from, to, kPsh | kAck, data, true);
    from.seq += static_cast<uint32_t>(data.size());
  }

  static uint16_t checksum(const std::vector<uint8_t>& b, uint32_t sum = 0) {
    for (size_t i = 0; i + 1 < b.size(); i += 2) sum += (uint32_t(b[i]) << 8) | b[i + 1];
    if (b.size() % 2) sum += uint32_t(b.back()) << 8;
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
  }
  static void be16(std::vector<uint8_t>& v, uint16_t x) { v.insert(v.end(), {uint8_t(x >> 8), uint8_t(x)}); }
  static void be32(std::vector<uint8_t>& v, uint32_t x) {
    v.insert(v.end(), {uint8_t(x >> 24), uint8_t(x >> 16), uint8_t(x >> 8), uint8_t(x)});
  }

  void send(const End& from, const End& to, uint8_t flags, const std::vector<uint8_t>& data, bool ack) {
    std::vector<uint8_t> tcp;
    be16(tcp, from.port);
    be16(tcp, to.port);
    be32(tcp, from.seq);
    be32(tcp, ack ? to.seq : 0);
    tcp.push_back(5 << 4);  // data offset: 20 octets, no options
    tcp.push_back(flags);
    be16(tcp, 65535);       // window
    be16(tcp, 0);           // checksum, below
    be16(tcp, 0);           // urgent pointer
    tcp.insert(tcp.end(), data.begin(), data.end());
    std::vector<uint8_t> pseudo;
    be32(pseudo, from.ip);
    be32(pseudo, to.ip);
    be16(pseudo, 6);
    be16(pseudo, static_cast<uint16_t>(tcp.size()));
    pseudo.insert(pseudo.end(), tcp.begin(), tcp.end());
    uint16_t c = checksum(pseudo);
    tcp[16] = uint8_t(c >> 8);
    tcp[17] = uint8_t(c);

    std::vector<uint8_t> ip;
    ip.push_back(0x45);  // IPv4, 20-octet header
    ip.push_back(0);
    be16(ip, static_cast<uint16_t>(20 + tcp.size()));
    be16(ip, ipId_++);
    be16(ip, 0x4000);    // don't fragment
    ip.push_back(64);    // TTL
    ip.push_back(6);     // TCP
    be16(ip, 0);
    be32(ip, from.ip);
    be32(ip, to.ip);
    uint16_t ic = checksum(ip);
    ip[10] = uint8_t(ic >> 8);
    ip[11] = uint8_t(ic);

    std::vector<uint8_t> eth{0x02, 0, 0, 0, 0, uint8_t(to.ip), 0x02, 0, 0, 0, 0, uint8_t(from.ip), 0x08, 0x00};
    eth.insert(eth.end(), ip.begin(), ip.end());
    eth.insert(eth.end(), tcp.begin(), tcp.end());
    pcap_.addPacket(eth);
  }

  PcapWriter& pcap_;
  End client_;
  End server_;
  uint16_t ipId_ = 1;
};

}  // namespace npac::cmip::testing
