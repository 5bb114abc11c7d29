// Groups: ordered sets of world ranks behind int handles, and their algebra (MPI's rules for
// union, intersection, difference, incl/excl and ranges). Local objects: no communication.
// Handle 0 is MPIGPU_GROUP_EMPTY; freed slots are reused (a group is cheap and programs make
// many), so a freed handle may name a newer group.
#include <algorithm>
#include <climits>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

// Guarded by the API's lock.
struct Groups {
  std::vector<GroupPtr> slots{std::make_shared<const std::vector<int>>()};  // 0: GROUP_EMPTY
  std::vector<int> free_slots;
};
Groups& GetGroups() {
  static Groups* g = new Groups();  // never destroyed: calls may come during exit
  return *g;
}

int GroupRankOf(const std::vector<int>& g, int world) {
  const auto at = std::find(g.begin(), g.end(), world);
  return at == g.end() ? MPIGPU_UNDEFINED : static_cast<int>(at - g.begin());
}

// World rank -> group rank, for lookups in groups of any size.
std::unordered_map<int, int> IndexOf(const std::vector<int>& g) {
  std::unordered_map<int, int> m;
  m.reserve(g.size());
  for (size_t i = 0; i < g.size(); ++i) m.emplace(g[i], static_cast<int>(i));
  return m;
}

int CheckOut(const void* p, const char* what) {
  return p == nullptr ? SetLastError(MPIGPU_ERR_ARG, std::string("null ") + what)
                      : MPIGPU_SUCCESS;
}

// Validates ranks[0..n-1] as distinct ranks of a group of `size`.
int CheckRankList(int size, int n, const int ranks[]) {
  if (n < 0 || n > size)
    return SetLastError(MPIGPU_ERR_ARG, "n = " + std::to_string(n) + " outside 0.." +
                                            std::to_string(size));
  if (n > 0 && ranks == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null ranks");
  std::vector<bool> seen(size, false);
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= size)
      return SetLastError(MPIGPU_ERR_RANK, "ranks[" + std::to_string(i) + "] = " +
                                               std::to_string(ranks[i]) +
                                               " is not a rank of the group (size " +
                                               std::to_string(size) + ")");
    if (seen[ranks[i]])
      return SetLastError(MPIGPU_ERR_RANK,
                          "rank " + std::to_string(ranks[i]) + " is named twice");
    seen[ranks[i]] = true;
  }
  return MPIGPU_SUCCESS;
}

// The ranks n (first, last, stride) triplets name, in order; each at most once.
int ExpandRanges(int size, int n, const int ranges[][3], std::vector<int>* out) {
  if (n < 0) return SetLastError(MPIGPU_ERR_ARG, "n = " + std::to_string(n) + " is negative");
  if (n > 0 && ranges == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null ranges");
  std::vector<bool> seen(size, false);
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    const std::string which = "range " + std::to_string(i) + " (" + std::to_string(first) + ", " +
                              std::to_string(last) + ", " + std::to_string(stride) + ")";
    if (stride == 0) return SetLastError(MPIGPU_ERR_ARG, which + " has stride 0");
    if (first < 0 || first >= size || last < 0 || last >= size)
      return SetLastError(MPIGPU_ERR_RANK, which + " names ranks outside the group (size " +
                                               std::to_string(size) + ")");
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) continue;  // empty
    for (long long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      if (seen[r]) return SetLastError(MPIGPU_ERR_RANK, which + " names rank " +
                                                            std::to_string(r) + " again");
      seen[r] = true;
      out->push_back(static_cast<int>(r));
    }
  }
  return MPIGPU_SUCCESS;
}

int Incl(const std::vector<int>& g, const std::vector<int>& ranks, MPIGPU_Group* out) {
  std::vector<int> m;
  m.reserve(ranks.size());
  for (int r : ranks) m.push_back(g[r]);
  return NewGroup(std::move(m), out);
}

int Excl(const std::vector<int>& g, const std::vector<int>& ranks, MPIGPU_Group* out) {
  std::vector<bool> drop(g.size(), false);
  for (int r : ranks) drop[r] = true;
  std::vector<int> m;
  for (size_t i = 0; i < g.size(); ++i)
    if (!drop[i]) m.push_back(g[i]);
  return NewGroup(std::move(m), out);
}

// Set algebra: 0 union, 1 intersection, 2 difference.
int Algebra(int op, MPIGPU_Group a, MPIGPU_Group b, MPIGPU_Group* out) {
  GroupPtr g1 = LookupGroup(a);
  if (!g1) return MPIGPU_ERR_GROUP;
  GroupPtr g2 = LookupGroup(b);
  if (!g2) return MPIGPU_ERR_GROUP;
  if (int rc = CheckOut(out, "newgroup"); rc != MPIGPU_SUCCESS) return rc;
  const std::unordered_map<int, int> in2 = IndexOf(*g2);
  std::vector<int> m;
  for (int w : *g1)
    if (op == 0 || (op == 1) == (in2.count(w) > 0)) m.push_back(w);
  if (op == 0) {
    const std::unordered_map<int, int> in1 = IndexOf(*g1);
    for (int w : *g2)
      if (!in1.count(w)) m.push_back(w);
  }
  return NewGroup(std::move(m), out);
}

int DoTranslate(MPIGPU_Group a, int n, const int ranks1[], MPIGPU_Group b, int ranks2[]) {
  GroupPtr g1 = LookupGroup(a);
  if (!g1) return MPIGPU_ERR_GROUP;
  GroupPtr g2 = LookupGroup(b);
  if (!g2) return MPIGPU_ERR_GROUP;
  if (n < 0) return SetLastError(MPIGPU_ERR_ARG, "n = " + std::to_string(n) + " is negative");
  if (n > 0 && (ranks1 == nullptr || ranks2 == nullptr))
    return SetLastError(MPIGPU_ERR_ARG, "null ranks1 or ranks2");
  const std::unordered_map<int, int> in2 = IndexOf(*g2);
  for (int i = 0; i < n; ++i) {
    const int r = ranks1[i];
    if (r == MPIGPU_PROC_NULL) continue;
    if (r < 0 || r >= static_cast<int>(g1->size()))
      return SetLastError(MPIGPU_ERR_RANK, "ranks1[" + std::to_string(i) + "] = " +
                                               std::to_string(r) + " is not a rank of group1");
  }
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPIGPU_PROC_NULL) {
      ranks2[i] = MPIGPU_PROC_NULL;
      continue;
    }
    const auto at = in2.find((*g1)[ranks1[i]]);
    ranks2[i] = at == in2.end() ? MPIGPU_UNDEFINED : at->second;
  }
  return MPIGPU_SUCCESS;
}

int DoCompare(MPIGPU_Group a, MPIGPU_Group b, int* result) {
  GroupPtr g1 = LookupGroup(a);
  if (!g1) return MPIGPU_ERR_GROUP;
  GroupPtr g2 = LookupGroup(b);
  if (!g2) return MPIGPU_ERR_GROUP;
  if (int rc = CheckOut(result, "result"); rc != MPIGPU_SUCCESS) return rc;
  if (*g1 == *g2) {
    *result = MPIGPU_IDENT;
    return MPIGPU_SUCCESS;
  }
  std::vector<int> s1 = *g1, s2 = *g2;
  std::sort(s1.begin(), s1.end());
  std::sort(s2.begin(), s2.end());
  *result = s1 == s2 ? MPIGPU_SIMILAR : MPIGPU_UNEQUAL;
  return MPIGPU_SUCCESS;
}

int DoSizeOrRank(MPIGPU_Group group, int* out, bool rank) {
  GroupPtr g = LookupGroup(group);
  if (!g) return MPIGPU_ERR_GROUP;
  if (int rc = CheckOut(out, rank ? "rank" : "size"); rc != MPIGPU_SUCCESS) return rc;
  if (!rank) {
    *out = static_cast<int>(g->size());
    return MPIGPU_SUCCESS;
  }
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  *out = GroupRankOf(*g, GetState().engine->rank());
  return MPIGPU_SUCCESS;
}

int DoInclExcl(MPIGPU_Group group, int n, const int ranks[], MPIGPU_Group* out, bool incl) {
  GroupPtr g = LookupGroup(group);
  if (!g) return MPIGPU_ERR_GROUP;
  if (int rc = CheckOut(out, "newgroup"); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = CheckRankList(static_cast<int>(g->size()), n, ranks); rc != MPIGPU_SUCCESS)
    return rc;
  const std::vector<int> list(ranks, ranks + n);
  return incl ? Incl(*g, list, out) : Excl(*g, list, out);
}

int DoRange(MPIGPU_Group group, int n, int ranges[][3], MPIGPU_Group* out, bool incl) {
  GroupPtr g = LookupGroup(group);
  if (!g) return MPIGPU_ERR_GROUP;
  if (int rc = CheckOut(out, "newgroup"); rc != MPIGPU_SUCCESS) return rc;
  std::vector<int> list;
  if (int rc = ExpandRanges(static_cast<int>(g->size()), n, ranges, &list); rc != MPIGPU_SUCCESS)
    return rc;
  return incl ? Incl(*g, list, out) : Excl(*g, list, out);
}

int DoFree(MPIGPU_Group* group) {
  if (int rc = CheckOut(group, "group"); rc != MPIGPU_SUCCESS) return rc;
  if (!LookupGroup(*group)) return MPIGPU_ERR_GROUP;
  if (*group != MPIGPU_GROUP_EMPTY) {  // the predefined empty group stays
    Groups& gs = GetGroups();
    gs.slots[*group].reset();
    gs.free_slots.push_back(*group);
  }
  *group = MPIGPU_GROUP_NULL;
  return MPIGPU_SUCCESS;
}

int DoCommGroup(MPIGPU_Comm comm, MPIGPU_Group* group, bool remote) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (int rc = CheckOut(group, "group"); rc != MPIGPU_SUCCESS) return rc;
  if (remote && !c->inter)
    return SetLastError(MPIGPU_ERR_COMM, "not an intercommunicator (no remote group)");
  return NewGroup(remote ? c->group : c->my_group(), group);
}

}  // namespace

GroupPtr LookupGroup(MPIGPU_Group handle) {
  Groups& gs = GetGroups();
  if (handle >= 0 && static_cast<size_t>(handle) < gs.slots.size() && gs.slots[handle])
    return gs.slots[handle];
  SetLastError(MPIGPU_ERR_GROUP, handle == MPIGPU_GROUP_NULL
                                     ? std::string("group is MPIGPU_GROUP_NULL")
                                     : "group " + std::to_string(handle) +
                                           " is not valid (freed or never created)");
  return nullptr;
}

int NewGroup(std::vector<int> members, MPIGPU_Group* out) {
  if (members.empty()) {
    *out = MPIGPU_GROUP_EMPTY;
    return MPIGPU_SUCCESS;
  }
  Groups& gs = GetGroups();
  auto g = std::make_shared<const std::vector<int>>(std::move(members));
  if (!gs.free_slots.empty()) {
    *out = gs.free_slots.back();
    gs.free_slots.pop_back();
    gs.slots[*out] = std::move(g);
    return MPIGPU_SUCCESS;
  }
  if (gs.slots.size() >= static_cast<size_t>(INT_MAX))
    return SetLastError(MPIGPU_ERR_INTERN, "out of group handles");
  gs.slots.push_back(std::move(g));
  *out = static_cast<MPIGPU_Group>(gs.slots.size() - 1);
  return MPIGPU_SUCCESS;
}

}  // namespace mpigpu::api

using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
namespace api = mpigpu::api;

// Group calls have no communicator: errors go to WORLD's handler.
#define GROUP_CALL(name, expr)                   \
  Lock lk(GetState().mu);                        \
  return Finish(name, MPIGPU_COMM_NULL, (expr))

extern "C" int MPIGPU_Comm_group(MPIGPU_Comm comm, MPIGPU_Group* group) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_group", comm, api::DoCommGroup(comm, group, false));
}
extern "C" int MPIGPU_Comm_remote_group(MPIGPU_Comm comm, MPIGPU_Group* group) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_remote_group", comm, api::DoCommGroup(comm, group, true));
}
extern "C" int MPIGPU_Group_size(MPIGPU_Group group, int* size) {
  GROUP_CALL("MPIGPU_Group_size", api::DoSizeOrRank(group, size, false));
}
extern "C" int MPIGPU_Group_rank(MPIGPU_Group group, int* rank) {
  GROUP_CALL("MPIGPU_Group_rank", api::DoSizeOrRank(group, rank, true));
}
extern "C" int MPIGPU_Group_translate_ranks(MPIGPU_Group group1, int n, const int ranks1[],
                                            MPIGPU_Group group2, int ranks2[]) {
  GROUP_CALL("MPIGPU_Group_translate_ranks", api::DoTranslate(group1, n, ranks1, group2, ranks2));
}
extern "C" int MPIGPU_Group_compare(MPIGPU_Group group1, MPIGPU_Group group2, int* result) {
  GROUP_CALL("MPIGPU_Group_compare", api::DoCompare(group1, group2, result));
}
extern "C" int MPIGPU_Group_union(MPIGPU_Group group1, MPIGPU_Group group2,
                                  MPIGPU_Group* newgroup) {
  GROUP_CALL("MPIGPU_Group_union", api::Algebra(0, group1, group2, newgroup));
}
extern "C" int MPIGPU_Group_intersection(MPIGPU_Group group1, MPIGPU_Group group2,
                                         MPIGPU_Group* newgroup) {
  GROUP_CALL("MPIGPU_Group_intersection", api::Algebra(1, group1, group2, newgroup));
}
extern "C" int MPIGPU_Group_difference(MPIGPU_Group group1, MPIGPU_Group group2,
                                       MPIGPU_Group* newgroup) {
  GROUP_CALL("MPIGPU_Group_difference", api::Algebra(2, group1, group2, newgroup));
}
extern "C" int MPIGPU_Group_incl(MPIGPU_Group group, int n, const int ranks[],
                                 MPIGPU_Group* newgroup) {
  GROUP_CALL("MPIGPU_Group_incl", api::DoInclExcl(group, n, ranks, newgroup, true));
}
extern "C" int MPIGPU_Group_excl(MPIGPU_Group group, int n, const int ranks[],
                                 MPIGPU_Group* newgroup) {
  GROUP_CALL("MPIGPU_Group_excl", api::DoInclExcl(group, n, ranks, newgroup, false));
}
extern "C" int MPIGPU_Group_range_incl(MPIGPU_Group group, int n, int ranges[][3],
                                       MPIGPU_Group* newgroup) {
  GROUP_CALL("MPIGPU_Group_range_incl", api::DoRange(group, n, ranges, newgroup, true));
}
extern "C" int MPIGPU_Group_range_excl(MPIGPU_Group group, int n, int ranges[][3],
                                       MPIGPU_Group* newgroup) {
  GROUP_CALL("MPIGPU_Group_range_excl", api::DoRange(group, n, ranges, newgroup, false));
}
extern "C" int MPIGPU_Group_free(MPIGPU_Group* group) {
  GROUP_CALL("MPIGPU_Group_free", api::DoFree(group));
}
