// The admin API's thread as the code away from Asio sees it (route files, DatabaseBackup):
// PostToApiThread runs work on it from any thread, an ApiTimer runs work on it later.
// admin_api.cc makes both from the io_context the API thread runs (boost::asio::post,
// AsioTimers), so the route files compile without Asio.
//
// Threading: a PostToApiThread may be called from any thread, and a copy may outlive the
// AdminApi (it holds only the io_context, which outlives the API): a core completion that
// arrives after the API stopped is posted and dropped harmlessly. An ApiTimer is made and
// used on the API thread only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "common/timer.h"

namespace npac::npacd {

// Runs `work` on the API thread, after whatever is already waiting for it. Copyable.
using PostToApiThread = std::function<void(std::function<void()> work)>;

// A one-shot timer on the API thread: the one Timer of the time source (common/timer.h).
using ApiTimer = common::Timer;

// Makes a timer on the API thread.
using MakeApiTimer = std::function<std::unique_ptr<ApiTimer>()>;

}  // namespace npac::npacd
