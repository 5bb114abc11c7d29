// Info objects: ordered (key, value) lists. mpigpu takes no hints, so they are only stored and
// read back; MPI_INFO_ENV is empty. Handles: MPI_INFO_NULL 0, MPI_INFO_ENV 1, then index + 2.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "mpi/mpi_internal.h"

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;
struct Infos {
  std::mutex mu;
  std::deque<Pairs> objs;
  std::deque<bool> live;
  std::vector<int> free;
};
Infos& I() {
  static Infos* i = new Infos;
  return *i;
}
const Pairs kEnv;

// The pairs of handle h (caller holds the mutex), or null. MPI_INFO_ENV reads as empty.
const Pairs* Find(MPI_Info h) {
  if (h == MPI_INFO_ENV) return &kEnv;
  Infos& in = I();
  const long i = static_cast<long>(h) - 2;
  if (i < 0 || static_cast<size_t>(i) >= in.objs.size() || !in.live[i]) return nullptr;
  return &in.objs[i];
}
Pairs* FindMutable(MPI_Info h) {
  return h == MPI_INFO_ENV ? nullptr : const_cast<Pairs*>(Find(h));
}

int Err(const char* fn, int rc, const char* detail) {
  return mpigpu::mpi::FailWith(fn, MPI_COMM_WORLD, rc, detail);
}

int CheckKey(const char* fn, const char* key) {
  if (key == nullptr) return Err(fn, MPI_ERR_INFO_KEY, "null key");
  const size_t n = std::strlen(key);
  if (n == 0 || n > MPI_MAX_INFO_KEY) return Err(fn, MPI_ERR_INFO_KEY, "key empty or longer than MPI_MAX_INFO_KEY");
  return MPI_SUCCESS;
}

MPI_Info NewInfo(Pairs p) {
  Infos& in = I();
  long i;
  if (!in.free.empty()) {
    i = in.free.back();
    in.free.pop_back();
    in.objs[i] = std::move(p);
    in.live[i] = true;
  } else {
    i = static_cast<long>(in.objs.size());
    in.objs.push_back(std::move(p));
    in.live.push_back(true);
  }
  return static_cast<MPI_Info>(i + 2);
}

}  // namespace

extern "C" int PMPI_Info_create(MPI_Info* info) {
  if (info == nullptr) return Err("MPI_Info_create", MPI_ERR_ARG, "null info pointer");
  std::lock_guard<std::mutex> g(I().mu);
  *info = NewInfo({});
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Info_create)

extern "C" int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  if (newinfo == nullptr) return Err("MPI_Info_dup", MPI_ERR_ARG, "null newinfo");
  std::lock_guard<std::mutex> g(I().mu);
  const Pairs* p = Find(info);
  if (p == nullptr) return Err("MPI_Info_dup", MPI_ERR_INFO, "not an info object");
  *newinfo = NewInfo(*p);
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Info_dup)

extern "C" int PMPI_Info_free(MPI_Info* info) {
  if (info == nullptr) return Err("MPI_Info_free", MPI_ERR_ARG, "null info pointer");
  std::lock_guard<std::mutex> g(I().mu);
  if (FindMutable(*info) == nullptr) return Err("MPI_Info_free", MPI_ERR_INFO, "not a user info object");
  const long i = static_cast<long>(*info) - 2;
  I().objs[i].clear();
  I().live[i] = false;
  I().free.push_back(static_cast<int>(i));
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Info_free)

extern "C" int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  if (int rc = CheckKey("MPI_Info_set", key); rc != MPI_SUCCESS) return rc;
  if (value == nullptr || value[0] == '\0' || std::strlen(value) > MPI_MAX_INFO_VAL)
    return Err("MPI_Info_set", MPI_ERR_INFO_VALUE, "value empty or longer than MPI_MAX_INFO_VAL");
  std::lock_guard<std::mutex> g(I().mu);
  Pairs* p = FindMutable(info);
  if (p == nullptr) return Err("MPI_Info_set", MPI_ERR_INFO, "not a user info object");
  for (auto& kv : *p)
    if (kv.first == key) {
      kv.second = value;
      return MPI_SUCCESS;
    }
  p->emplace_back(key, value);
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Info_set)

extern "C" int PMPI_Info_delete(MPI_Info info, const char* key) {
  if (int rc = CheckKey("MPI_Info_delete", key); rc != MPI_SUCCESS) return rc;
  std::lock_guard<std::mutex> g(I().mu);
  Pairs* p = FindMutable(info);
  if (p == nullptr) return Err("MPI_Info_delete", MPI_ERR_INFO, "not a user info object");
  for (auto it = p->begin(); it != p->end(); ++it)
    if (it->first == key) {
      p->erase(it);
      return MPI_SUCCESS;
    }
  return Err("MPI_Info_delete", MPI_ERR_INFO_NOKEY, "no such key");
}
MPIGPU_MPI_ALIAS(Info_delete)

// Copies at most valuelen characters and a NUL (value has valuelen + 1 bytes).
extern "C" int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value,
                             int* flag) {
  if (int rc = CheckKey("MPI_Info_get", key); rc != MPI_SUCCESS) return rc;
  if (flag == nullptr || value == nullptr || valuelen < 0)
    return Err("MPI_Info_get", MPI_ERR_ARG, "null value/flag or negative valuelen");
  std::lock_guard<std::mutex> g(I().mu);
  const Pairs* p = Find(info);
  if (p == nullptr) return Err("MPI_Info_get", MPI_ERR_INFO, "not an info object");
  *flag = 0;
  for (const auto& kv : *p)
    if (kv.first == key) {
      const size_t n = std::min(kv.second.size(), static_cast<size_t>(valuelen));
      std::memcpy(value, kv.second.data(), n);
      value[n] = '\0';
      *flag = 1;
    }
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Info_get)

extern "C" int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  if (int rc = CheckKey("MPI_Info_get_valuelen", key); rc != MPI_SUCCESS) return rc;
  if (flag == nullptr || valuelen == nullptr)
    return Err("MPI_Info_get_valuelen", MPI_ERR_ARG, "null pointer");
  std::lock_guard<std::mutex> g(I().mu);
  const Pairs* p = Find(info);
  if (p == nullptr) return Err("MPI_Info_get_valuelen", MPI_ERR_INFO, "not an info object");
  *flag = 0;
  for (const auto& kv : *p)
    if (kv.first == key) {
      *valuelen = static_cast<int>(kv.second.size());
      *flag = 1;
    }
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Info_get_valuelen)

extern "C" int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  if (nkeys == nullptr) return Err("MPI_Info_get_nkeys", MPI_ERR_ARG, "null nkeys");
  std::lock_guard<std::mutex> g(I().mu);
  const Pairs* p = Find(info);
  if (p == nullptr) return Err("MPI_Info_get_nkeys", MPI_ERR_INFO, "not an info object");
  *nkeys = static_cast<int>(p->size());
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Info_get_nkeys)

extern "C" int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  if (key == nullptr) return Err("MPI_Info_get_nthkey", MPI_ERR_ARG, "null key");
  std::lock_guard<std::mutex> g(I().mu);
  const Pairs* p = Find(info);
  if (p == nullptr) return Err("MPI_Info_get_nthkey", MPI_ERR_INFO, "not an info object");
  if (n < 0 || static_cast<size_t>(n) >= p->size())
    return Err("MPI_Info_get_nthkey", MPI_ERR_ARG, "n out of range");
  std::snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", (*p)[n].first.c_str());
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Info_get_nthkey)
