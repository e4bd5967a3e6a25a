// The provider queue view as the admin API answers it (GET /v1/providers/{spid}/queue,
// docs/API.md "Provider queue"): the counts SQLite has (db::QueueSummary) joined with what
// the association core knows live (ProviderQueueView, core_service.h), and the wait
// reason GET /v1/messages/{id} gives a queued message.
//
// Why a message waits is the core's to say, per association function: the function a
// queued message is routed by is the lowest one its mask needs (the core's
// routingFunction, the same one delivery uses; NANC 111: an association takes a message
// only if it has every function the message needs). Without a live view (no core attached) or for
// a provider with no bound association, queued messages wait for `not-bound`. A bound
// provider whose core reports nothing holding a function has no reason: the next delivery
// round places those messages (null in the JSON).
//
// Threading: pure functions.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "associations/bind_facts.h"
#include "db/clock.h"
#include "db/queue_summary.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

// The function a queued message with `function_mask` waits under.
associations::AssociationFunction waitFunctionOf(std::uint32_t function_mask);

// The wait reason's name (waitReasonName) for queued messages of `function`; `live` is
// the core's view, nullptr when no core answered. nullopt: the provider is bound and the
// core holds nothing of that function back.
std::optional<std::string> waitReasonFor(const ProviderQueueView* live, associations::AssociationFunction function);

// The "throttle" object of a live view: the level in force and why ("" when none), and the
// provisioned throttle group the provider is a member of with the level it holds it at.
nlohmann::json throttleJson(const ProviderQueueView& live);

// The JSON of GET /v1/providers/{spid}/queue. `now` is the API's clock (the oldest queued
// message's age is now - its created_at, never negative).
nlohmann::json queueViewJson(const std::string& spid, const db::QueueSummary& summary,
                             const ProviderQueueView* live, db::TimeMs now);

}  // namespace npac::npacd
