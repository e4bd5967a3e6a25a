#include "tunables/registry.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>

#include "db/audit_store.h"
#include "db/database.h"
#include "db/transaction.h"
#include "db/tunable_store.h"
#include "tunables/text.h"
#include "tunables/throttle_levels.h"

namespace npac::tunables {
namespace {

// The registry whose subscribers this thread is calling right now, if any: lets set()
// refuse re-entry (it would deadlock) and unsubscribe() skip waiting for itself.
thread_local const TunableRegistry* tl_notifying = nullptr;

// Process-wide source of snapshot versions (see TunableRegistry::version_).
std::atomic<std::uint64_t> g_next_version{1};

constexpr std::string_view kActionSet = "tunable.set";
constexpr std::string_view kActionClear = "tunable.clear";
// The actor of a change reload() finds without one: a removed row says nobody.
constexpr std::string_view kOtherNode = "another npacd node";

// The audit subject: "srr@0001" for a provider, "srr" for the global value.
std::string subjectOf(std::string_view name, std::string_view spid) {
  return spid.empty() ? std::string(name) : cat(name, "@", spid);
}

Status storageError(std::string_view what, std::string_view subject, const db::Status& s) {
  return Status::storage(cat("could not ", what, " ", subject, ": ", s.toString()));
}

// Reads every stored override into `rows` and builds their snapshot. A row the catalogue
// refuses is left out and described, one sentence, in `ignored` (open() and reload()).
Status loadStored(db::Database& db, const Catalogue& catalogue,
                  std::vector<db::TunableOverride>* rows,
                  std::shared_ptr<TunableSnapshot>* out, std::vector<std::string>* ignored) {
  db::TunableStore store(db);
  db::Result<std::vector<db::TunableOverride>> listed = store.list();
  if (!listed) return storageError("load", "the tunable overrides", listed.status());
  *rows = std::move(*listed);

  auto snapshot = std::make_shared<TunableSnapshot>(catalogue);
  for (const db::TunableOverride& row : *rows) {
    const std::string subject = subjectOf(row.name, row.spid);
    const TunableSpec* spec = catalogue.find(row.name);
    if (spec == nullptr) {
      ignored->push_back(
          cat("stored override ", subject, " ignored: no such tunable in this npacd"));
      continue;
    }
    const bool scope_ok = row.spid.empty()
                              ? spec->allowsGlobal()
                              : spec->allowsProvider() && isValidSpid(row.spid);
    if (!scope_ok) {
      ignored->push_back(cat("stored override ", subject, " ignored: ", row.name, " is ",
                             toString(spec->scope)));
      continue;
    }
    Value value;
    if (Status parsed = catalogue.parse(*spec, row.value, &value); !parsed) {
      ignored->push_back(cat("stored override ", subject, " = \"", row.value, "\" ignored: ",
                             parsed.toString()));
      continue;
    }
    snapshot->setOverride(spec->id, row.spid, std::move(value));
  }
  *out = std::move(snapshot);
  return Status::ok();
}

const Value* overrideAt(const TunableSnapshot& snapshot, TunableId id, std::string_view spid) {
  return spid.empty() ? snapshot.globalOverride(id) : snapshot.providerOverride(id, spid);
}

}  // namespace

// ---- Subscription --------------------------------------------------------------------

TunableRegistry::Subscription::Subscription(Subscription&& other) noexcept
    : registry_(std::exchange(other.registry_, nullptr)), id_(other.id_) {}

TunableRegistry::Subscription& TunableRegistry::Subscription::operator=(
    Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    registry_ = std::exchange(other.registry_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

void TunableRegistry::Subscription::reset() {
  if (registry_ != nullptr) std::exchange(registry_, nullptr)->unsubscribe(id_);
}

// ---- Opening ---------------------------------------------------------------------------

TunableRegistry::TunableRegistry(db::Database& db, db::Clock clock, const Catalogue& catalogue)
    : db_(db), clock_(std::move(clock)), catalogue_(catalogue) {}

TunableRegistry::~TunableRegistry() = default;

Status TunableRegistry::open(db::Database& db, db::Clock clock,
                             std::unique_ptr<TunableRegistry>* out, const Catalogue& catalogue) {
  std::unique_ptr<TunableRegistry> registry(new TunableRegistry(db, std::move(clock), catalogue));
  std::vector<db::TunableOverride> rows;
  std::shared_ptr<TunableSnapshot> snapshot;
  if (Status s = loadStored(db, catalogue, &rows, &snapshot, &registry->ignored_at_load_); !s) {
    return s;
  }
  registry->publish(std::move(snapshot));
  *out = std::move(registry);
  return Status::ok();
}

// ---- Reading ---------------------------------------------------------------------------

std::shared_ptr<const TunableSnapshot> TunableRegistry::snapshot() const {
  std::lock_guard lock(snapshot_mutex_);
  return snapshot_;
}

void TunableRegistry::publish(std::shared_ptr<const TunableSnapshot> next) {
  std::lock_guard lock(snapshot_mutex_);
  snapshot_ = std::move(next);
  version_.store(g_next_version.fetch_add(1), std::memory_order_release);
}

std::vector<TunableRegistry::Override> TunableRegistry::listOverrides() const {
  const std::shared_ptr<const TunableSnapshot> current = snapshot();
  const std::vector<std::string> providers = current->providersWithOverrides();
  std::vector<Override> out;
  for (const TunableSpec& spec : catalogue_.all()) {
    if (const Value* global = current->globalOverride(spec.id)) {
      out.push_back({std::string(spec.name), "", catalogue_.format(spec, *global)});
    }
    for (const std::string& spid : providers) {
      if (const Value* value = current->providerOverride(spec.id, spid)) {
        out.push_back({std::string(spec.name), spid, catalogue_.format(spec, *value)});
      }
    }
  }
  return out;
}

Status TunableRegistry::getText(std::string_view name, std::string_view spid,
                                std::string* out) const {
  const TunableSpec* spec = catalogue_.find(name);
  if (spec == nullptr) return catalogue_.unknownName(name);
  if (!spid.empty() && !isValidSpid(spid)) {
    return Status::invalidProvider(
        cat("\"", spid, "\" is not a SPID (four ASCII letters or digits)"));
  }
  *out = catalogue_.format(*spec, snapshot()->resolve(spec->id, spid));
  return Status::ok();
}

// ---- Changing --------------------------------------------------------------------------

Status TunableRegistry::validateTarget(std::string_view name, std::string_view spid,
                                       const TunableSpec** spec) const {
  *spec = catalogue_.find(name);
  if (*spec == nullptr) return catalogue_.unknownName(name);
  if (spid.empty() && !(*spec)->allowsGlobal()) {
    return Status::wrongScope(cat(name, " is set per provider only: give a SPID"));
  }
  if (!spid.empty() && !(*spec)->allowsProvider()) {
    return Status::wrongScope(cat(name, " is global only: it cannot be set for provider ",
                                  spid));
  }
  if (!spid.empty() && !isValidSpid(spid)) {
    return Status::invalidProvider(
        cat("\"", spid, "\" is not a SPID (four ASCII letters or digits)"));
  }
  return Status::ok();
}

Status TunableRegistry::checkConsistency(const TunableSnapshot& candidate,
                                         const TunableSpec& spec, std::string_view spid) const {
  if (!isThrottleLevel(spec.id)) return Status::ok();
  if (Status s = checkThrottleLevels(candidate, spid); !s) return s;
  if (!spid.empty()) return Status::ok();
  // A global change reaches every provider that does not override it.
  for (const std::string& provider : candidate.providersWithOverrides()) {
    if (Status s = checkThrottleLevels(candidate, provider); !s) return s;
  }
  return Status::ok();
}

Status TunableRegistry::persist(const TunableSpec& spec, std::string_view spid,
                                const std::string* canonical, std::string_view actor,
                                bool* existed) {
  const std::string subject = subjectOf(spec.name, spid);
  const std::string_view what = canonical != nullptr ? "store" : "clear";
  db::Transaction txn(db_);
  if (db::Status s = txn.begin(); !s) return storageError(what, subject, s);
  db::TunableStore store(db_);
  db::AuditStore audit(db_);

  db::Result<std::optional<db::TunableOverride>> old = store.get(spec.name, spid);
  if (!old) return storageError(what, subject, old.status());
  *existed = old->has_value();
  if (canonical == nullptr && !*existed) return Status::ok();  // nothing to clear

  const db::TimeMs now = clock_();
  if (canonical != nullptr) {
    db::TunableOverride row{std::string(spec.name), std::string(spid), *canonical, now,
                            std::string(actor)};
    if (db::Status s = store.set(row); !s) return storageError(what, subject, s);
  } else {
    db::Result<bool> removed = store.clear(spec.name, spid);
    if (!removed) return storageError(what, subject, removed.status());
  }
  db::AuditEntry entry;
  entry.at = now;
  entry.actor = std::string(actor);
  entry.action = std::string(canonical != nullptr ? kActionSet : kActionClear);
  entry.subject = subject;
  if (*existed) entry.old_value = (*old)->value;
  if (canonical != nullptr) entry.new_value = *canonical;
  if (db::Result<std::int64_t> id = audit.append(entry); !id) {
    return storageError(what, subject, id.status());
  }
  if (db::Status s = txn.commit(); !s) return storageError(what, subject, s);
  return Status::ok();
}

Status TunableRegistry::set(std::string_view name, std::string_view spid,
                            std::string_view text, std::string_view actor) {
  if (tl_notifying == this) {
    return Status::reentrant(cat("set ", name, " refused: called from a change callback"));
  }
  if (actor.empty()) return Status::noActor("a change needs an actor (who makes it)");
  const TunableSpec* spec = nullptr;
  if (Status s = validateTarget(name, spid, &spec); !s) return s;
  Value value;
  if (Status s = catalogue_.parse(*spec, text, &value); !s) return s;

  std::lock_guard lock(write_mutex_);
  std::shared_ptr<const TunableSnapshot> current = snapshot();
  auto next = std::make_shared<TunableSnapshot>(*current);
  next->setOverride(spec->id, spid, value);
  if (Status s = checkConsistency(*next, *spec, spid); !s) return s;

  const std::string canonical = catalogue_.format(*spec, value);
  bool existed = false;
  if (Status s = persist(*spec, spid, &canonical, actor, &existed); !s) return s;
  publishAndNotify(std::move(next), *spec, spid, actor);
  return Status::ok();
}

Status TunableRegistry::clear(std::string_view name, std::string_view spid,
                              std::string_view actor) {
  if (tl_notifying == this) {
    return Status::reentrant(cat("clear ", name, " refused: called from a change callback"));
  }
  if (actor.empty()) return Status::noActor("a change needs an actor (who makes it)");
  const TunableSpec* spec = nullptr;
  if (Status s = validateTarget(name, spid, &spec); !s) return s;

  std::lock_guard lock(write_mutex_);
  std::shared_ptr<const TunableSnapshot> current = snapshot();
  auto next = std::make_shared<TunableSnapshot>(*current);
  next->clearOverride(spec->id, spid);
  if (Status s = checkConsistency(*next, *spec, spid); !s) return s;

  bool existed = false;
  if (Status s = persist(*spec, spid, nullptr, actor, &existed); !s) return s;
  if (!existed) return Status::ok();
  publishAndNotify(std::move(next), *spec, spid, actor);
  return Status::ok();
}

void TunableRegistry::publishAndNotify(std::shared_ptr<const TunableSnapshot> next,
                                       const TunableSpec& spec, std::string_view spid,
                                       std::string_view actor) {
  std::shared_ptr<const TunableSnapshot> previous = snapshot();  // writers are serialised
  publish(next);
  notify(*previous, *next, spec, spid, actor);
}

void TunableRegistry::notify(const TunableSnapshot& before, const TunableSnapshot& after,
                             const TunableSpec& spec, std::string_view spid,
                             std::string_view actor) {
  Change change{&spec, std::string(spid), before.resolve(spec.id, spid),
                after.resolve(spec.id, spid), std::string(actor)};
  if (change.old_value == change.new_value) return;  // stored and audited; nothing to apply

  std::vector<std::shared_ptr<Subscriber>> targets;
  {
    std::lock_guard lock(subscribers_mutex_);
    for (const std::shared_ptr<Subscriber>& sub : subscribers_) {
      if (sub->tunable != spec.id) continue;
      const bool reaches = sub->spid.empty() || sub->spid == spid ||
                           (spid.empty() && after.providerOverride(spec.id, sub->spid) == nullptr);
      if (reaches) targets.push_back(sub);
    }
  }
  const TunableRegistry* outer = std::exchange(tl_notifying, this);
  for (const std::shared_ptr<Subscriber>& sub : targets) {
    if (!sub->active.load()) continue;  // unsubscribed by an earlier callback of this round
    try {
      sub->callback(change);
    } catch (...) {
      // A subscriber's failure must not stop the others from learning of a change that is
      // already committed; callbacks are documented not to throw.
    }
  }
  tl_notifying = outer;
}

// ---- Reloading -------------------------------------------------------------------------

Status TunableRegistry::reload(std::size_t* changed, std::vector<std::string>* ignored) {
  if (changed != nullptr) *changed = 0;
  if (tl_notifying == this) {
    return Status::reentrant("reload refused: called from a change callback");
  }
  std::lock_guard lock(write_mutex_);
  std::vector<db::TunableOverride> rows;
  std::shared_ptr<TunableSnapshot> next;
  std::vector<std::string> skipped;
  if (Status s = loadStored(db_, catalogue_, &rows, &next, &skipped); !s) return s;
  if (ignored != nullptr) *ignored = std::move(skipped);

  // The scopes whose stored override differs, in catalogue order, global before providers.
  const std::shared_ptr<const TunableSnapshot> previous = snapshot();
  const std::vector<std::string> old_spids = previous->providersWithOverrides();
  const std::vector<std::string> new_spids = next->providersWithOverrides();
  std::vector<std::string> providers;
  std::set_union(old_spids.begin(), old_spids.end(), new_spids.begin(), new_spids.end(),
                 std::back_inserter(providers));
  struct Applied {
    const TunableSpec* spec;
    std::string_view spid;
  };
  std::vector<Applied> applied;
  const auto differs = [&](TunableId id, std::string_view spid) {
    const Value* old_value = overrideAt(*previous, id, spid);
    const Value* new_value = overrideAt(*next, id, spid);
    if (old_value == nullptr || new_value == nullptr) return old_value != new_value;
    return !(*old_value == *new_value);
  };
  for (const TunableSpec& spec : catalogue_.all()) {
    if (differs(spec.id, "")) applied.push_back({&spec, ""});
    for (const std::string& spid : providers) {
      if (differs(spec.id, spid)) applied.push_back({&spec, spid});
    }
  }
  if (changed != nullptr) *changed = applied.size();
  if (applied.empty()) return Status::ok();

  publish(next);
  // Tell the changes one at a time, as the same set/clear calls made here would have: each
  // against the values with the changes before it applied.
  TunableSnapshot before(*previous);
  TunableSnapshot after(*previous);
  for (const Applied& change : applied) {
    const TunableId id = change.spec->id;
    const Value* value = overrideAt(*next, id, change.spid);
    std::string_view actor = kOtherNode;
    if (value != nullptr) {
      after.setOverride(id, change.spid, *value);
      const auto row = std::find_if(rows.begin(), rows.end(), [&](const db::TunableOverride& r) {
        return r.name == change.spec->name && r.spid == change.spid;
      });
      if (row != rows.end() && !row->updated_by.empty()) actor = row->updated_by;
    } else {
      after.clearOverride(id, change.spid);
    }
    notify(before, after, *change.spec, change.spid, actor);
    if (value != nullptr) {
      before.setOverride(id, change.spid, *value);
    } else {
      before.clearOverride(id, change.spid);
    }
  }
  return Status::ok();
}

// ---- Subscribing -----------------------------------------------------------------------

Status TunableRegistry::subscribe(std::string_view name, std::string_view spid,
                                  Callback callback, Subscription* out) {
  const TunableSpec* spec = catalogue_.find(name);
  if (spec == nullptr) return catalogue_.unknownName(name);
  if (!spid.empty() && !isValidSpid(spid)) {
    return Status::invalidProvider(
        cat("\"", spid, "\" is not a SPID (four ASCII letters or digits)"));
  }
  *out = subscribeId(spec->id, spid, std::move(callback));
  return Status::ok();
}

TunableRegistry::Subscription TunableRegistry::subscribeId(TunableId id, std::string_view spid,
                                                           Callback callback) {
  auto sub = std::make_shared<Subscriber>();
  sub->tunable = id;
  sub->spid = std::string(spid);
  sub->callback = std::move(callback);
  std::lock_guard lock(subscribers_mutex_);
  sub->id = next_subscriber_id_++;
  subscribers_.push_back(sub);
  return Subscription(this, sub->id);
}

void TunableRegistry::unsubscribe(std::uint64_t id) {
  // Outside a callback, wait for a notification round in progress so that the callback
  // is neither running nor called again once this returns.
  std::unique_lock<std::mutex> writer(write_mutex_, std::defer_lock);
  if (tl_notifying != this) writer.lock();
  std::lock_guard lock(subscribers_mutex_);
  for (auto it = subscribers_.begin(); it != subscribers_.end(); ++it) {
    if ((*it)->id == id) {
      (*it)->active.store(false);
      subscribers_.erase(it);
      return;
    }
  }
}

}  // namespace npac::tunables
