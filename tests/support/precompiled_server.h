// The precompiled header of the test executables that drive npacd's server pieces
// (npac_tests, packaging_tests; tests/CMakeLists.txt, NPAC_PCH): precompiled_common.h and
// the third-party headers their fixtures bring into most files — Boost.Asio and Beast
// (tests/npac/npacd/api/http_server_fixture.h, the core's io_context), nlohmann/json
// (every API answer), spdlog, <regex>.
//
// Threading: not applicable (headers only).
#pragma once

#include "tests/support/precompiled_common.h"

#include <regex>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
