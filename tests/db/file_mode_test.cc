// The database and its -wal and -shm files are created owner-only (0600) whatever the
// umask lets through: they hold the NPAC's private keys and the token digests.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <fstream>

#include "db/database.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

unsigned modeOf(const std::string& file) {
  struct stat st{};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// Sets the umask for one test and restores it.
struct Umask {
  explicit Umask(mode_t mask) : old(::umask(mask)) {}
  ~Umask() { ::umask(old); }
  mode_t old;
};

}  // namespace

TEST_CASE("A new database file and its wal and shm files are created with mode 0600 under umask 022", "[sqlite]") {
  Umask mask(022);
  TempDir dir;
  auto db = openFresh(dir);
  REQUIRE(db->execute("INSERT INTO api_tokens(name, role, secret_sha256, created_at, created_by) "
                      "VALUES('x', 'reader', zeroblob(32), 1, 'ops')")
              .isOk());
  CHECK(modeOf(dir.file("npacd.db")) == 0600);
  CHECK(modeOf(dir.file("npacd.db-wal")) == 0600);
  CHECK(modeOf(dir.file("npacd.db-shm")) == 0600);
}

TEST_CASE("An existing group readable database is opened and its mode left as the operator set it", "[sqlite]") {
  Umask mask(022);
  TempDir dir;
  { auto db = openFresh(dir); }
  REQUIRE(::chmod(dir.file("npacd.db").c_str(), 0640) == 0);
  auto db = openFresh(dir);
  CHECK(modeOf(dir.file("npacd.db")) == 0640);
}
