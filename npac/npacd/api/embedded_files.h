// EmbeddedFile: one file compiled into npacd (cmake/EmbedFiles.cmake generates the table
// from a source folder at build time), so the program serves it without reading anything
// at run time. consoleFiles() is npac/npacd/console/: the operator's console page, served
// at /console/ (console_routes.cc).
//
// Threading: the table is constant static data; any thread may read it.
#pragma once

#include <span>
#include <string_view>

namespace npac::npacd {

struct EmbeddedFile {
  std::string_view name;          // "index.html": the file's name, also its URL segment
  std::string_view content_type;  // "text/html; charset=utf-8", from the extension
  std::string_view bytes;         // the whole file
};

// Sorted by name; empty when the folder was empty at build time.
std::span<const EmbeddedFile> consoleFiles();

}  // namespace npac::npacd
