#include "memcopy/process.h"

#include <pwd.h>

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mpigpu {

bool ProcessAlive(pid_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) == -1 && errno == ESRCH) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return true;
  // "pid (comm) S ...": comm may hold spaces and parentheses, so the state follows the last ')'.
  char buf[512];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* paren = std::strrchr(buf, ')');
  if (paren == nullptr || paren[1] != ' ') return true;
  return paren[2] != 'Z' && paren[2] != 'X';
}

std::string OwnerName(uid_t uid) {
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr)
    return std::string("user ") + found->pw_name + " (uid " + std::to_string(uid) + ")";
  return "uid " + std::to_string(uid);
}

}  // namespace mpigpu
