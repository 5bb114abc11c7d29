// The job's secret: bytes only the job's ranks know (Bootstrap::secret), made once per job by its
// launcher or its first rank, proved by every connection a network back-end or the boot server
// admits. Its text form (MPIGPU_JOB_SECRET) is hex.
#pragma once

#include <cstddef>
#include <string>

#include "memcopy/status.h"

namespace mpigpu::transport {

inline constexpr size_t kJobSecretBytes = 16;

// kJobSecretBytes fresh random bytes from the kernel.
Status NewJobSecret(std::string* secret);
// 2 * kJobSecretBytes lowercase hex digits, and back (false for anything else).
std::string JobSecretHex(const std::string& secret);
bool ParseJobSecretHex(const char* hex, std::string* secret);
// The secret a launcher handed this rank in MPIGPU_JOB_SECRET, read once (at MPIGPU_Init, by
// whichever reader comes first: the launcher link, the boot client): the variable is then
// removed from the environment, so the rank's child processes do not inherit it, and later
// calls return the copy (or read it again if it was set again). False when it was missing or
// not hex.
bool TakeJobSecretFromEnvironment(std::string* secret);
// `claimed` (kJobSecretBytes) is `secret`, compared in constant time: a stranger learns nothing
// from how long a refusal took. False when `secret` is not a whole secret.
bool SameJobSecret(const unsigned char* claimed, const std::string& secret);

}  // namespace mpigpu::transport
