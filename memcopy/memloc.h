// MemLoc: where a buffer lives, carried beside every pointer so that no copy has to ask the
// driver (the seed paper measured that query as pure overhead on the small-message path).
#pragma once

#include <cstdint>
#include <string>

namespace mpigpu {

struct MemLoc {
  enum class Kind : int8_t { kHost = 0, kDevice = 1 };
  Kind kind = Kind::kHost;
  int16_t device = -1;  // CUDA device ordinal for kDevice; -1 for host memory

  static constexpr MemLoc Host() { return MemLoc{Kind::kHost, -1}; }
  static constexpr MemLoc Device(int ordinal) {
    return MemLoc{Kind::kDevice, static_cast<int16_t>(ordinal)};
  }
  constexpr bool is_host() const { return kind == Kind::kHost; }
  constexpr bool is_device() const { return kind == Kind::kDevice; }
  // "host" or "cuda:N".
  std::string ToString() const {
    return is_host() ? std::string("host") : "cuda:" + std::to_string(device);
  }
  friend constexpr bool operator==(MemLoc a, MemLoc b) {
    return a.kind == b.kind && a.device == b.device;
  }
  friend constexpr bool operator!=(MemLoc a, MemLoc b) { return !(a == b); }
};
static_assert(sizeof(MemLoc) == 4, "MemLoc travels in shared-memory headers: keep it 4 bytes");

}  // namespace mpigpu
