// The precompiled header of every test executable (tests/CMakeLists.txt, NPAC_PCH): the
// headers nearly every test file includes, parsed once per executable instead of once per
// file. Catch2 v2's single header alone is ~18,000 lines. Only widely used, stable
// headers belong here: a project header would rebuild every test on each edit.
//
// Threading: not applicable (headers only).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
