#pragma once

#include <string>

#include "common/result.h"

namespace hookrelay {

// The whole of the file at `path`, as bytes. InvalidArgument "cannot read PATH: <the OS's
// reason>" ("No such file or directory", "Permission denied", "Is a directory") when it cannot
// be opened or read, so every "cannot read" names why.
Result<std::string> ReadFileText(const std::string& path);

// "cannot read PATH: <reason>" for a file that cannot be opened for reading, else OK; reads
// nothing (for a path used later, such as a CA bundle handed to libcurl).
Status CheckReadable(const std::string& path);

// Writes `text` to `path` readable by its owner alone (0600), through a temporary file made the
// same way, synced and renamed over `path`: a crash leaves the old file or the new one.
// Unavailable "cannot write PATH: <reason>".
Status WritePrivateFile(const std::string& path, const std::string& text);

}  // namespace hookrelay
