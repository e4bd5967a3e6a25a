// common/status.h: the one status family — each code's layer, name and description come
// from NPAC_STATUS_CODES, and toString() reads as the header promises.
#include "common/status.h"

#include <catch2/catch.hpp>

#include <string>

namespace npac {
namespace {

TEST_CASE("A bad document's Status belongs to the documents layer and reads as its description and message") {
  const Status status = Status::badDocument("steps[3].member: unknown member \"Z\"");
  CHECK_FALSE(status.isOk());
  CHECK(status.code() == StatusCode::kBadDocument);
  CHECK(status.layer() == StatusLayer::kDocument);
  CHECK(std::string(codeName(status.code())) == "kBadDocument");
  CHECK(status.message() == "steps[3].member: unknown member \"Z\"");
  CHECK(status.toString() == "bad document: steps[3].member: unknown member \"Z\"");
}

TEST_CASE("A Result built from a bad document's Status holds no value and hands the Status back") {
  const Result<int> parsed = Status::badDocument("not valid JSON");
  CHECK_FALSE(parsed.isOk());
  CHECK(parsed.status().code() == StatusCode::kBadDocument);
  CHECK(parsed.status().message() == "not valid JSON");
}

TEST_CASE("A codec error renders with its code name and offset, a storage or tunables error with its description") {
  CHECK(Status::error(StatusCode::kBerTruncated, 12, "INTEGER content needs 4 bytes, 2 remain").toString() ==
        "kBerTruncated at offset 12: INTEGER content needs 4 bytes, 2 remain");
  CHECK(Status::outOfRange("congestion_window 0 is below 1").toString() == "out of range: congestion_window 0 is below 1");
  CHECK(Status::notFound("provider 0001").layer() == StatusLayer::kDatabase);
}

}  // namespace
}  // namespace npac
