// The restore drill of docs/OPERATIONS.md "Backup, restore and upgrade", performed: the real
// npacd on SQLite under load (a provider bound and answering, submissions running), the
// real `npacctl backup FILE` taken meanwhile, npacd stopped, the backup copied to a new
// path and npacd started on it. Every message npacd had accepted before the backup began
// is there (in whatever state the backup caught it); a message accepted after the backup
// ended is not, which is what a restore means for the NPAC application (it submits those
// again). The NPAC's keys and the operator token come back with it.
#include <sys/wait.h>

#include <cstdio>
#include <mutex>

#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/support/program_run.h"

using namespace npacd_test;

namespace {

using Run = npac::testing::ProgramRun;
const auto npacctl = npac::testing::runNpacctl;

// Ids npacd accepted, each with when its answer arrived relative to the backup.
enum class Phase { kBefore, kDuring, kAfter };

struct Accepted {
  std::mutex mutex;
  std::vector<std::pair<std::int64_t, Phase>> ids;
  void add(const Json& body, Phase phase) {
    std::lock_guard lock(mutex);
    for (const Json& id : body["ids"]) ids.emplace_back(id.get<std::int64_t>(), phase);
  }
  std::size_t count(Phase phase) {
    std::lock_guard lock(mutex);
    return static_cast<std::size_t>(
        std::count_if(ids.begin(), ids.end(), [phase](const auto& id) { return id.second == phase; }));
  }
};

Json batch(const std::string& prefix, int n) {
  Json messages = Json::array();
  for (int i = 0; i < 25; ++i) messages.push_back(NpacdProcess::notification("0001", label(prefix.c_str(), n * 100 + i)));
  return Json{{"messages", messages}};
}

// "list/key fingerprint" of each NPAC key, in order.
std::vector<std::string> fingerprints(const Json& keys) {
  std::vector<std::string> out;
  for (const Json& k : keys) {
    out.push_back(k["key_list_id"].dump() + "/" + k["key_id"].dump() + " " + k["fingerprint"].get<std::string>());
  }
  return out;
}

}  // namespace

TEST_CASE("A backup taken under load restores every message accepted before it, with the NPAC keys and tokens") {
  const fs::path restored_dir = fs::temp_directory_path() / label("npacd-restore-", getpid());
  fs::remove_all(restored_dir);
  fs::create_directories(restored_dir);
  const fs::path backup = restored_dir / "npacd-backup.db";
  Accepted accepted;
  std::vector<std::int64_t> after_backup;
  Json npac_keys_before;
  std::string token;
  {
    NpacdProcess npacd;
    token = npacd.token();
    auto key = npacd.provision("0001");
    // A provider answering, so rows move queued → sent → acknowledged while the copy is made.
    auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--duration", "60s", "--keep-running"});
    REQUIRE(npacd.waitForAssociations(1));
    npac_keys_before = npacd.call(http::verb::get, "/v1/npac-keys").body["npac_keys"];
    REQUIRE_FALSE(npac_keys_before.empty());

    std::atomic<Phase> phase{Phase::kBefore};
    std::atomic<bool> stop{false};
    std::atomic<int> refused{0};
    std::thread load([&] {
      for (int n = 0; !stop; ++n) {
        Reply r = npacd.call(http::verb::post, "/v1/messages", batch("m", n));
        // The phase read once the answer is in: kBefore means accepted before the backup began.
        if (r.status == 201) accepted.add(r.body, phase.load());
        else ++refused;
      }
    });
    // Bounded: a few thousand messages accepted before the backup.
    eventually([&] { return accepted.count(Phase::kBefore) >= 2000; }, 30s, 50ms);
    phase = Phase::kDuring;
    Run taken = npacctl("backup " + backup.string() + " --api 127.0.0.1:" + std::to_string(npacd.apiPort()) +
                        " --token-file " + npacd.tokenFile().string());
    phase = Phase::kAfter;
    // Submitted once the backup is written: committed after the copy was made.
    Reply late = npacd.call(http::verb::post, "/v1/messages", batch("late", 0));
    stop = true;
    load.join();
    INFO(taken.output);
    REQUIRE(taken.exit_code == 0);
    CHECK_THAT(taken.output, Catch::Contains("integrity ok"));
    REQUIRE(late.status == 201);
    for (const Json& id : late.body["ids"]) after_backup.push_back(id.get<std::int64_t>());
    CHECK(refused == 0);
    CHECK(accepted.count(Phase::kBefore) >= 2000);
    // The submissions ran all through the backup (`stop` is set only once npacctl returned);
    // how many were answered while it ran is the scheduler's business, so not checked.
    CHECK(npacd.stop() == 0);
  }

  // Restore: the backup becomes the database at a new path; the operator token file is kept
  // beside it (its secret's digest is in the backup).
  const fs::path restored = restored_dir / "restored.db";
  fs::copy_file(backup, restored);
  {
    std::ofstream(restored.string() + ".token") << token << "\n";
  }
  NpacdProcess npacd(NpacdProcess::Options{restored, {}});
  std::size_t before = 0, during_present = 0;
  std::vector<std::int64_t> missing;
  for (const auto& [id, phase] : accepted.ids) {
    Reply r = npacd.call(http::verb::get, "/v1/messages/" + std::to_string(id));
    if (phase == Phase::kBefore) {
      ++before;
      if (r.status != 200) missing.push_back(id);
    } else if (phase == Phase::kDuring && r.status == 200) {
      ++during_present;
    }
  }
  INFO("accepted before the backup: " << before << ", accepted during it and restored: " << during_present);
  CHECK(missing.empty());
  if (!missing.empty()) CHECK(missing.front() == 0);  // names the first missing id
  for (std::int64_t id : after_backup) {
    INFO(id);
    CHECK(npacd.call(http::verb::get, "/v1/messages/" + std::to_string(id)).status == 404);
  }
  // The NPAC's signing keys (their private halves are in the database) and the provider.
  CHECK(fingerprints(npacd.call(http::verb::get, "/v1/npac-keys").body["npac_keys"]) == fingerprints(npac_keys_before));
  CHECK(npacd.call(http::verb::get, "/v1/providers/0001").status == 200);
  CHECK(npacd.stop() == 0);
  fs::remove_all(restored_dir);
}

TEST_CASE("npacctl backup against npacd writes the copy mode 0600 and never over an existing file") {
  NpacdProcess npacd;
  const std::string api = " --api 127.0.0.1:" + std::to_string(npacd.apiPort()) + " --token-file " +
                          npacd.tokenFile().string();
  const fs::path file = npacd.dir() / "copy.db";
  Run taken = npacctl("backup " + file.string() + api + " --json");
  INFO(taken.output);
  REQUIRE(taken.exit_code == 0);
  const Json summary = Json::parse(taken.output, nullptr, false);
  CHECK(summary["integrity"] == "ok");
  CHECK(summary["npac_keys"].get<int>() >= 1);  // npacd made its first NPAC key at its first start
  CHECK(summary["tokens"].get<int>() >= 1);
  CHECK((fs::status(file).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
  const auto size = fs::file_size(file);
  Run again = npacctl("backup " + file.string() + api);
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.output, Catch::Contains("exists: npacctl backup never overwrites a file"));
  CHECK(fs::file_size(file) == size);
  // No temporary file is left beside it, nor beside the database.
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(npacd.dir())) {
    INFO(entry.path());
    CHECK(entry.path().filename().string().find("copy.db.") == std::string::npos);
    CHECK(entry.path().filename().string().find(".backup.tmp") == std::string::npos);
    ++entries;
  }
  CHECK(entries > 0);
}
