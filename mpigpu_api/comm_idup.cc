// MPIGPU_Comm_idup: a dup whose context agreement is a nonblocking schedule (coll_sched.h),
// advanced by every progress round of the process, so a member that starts it early never waits
// for one that is busy elsewhere (in a receive, in another communicator's collective), and the
// request completes when the new communicator is registered.
//
// The agreement (why it checks: comm_objects.h). Every member proposes its next free id of the
// nonblocking range; all learn every proposal and the previous round's verdicts (gather to the
// first member, binomial broadcast back). A round whose members all took the previous
// candidate ends it: that is the new communicator's first id. Otherwise the largest proposal is
// the next candidate, and each member takes it at once if it is still free there (and so never
// hands it to anything else) and reports whether it could. Ids a failed round took are skipped,
// never reused. Without interference it ends after its second round.
//
// Members: the parent's, or for an intercommunicator both groups: they talk on the
// intercommunicator's collective context (declared to the engine for both groups) through an
// unregistered intracommunicator over the union, ordered by world rank.
//
// Attributes are copied when the call is made (their callbacks run with the lock dropped, which
// a progress round cannot do), onto the communicator that the last round registers; *newcomm is
// written then (MPI: not to be read before the request completes).
#include <algorithm>
#include <climits>
#include <memory>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/coll_sched.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

static_assert(kNbFirstContext == (1 << 29), "State::next_nb_context starts at kNbFirstContext");

constexpr int kTagIdupGather = kTagGather;  // the table goes back on AddBcastTree's tag

struct Idup {
  CommPtr parent;
  CommPtr attrs_holder = std::make_shared<CommData>();  // the copied attributes
  MPIGPU_Comm* out = nullptr;
  int count = 2;             // ids the new communicator takes (4: intercommunicator)
  int mine[2] = {0, 0};      // this round's (verdict on the previous candidate, proposal)
  std::vector<int> table;    // every member's pair, by rank of the agreeing communicator
  int cand = -1;             // the previous round's candidate; -1 before the first
};

// The intracommunicator over both groups of `inter` on its collective context.
CommPtr UnionOf(const CommData& inter) {
  std::vector<int> members = inter.local_group;
  members.insert(members.end(), inter.group.begin(), inter.group.end());
  std::sort(members.begin(), members.end());
  CommPtr u = MakeIntraComm(members, inter.ctx_coll - 1, inter);
  return u;  // ctx_coll = inter.ctx_coll: the agreement's messages use the intercomm's
}

int Finalize(const std::shared_ptr<Idup>& st) {
  const CommData& p = *st->parent;
  CommPtr c = p.inter ? MakeInter(p.local_group, p.group, st->cand, p)
                      : MakeIntraComm(p.group, st->cand, p);
  c->topo = p.topo;
  c->attrs = std::move(st->attrs_holder->attrs);
  MPIGPU_Comm h = MPIGPU_COMM_NULL;
  if (int rc = RegisterComm(std::move(c), &h); rc != MPIGPU_SUCCESS) return rc;
  *st->out = h;
  return MPIGPU_SUCCESS;
}

void AddAgreeRound(CollSched& s, const std::shared_ptr<Idup>& st);

// After a round's table arrived: done, or the next candidate taken where free and another round.
int Decide(CollSched& s, const std::shared_ptr<Idup>& st) {
  const int n = s.size();
  if (st->cand >= 0) {
    bool all = true;
    for (int r = 0; r < n; ++r) all = all && st->table[2 * r] == 1;
    if (all) return Finalize(st);
  }
  int cand = 0;
  for (int r = 0; r < n; ++r) cand = std::max(cand, st->table[2 * r + 1]);
  if (cand < kNbFirstContext || cand > INT_MAX / 2 - st->count)
    return SetLastError(MPIGPU_ERR_INTERN, "out of context ids for Comm_idup");
  State& g = GetState();
  const bool free_here = cand >= g.next_nb_context;
  if (free_here) g.next_nb_context = cand + st->count;
  st->cand = cand;
  st->mine[0] = free_here ? 1 : 0;
  st->mine[1] = g.next_nb_context;
  AddAgreeRound(s, st);
  return MPIGPU_SUCCESS;
}

void AddAgreeRound(CollSched& s, const std::shared_ptr<Idup>& st) {
  const int n = s.size(), me = s.rank();
  s.NextRound();
  if (me == 0) {
    for (int r = 1; r < n; ++r) s.Recv(HostBuf(&st->table[2 * r], 2, MPIGPU_INT), r, kTagIdupGather);
    s.Then([st] {
      st->table[0] = st->mine[0];
      st->table[1] = st->mine[1];
      return MPIGPU_SUCCESS;
    });
  } else {
    s.Send(HostBuf(st->mine, 2, MPIGPU_INT), 0, kTagIdupGather);
  }
  s.NextRound();
  AddBcastTree(s, HostBuf(st->table.data(), 2 * n, MPIGPU_INT), 0);
  s.NextRound();
  CollSched* sp = &s;  // the schedule owns this step, so outlives it
  s.Then([sp, st] { return Decide(*sp, st); });
}

int DoIdup(Lock& lk, MPIGPU_Comm comm, MPIGPU_Comm* newcomm, MPIGPU_Request* request) {
  if (request == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null request");
  *request = MPIGPU_REQUEST_NULL;
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr parent = LookupComm(comm);
  if (!parent) return MPIGPU_ERR_COMM;
  if (newcomm == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null newcomm");
  *newcomm = MPIGPU_COMM_NULL;
  auto st = std::make_shared<Idup>();
  st->parent = parent;
  st->out = newcomm;
  st->count = parent->inter ? 4 : 2;
  CommPtr via = parent->inter ? UnionOf(*parent) : parent;
  st->table.assign(2 * static_cast<size_t>(via->size()), 0);
  // Copied now (see the header); the callbacks see the lock dropped.
  if (int rc = CopyCommAttrs(lk, comm, parent, st->attrs_holder); rc != MPIGPU_SUCCESS) return rc;
  // Every member draws the tag block at the call, in the parent's collective order.
  auto s = std::make_shared<CollSched>(via, NbcTagBase(*via));
  st->mine[1] = GetState().next_nb_context;
  // The first round has nothing to report: Decide sees cand < 0.
  AddAgreeRound(*s, st);
  CollSched* started = s.get();
  if (int rc = StartCollRequest(std::move(s), request); rc != MPIGPU_SUCCESS) return rc;
  started->Advance();  // posts the first round now
  return MPIGPU_SUCCESS;
}

}  // namespace
}  // namespace mpigpu::api

extern "C" int MPIGPU_Comm_idup(MPIGPU_Comm comm, MPIGPU_Comm* newcomm, MPIGPU_Request* request) {
  mpigpu::api::Lock lk(mpigpu::api::GetState().mu);
  return mpigpu::api::Finish("MPIGPU_Comm_idup", comm,
                             mpigpu::api::DoIdup(lk, comm, newcomm, request));
}
