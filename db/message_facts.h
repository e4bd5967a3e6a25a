// MessageFacts: what a queued row is (its kind, CMIP operation and confirmation), and the
// migration options that classify rows queued before schema 4.
//
// Below both the connection (database.h: Database::Options carries MigrationOptions) and
// the stores (outbound_queue.h keeps the facts with each row), so that the connection
// layer needs no store and the migrations no queue (docs/ARCHITECTURE.md "Layers").
//
// Threading: plain values; a QueuedPduClassifier must not touch the database.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>

namespace npac::db {

// What a row is, stored with it at submission (schema version 4) so that delivery never
// decodes its own bytes to rediscover it.
//   kPush     — an NPAC request or notification to the provider (a ROSE Invoke).
//   kResponse — the NPAC's answer to the provider's own request (ReturnResult/Error).
enum class MessageKind { kPush, kResponse };
const char* toString(MessageKind kind);  // "push", "response" (the column's values)
std::optional<MessageKind> parseMessageKind(std::string_view text);

// The CMIP operation code of a row that does not know it: a row upgraded from schema 3
// whose PDU could not be classified (db/migrations.h).
inline constexpr int kUnknownOpcode = -1;

// A row's kind, operation and confirmation, as a migration's classifier reports them.
struct MessageFacts {
  MessageKind kind = MessageKind::kPush;
  int opcode = kUnknownOpcode;  // X.711 §7.4 local operation code
  bool confirmed = false;       // a response is expected
  friend bool operator==(const MessageFacts&, const MessageFacts&) = default;
};

// What the version-4 step does with a row queued before it (db/migrations.h). The
// classifier gets the row's stored PDU and answers its facts, or nullopt for "cannot
// tell" (then the priority rule applies). It must not touch the database.
using QueuedPduClassifier = std::function<std::optional<MessageFacts>(std::span<const std::uint8_t> pdu)>;

struct MigrationOptions {
  QueuedPduClassifier classify_queued_pdu;  // empty: the priority rule
};

}  // namespace npac::db
