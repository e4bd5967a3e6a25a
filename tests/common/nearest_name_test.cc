// The suggestion for a mistyped name (common/nearest_name.h): npacctl's commands and
// npacd's tunables use it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "common/nearest_name.h"

using namespace npac::common;

namespace {
const std::vector<std::string> kCommands{"plan", "sp", "nsap", "key", "srr", "tunable", "assoc", "audit",
                                          "send", "broadcast", "msg", "inbound", "npac-key", "queue",
                                          "log-level", "token", "backup"};
const std::vector<std::string> kSpCommands{"add", "list", "show", "disable", "enable"};
}  // namespace

TEST_CASE("The edit distance counts a swap of neighbours as one edit and ignores case") {
  CHECK(editDistance("lsit", "list") == 1);
  CHECK(editDistance("LIST", "list") == 0);
  CHECK(editDistance("spp", "sp") == 1);
  CHECK(editDistance("", "abc") == 3);
  CHECK(editDistance("kitten", "sitting") == 3);
  CHECK(editDistance("ca", "abc") == 3);  // optimal string alignment, not full Damerau
}

TEST_CASE("A mistyped command is matched to the nearest one") {
  CHECK(nearestName("lsit", kSpCommands) == std::optional<std::string>("list"));
  CHECK(nearestName("spp", kCommands) == std::optional<std::string>("sp"));
  CHECK(nearestName("tunabel", kCommands) == std::optional<std::string>("tunable"));
  CHECK(nearestName("bind_timout", {"bind_timeout", "response_timeout"}) ==
        std::optional<std::string>("bind_timeout"));
}

TEST_CASE("A unique prefix is suggested when no name is near enough") {
  CHECK(nearestName("tok", kCommands) == std::optional<std::string>("token"));
  CHECK(nearestName("broad", kCommands) == std::optional<std::string>("broadcast"));
}

TEST_CASE("A word far from every name, an ambiguous prefix, or a name itself gets no suggestion") {
  CHECK_FALSE(nearestName("frobnicate", kCommands));
  CHECK_FALSE(nearestName("au", {"assoc", "audit", "auth"}));
  CHECK_FALSE(nearestName("list", kSpCommands));
  CHECK_FALSE(nearestName("", kSpCommands));
  CHECK_FALSE(nearestName("anything", {}));
}

TEST_CASE("didYouMean phrases the suggestion, or says nothing") {
  CHECK(didYouMean("lsit", kSpCommands) == " (did you mean 'list'?)");
  CHECK(didYouMean("frobnicate", kSpCommands).empty());
}
