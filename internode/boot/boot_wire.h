// The boot protocol between a rank and its launcher's boot server (boot_server.h), over TCP:
//   rank -> server: BootHello, then `card_len` bytes of its card.
//   server -> rank, once every rank's card is in: BootTable, then for each rank in order a
//     uint32 length and its card.
// The connection stays open for the job's life: a rank that sees it close knows its launcher is
// gone. Integers are in the hosts' byte order (the job's hosts share an architecture).
#pragma once

#include <cstddef>
#include <cstdint>

#include "transport/core/job_secret.h"

namespace mpigpu::boot {

inline constexpr uint64_t kHelloMagic = 0x6d70676275743031ull;  // "mpgbut01"
inline constexpr uint64_t kTableMagic = 0x6d70677461623031ull;  // "mpgtab01"
inline constexpr uint32_t kMaxCard = 1024;

struct BootHello {
  uint64_t magic;
  int32_t rank;
  int32_t size;
  unsigned char secret[transport::kJobSecretBytes];
  uint32_t card_len;
  uint32_t pad;
};

struct BootTable {
  uint64_t magic;
  int32_t size;
  int32_t pad;
};

}  // namespace mpigpu::boot
