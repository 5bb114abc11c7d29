// Communicators: rank/size, the constructors (dup, split, split_type, create,
// create_group), compare, names, free and error handlers. How context ids are agreed on:
// comm_objects.h. Comm_idup: comm_idup.cc.
#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {

int TakeContexts(int ctx, int count) {
  if (ctx > kNbFirstContext - count) return SetLastError(MPIGPU_ERR_INTERN, "out of context ids");
  State& s = GetState();
  s.next_context = std::max(s.next_context, ctx + count);
  return MPIGPU_SUCCESS;
}

int RegisterComm(CommPtr c, MPIGPU_Comm* out) {
  State& s = GetState();
  if (s.comms.size() >= static_cast<size_t>(INT_MAX))
    return SetLastError(MPIGPU_ERR_INTERN, "out of communicator handles");
  if (c->inter) {
    // Both groups take part in an intercommunicator's contexts.
    std::vector<int> both = c->local_group;
    both.insert(both.end(), c->group.begin(), c->group.end());
    s.engine->SetContextMembers(c->ctx_p2p, both);
    s.engine->SetContextMembers(c->ctx_coll, both);
    DeclareContexts(*c->local_comm);
  } else {
    DeclareContexts(*c);
  }
  s.comms.push_back(std::move(c));
  *out = static_cast<MPIGPU_Comm>(s.comms.size() - 1);
  return MPIGPU_SUCCESS;
}

CommPtr MakeIntraComm(const std::vector<int>& members, int ctx, const CommData& parent) {
  auto c = std::make_shared<CommData>();
  c->from_world.assign(GetState().engine->size(), -1);
  const int me = GetState().engine->rank();
  for (int w : members) {
    if (w == me) c->rank = c->size();
    c->from_world[w] = c->size();
    c->group.push_back(w);
  }
  c->ctx_p2p = ctx;
  c->ctx_coll = ctx + 1;
  c->errhandler = parent.errhandler;  // a new communicator inherits its parent's handler
  return c;
}

int GatherAmong(Lock& lk, const CommPtr& via, const std::vector<int>& members, int me, int tag,
                const std::vector<int>& mine, std::vector<int>* all) {
  const int n = static_cast<int>(members.size());
  const int k = static_cast<int>(mine.size());
  all->assign(static_cast<size_t>(n) * k, 0);
  auto buf = [&](int* p, int count) {
    TypedBuf b;
    b.ptr = p;
    (void)DescribeForComm(MPIGPU_INT, count, &b.desc);  // predefined, count >= 0: cannot fail
    return b;
  };
  auto xfer = [&](bool recv, int* p, int count, int member) {
    ApiRequest* r = nullptr;
    const int peer = via->from_world[members[member]];
    if (int rc = StartP2P(recv, buf(p, count), via, peer, tag, via->ctx_coll, &r);
        rc != MPIGPU_SUCCESS)
      return rc;
    return WaitP2P(lk, r, MPIGPU_STATUS_IGNORE);
  };
  // Linear gather to the first member, which sends the table to each.
  if (me == 0) {
    std::copy(mine.begin(), mine.end(), all->begin());
    for (int i = 1; i < n; ++i)
      if (int rc = xfer(true, all->data() + i * k, k, i); rc != MPIGPU_SUCCESS) return rc;
    for (int i = 1; i < n; ++i)
      if (int rc = xfer(false, all->data(), n * k, i); rc != MPIGPU_SUCCESS) return rc;
    return MPIGPU_SUCCESS;
  }
  if (int rc = xfer(false, const_cast<int*>(mine.data()), k, 0); rc != MPIGPU_SUCCESS) return rc;
  return xfer(true, all->data(), n * k, 0);
}

namespace {

int CheckIntra(const CommData& c) {
  if (!c.inter) return MPIGPU_SUCCESS;
  return SetLastError(MPIGPU_ERR_COMM, "an intercommunicator where an intracommunicator is needed");
}

int DoRankOrSize(MPIGPU_Comm comm, int* out, bool rank) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (out == nullptr) return SetLastError(MPIGPU_ERR_ARG, rank ? "null rank" : "null size");
  *out = rank ? c->rank : static_cast<int>(c->my_group().size());
  return MPIGPU_SUCCESS;
}

}  // namespace

int SplitComm(Lock& lk, MPIGPU_Comm comm, int color, int key, MPIGPU_Comm* newcomm,
              CommPtr* made) {
  if (made) made->reset();
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr parent = LookupComm(comm);
  if (!parent) return MPIGPU_ERR_COMM;
  if (newcomm == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null newcomm");
  if (color < 0 && color != MPIGPU_UNDEFINED)
    return SetLastError(MPIGPU_ERR_ARG, "color " + std::to_string(color) +
                                            " is negative (and not MPIGPU_UNDEFINED)");
  if (parent->inter) {
    if (made) return SetLastError(MPIGPU_ERR_COMM, "an intercommunicator where an intracommunicator is needed");
    return SplitInter(lk, parent, color, key, newcomm);
  }
  State& s = GetState();
  std::vector<int> all;
  if (int rc = AllgatherInts(lk, parent, {color, key, s.next_context}, &all);
      rc != MPIGPU_SUCCESS)
    return rc;
  const int n = parent->size();
  int ctx = 0;
  for (int r = 0; r < n; ++r) ctx = std::max(ctx, all[3 * r + 2]);
  if (int rc = TakeContexts(ctx, 2); rc != MPIGPU_SUCCESS) return rc;
  *newcomm = MPIGPU_COMM_NULL;
  if (color == MPIGPU_UNDEFINED) return MPIGPU_SUCCESS;

  // Members of this color, ordered by key, then by rank in the parent.
  std::vector<std::pair<int, int>> order;  // (key, parent rank)
  for (int r = 0; r < n; ++r)
    if (all[3 * r] == color) order.emplace_back(all[3 * r + 1], r);
  std::sort(order.begin(), order.end());
  std::vector<int> members;
  for (const auto& [k, r] : order) members.push_back(parent->group[r]);
  CommPtr c = MakeIntraComm(members, ctx, *parent);
  if (made) *made = c;
  return RegisterComm(std::move(c), newcomm);
}

namespace {

int DoDup(Lock& lk, MPIGPU_Comm comm, MPIGPU_Comm* newcomm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr old = LookupComm(comm);
  if (!old) return MPIGPU_ERR_COMM;
  if (newcomm == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null newcomm");
  CommPtr made;
  if (old->inter) {
    if (int rc = DupInter(lk, old, &made); rc != MPIGPU_SUCCESS) return rc;
    if (int rc = RegisterComm(made, newcomm); rc != MPIGPU_SUCCESS) return rc;
  } else {
    // A dup is a split with one color that keeps the order.
    if (int rc = SplitComm(lk, comm, 0, old->rank, newcomm, &made); rc != MPIGPU_SUCCESS)
      return rc;
  }
  made->errhandler = old->errhandler;
  made->topo = old->topo;
  if (int rc = CopyCommAttrs(lk, comm, old, made); rc != MPIGPU_SUCCESS) {
    // MPI: a failing copy callback fails the dup; the new communicator goes away.
    GetState().comms[*newcomm].reset();
    *newcomm = MPIGPU_COMM_NULL;
    return rc;
  }
  return MPIGPU_SUCCESS;
}

int DoFree(Lock& lk, MPIGPU_Comm* comm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (comm == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null comm");
  if (*comm == MPIGPU_COMM_WORLD || *comm == MPIGPU_COMM_SELF)
    return SetLastError(MPIGPU_ERR_COMM, "MPIGPU_COMM_WORLD and MPIGPU_COMM_SELF cannot be freed");
  CommPtr c = LookupComm(*comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (int rc = DeleteCommAttrs(lk, *comm, c); rc != MPIGPU_SUCCESS) return rc;
  GetState().comms[*comm].reset();  // requests in flight keep their own reference
  *comm = MPIGPU_COMM_NULL;
  return MPIGPU_SUCCESS;
}

// Members of `group` as ranks of `parent`; GROUP if one is not in it.
int GroupInParent(const CommData& parent, const std::vector<int>& group) {
  for (int w : group)
    if (w < 0 || w >= static_cast<int>(parent.from_world.size()) || parent.from_world[w] < 0)
      return SetLastError(MPIGPU_ERR_GROUP, "group has world rank " + std::to_string(w) +
                                                ", which is not in the communicator");
  return MPIGPU_SUCCESS;
}

int DoCreate(Lock& lk, MPIGPU_Comm comm, MPIGPU_Group group, MPIGPU_Comm* newcomm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr parent = LookupComm(comm);
  if (!parent) return MPIGPU_ERR_COMM;
  if (newcomm == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null newcomm");
  GroupPtr g = LookupGroup(group);
  if (!g) return MPIGPU_ERR_GROUP;
  if (parent->inter) return CreateInter(lk, parent, *g, newcomm);
  if (int rc = GroupInParent(*parent, *g); rc != MPIGPU_SUCCESS) return rc;
  State& s = GetState();
  std::vector<int> all;
  if (int rc = AllgatherInts(lk, parent, {s.next_context}, &all); rc != MPIGPU_SUCCESS) return rc;
  const int ctx = *std::max_element(all.begin(), all.end());
  if (int rc = TakeContexts(ctx, 2); rc != MPIGPU_SUCCESS) return rc;
  *newcomm = MPIGPU_COMM_NULL;
  if (std::find(g->begin(), g->end(), s.engine->rank()) == g->end()) return MPIGPU_SUCCESS;
  return RegisterComm(MakeIntraComm(*g, ctx, *parent), newcomm);
}

int DoCreateGroup(Lock& lk, MPIGPU_Comm comm, MPIGPU_Group group, int tag,
                  MPIGPU_Comm* newcomm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr parent = LookupComm(comm);
  if (!parent) return MPIGPU_ERR_COMM;
  if (newcomm == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null newcomm");
  if (int rc = CheckIntra(*parent); rc != MPIGPU_SUCCESS) return rc;
  if (tag < 0 || tag > MPIGPU_TAG_UB) return TagError(tag, false);
  GroupPtr g = LookupGroup(group);
  if (!g) return MPIGPU_ERR_GROUP;
  if (int rc = GroupInParent(*parent, *g); rc != MPIGPU_SUCCESS) return rc;
  State& s = GetState();
  const auto at = std::find(g->begin(), g->end(), s.engine->rank());
  *newcomm = MPIGPU_COMM_NULL;
  if (at == g->end()) {
    if (g->empty()) return MPIGPU_SUCCESS;  // MPI_GROUP_EMPTY: COMM_NULL, no communication
    return SetLastError(MPIGPU_ERR_GROUP, "the calling process is not in the group");
  }
  std::vector<int> all;
  if (int rc = GatherAmong(lk, parent, *g, static_cast<int>(at - g->begin()),
                           kBuildTagBase | (tag & kBuildTagMask), {s.next_context}, &all);
      rc != MPIGPU_SUCCESS)
    return rc;
  const int ctx = *std::max_element(all.begin(), all.end());
  if (int rc = TakeContexts(ctx, 2); rc != MPIGPU_SUCCESS) return rc;
  return RegisterComm(MakeIntraComm(*g, ctx, *parent), newcomm);
}

// Same members ignoring order?
bool SameMembers(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

int DoCompare(MPIGPU_Comm comm1, MPIGPU_Comm comm2, int* result) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr a = LookupComm(comm1);
  if (!a) return MPIGPU_ERR_COMM;
  CommPtr b = LookupComm(comm2);
  if (!b) return MPIGPU_ERR_COMM;
  if (result == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null result");
  if (a == b) {
    *result = MPIGPU_IDENT;
  } else if (a->inter != b->inter) {
    *result = MPIGPU_UNEQUAL;
  } else if (a->my_group() == b->my_group() && (!a->inter || a->group == b->group)) {
    *result = MPIGPU_CONGRUENT;
  } else if (SameMembers(a->my_group(), b->my_group()) &&
             (!a->inter || SameMembers(a->group, b->group))) {
    *result = MPIGPU_SIMILAR;
  } else {
    *result = MPIGPU_UNEQUAL;
  }
  return MPIGPU_SUCCESS;
}

int DoSplitType(Lock& lk, MPIGPU_Comm comm, int split_type, int key, MPIGPU_Comm* newcomm) {
  if (split_type != MPIGPU_COMM_TYPE_SHARED && split_type != MPIGPU_COMM_TYPE_HW_GUIDED &&
      split_type != MPIGPU_COMM_TYPE_HW_UNGUIDED && split_type != MPIGPU_UNDEFINED)
    return SetLastError(MPIGPU_ERR_ARG, "split_type " + std::to_string(split_type) +
                                            " is not a MPIGPU_COMM_TYPE_* or UNDEFINED");
  // Node ids are 0..nodes-1: a color each. The hardware types know no resources: COMM_NULL
  // (still a collective split, so every member's context ids move alike).
  const int color = split_type == MPIGPU_COMM_TYPE_SHARED ? GetState().node : MPIGPU_UNDEFINED;
  return SplitComm(lk, comm, color, key, newcomm, nullptr);
}

int DoSetName(MPIGPU_Comm comm, const char* name) {
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (name == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null name");
  c->name.assign(name, strnlen(name, MPIGPU_MAX_OBJECT_NAME - 1));
  return MPIGPU_SUCCESS;
}

int DoGetName(MPIGPU_Comm comm, char* name, int* resultlen) {
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (name == nullptr || resultlen == nullptr)
    return SetLastError(MPIGPU_ERR_ARG, "null name or resultlen");
  std::memcpy(name, c->name.c_str(), c->name.size() + 1);
  *resultlen = static_cast<int>(c->name.size());
  return MPIGPU_SUCCESS;
}

int DoTestInter(MPIGPU_Comm comm, int* flag) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (flag == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null flag");
  *flag = c->inter ? 1 : 0;
  return MPIGPU_SUCCESS;
}

// Error handlers work at any time on WORLD and SELF (they exist before MPIGPU_Init), so a
// program can choose ERRORS_RETURN before its first call.
int DoSetErrhandler(MPIGPU_Comm comm, MPIGPU_Errhandler h) {
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  // Handles from 2 up are the MPI layer's user handlers (mpi/): the core returns their errors
  // as with ERRORS_RETURN and the layer calls the function; kept here so new communicators
  // inherit them.
  if (h < 0)
    return SetLastError(MPIGPU_ERR_ARG, "error handler " + std::to_string(h) +
                                            " is not MPIGPU_ERRORS_ARE_FATAL or MPIGPU_ERRORS_RETURN");
  c->errhandler = h;
  return MPIGPU_SUCCESS;
}

int DoGetErrhandler(MPIGPU_Comm comm, MPIGPU_Errhandler* h) {
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (h == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null errhandler");
  *h = c->errhandler;
  return MPIGPU_SUCCESS;
}

}  // namespace
}  // namespace mpigpu::api

using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
namespace api = mpigpu::api;

extern "C" int MPIGPU_Comm_rank(MPIGPU_Comm comm, int* rank) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_rank", comm, api::DoRankOrSize(comm, rank, true));
}

extern "C" int MPIGPU_Comm_size(MPIGPU_Comm comm, int* size) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_size", comm, api::DoRankOrSize(comm, size, false));
}

extern "C" int MPIGPU_Comm_dup(MPIGPU_Comm comm, MPIGPU_Comm* newcomm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_dup", comm, api::DoDup(lk, comm, newcomm));
}

extern "C" int MPIGPU_Comm_split(MPIGPU_Comm comm, int color, int key, MPIGPU_Comm* newcomm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_split", comm,
                api::SplitComm(lk, comm, color, key, newcomm, nullptr));
}

extern "C" int MPIGPU_Comm_split_type(MPIGPU_Comm comm, int split_type, int key, MPIGPU_Info info,
                                      MPIGPU_Comm* newcomm) {
  (void)info;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_split_type", comm,
                api::DoSplitType(lk, comm, split_type, key, newcomm));
}

extern "C" int MPIGPU_Comm_create(MPIGPU_Comm comm, MPIGPU_Group group, MPIGPU_Comm* newcomm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_create", comm, api::DoCreate(lk, comm, group, newcomm));
}

extern "C" int MPIGPU_Comm_create_group(MPIGPU_Comm comm, MPIGPU_Group group, int tag,
                                        MPIGPU_Comm* newcomm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_create_group", comm,
                api::DoCreateGroup(lk, comm, group, tag, newcomm));
}

extern "C" int MPIGPU_Comm_compare(MPIGPU_Comm comm1, MPIGPU_Comm comm2, int* result) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_compare", comm1, api::DoCompare(comm1, comm2, result));
}

extern "C" int MPIGPU_Comm_free(MPIGPU_Comm* comm) {
  Lock lk(GetState().mu);
  const MPIGPU_Comm handle = comm ? *comm : MPIGPU_COMM_NULL;
  return Finish("MPIGPU_Comm_free", handle, api::DoFree(lk, comm));
}

extern "C" int MPIGPU_Comm_set_name(MPIGPU_Comm comm, const char* name) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_set_name", comm, api::DoSetName(comm, name));
}

extern "C" int MPIGPU_Comm_get_name(MPIGPU_Comm comm, char* name, int* resultlen) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_get_name", comm, api::DoGetName(comm, name, resultlen));
}

extern "C" int MPIGPU_Comm_test_inter(MPIGPU_Comm comm, int* flag) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_test_inter", comm, api::DoTestInter(comm, flag));
}

extern "C" int MPIGPU_Comm_set_errhandler(MPIGPU_Comm comm, MPIGPU_Errhandler errhandler) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_set_errhandler", comm, api::DoSetErrhandler(comm, errhandler));
}

extern "C" int MPIGPU_Comm_get_errhandler(MPIGPU_Comm comm, MPIGPU_Errhandler* errhandler) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_get_errhandler", comm, api::DoGetErrhandler(comm, errhandler));
}
