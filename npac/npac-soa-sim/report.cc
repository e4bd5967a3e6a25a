#include "npac/npac-soa-sim/report.h"

namespace npac::soasim {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
Json optionalJson(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json bindJson(const BindRecord& b) {
  Json j{{"outcome", b.outcome}, {"accepted", b.accepted}};
  if (b.result) j["result"] = *b.result;
  if (!b.diagnostic_source.empty()) j["diagnostic_source"] = b.diagnostic_source;
  if (b.diagnostic) j["diagnostic"] = *b.diagnostic;
  if (!b.diagnostic_name.empty()) j["diagnostic_name"] = b.diagnostic_name;
  if (!b.refusal_reason.empty()) j["refusal"] = Json{{"reason", b.refusal_reason}, {"text", b.refusal_text}};
  j["npac_verified"] = b.npac_verified ? Json(*b.npac_verified) : Json(nullptr);
  if (!b.npac_reason.empty()) j["npac_reason"] = b.npac_reason;
  if (b.npac_verified.value_or(false)) {
    j["npac"] = Json{{"system_id", b.npac_system_id}, {"key_list_id", b.npac_key_list},
                     {"key_id", b.npac_key_id}, {"sequence_number", b.npac_sequence}};
  }
  if (!b.detail.empty()) j["detail"] = b.detail;
  return j;
}

Json bindsJson(const std::vector<BindAttemptRecord>& binds) {
  Json list = Json::array();
  for (const BindAttemptRecord& b : binds) {
    Json j{{"npac", b.npac}, {"outcome", b.outcome}, {"at_ms", b.at_ms}};
    if (!b.detail.empty()) j["detail"] = b.detail;
    list.push_back(std::move(j));
  }
  return list;
}

}  // namespace

nlohmann::ordered_json RunReport::toJson() const {
  Json totals{{"received", 0}, {"answered", 0}, {"heartbeats", 0}, {"requests_sent", 0}, {"replies_received", 0}};
  Json assocs = Json::array();
  for (const AssociationRecord& a : associations) {
    totals["received"] = totals["received"].get<uint64_t>() + a.received;
    totals["answered"] = totals["answered"].get<uint64_t>() + a.answered;
    totals["heartbeats"] = totals["heartbeats"].get<uint64_t>() + a.heartbeats;
    totals["requests_sent"] = totals["requests_sent"].get<uint64_t>() + a.requests_sent;
    totals["replies_received"] = totals["replies_received"].get<uint64_t>() + a.replies_received;
    assocs.push_back(Json{{"index", a.index},
                          {"local_address", a.local_address},
                          {"local_port", a.local_port},
                          {"nsap", a.nsap},
                          {"sequence_number", a.sequence_number},
                          {"departure_time", a.departure_time},
                          {"recovery_mode", a.recovery_mode},
                          {"answer_delay_ms", a.answer_delay_ms},
                          {"silent", a.silent},
                          {"drop_after", optionalJson(a.drop_after)},
                          {"npac", a.npac},
                          {"bind", a.bind.attempted ? bindJson(a.bind) : Json(nullptr)},
                          {"binds", bindsJson(a.binds)},
                          {"rebinds", a.rebinds},
                          {"received", a.received},
                          {"answered", a.answered},
                          {"heartbeats", a.heartbeats},
                          {"requests_sent", a.requests_sent},
                          {"replies_received", a.replies_received},
                          {"unmatched_replies", a.unmatched_replies},
                          {"end", a.end_reason.empty() ? Json(nullptr)
                                                       : Json{{"reason", a.end_reason}, {"detail", a.end_detail}}}});
  }
  Json order = Json::array();
  for (const ReceivedRecord& r : received) {
    Json j{{"seq", r.seq},
           {"association", r.association},
           {"local_address", r.local_address},
           {"npac", r.npac},
           {"invoke_id", r.invoke_id},
           {"operation", r.operation},
           {"type", r.type},
           {"info", r.info_hex},
           {"retransmission", r.retransmission},
           {"answered", r.answered},
           {"answered_on", r.answered_on},
           {"during_recovery", r.during_recovery},
           {"at_ms", r.at_ms}};
    if (r.duplicate_of) j["duplicate_of"] = *r.duplicate_of;
    if (!r.decode_error.empty()) j["decode_error"] = r.decode_error;
    order.push_back(std::move(j));
  }
  Json reqs = Json::array();
  for (const RequestRecord& q : requests) {
    Json j{{"invoke_id", q.invoke_id},
           {"purpose", q.purpose},
           {"operation", q.operation},
           {"sent_on", q.sent_on},
           {"reply_on", optionalJson(q.reply_on)},
           {"reply", q.reply.empty() ? Json(nullptr) : Json(q.reply)}};
    if (q.reject_problem) {
      j["reject"] = Json{{"kind", q.reject_kind}, {"problem", *q.reject_problem}, {"name", q.reject_name}};
    }
    if (q.resent > 0) j["resent"] = q.resent;
    if (q.error_code) j["error"] = Json{{"code", *q.error_code}, {"name", q.error_name}};
    reqs.push_back(std::move(j));
  }
  Json doc{{"npac", npac},
           {"npac_addresses", npac_addresses},
           {"bound_to", bound_to},
           {"spid", spid},
           {"system_type", system_type},
           {"functions", functions},
           {"key_algorithm", key_algorithm},
           {"started_at_unix_ms", started_at_unix_ms},
           {"stop_reason", stop_reason},
           {"goals_met", goals_met},
           {"exit_code", exit_code},
           {"expect", optionalJson(expect)},
           {"send_requests", send_requests},
           {"totals", totals},
           {"associations", assocs},
           {"received", order},
           {"requests", reqs}};
  if (recovery) {
    doc["recovery"] = Json{{"range", recovery->range},
                           {"message_count", optionalJson(recovery->message_count)},
                           {"received_during", recovery->received_during},
                           {"hold_ms", recovery->hold_ms},
                           {"received_while_holding", recovery->received_while_holding},
                           {"completed", recovery->completed}};
    if (!recovery->error.empty()) doc["recovery"]["error"] = recovery->error;
  }
  doc["errors"] = errors;
  return doc;
}

}  // namespace npac::soasim
