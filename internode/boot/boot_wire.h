// The boot protocol between a rank and its launcher's boot server (boot_server.h), over TCP:
//   rank -> server: BootHello, then `card_len` bytes of its card.
//   server -> rank, once every rank's card is in: BootTable, then for each rank in order a
//     uint32 length and its card.
//   rank -> server, when it finalizes: BootBye.
//   server -> rank, once every rank has said BootBye or its connection closed without it (its
//     process ended: killed, or exited without finalizing): BootEnd, then `gone` int32 ranks,
//     those that closed without it, in rank order.
// The connection stays open for the job's life: a rank that sees it close knows its launcher is
// gone, and the server that sees a rank's close before its BootBye knows that rank is. Integers
// are in the hosts' byte order (the job's hosts share an architecture).
#pragma once

#include <cstddef>
#include <cstdint>

#include "transport/core/job_secret.h"

namespace mpigpu::boot {

inline constexpr uint64_t kHelloMagic = 0x6d70676275743031ull;  // "mpgbut01"
inline constexpr uint64_t kTableMagic = 0x6d70677461623031ull;  // "mpgtab01"
inline constexpr uint64_t kByeMagic = 0x6d70676279653031ull;    // "mpgbye01"
inline constexpr uint64_t kEndMagic = 0x6d7067656e643031ull;    // "mpgend01"
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

struct BootBye {
  uint64_t magic;
};

struct BootEnd {
  uint64_t magic;
  int32_t gone;  // how many rank numbers follow
  int32_t pad;
};

}  // namespace mpigpu::boot
