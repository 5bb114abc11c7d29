#include "transport/core/job_secret.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "ringbuf/segment.h"

namespace mpigpu::transport {

Status NewJobSecret(std::string* secret) {
  secret->clear();
  for (size_t i = 0; i < kJobSecretBytes; i += sizeof(uint64_t)) {
    uint64_t t = 0;
    MPIGPU_RETURN_IF_ERROR(RandomToken(&t));
    secret->append(reinterpret_cast<const char*>(&t), sizeof t);
  }
  return Status::Ok();
}

bool TakeJobSecretFromEnvironment(std::string* secret) {
  static std::mutex mu;
  static bool valid = false;
  static std::string copy;
  std::lock_guard<std::mutex> lock(mu);
  // Read whenever it is there (a process that sets it again, e.g. a test, gets the new one).
  if (const char* hex = std::getenv("MPIGPU_JOB_SECRET"); hex != nullptr) {
    valid = ParseJobSecretHex(hex, &copy);
    ::unsetenv("MPIGPU_JOB_SECRET");
  }
  if (valid) *secret = copy;
  return valid;
}

std::string JobSecretHex(const std::string& secret) {
  std::string hex;
  for (unsigned char b : secret) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", b);
    hex += two;
  }
  return hex;
}

bool ParseJobSecretHex(const char* hex, std::string* secret) {
  if (hex == nullptr || std::strlen(hex) != 2 * kJobSecretBytes) return false;
  secret->clear();
  for (size_t i = 0; i < 2 * kJobSecretBytes; i += 2) {
    if (!std::isxdigit(static_cast<unsigned char>(hex[i])) ||
        !std::isxdigit(static_cast<unsigned char>(hex[i + 1])))
      return false;
    const char byte[3] = {hex[i], hex[i + 1], 0};
    secret->push_back(static_cast<char>(std::strtol(byte, nullptr, 16)));
  }
  return true;
}

bool SameJobSecret(const unsigned char* claimed, const std::string& secret) {
  if (secret.size() != kJobSecretBytes) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < kJobSecretBytes; ++i)
    diff |= static_cast<unsigned char>(claimed[i] ^ static_cast<unsigned char>(secret[i]));
  return diff == 0;
}

}  // namespace mpigpu::transport
