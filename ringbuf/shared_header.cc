#include "ringbuf/shared_header.h"

#include <cstdio>

namespace mpigpu {

Status SharedHeaderError(const SharedKind& kind, const std::string& where, const std::string& why) {
  return Status(Err::kInvalidArg,
                std::string(kind.name) + (where.empty() ? "" : " " + where) + ": " + why);
}

Status CheckMagicAndVersion(const SharedKind& kind, const std::string& where, uint64_t magic,
                            uint32_t version) {
  if (magic != kind.magic) {
    char text[96];
    std::snprintf(text, sizeof text, "magic %#018llx, expected %#018llx (not published, or not ",
                  static_cast<unsigned long long>(magic),
                  static_cast<unsigned long long>(kind.magic));
    return SharedHeaderError(kind, where, text + std::string(kind.name) + ")");
  }
  if (version != kind.version)
    return SharedHeaderError(kind, where, "layout version " + std::to_string(version) +
                                              ", this build uses " + std::to_string(kind.version));
  return Status::Ok();
}

Status CheckHeaderSizes(const SharedKind& kind, const std::string& where, bool consistent,
                        const std::string& fields, uint64_t need, uint64_t bytes) {
  if (!consistent) return SharedHeaderError(kind, where, "inconsistent header (" + fields + ")");
  if (need > bytes)
    return SharedHeaderError(kind, where, "needs " + std::to_string(need) + " bytes, the range has " +
                                              std::to_string(bytes) + " (" + fields + ")");
  return Status::Ok();
}

}  // namespace mpigpu
