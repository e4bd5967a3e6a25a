// PostgresArray: a one-dimensional PostgreSQL array in the binary wire format, bound as
// one parameter (Statement::bindBlob, which PostgreSQL receives in binary) where the SQL
// casts the parameter to the array type: `unnest(CAST(? AS bigint[]))`.
//
// Why: a batch of thousands of rows travels as a few array parameters and the server
// reads each element without parsing text (array_recv; PostgreSQL's "Binary I/O" of
// arrays, src/backend/utils/adt/arrayfuncs.c). The JSON form it replaces was parsed again
// for every field read, which made the queue writer's backend spend half its time in
// json_lex (perf, issue "A message is written once").
//
// The format (array_send): int32 ndim = 1, int32 has-nulls flag, uint32 element type OID,
// int32 length, int32 lower bound = 1, then per element an int32 byte count (-1 = NULL)
// and the element's own binary form (int8: 8 bytes big-endian; float8: the IEEE 754 double's
// 8 bytes big-endian, float8send; text and bytea: the bytes).
// All integers in network byte order. The element type must be the one the SQL casts to,
// or the server refuses the value ("binary data has array element type 25 (text) instead of
// expected 20 (bigint)", SQLSTATE 42804).
//
// Threading: a value type; no shared state.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace npac::db {

class PostgresArray {
 public:
  enum class Type : std::uint32_t { kInt8 = 20, kFloat8 = 701, kText = 25, kBytea = 17 };  // pg_type OIDs

  explicit PostgresArray(Type type) : type_(type) {}

  void addInt64(std::int64_t value);             // kInt8 arrays only
  void addDouble(double value);                  // kFloat8 arrays only
  void addBytes(std::span<const std::uint8_t> value);  // kText (UTF-8) or kBytea
  void addText(std::string_view value);
  void addNull();

  std::size_t size() const { return count_; }
  // The encoded array, ready for Statement::bindBlob.
  std::vector<std::uint8_t> encoded() const;

 private:
  void putLength(std::int32_t length);

  Type type_;
  std::size_t count_ = 0;
  bool has_null_ = false;
  std::vector<std::uint8_t> elements_;
};

}  // namespace npac::db
