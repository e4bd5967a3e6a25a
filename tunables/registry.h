// TunableRegistry: the live tunable values of a running npacd, persisted in SQLite.
//
// open() loads every stored override into an in-memory snapshot; reads never touch the
// database. set() validates the text against the catalogue (unknown name, wrong scope,
// invalid SPID, wrong type, out of range, unknown enumeration value, contradictory
// throttle levels — each its own ErrorCode), then writes the override and an audit entry
// (who, old, new, when) in one transaction, then publishes a new snapshot, then tells the
// subscribers. A refused or failed set changes nothing anywhere and notifies nobody.
// clear() removes an override so the value falls back to the next level. reload() takes
// in the overrides another npacd node sharing the database has written since.
//
// Threading contract:
//  - Reads (get, snapshot) are safe from any thread at any time, concurrently with set.
//    Each thread keeps the snapshot it last read with its version number; get() compares
//    that number with the registry's (one acquire load) and only on a change copies the
//    new snapshot under a short mutex. Readers never wait for a writer's database work.
//    A reader sees either the old or the new value, never a mix; hold one snapshot() to
//    read several tunables consistently. (libstdc++ 12's atomic<shared_ptr> was not used:
//    ThreadSanitizer cannot see its internal lock and reports false races.)
//  - set/clear/reload may be called from any thread; they are serialised by an internal
//    mutex and use the Database given to open() on the calling thread. No other thread
//    may use that Database at the same time: give the registry its own connection. Do not
//    call them inside a transaction of your own on that connection: the registry
//    publishes as soon as its (then nested) transaction commits, before yours could roll
//    back.
//  - Subscriber callbacks run synchronously on the thread that called set/clear/reload,
//    after the commit (or the reload's read) and after the new snapshot is visible, one
//    change at a time in commit order. A callback must be quick and must not block on
//    another thread (post to your strand instead). It may read, subscribe and
//    unsubscribe; a set/clear/reload from inside a callback is refused with kReentrant.
//  - Subscription::reset() (or its destructor) from outside a callback waits for a
//    notification in progress; after it returns the callback is not running and will not
//    run again. Destroy every Subscription before the registry.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "db/clock.h"
#include "tunables/catalogue.h"
#include "tunables/snapshot.h"
#include "tunables/status.h"
#include "tunables/value.h"

namespace npac::db {
class Database;
}

namespace npac::tunables {

class TunableRegistry {
 public:
  // One applied change, as a subscriber sees it.
  struct Change {
    const TunableSpec* spec = nullptr;
    std::string spid;   // where it was set: "" = the global value, else a provider
    Value old_value;    // effective value at that scope before the change
    Value new_value;    // effective value at that scope after the change
    std::string actor;  // who made it
  };
  using Callback = std::function<void(const Change&)>;

  // Keeps a callback registered; unsubscribes when reset or destroyed. Move-only.
  class Subscription {
   public:
    Subscription() = default;
    ~Subscription() { reset(); }
    Subscription(Subscription&& other) noexcept;
    Subscription& operator=(Subscription&& other) noexcept;
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;

    void reset();
    bool active() const { return registry_ != nullptr; }

   private:
    friend class TunableRegistry;
    Subscription(TunableRegistry* registry, std::uint64_t id) : registry_(registry), id_(id) {}

    TunableRegistry* registry_ = nullptr;
    std::uint64_t id_ = 0;
  };

  // Loads the stored overrides from `db` (already opened and migrated). A stored row the
  // catalogue no longer accepts (a tunable removed, a range narrowed) is skipped and
  // listed in ignoredAtLoad() so npacd can log it; a database error is kStorage.
  // `clock` stamps audit entries and overrides.
  static Status open(db::Database& db, db::Clock clock, std::unique_ptr<TunableRegistry>* out,
                     const Catalogue& catalogue = Catalogue::standard());

  ~TunableRegistry();
  TunableRegistry(const TunableRegistry&) = delete;
  TunableRegistry& operator=(const TunableRegistry&) = delete;

  const Catalogue& catalogue() const { return catalogue_; }

  // The current values, frozen (a copy of the shared pointer, taken under a mutex).
  std::shared_ptr<const TunableSnapshot> snapshot() const;

  // The effective value for a provider ("" = the global value): registry.get(kSrr, spid).
  // The hot path: no lock and no reference count unless the values changed since this
  // thread's last read.
  template <typename T>
  T get(Key<T> key, std::string_view spid = {}) const {
    return threadSnapshot().get(key, spid);
  }

  // One stored override in canonical text; spid "" is the global one.
  struct Override {
    std::string name;
    std::string spid;
    std::string value;
    friend bool operator==(const Override&, const Override&) = default;
  };
  // Every override in force, by catalogue order, global before providers (by SPID).
  std::vector<Override> listOverrides() const;

  // The effective value of a tunable by name, as canonical text (admin API, npacctl).
  Status getText(std::string_view name, std::string_view spid, std::string* out) const;

  // Sets the override of `name` for `spid` ("" = global) from operator text.
  Status set(std::string_view name, std::string_view spid, std::string_view text,
             std::string_view actor);
  // Removes the override of `name` at `spid`; ok (and no audit entry) if there was none.
  Status clear(std::string_view name, std::string_view spid, std::string_view actor);

  // Re-reads every stored override from the Database given to open(), to take in what
  // another npacd node sharing that database has set or cleared since (call it when that
  // node says so, e.g. on a PostgreSQL NOTIFY). The rows are loaded and validated exactly
  // as open() does: a row the catalogue refuses is skipped — its tunable at that scope
  // falls back as if nothing were stored — and described, in open()'s words, in
  // `*ignored` when given (ignoredAtLoad() itself stays open()'s list). The new snapshot
  // is then published as by set/clear, in one step: a reader sees either every value of
  // the reload or none.
  // Every (tunable, scope) whose stored override differs from the current snapshot —
  // added, changed value or removed — is one applied change; `*changed` receives their
  // number (0: the snapshot already matched and nobody is notified). Each is told to the
  // subscribers as set/clear would tell it (same Change, same filters): one change at a
  // time, in catalogue order, global before providers (by SPID), each Change's old value
  // being the previous one's new value, as if the other node's set/clear calls had been
  // made here in that order; a change that leaves the effective value alone is applied
  // but not notified. The actor is the row's updated_by, or "another npacd node" for a
  // removal (or a row without one). The callbacks run after the whole reload is visible.
  // Reload writes nothing: no override, no audit entry (the other node audited it).
  // Errors: kStorage when the overrides cannot be read — then nothing changes, nobody is
  // notified and `*changed` is 0; kReentrant from inside a change callback, like set.
  Status reload(std::size_t* changed = nullptr, std::vector<std::string>* ignored = nullptr);

  // Calls `callback` for every change of `name` that alters the effective value seen by
  // `spid`: changes made for that provider, and global changes while that provider has no
  // override of its own. `spid` "" subscribes to every change of `name` at every scope.
  // Errors: kUnknownName, kInvalidProvider.
  Status subscribe(std::string_view name, std::string_view spid, Callback callback,
                   Subscription* out);
  template <typename T>
  Subscription subscribe(Key<T> key, std::string_view spid, Callback callback) {
    return subscribeId(key.id, spid, std::move(callback));
  }

  // Stored rows skipped by open(), one sentence each.
  const std::vector<std::string>& ignoredAtLoad() const { return ignored_at_load_; }

 private:
  struct Subscriber {
    std::uint64_t id;
    TunableId tunable;
    std::string spid;
    Callback callback;
    std::atomic<bool> active{true};
  };

  // This thread's copy of the current snapshot. The reference is valid until this thread
  // next reads any registry; use it immediately.
  const TunableSnapshot& threadSnapshot() const {
    struct Cache {
      std::uint64_t version = 0;
      std::shared_ptr<const TunableSnapshot> snapshot;
    };
    thread_local Cache cache;
    if (cache.version != version_.load(std::memory_order_acquire)) {
      std::lock_guard lock(snapshot_mutex_);
      cache.snapshot = snapshot_;
      cache.version = version_.load(std::memory_order_relaxed);
    }
    return *cache.snapshot;
  }
  void publish(std::shared_ptr<const TunableSnapshot> next);

  TunableRegistry(db::Database& db, db::Clock clock, const Catalogue& catalogue);

  Status validateTarget(std::string_view name, std::string_view spid,
                        const TunableSpec** spec) const;
  Status checkConsistency(const TunableSnapshot& candidate, const TunableSpec& spec,
                          std::string_view spid) const;
  Status persist(const TunableSpec& spec, std::string_view spid,
                 const std::string* canonical, std::string_view actor, bool* existed);
  void publishAndNotify(std::shared_ptr<const TunableSnapshot> next, const TunableSpec& spec,
                        std::string_view spid, std::string_view actor);
  // Tells the subscribers of `spec` at `spid` the change from `before` to `after`.
  void notify(const TunableSnapshot& before, const TunableSnapshot& after,
              const TunableSpec& spec, std::string_view spid, std::string_view actor);
  Subscription subscribeId(TunableId id, std::string_view spid, Callback callback);
  void unsubscribe(std::uint64_t id);

  db::Database& db_;
  db::Clock clock_;
  const Catalogue& catalogue_;
  // The published snapshot and its version. Versions come from one process-wide counter,
  // so a version number identifies a snapshot of one registry: a thread's cached copy can
  // never be mistaken for another registry's current values.
  mutable std::mutex snapshot_mutex_;
  std::shared_ptr<const TunableSnapshot> snapshot_;
  std::atomic<std::uint64_t> version_{0};
  std::vector<std::string> ignored_at_load_;

  // Serialises set/clear/reload (database work, publish, notification) and unsubscribe.
  std::mutex write_mutex_;
  // Guards subscribers_ and next_subscriber_id_.
  std::mutex subscribers_mutex_;
  std::vector<std::shared_ptr<Subscriber>> subscribers_;
  std::uint64_t next_subscriber_id_ = 1;
};

}  // namespace npac::tunables
