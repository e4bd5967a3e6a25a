#include "npac/npacd/node_notifications.h"

#include <spdlog/spdlog.h>

#include "tunables/registry.h"

namespace npac::npacd {

NodeNotifications::NodeNotifications(tunables::TunableRegistry& registry, Actions actions, std::string node)
    : registry_(registry), actions_(std::move(actions)), node_(std::move(node)) {}

db::Result<std::unique_ptr<NodeNotifications>> NodeNotifications::start(const std::string& url,
                                                                        tunables::TunableRegistry& registry,
                                                                        Actions actions,
                                                                        std::chrono::milliseconds answer_timeout,
                                                                        std::string node) {
  std::unique_ptr<NodeNotifications> out(new NodeNotifications(registry, std::move(actions), std::move(node)));
  auto listener = db::NotificationListener::start(
      url, {std::string(db::kSubmittedChannel), std::string(db::kChangedChannel)},
      [raw = out.get()](const std::string& channel, const std::string& payload) { raw->on(channel, payload); },
      answer_timeout);
  if (!listener.isOk()) return listener.status();
  out->listener_ = std::move(listener).value();
  // The LISTEN is in force: read again what was read before it.
  out->resynchronise();
  return out;
}

void NodeNotifications::stop() {
  if (listener_) listener_->stop();
}

void NodeNotifications::reloadTunables() {
  std::size_t changed = 0;
  tunables::Status reloaded = registry_.reload(&changed);
  if (!reloaded.isOk()) {
    spdlog::warn("tunables: cannot reload the values changed on another node: {}", reloaded.toString());
  } else if (changed > 0) {
    spdlog::info("tunables: {} value(s) changed on another node applied", changed);
  }
}

void NodeNotifications::resynchronise() {
  if (actions_.wake_all) actions_.wake_all();
  reloadTunables();
}

void NodeNotifications::on(const std::string& channel, const std::string& payload) {
  using Kind = db::NodeNotification::Kind;
  const db::NodeNotification note = db::classifyNotification(channel, payload);
  switch (note.kind) {
    case Kind::kResync:  // reconnected: what was notified meanwhile is unknown
      resynchronise();
      break;
    case Kind::kSubmitted:
      if (!node_.empty() && note.node == node_) break;  // this node's writer told the core already
      if (actions_.wake) actions_.wake(note.spid);
      break;
    case Kind::kTunablesChanged:
      reloadTunables();
      break;
    case Kind::kProviderChanged:
      if (actions_.provider_changed) actions_.provider_changed(note.spid);
      break;
    case Kind::kIgnored:
      spdlog::debug("notifications: ignored '{}' on channel {}", payload.substr(0, 64), channel);
      break;
  }
}

}  // namespace npac::npacd
