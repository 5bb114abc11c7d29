// What the files of communicators, groups, attributes, topologies and intercommunicators
// (comm.cc, group.cc, attr.cc, topo*.cc, intercomm.cc) share: the group registry, the making of a
// new communicator (its context ids agreed on, its registration), the attribute hooks of dup
// and free, and the topology a communicator carries. Not part of the public interface; every
// function expects the API's lock held (api_internal.h).
//
// Context ids: every process keeps the lowest id it has not used (State::next_context). A new
// communicator's ids are the largest such id among the processes that will use it (its members,
// and for an intercommunicator both groups); each of them then moves past the ids. A process
// only ever uses ids below its own next free one, so the new ids are unused by everyone who
// could exchange messages on them; communicators over disjoint groups (split colors, Comm_create
// with disjoint groups) may share ids, as their messages cannot meet. Ids are never reused
// (2^28 communicators per process before they run out: MPIGPU_ERR_INTERN).
//
// Nonblocking dups (Comm_idup, comm_idup.cc) take ids from a range of their own
// [kNbFirstContext, 2^30), with a next free id of their own (State::next_nb_context): a blocking
// constructor agrees while idups on other communicators may complete in its progress, and
// idups on different communicators complete in any order, so an id one of them proposed may
// be gone at some member by the time the largest is known. Their agreement therefore checks:
// each member takes the largest proposal only if it is still free there, and the members
// repeat with new proposals until every one could take it (comm_idup.cc).
#pragma once

#include <memory>
#include <vector>

#include "mpigpu_api/api_internal.h"

namespace mpigpu::api {

// ---- groups (group.cc) ----
using GroupPtr = std::shared_ptr<const std::vector<int>>;  // world rank of each group rank
// The members of `handle`, or null (detail recorded, class MPIGPU_ERR_GROUP).
GroupPtr LookupGroup(MPIGPU_Group handle);
// A new handle for `members` (MPIGPU_GROUP_EMPTY when empty).
int NewGroup(std::vector<int> members, MPIGPU_Group* out);

// ---- communicators (comm.cc) ----
// Tags on a parent's collective context for the messages that build communicators: above every
// collective's own tags, below MPIGPU_TAG_UB; a user's tag (Comm_create_group,
// Intercomm_create) goes in the low 28 bits.
constexpr int kBuildTagBase = 1 << 29;
constexpr int kBuildTagMask = (1 << 28) - 1;
// Reserves `count` consecutive context ids from `ctx` (the members' largest next free id): this
// process moves past them. Errors: INTERN (out of ids).
int TakeContexts(int ctx, int count);
constexpr int kNbFirstContext = 1 << 29;
// Registers `c` (contexts declared to the engine) and returns its handle.
int RegisterComm(CommPtr c, MPIGPU_Comm* out);
// A communicator over `members` (world ranks, in order; this process among them) on contexts
// ctx, ctx+1, with `parent`'s error handler. Not registered.
CommPtr MakeIntraComm(const std::vector<int>& members, int ctx, const CommData& parent);
// Gathers k ints from every member of `members` (world ranks; `me` is this process's index)
// over `via`'s collective context with tag `tag`, (*all)[i * k + j] = member i's mine[j]; only
// the members (all of them in `via`) take part.
int GatherAmong(Lock& lk, const CommPtr& via, const std::vector<int>& members, int me, int tag,
                const std::vector<int>& mine, std::vector<int>* all);
// Split of an intracommunicator (Comm_split's rules); *made is the new communicator (null for
// MPIGPU_UNDEFINED), so a caller may attach more before anyone else sees it.
int SplitComm(Lock& lk, MPIGPU_Comm comm, int color, int key, MPIGPU_Comm* newcomm,
              CommPtr* made);

// ---- attributes (attr.cc) ----
// Runs old's copy callbacks (lock dropped around each) and stores what they copy on `made`.
int CopyCommAttrs(Lock& lk, MPIGPU_Comm old, const CommPtr& oldc, const CommPtr& made);
// Deletes every attribute of `c` (handle `h`), newest first. Stops at the first failing delete
// callback (that attribute and older ones stay) and returns its code.
int DeleteCommAttrs(Lock& lk, MPIGPU_Comm h, const CommPtr& c);

// ---- topologies (topo.cc; topo_cart.cc, topo_graph.cc) ----
struct Topology {
  int kind = MPIGPU_UNDEFINED;  // MPIGPU_CART, MPIGPU_GRAPH or MPIGPU_DIST_GRAPH
  std::vector<int> dims, periods;  // Cartesian
  std::vector<int> index, edges;   // graph
  // Distributed graph (this process's neighbours and weights).
  std::vector<int> sources, source_weights, destinations, dest_weights;
  bool weighted = false;
};
// MPIGPU_ERR_ARG "null <what>" (detail recorded).
int NullArg(const char* what);
// The topology of `comm` (kind `kind`, or any when MPIGPU_UNDEFINED), or null (detail recorded,
// class in *rc); *cp = the communicator when cp is given.
std::shared_ptr<const Topology> TopoOf(MPIGPU_Comm comm, int kind, int* rc, CommPtr* cp = nullptr);
// Makes the topology's communicator: ranks below `n` of comm, in order, carrying `topo`.
int MakeTopoComm(Lock& lk, MPIGPU_Comm comm, int n, std::shared_ptr<const Topology> topo,
                 MPIGPU_Comm* newcomm);

// n split into k factors as balanced as possible, non-increasing, as MPICH splits it
// (dims_factor.cc; n >= 1, k >= 0).
std::vector<int> FactorDims(int n, int k);

// ---- intercommunicators (intercomm.cc) ----
// (An intercommunicator keeps an intracommunicator over its local group, CommData::local_comm,
// for agreeing on contexts and for Intercomm_merge.)
// An intercommunicator of `local` (this process among them) with `remote` on contexts ctx,
// ctx+1, its local intracommunicator on ctx+2, ctx+3, with `parent`'s error handler. Not
// registered.
CommPtr MakeInter(const std::vector<int>& local, const std::vector<int>& remote, int ctx,
                  const CommData& parent);
// Dup of an intercommunicator (both groups agree on the contexts).
int DupInter(Lock& lk, const CommPtr& inter, CommPtr* made);
// Comm_split of an intercommunicator: each color's local members with the remote group's
// members of the same color (COMM_NULL if either is empty).
int SplitInter(Lock& lk, const CommPtr& inter, int color, int key, MPIGPU_Comm* newcomm);
// Comm_create of an intercommunicator: `group` (of the local group) with the group the remote
// side passes (COMM_NULL for non-members, or if either is empty).
int CreateInter(Lock& lk, const CommPtr& inter, const std::vector<int>& group,
                MPIGPU_Comm* newcomm);

}  // namespace mpigpu::api
