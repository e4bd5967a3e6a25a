// classifyNotification: what a node does with (channel, payload) from PostgreSQL's
// LISTEN (db/notification_listener.h) — including what it must ignore.
#include "db/notification_listener.h"

#include <catch2/catch.hpp>

using namespace npac::db;
using Kind = NodeNotification::Kind;

TEST_CASE("A submission notification names the provider whose owner is woken") {
  NodeNotification note = classifyNotification(kSubmittedChannel, "0001");
  CHECK(note.kind == Kind::kSubmitted);
  CHECK(note.spid == "0001");
}

TEST_CASE("A change notification reloads tunables or names the changed provider") {
  CHECK(classifyNotification(kChangedChannel, kTunablesChanged).kind == Kind::kTunablesChanged);
  NodeNotification note = classifyNotification(kChangedChannel, "provider:AB12");
  CHECK(note.kind == Kind::kProviderChanged);
  CHECK(note.spid == "AB12");
}

TEST_CASE("The empty channel of a reconnection asks for a resynchronisation") {
  CHECK(classifyNotification("", "").kind == Kind::kResync);
}

TEST_CASE("Malformed or foreign notifications are ignored") {
  CHECK(classifyNotification(kSubmittedChannel, "").kind == Kind::kIgnored);
  CHECK(classifyNotification(kSubmittedChannel, "00011").kind == Kind::kIgnored);
  CHECK(classifyNotification(kSubmittedChannel, "00 1").kind == Kind::kIgnored);
  CHECK(classifyNotification(kSubmittedChannel, std::string("00\0" "1", 4)).kind == Kind::kIgnored);
  CHECK(classifyNotification(kChangedChannel, "provider:").kind == Kind::kIgnored);
  CHECK(classifyNotification(kChangedChannel, "provider:0001x").kind == Kind::kIgnored);
  CHECK(classifyNotification(kChangedChannel, "tunables ").kind == Kind::kIgnored);
  CHECK(classifyNotification(kChangedChannel, "0001").kind == Kind::kIgnored);
  CHECK(classifyNotification("other_channel", "0001").kind == Kind::kIgnored);
}

TEST_CASE("A submission notification names the node whose writer committed the rows") {
  NodeNotification note = classifyNotification(kSubmittedChannel, "0001 east-1");
  CHECK(note.kind == Kind::kSubmitted);
  CHECK(note.spid == "0001");
  CHECK(note.node == "east-1");
  CHECK(classifyNotification(kSubmittedChannel, "0001").node.empty());  // an unknown node
}

TEST_CASE("A submission notification with a malformed node name is ignored") {
  CHECK(classifyNotification(kSubmittedChannel, "0001 ").kind == Kind::kIgnored);
  CHECK(classifyNotification(kSubmittedChannel, "0001 east west").kind == Kind::kIgnored);
  CHECK(classifyNotification(kSubmittedChannel, "0001 " + std::string(129, 'n')).kind == Kind::kIgnored);
  CHECK(classifyNotification(kSubmittedChannel, "0001 " + std::string(128, 'n')).kind == Kind::kSubmitted);
  CHECK(classifyNotification(kSubmittedChannel, std::string("0001 e\x01", 7)).kind == Kind::kIgnored);
  CHECK(classifyNotification(kSubmittedChannel, "001 east").kind == Kind::kIgnored);
}
