// The outbound queue of a running (or stopped) npacd as npacd's own reads give it: every
// row folded with its delivery progress records (db::OutboundQueue::get, the write-once
// log), in id order — what tests compare, instead of the rows' own state columns, which no
// longer change after a message is queued.
#pragma once

#include <filesystem>
#include <vector>

#include <catch2/catch.hpp>

#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/statement.h"

namespace npac::testing {

inline std::vector<npac::db::QueuedMessage> foldedQueue(const std::filesystem::path& file) {
  auto db = npac::db::Database::open(file.string());
  INFO(db.status().toString());
  REQUIRE(db.isOk());
  auto query = (*db)->prepare("SELECT id FROM outbound_queue ORDER BY id");
  REQUIRE(query.isOk());
  std::vector<npac::db::MessageId> ids;
  for (;;) {
    auto step = query->step();
    REQUIRE(step.isOk());
    if (!*step) break;
    ids.push_back(query->columnInt64(0));
  }
  npac::db::OutboundQueue queue(**db);
  std::vector<npac::db::QueuedMessage> rows;
  for (npac::db::MessageId id : ids) {
    auto message = queue.get(id);
    if (message.status().isNotFound()) continue;  // purged meanwhile
    INFO(message.status().toString());
    REQUIRE(message.isOk());
    rows.push_back(std::move(*message));
  }
  return rows;
}

}  // namespace npac::testing
