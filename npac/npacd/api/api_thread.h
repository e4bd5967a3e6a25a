// The admin API's thread as code away from Asio sees it: PostToApiThread runs work on it
// from any thread. The AdminApi makes it from the io_context the API thread runs
// (boost::asio::post), so DatabaseBackup compiles without Asio.
//
// Threading: a PostToApiThread may be called from any thread, and a copy may outlive the
// AdminApi (it holds only the io_context, which outlives the API): an answer that arrives
// after the API stopped is posted and dropped harmlessly.
#pragma once

#include <functional>

namespace npac::npacd {

// Runs `work` on the API thread, after whatever is already waiting for it. Copyable.
using PostToApiThread = std::function<void(std::function<void()> work)>;

}  // namespace npac::npacd
