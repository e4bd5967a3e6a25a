// The admin API's thread as the code away from Asio sees it (route files, DatabaseBackup):
// PostToApiThread runs work on it from any thread, an ApiTimer runs work on it later.
// admin_api.cc makes both from the io_context the API thread runs (boost::asio::post, a
// steady_timer), so the route files compile without Asio.
//
// Threading: a PostToApiThread may be called from any thread, and a copy may outlive the
// AdminApi (it holds only the io_context, which outlives the API): a core completion that
// arrives after the API stopped is posted and dropped harmlessly. An ApiTimer is made and
// used on the API thread only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

namespace npac::npacd {

// Runs `work` on the API thread, after whatever is already waiting for it. Copyable.
using PostToApiThread = std::function<void(std::function<void()> work)>;

// A one-shot timer on the API thread.
class ApiTimer {
 public:
  virtual ~ApiTimer() = default;
  // Runs `fn` once `delay` has passed — unless cancel(), another after() or the timer's
  // destruction comes first, which drop it.
  virtual void after(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
  virtual void cancel() = 0;
};

// Makes a timer on the API thread.
using MakeApiTimer = std::function<std::unique_ptr<ApiTimer>()>;

}  // namespace npac::npacd
