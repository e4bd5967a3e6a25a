// The admin API's route handlers, one group per route file, each a free function of the
// ApiContext (api_context.h) and the parsed request (request.h). The AdminApi's route
// table (admin_api.cc) maps each method and path to one; docs/API.md lists them all.
// A handler returning an ApiResponse answers at once; one taking an ApiResponder answers
// through it, at once or later (a core completion posted back to the API thread).
//
// Threading: every handler runs on the API thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "npac/npacd/api/api_context.h"
#include "npac/npacd/api/api_response.h"

namespace npac::npacd {

struct ApiRequest;  // request.h

// provisioning_routes.cc: providers, their NSAPs and keys
ApiResponse addProvider(ApiContext& api, ApiRequest& r);
ApiResponse listProviders(ApiContext& api, ApiRequest& r);
ApiResponse showProvider(ApiContext& api, ApiRequest& r, const std::string& spid);
ApiResponse setProviderEnabled(ApiContext& api, ApiRequest& r, const std::string& spid, bool enabled);
ApiResponse addNsap(ApiContext& api, ApiRequest& r, const std::string& spid);
ApiResponse listNsaps(ApiContext& api, ApiRequest& r, const std::string& spid);
ApiResponse removeNsap(ApiContext& api, ApiRequest& r, const std::string& spid, const std::string& nsap);
ApiResponse addKey(ApiContext& api, ApiRequest& r, const std::string& spid);
ApiResponse listKeys(ApiContext& api, ApiRequest& r, const std::string& spid);
ApiResponse revokeKey(ApiContext& api, ApiRequest& r, const std::string& spid, const std::string& list,
                      const std::string& key);

// npac_key_routes.cc: the NPAC's own signing keys (the private half never leaves)
ApiResponse addNpacKey(ApiContext& api, ApiRequest& r);
ApiResponse listNpacKeys(ApiContext& api, ApiRequest& r);
ApiResponse exportNpacKey(ApiContext& api, ApiRequest& r, const std::string& list, const std::string& key);
ApiResponse revokeNpacKey(ApiContext& api, ApiRequest& r, const std::string& list, const std::string& key);

// tunable_routes.cc: the catalogue, get/set/clear, and the srr convenience route
ApiResponse listTunables(ApiContext& api, ApiRequest& r);
ApiResponse getTunable(ApiContext& api, ApiRequest& r, const std::string& name);
ApiResponse setTunable(ApiContext& api, ApiRequest& r, const std::string& name);
ApiResponse clearTunable(ApiContext& api, ApiRequest& r, const std::string& name);
ApiResponse setSrr(ApiContext& api, ApiRequest& r, const std::string& spid);

// Longest wait a long poll may ask for (GET /v1/inbound?wait=): below common proxy and
// client idle timeouts.
inline constexpr std::chrono::seconds kMaxInboundWait{60};
inline constexpr std::size_t kMaxInboundBatch = 1000;

// message_routes.cc: what the association core answers (core_service.h), and a message's
// status (SQLite, with the core's wait reason)
void submitMessages(ApiContext& api, ApiRequest& r, ApiResponder& respond);
void messageStatus(ApiContext& api, ApiRequest& r, const std::string& id, ApiResponder& respond);
void pollInbound(ApiContext& api, ApiRequest& r, ApiResponder& respond);
void respondInbound(ApiContext& api, ApiRequest& r, const std::string& id, ApiResponder& respond);
void listAssociations(ApiContext& api, ApiRequest& r, ApiResponder& respond);
void abortAssociation(ApiContext& api, ApiRequest& r, const std::string& id, ApiResponder& respond);
// broadcast_routes.cc: one message for many providers, one submission (broadcast.h)
void submitBroadcast(ApiContext& api, ApiRequest& r, ApiResponder& respond);
// pdu_batch_routes.cc: messages already encoded, in the binary PDU batch (pdu_batch.h)
void submitPduBatch(ApiContext& api, ApiRequest& r, ApiResponder& respond);

// queue_routes.cc: a provider's queue (queue_view.h), and the egress policy in force with
// the latest PDUs and their associations
void providerQueue(ApiContext& api, ApiRequest& r, const std::string& spid, ApiResponder& respond);
void providerEgress(ApiContext& api, ApiRequest& r, const std::string& spid, ApiResponder& respond);

// log_routes.cc: the association log and the audit log
ApiResponse associationLog(ApiContext& api, ApiRequest& r);
ApiResponse auditLog(ApiContext& api, ApiRequest& r);

// log_level_routes.cc: GET/PUT /v1/log-level (the level at run time, audited)
ApiResponse showLogLevel(ApiContext& api, ApiRequest& r);
ApiResponse changeLogLevel(ApiContext& api, ApiRequest& r);

// metrics_routes.cc: GET /metrics (Prometheus text 0.0.4). health_routes.cc: GET /health
// (alive) and GET /ready (database writable, listener up, not draining).
void scrapeMetrics(ApiContext& api, ApiRequest& r, ApiResponder& respond);
ApiResponse healthProbe(ApiContext& api, ApiRequest& r);
void readyProbe(ApiContext& api, ApiRequest& r, ApiResponder& respond);

// backup_routes.cc: POST /v1/backup, the SQLite file copied while npacd runs and streamed
// (database_backup.h); one at a time. cancelBackup(): a copy under way is interrupted
// (the API stops).
void backupDatabase(ApiContext& api, ApiRequest& r, ApiResponder& respond);
void cancelBackup(ApiContext& api);

// throttle_group_routes.cc: provisioned egress throttle groups (DSR ETG/ETL)
ApiResponse addThrottleGroup(ApiContext& api, ApiRequest& r);
ApiResponse listThrottleGroups(ApiContext& api, ApiRequest& r);
ApiResponse showThrottleGroup(ApiContext& api, ApiRequest& r, const std::string& name);
ApiResponse setThrottleGroup(ApiContext& api, ApiRequest& r, const std::string& name);
ApiResponse removeThrottleGroup(ApiContext& api, ApiRequest& r, const std::string& name);

// token_routes.cc: the admin API's bearer tokens (db/token_store.h)
ApiResponse createToken(ApiContext& api, ApiRequest& r);
ApiResponse listTokens(ApiContext& api, ApiRequest& r);
ApiResponse revokeToken(ApiContext& api, ApiRequest& r, const std::string& name);

// console_routes.cc: GET /v1/whoami (the caller's token name and role) and the console's
// embedded files (GET /console redirects to /console/, its index.html).
ApiResponse whoami(ApiContext& api, ApiRequest& r);
ApiResponse consoleIndex(ApiContext& api, ApiRequest& r);
ApiResponse consoleFile(ApiContext& api, ApiRequest& r, const std::string& name);

// event_routes.cc: GET /v1/events, server-sent events of the associations and providers.
// stopEventStreams(): each open stream sends its "end" and lets go of the context (the
// API stops).
void eventStream(ApiContext& api, ApiRequest& r, ApiResponder& respond);
void stopEventStreams(ApiContext& api);

}  // namespace npac::npacd
