// What the two accept loops share — the associations' Listener (core/listener.cc) and the
// admin API's HttpServer (api/http_server.cc): which accept(2) errors mean the process or
// the system is out of descriptors (they back off instead of retrying at once), and the
// note a rate-limited log line adds about the lines it held back.
//
// Threading: pure functions.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>

#include <boost/asio/error.hpp>
#include <boost/system/error_code.hpp>

namespace npac::npacd {

// EMFILE (the process's limit) or ENFILE (the system's): accept(2)'s "ERRORS".
inline bool isDescriptorError(const boost::system::error_code& ec) {
  return ec == boost::asio::error::no_descriptors ||
         (ec.category() == boost::system::system_category() && ec.value() == ENFILE);
}

// " (N more since the last such line)", or nothing when none were held back.
inline std::string suppressedNote(std::uint64_t skipped) {
  if (skipped == 0) return "";
  return " (" + std::to_string(skipped) + " more since the last such line)";
}

}  // namespace npac::npacd
