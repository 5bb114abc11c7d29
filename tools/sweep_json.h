// mpigpu-sweep's JSON (result files: the ranks hand their results to the launcher-mode parent
// this way; --json reports, read back by --replot): nlohmann::ordered_json from Debian's
// nlohmann-json3-dev (objects keep their keys' order), behind two calls that never throw.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "memcopy/status.h"

namespace mpigpu {
namespace sweep {

using Json = nlohmann::ordered_json;

// Parses a whole JSON text strictly (RFC 8259: nothing after the value, no comments, no NaN,
// valid UTF-8). kInvalidArg with the parser's message (byte, line and column) on error.
Status ParseJson(const std::string& text, Json* out);

// The text of a file: two spaces a level; NaN and infinities are written as null; a string that
// is not valid UTF-8 has its bad bytes replaced (U+FFFD) instead of failing.
std::string DumpJson(const Json& j);

}  // namespace sweep
}  // namespace mpigpu
