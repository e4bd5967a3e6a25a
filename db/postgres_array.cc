#include "db/postgres_array.h"

#include <bit>

namespace npac::db {
namespace {

void putBigEndian(std::vector<std::uint8_t>& out, std::uint64_t value, int bytes) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(value >> shift));
}

}  // namespace

void PostgresArray::putLength(std::int32_t length) {
  putBigEndian(elements_, static_cast<std::uint32_t>(length), 4);
}

void PostgresArray::addInt64(std::int64_t value) {
  putLength(8);
  putBigEndian(elements_, static_cast<std::uint64_t>(value), 8);
  ++count_;
}

void PostgresArray::addDouble(double value) {
  putLength(8);
  putBigEndian(elements_, std::bit_cast<std::uint64_t>(value), 8);
  ++count_;
}

void PostgresArray::addBytes(std::span<const std::uint8_t> value) {
  putLength(static_cast<std::int32_t>(value.size()));
  elements_.insert(elements_.end(), value.begin(), value.end());
  ++count_;
}

void PostgresArray::addText(std::string_view value) {
  addBytes({reinterpret_cast<const std::uint8_t*>(value.data()), value.size()});
}

void PostgresArray::addNull() {
  putLength(-1);
  has_null_ = true;
  ++count_;
}

std::vector<std::uint8_t> PostgresArray::encoded() const {
  std::vector<std::uint8_t> out;
  out.reserve(20 + elements_.size());
  putBigEndian(out, 1, 4);  // one dimension
  putBigEndian(out, has_null_ ? 1 : 0, 4);
  putBigEndian(out, static_cast<std::uint32_t>(type_), 4);
  putBigEndian(out, count_, 4);
  putBigEndian(out, 1, 4);  // lower bound
  out.insert(out.end(), elements_.begin(), elements_.end());
  return out;
}

}  // namespace npac::db
