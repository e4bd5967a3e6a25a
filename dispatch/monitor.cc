// Response-time monitors (NetScaler "LRTM method"). See monitor.h for the smoothing rule.
#include "dispatch/monitor.h"

#include <cmath>

namespace npac::dispatch {

void ResponseTimeMonitor::addSample(Duration rtt) {
  if (rtt < Duration::zero()) rtt = Duration::zero();
  ++samples_;
  if (!value_) {
    value_ = rtt;  // the first sample seeds the average (RFC 6298 §2.2)
    return;
  }
  const double current = static_cast<double>(value_->count());
  const double next = current + alpha_ * (static_cast<double>(rtt.count()) - current);
  value_ = Duration(static_cast<Duration::rep>(std::llround(next)));
}

MemberMonitors::MemberMonitors(MonitorMask bound, double alpha)
    : bound_(bound),
      monitors_{ResponseTimeMonitor(alpha), ResponseTimeMonitor(alpha),
                ResponseTimeMonitor(alpha)} {}

bool MemberMonitors::addSample(MonitorKind kind, Duration rtt) {
  if (!bound_.has(kind)) return false;
  monitors_[static_cast<std::size_t>(kind)].addSample(rtt);
  recompute();
  return true;
}

void MemberMonitors::bind(MonitorMask bound) {
  for (std::size_t i = 0; i < kMonitorKinds; ++i) {
    const auto kind = static_cast<MonitorKind>(i);
    if (!bound.has(kind)) monitors_[i].reset();
  }
  bound_ = bound;
  recompute();
}

void MemberMonitors::recompute() {
  // NetScaler "LRTM method": "calcula un tiempo de respuesta medio para ese servicio
  // promediando los resultados" — the mean over the monitors that have measured something.
  Duration::rep sum = 0;
  Duration::rep count = 0;
  for (std::size_t i = 0; i < kMonitorKinds; ++i) {
    if (!bound_.has(static_cast<MonitorKind>(i))) continue;
    if (auto v = monitors_[i].value()) {
      sum += v->count();
      ++count;
    }
  }
  average_ = count == 0 ? std::nullopt : std::optional<Duration>(Duration(sum / count));
}

std::string_view monitorKindName(MonitorKind kind) {
  switch (kind) {
    case MonitorKind::kRequestResponse: return "request-response";
    case MonitorKind::kTcpConnect: return "tcp-connect";
    case MonitorKind::kHeartbeat: return "heartbeat";
  }
  return "unknown";
}

}  // namespace npac::dispatch
