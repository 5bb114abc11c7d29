// Intercommunicators: Intercomm_create (the leaders meet over a peer communicator), dup,
// Intercomm_merge and Comm_remote_size. An intercommunicator's CommData addresses the remote
// group (api_internal.h) and keeps an intracommunicator over its local group (local_comm) on
// contexts of its own, through which a group agrees on what its leader exchanges.
//
// Contexts: a new intercommunicator takes four ids from the largest next free id of both groups
// (the leaders exchange their groups' largest): ctx, ctx+1 for itself, ctx+2, ctx+3 for the
// local intracommunicator of each side (the two groups are disjoint, so they may share them).
#include <algorithm>
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

TypedBuf IntBuf(int* p, int count) {
  TypedBuf b;
  b.ptr = p;
  (void)DescribeForComm(MPIGPU_INT, count, &b.desc);  // predefined, count >= 0: cannot fail
  return b;
}

// Sends `out` to and receives *in (its size set by the caller) from `peer` of `via` at once.
int Exchange(Lock& lk, const CommPtr& via, int peer, int tag, std::vector<int>& out,
             std::vector<int>* in) {
  ApiRequest *rr = nullptr, *sr = nullptr;
  if (int rc = StartP2P(true, IntBuf(in->data(), static_cast<int>(in->size())), via, peer, tag,
                        via->ctx_coll, &rr);
      rc != MPIGPU_SUCCESS)
    return rc;
  if (int rc = StartP2P(false, IntBuf(out.data(), static_cast<int>(out.size())), via, peer, tag,
                        via->ctx_coll, &sr);
      rc != MPIGPU_SUCCESS) {
    Detach(rr);
    return rc;
  }
  const int src = WaitP2P(lk, sr, MPIGPU_STATUS_IGNORE);
  const int rrc = WaitP2P(lk, rr, MPIGPU_STATUS_IGNORE);
  return src != MPIGPU_SUCCESS ? src : rrc;
}

// Every member of `local` gets `leader`'s `values` (k ints).
int FromLeader(Lock& lk, const CommPtr& local, int leader, std::vector<int>* values) {
  const size_t k = values->size();
  std::vector<int> mine = local->rank == leader ? *values : std::vector<int>(k, 0);
  std::vector<int> all;
  if (int rc = AllgatherInts(lk, local, mine, &all); rc != MPIGPU_SUCCESS) return rc;
  std::copy(all.begin() + leader * k, all.begin() + (leader + 1) * k, values->begin());
  return MPIGPU_SUCCESS;
}

// The largest next free context id among `local`'s members.
int LocalLargest(Lock& lk, const CommPtr& local, int* out) {
  std::vector<int> all;
  if (int rc = AllgatherInts(lk, local, {GetState().next_context}, &all); rc != MPIGPU_SUCCESS)
    return rc;
  *out = *std::max_element(all.begin(), all.end());
  return MPIGPU_SUCCESS;
}

}  // namespace

CommPtr MakeInter(const std::vector<int>& local, const std::vector<int>& remote, int ctx,
                  const CommData& parent) {
  // The remote group addresses messages; the local one is this process's.
  auto c = std::make_shared<CommData>();
  State& s = GetState();
  c->inter = true;
  c->from_world.assign(s.engine->size(), -1);
  for (int w : remote) {
    c->from_world[w] = c->size();
    c->group.push_back(w);
  }
  c->local_group = local;
  c->rank = static_cast<int>(std::find(local.begin(), local.end(), s.engine->rank()) -
                             local.begin());
  c->ctx_p2p = ctx;
  c->ctx_coll = ctx + 1;
  c->errhandler = parent.errhandler;
  c->local_comm = MakeIntraComm(local, ctx + 2, parent);
  return c;
}

namespace {

int DoCreate(Lock& lk, MPIGPU_Comm local_comm, int local_leader, MPIGPU_Comm peer_comm,
             int remote_leader, int tag, MPIGPU_Comm* newcomm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr lc = LookupComm(local_comm);
  if (!lc) return MPIGPU_ERR_COMM;
  if (lc->inter) return SetLastError(MPIGPU_ERR_COMM, "local_comm is an intercommunicator");
  if (newcomm == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null newintercomm");
  if (local_leader < 0 || local_leader >= lc->size()) return PeerError(*lc, local_leader);
  if (tag < 0 || tag > MPIGPU_TAG_UB) return TagError(tag, false);
  int largest = 0;
  if (int rc = LocalLargest(lk, lc, &largest); rc != MPIGPU_SUCCESS) return rc;
  // The leader learns the remote group and its largest id: (largest, size) then the members.
  std::vector<int> head = {largest, lc->size()};
  std::vector<int> remote;
  if (lc->rank == local_leader) {
    CommPtr pc = LookupComm(peer_comm);
    if (!pc) return MPIGPU_ERR_COMM;
    if (pc->inter) return SetLastError(MPIGPU_ERR_COMM, "peer_comm is an intercommunicator");
    if (remote_leader < 0 || remote_leader >= pc->size()) return PeerError(*pc, remote_leader);
    const int t = kBuildTagBase | (tag & kBuildTagMask);
    std::vector<int> out = head, in(2);
    if (int rc = Exchange(lk, pc, remote_leader, t, out, &in); rc != MPIGPU_SUCCESS) return rc;
    if (in[1] < 1 || in[1] > GetState().engine->size())
      return SetLastError(MPIGPU_ERR_INTERN, "remote leader sent a bad group size");
    std::vector<int> mine = lc->group;
    remote.assign(in[1], 0);
    if (int rc = Exchange(lk, pc, remote_leader, t, mine, &remote); rc != MPIGPU_SUCCESS)
      return rc;
    head = {std::max(largest, in[0]), in[1]};
  }
  if (int rc = FromLeader(lk, lc, local_leader, &head); rc != MPIGPU_SUCCESS) return rc;
  remote.resize(head[1]);
  if (int rc = FromLeader(lk, lc, local_leader, &remote); rc != MPIGPU_SUCCESS) return rc;
  for (int w : remote)
    if (w < 0 || w >= GetState().engine->size() || lc->from_world[w] >= 0)
      return SetLastError(MPIGPU_ERR_COMM, "the local and remote groups overlap");
  const int ctx = head[0];
  if (int rc = TakeContexts(ctx, 4); rc != MPIGPU_SUCCESS) return rc;
  return RegisterComm(MakeInter(lc->group, remote, ctx, *lc), newcomm);
}

// Both groups' largest next free id, and the remote leader's `extra` ints (same count as
// mine): local allgather, leaders (local rank 0) exchange over the intercommunicator.
int AgreeAcross(Lock& lk, const CommPtr& inter, const std::vector<int>& extra, int* ctx,
                std::vector<int>* remote_extra) {
  const CommPtr& local = inter->local_comm;
  int largest = 0;
  if (int rc = LocalLargest(lk, local, &largest); rc != MPIGPU_SUCCESS) return rc;
  std::vector<int> mine = {largest};
  mine.insert(mine.end(), extra.begin(), extra.end());
  std::vector<int> theirs(mine.size(), 0);
  if (local->rank == 0)
    if (int rc = Exchange(lk, inter, 0, kBuildTagBase, mine, &theirs); rc != MPIGPU_SUCCESS)
      return rc;
  if (int rc = FromLeader(lk, local, 0, &theirs); rc != MPIGPU_SUCCESS) return rc;
  *ctx = std::max(largest, theirs[0]);
  remote_extra->assign(theirs.begin() + 1, theirs.end());
  return MPIGPU_SUCCESS;
}

int DoMerge(Lock& lk, MPIGPU_Comm comm, int high, MPIGPU_Comm* newcomm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (!c->inter) return SetLastError(MPIGPU_ERR_COMM, "not an intercommunicator");
  if (newcomm == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null newintracomm");
  // The local leader's high speaks for the group.
  std::vector<int> mine = {high ? 1 : 0};
  if (int rc = FromLeader(lk, c->local_comm, 0, &mine); rc != MPIGPU_SUCCESS) return rc;
  const int my_leader = c->local_group[0];
  mine.push_back(my_leader);
  std::vector<int> theirs;
  int ctx = 0;
  if (int rc = AgreeAcross(lk, c, mine, &ctx, &theirs); rc != MPIGPU_SUCCESS) return rc;
  const bool local_first =
      mine[0] != theirs[0] ? mine[0] == 0 : my_leader < theirs[1];
  std::vector<int> members = local_first ? c->local_group : c->group;
  const std::vector<int>& second = local_first ? c->group : c->local_group;
  members.insert(members.end(), second.begin(), second.end());
  if (int rc = TakeContexts(ctx, 2); rc != MPIGPU_SUCCESS) return rc;
  return RegisterComm(MakeIntraComm(members, ctx, *c), newcomm);
}

int DoRemoteSize(MPIGPU_Comm comm, int* size) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (!c->inter) return SetLastError(MPIGPU_ERR_COMM, "not an intercommunicator");
  if (size == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null size");
  *size = c->size();
  return MPIGPU_SUCCESS;
}

// The leaders swap `mine` (this group's, the same on every member) for the remote group's
// `theirs_count` ints, which every member gets.
int SwapAcross(Lock& lk, const CommPtr& inter, std::vector<int> mine, int theirs_count,
               std::vector<int>* theirs) {
  theirs->assign(theirs_count, 0);
  if (inter->local_comm->rank == 0 && (!mine.empty() || theirs_count > 0))
    if (int rc = Exchange(lk, inter, 0, kBuildTagBase + 1, mine, theirs); rc != MPIGPU_SUCCESS)
      return rc;
  if (theirs_count == 0) return MPIGPU_SUCCESS;
  return FromLeader(lk, inter->local_comm, 0, theirs);
}

// An intercommunicator between `local` (this process among them) and `remote` (world ranks),
// or COMM_NULL when either is empty or this process is not in `local`.
int RegisterInter(const std::vector<int>& local, const std::vector<int>& remote, int ctx,
                  const CommData& parent, MPIGPU_Comm* newcomm) {
  *newcomm = MPIGPU_COMM_NULL;
  const int me = GetState().engine->rank();
  if (local.empty() || remote.empty() || std::find(local.begin(), local.end(), me) == local.end())
    return MPIGPU_SUCCESS;
  return RegisterComm(MakeInter(local, remote, ctx, parent), newcomm);
}

}  // namespace

int SplitInter(Lock& lk, const CommPtr& inter, int color, int key, MPIGPU_Comm* newcomm) {
  // Each side's (color, key) table, then the other side's through the leaders.
  const CommPtr& local = inter->local_comm;
  std::vector<int> mine, theirs;
  if (int rc = AllgatherInts(lk, local, {color, key}, &mine); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = SwapAcross(lk, inter, mine, 2 * inter->size(), &theirs); rc != MPIGPU_SUCCESS)
    return rc;
  int ctx = 0;
  std::vector<int> unused;
  if (int rc = AgreeAcross(lk, inter, {}, &ctx, &unused); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = TakeContexts(ctx, 4); rc != MPIGPU_SUCCESS) return rc;
  *newcomm = MPIGPU_COMM_NULL;
  if (color == MPIGPU_UNDEFINED) return MPIGPU_SUCCESS;
  // Members of my color on each side, by key then old rank. Every color's pair of groups is
  // disjoint from the others, so they share the contexts.
  auto members = [color](const std::vector<int>& table, const std::vector<int>& group) {
    std::vector<std::pair<int, int>> order;
    for (size_t r = 0; r < group.size(); ++r)
      if (table[2 * r] == color) order.emplace_back(table[2 * r + 1], static_cast<int>(r));
    std::sort(order.begin(), order.end());
    std::vector<int> out;
    for (const auto& [k, r] : order) out.push_back(group[r]);
    return out;
  };
  return RegisterInter(members(mine, inter->local_group), members(theirs, inter->group), ctx,
                       *inter, newcomm);
}

int CreateInter(Lock& lk, const CommPtr& inter, const std::vector<int>& group,
                MPIGPU_Comm* newcomm) {
  for (int w : group)
    if (std::find(inter->local_group.begin(), inter->local_group.end(), w) ==
        inter->local_group.end())
      return SetLastError(MPIGPU_ERR_GROUP, "group has world rank " + std::to_string(w) +
                                                ", which is not in the local group");
  // Sizes first (the leaders swap them), then the members.
  std::vector<int> size;
  if (int rc = SwapAcross(lk, inter, {static_cast<int>(group.size())}, 1, &size);
      rc != MPIGPU_SUCCESS)
    return rc;
  if (size[0] < 0 || size[0] > inter->size())
    return SetLastError(MPIGPU_ERR_INTERN, "remote leader sent a bad group size");
  std::vector<int> remote;
  if (int rc = SwapAcross(lk, inter, group, size[0], &remote); rc != MPIGPU_SUCCESS) return rc;
  int ctx = 0;
  std::vector<int> unused;
  if (int rc = AgreeAcross(lk, inter, {}, &ctx, &unused); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = TakeContexts(ctx, 4); rc != MPIGPU_SUCCESS) return rc;
  return RegisterInter(group, remote, ctx, *inter, newcomm);
}

int DupInter(Lock& lk, const CommPtr& inter, CommPtr* made) {
  std::vector<int> unused;
  int ctx = 0;
  if (int rc = AgreeAcross(lk, inter, {}, &ctx, &unused); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = TakeContexts(ctx, 4); rc != MPIGPU_SUCCESS) return rc;
  *made = MakeInter(inter->local_group, inter->group, ctx, *inter);
  return MPIGPU_SUCCESS;
}

}  // namespace mpigpu::api

using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
namespace api = mpigpu::api;

extern "C" int MPIGPU_Intercomm_create(MPIGPU_Comm local_comm, int local_leader,
                                       MPIGPU_Comm peer_comm, int remote_leader, int tag,
                                       MPIGPU_Comm* newintercomm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Intercomm_create", local_comm,
                api::DoCreate(lk, local_comm, local_leader, peer_comm, remote_leader, tag,
                              newintercomm));
}

extern "C" int MPIGPU_Intercomm_merge(MPIGPU_Comm intercomm, int high,
                                      MPIGPU_Comm* newintracomm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Intercomm_merge", intercomm,
                api::DoMerge(lk, intercomm, high, newintracomm));
}

extern "C" int MPIGPU_Comm_remote_size(MPIGPU_Comm comm, int* size) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_remote_size", comm, api::DoRemoteSize(comm, size));
}
