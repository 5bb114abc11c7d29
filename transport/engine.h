// Engine: the intranode transport of one process (Nemesis design).
//
// Bootstrap (transport/local_job.h): the job's ranks on this node meet in one shared segment;
// the engine lays its areas (CMA slots, notify words, cells, fastboxes) out behind the rank
// table. Without a launcher (no MPIGPU_RANK) the process is a one-rank job.
//
// Protocols, chosen per message by its packed size:
//   - eager (size <= min(MPIGPU_EAGER_LIMIT, MPIGPU_CELL_SIZE)): the payload is packed into one
//     cell that is enqueued on the receiver's queue. An unexpected eager message is copied out
//     and its cell freed at once, so cells never wait for the application.
//   - rendezvous: RTS (size, location, address) -> the receiver matches it -> an LMT back-end:
//       * CMA: the receiver reads the sender's host buffer with process_vm_readv, then FIN;
//       * ring: the receiver sends CTS with the unit size; both sides run the pipeline engine
//         over the pair's ring (sender -> receiver), one transfer per ordered pair at a time;
//       * CUDA IPC (device buffers): the RTS carries the buffer's IPC handle and layout, and the
//         receiver copies once out of the mapping, then FIN; when that copy runs on its
//         resident kernel, the kernel itself stores the send's token into the sender's notify
//         slot in the segment instead (see notify_words_), one message hop less.
//     The sender of a ring transfer completes when it has published its last unit.
// Every message from one sender travels through the receiver's one FIFO queue, and sends that
// find no free cell wait in a per-destination FIFO, so MPI's non-overtaking order holds.
//
// Progress: every call that waits or tests calls Progress(), which drains the receive queue,
// moves the pending sends, advances the active LMT pipelines and, every few milliseconds, checks
// that the peers with outstanding work are alive (a dead peer fails those requests with
// kPeerFailed). Progress is re-entrant-safe: a nested call returns at once.
//
// Threading: one thread per process calls the engine (MPI_THREAD_FUNNELED-like).
//
// Device buffers: copies run on mpigpu's own non-blocking CUDA streams, and the resident kernel
// and peers read device memory directly, so a device send first waits for the work the program
// put on the legacy default stream (default_stream_, MPIGPU_DEFAULT_STREAM_ORDER); work on the
// program's own streams must be complete before the send, as with any CUDA-aware MPI. A receive
// buffer is ready for any work once its request is done.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "memcopy/memloc.h"
#include "memcopy/status.h"
#include "memcopy/stream_order.h"
#include "pipeline/copy_engine.h"
#include "pipeline/layout.h"
#include "pipeline/pipeline.h"
#include "ringbuf/cell_queue.h"
#include "ringbuf/fastbox.h"
#include "ringbuf/lmt_ring.h"
#include "ringbuf/segment.h"
#include "transport/cma.h"
#include "transport/cuda_ipc.h"
#include "transport/device_copier.h"
#include "transport/local_job.h"
#include "transport/match.h"
#include "transport/transport_config.h"
#include "transport/wire.h"

namespace mpigpu::transport {

constexpr int kAnySource = kMatchAnySource;
constexpr int kAnyTag = kMatchAnyTag;

// Envelope and size of a message, as a receive or a probe sees it.
struct MsgInfo {
  int source = -1;
  int tag = -1;
  size_t bytes = 0;  // packed bytes the sender sent (may exceed the receive buffer: truncation)
};

// A user buffer: where it lives and its shape (the packed stream is what travels).
struct UserBuffer {
  void* ptr = nullptr;
  MemLoc loc = MemLoc::Host();
  Layout layout;
};

class Engine;

// A send or receive in flight. Owned by the engine; the caller releases it (Engine::Release).
// A receive waits in the posted queue under its pattern (MatchEntry::key).
class Request : public MatchEntry {
 public:
  bool done() const { return done_; }
  // The first error of this request (kTruncate, kPeerFailed, ...), ok otherwise.
  const Status& status() const { return status_; }
  // Receive: the matched envelope and the sender's size. Send: the destination and tag.
  const MsgInfo& info() const { return info_; }
  bool is_send() const { return kind_ == Kind::kSend; }

 private:
  friend class Engine;
  enum class Kind { kSend, kRecv };
  enum class State {
    kQueued,     // send: waits for a cell in the destination's FIFO
    kPosted,     // recv: in the posted queue
    kWaitCts,    // send: RTS sent, waiting for CTS or FIN
    kLmtWait,    // recv: matched an RTS; send: got a CTS; both wait for the pair's ring
    kLmt,        // either: the ring pipeline or the cooperative CMA copy runs
    kIpcCopy,    // either: the single CUDA IPC copy runs (ticket_ on its copy engine)
    kWaitPut,    // recv: exported its buffer, waits for the sender's put
    kDone,
  };
  Kind kind_ = Kind::kSend;
  State state_ = State::kQueued;
  bool done_ = false;
  bool released_ = false;  // the caller let go: delete on completion
  Status status_;
  MsgInfo info_;
  int peer_ = -1;  // send: destination; recv: source (kAnySource until matched)
  int tag_ = -1;
  int context_ = 0;
  UserBuffer buf_;
  size_t bytes_ = 0;  // send: packed size; recv: capacity of the packed stream
  // Rendezvous state.
  uint64_t peer_cookie_ = 0;  // the other side's request id (RTS/CTS)
  MemLoc peer_loc_;           // recv: the sender's buffer location
  uint64_t peer_addr_ = 0;    // recv: the sender's buffer address (CMA)
  bool peer_contig_ = false;  // recv: the sender's buffer is contiguous
  uint32_t peer_block_ = 0;   // recv: the sender's layout block (0: contiguous)
  std::unique_ptr<LmtPipelineBase> lmt_;
  // Cooperative CMA (both sides copy; see transport/cma.h).
  bool coop_ = false;
  uint32_t gen_ = 0;          // the transfer's generation in the pair's CmaSlot
  uint64_t remote_ = 0;       // send: the receiver's buffer address
  uint64_t total_ = 0;        // bytes to transfer
  size_t chunk_ = 0;
  // CUDA IPC single copy.
  IpcExport ipc_{};           // the peer's buffer, mapped through the cache while the copy runs
  CopyEngine* ipc_copier_ = nullptr;
  bool on_gpu_copier_ = false;  // the copy runs on the resident kernel (ticket_ is its ticket)
  Ticket ticket_ = 0;
  uint64_t peer_req_ = 0;     // send (put): the receiver's request id
  // Notify slots (see Engine::PollNotifies). Send: our slot named in the RTS and its token.
  // Recv: the sender's slot and token, and whether our resident kernel stores the token.
  uint32_t notify_slot_ = kNoNotify;
  uint32_t notify_token_ = 0;
  uint32_t peer_notify_slot_ = kNoNotify;
  uint32_t peer_notify_token_ = 0;
  bool notifies_peer_ = false;
};

class Engine {
 public:
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Joins the job described by `job` (creating or attaching its segment), waiting up to
  // MPIGPU_BOOTSTRAP_TIMEOUT for the other ranks.
  static Status Create(const JobInfo& job, std::unique_ptr<Engine>* out);

  int rank() const { return rank_; }
  int size() const { return size_; }

  struct Stats {
    uint64_t sends_notified = 0;  // device sends completed by the receiver's kernel (no FIN)
  };
  Stats stats() const { return stats_; }

  // Whether a contiguous device send of `bytes` to `peer` is offered as a CUDA IPC single copy.
  // Not below MPIGPU_SHARED_GPU_IPC_MIN to a rank on this same GPU (unless
  // MPIGPU_GPU_COPIER_SHARED says MPS): a device copy between two processes' contexts runs on
  // the SMs and costs a context switch (about 140 us, run 34), while the copy engines move the
  // bytes through host memory without one. Such sends go eager or through the ring.
  bool OffersIpc(int peer, size_t bytes) const;

  // Starts a send of buf's packed stream to `dst` (tag >= 0, context >= 0). The request is
  // done when the buffer may be reused.
  Status Isend(const UserBuffer& buf, int dst, int tag, int context, Request** out);
  // A blocking send's shortcut: a contiguous host message of at most the eager size goes out at
  // once when nothing waits before it to `dst` and a fastbox slot or cell is free. Then it is
  // sent and done (the buffer may be reused) and no request exists; true. Otherwise nothing
  // happens (false) and the caller uses Isend, which also reports any bad argument.
  bool TrySendNow(const UserBuffer& buf, int dst, int tag, int context);
  // A blocking receive's shortcut, the mirror of TrySendNow: for a contiguous host buffer of at
  // most MPIGPU_FASTBOX_SIZE bytes and one source, when no posted receive, unexpected message or
  // held cell could take the message first, it looks up to `spins` times for src's next fastbox
  // message (no Progress meanwhile; it gives up as soon as a cell arrives). If that one is eager
  // and matches, it is copied straight into buf and consumed: true, with *info and *st (ok, or
  // kTruncate as Wait would give). Otherwise nothing was taken (false) and the caller uses
  // Irecv, which also reports any bad argument.
  bool TryRecvNow(const UserBuffer& buf, int src, int tag, int context, int spins, MsgInfo* info,
                  Status* st);
  // Starts a receive into buf; src may be kAnySource, tag kAnyTag.
  Status Irecv(const UserBuffer& buf, int src, int tag, int context, Request** out);
  // Looks for a matching message that has arrived, without receiving it.
  Status Iprobe(int src, int tag, int context, bool* found, MsgInfo* info);

  // Does all work possible now; returns an engine-level error (a broken segment), request
  // errors stay with their requests.
  Status Progress();
  // Progress until `req` is done or `timeout_s` passed (kTimeout); request errors are in req.
  Status Wait(Request* req, double timeout_s = -1);
  // Lets go of a request: deleted now if done, else when it completes.
  void Release(Request* req);

  // Completes outstanding sends, waits (bounded) for every peer to finalize or die, removes the
  // shared memory this process created. The engine is unusable afterwards.
  Status Finalize();

  bool PeerAlive(int rank);
  // The ranks that take part in `context` (a communicator's): a rank's death fails the wildcard
  // (kAnySource) receives of the contexts it belongs to only. A context never declared counts
  // every rank as a member.
  void SetContextMembers(int context, const std::vector<int>& world_ranks);
  // Marks a peer as failed (tests, the API's fault handling): its requests fail.
  void FailPeer(int rank, const std::string& why);
  // Tests: the next ring receive that has drained at least one unit fails as if its copy had
  // (fault injection for the ring's abort path).
  void InjectRingFailureForTest() { inject_ring_failure_ = true; }
  // Tests: making the next ring fails (as with a full /dev/shm).
  void InjectRingSetupFailureForTest() { inject_ring_setup_failure_ = true; }

 private:
  struct OutMsg;
  struct RingPair;
  // An arrived message no receive matched yet (key: its envelope).
  struct Unexpected : MatchEntry {
    MsgHeader hdr{};
    std::vector<unsigned char> payload;  // eager data, or an RTS's IpcExport
  };

  Engine() = default;
  Status Bootstrap(const JobInfo& job);

  // Sending side.
  Status SendOrQueue(OutMsg& msg);  // copied only when it must wait
  bool TrySend(OutMsg& msg);
  Status FlushPending();
  Status CopierFor(MemLoc loc, CopyEngine** out);
  Status CopyPackedNow(PackDir dir, const UserBuffer& user, size_t n, void* plain);
  void PinEagerMemory();
  bool IpcAllowed() const;
  OutMsg Control(int dst, MsgType type) const;
  OutMsg Eager(int dst, int tag, int context, const UserBuffer& buf) const;
  // Receiving side.
  Status PollArrivals();
  void PollNotifies();
  void DropNotifySlot(Request* req, bool reusable);
  bool PeerTokenStored(const Request& req) const;
  bool NotifyMapped();
  void CheckGpuCopier();
  Status StopGpuCopier();
  uint32_t NotifyIndex(int rank, uint32_t slot) const {
    return static_cast<uint32_t>(rank) * kNotifySlots + slot;
  }
  // Receiver: the word of the sender's slot that `req` (a matched pull) names.
  uint32_t PeerNotifyIndex(const Request& req) const {
    return NotifyIndex(req.peer_, req.peer_notify_slot_);
  }
  Status DecodeBox(int src, const Fastbox& b, MsgHeader* h, const unsigned char** payload) const;
  void PublishEagerBox(Fastbox* box, int dst, int tag, int context, uint32_t seq, size_t bytes);
  void OpenFastbox(int dst, MsgHeader* h);
  Status TakeFastboxInOrder(int src, bool* took);
  Status DrainInOrder(int src);
  Status HandleMessage(const MsgHeader& h, const unsigned char* payload);
  Status UnpackEager(const MsgHeader& h, const void* payload, const UserBuffer& buf,
                     size_t capacity, MsgInfo* info);
  void DeliverEager(Request* req, const MsgHeader& h, const void* payload);
  void StartRendezvousRecv(Request* req, const MsgHeader& h, const unsigned char* payload);
  bool TryIpcPull(Request* req, const MsgHeader& h, const IpcOffer& offer);
  void TellCopyFailed(int src, uint64_t sreq);
  // A ring transfer failed part-way: the ring's other transfers in flight fail (a chained one
  // would take the failed one's units for its own) and the ring is retired.
  void AbortRecvRing(int src, const Status& why);
  void FailRingSends(int dst, const Status& why);
  void SendRingAbort(int peer, bool as_receiver);
  Status IssueSingleCopy(Request* req, const CopyDesc& d, MemLoc dst_loc, MemLoc src_loc,
                         CopyEngine* engine);
  bool TryIpcPutRequest(Request* req, const MsgHeader& h);
  Status StartIpcPut(Request* req, const MsgHeader& h, const IpcExport& e);
  Status IpcMap(int peer, const IpcExport& e, void** ptr, CopyEngine** copier, MemLoc* loc);
  void IpcUnavailable(const Status& why);
  void FallBackToRing(Request* req);
  void TryStartRingRecv(int src);
  void StartCoopRecv(Request* req, int src);
  Status AdvanceCma(Request* req, bool* done);
  CmaSlot* CmaSlotOf(int sender, int receiver) const {
    return cma_slots_ + static_cast<size_t>(sender) * size_ + receiver;
  }
  Status StartRingSend(Request* req, const MsgHeader& cts);
  Status AdvanceLmts();
  // Puts a ring transfer that waited for its turn on the ring into the active list.
  void Activate(Request* req) {
    req->state_ = Request::State::kLmt;
    lmt_active_.push_back(req);
  }
  Status RingFor(int src, int dst, bool pin, uint64_t token, RingPair** out);
  void Complete(Request* req, Status st);
  void CheckPeers();
  // Whether `rank` takes part in `context` (SetContextMembers; undeclared: every rank).
  bool ContextHas(int context, int rank) const;
  Request* NewRequest();
  bool RankValid(int rank, bool any_ok) const {
    return (rank >= 0 && rank < size_) || (any_ok && rank == kAnySource);
  }
  Status CheckRank(int rank, const char* role, bool any_ok) const;
  Status StartRequest(Request::Kind kind, const UserBuffer& buf, int peer, int tag, int context,
                      Request** out);
  void FreeRequest(Request* req);

  int rank_ = 0;
  int size_ = 1;
  const TransportConfig* config_ = nullptr;
  size_t eager_max_ = 0;
  bool cma_ok_ = true;  // cleared for good the first time process_vm_readv is refused
  bool cma_verified_ = false;  // one receiver-only copy worked: cooperative copies may start
  bool ipc_ok_ = true;  // cleared for good the first time CUDA IPC fails (logged once)
  std::unique_ptr<IpcCache> ipc_cache_;  // made on first use
  DeviceCopier gpu_copier_;              // set up on first use, on the current device
  bool gpu_copier_ok_ = true;            // cleared for good if it cannot be set up
  std::vector<bool> shares_gpu_;         // per rank: on this GPU, in another context (no MPS)
  std::unordered_set<Request*> waiting_puts_;  // receives whose buffer a sender is putting into
  bool in_progress_ = false;
  bool inject_ring_failure_ = false;  // InjectRingFailureForTest
  bool inject_ring_setup_failure_ = false;  // InjectRingSetupFailureForTest
  bool finalized_ = false;

  LocalJob job_;  // the job segment, the rank table, who is alive
  CmaSlot* cma_slots_ = nullptr;  // in the segment: one per ordered pair
  // Notify words, in the segment: kNotifySlots 32-bit words per rank. Rank r's slots are handed
  // out by r alone (notify_free_) to its device sends whose RTS offers a CUDA IPC pull. The
  // receiver's resident kernel stores the send's token there (after its copy and a system
  // fence); r polls its waiting sends' slots with acquire loads (PollNotifies), so the
  // receiver's reads of the send buffer are done before r reuses it. A slot goes back to the
  // free list only when the receiver answered (once: by token, or by FIN, also a failed copy's);
  // a send that failed otherwise (a dead peer) keeps its slot for good, so a late store cannot
  // complete another send (DropNotifySlot).
  static constexpr uint32_t kNotifySlots = 64;
  std::atomic<uint32_t>* notify_words_ = nullptr;
  size_t notify_bytes_ = 0;
  std::vector<uint32_t> notify_free_;    // our free slots
  std::vector<Request*> notify_waits_;   // our sends with a slot, until complete
  uint32_t notify_tokens_ = 0;           // last token handed out (0 is skipped)
  uint32_t* notify_dev_ = nullptr;       // the region as our GPU addresses it: set while pinned
  bool notify_ok_ = true;                // cleared for good if pinning fails
  // The fastboxes and cells, one range in the segment: pinned on first use by a GPU buffer.
  char* eager_mem_ = nullptr;
  size_t eager_bytes_ = 0;
  bool eager_pin_tried_ = false;
  bool eager_pinned_ = false;
  Stats stats_;
  std::vector<uint32_t> cma_gen_;  // receiver: last generation used per source
  CellQueues queues_;
  Fastboxes fastboxes_;  // invalid when MPIGPU_FASTBOX_SIZE=0
  // Fastboxes are opened per pair on first use (OpenFastbox). Sender: per destination, whether
  // ours is open (kBoxFailed: it cannot be, or there are no fastboxes); receiver: per source,
  // whether it told us it uses its box (kFlagBoxOn), and those sources, the only boxes polled.
  enum : uint8_t { kBoxOff = 0, kBoxOn = 1, kBoxFailed = 2 };
  std::vector<uint8_t> box_to_;
  std::vector<uint8_t> box_from_;  // bytes, not bits: read on every poll
  std::vector<int> box_sources_;
  // The fastboxes are pinned with the cells up to this size (62 ranks with 4 KiB slots);
  // beyond it pinning would fault in every pair's slots, also those of pairs that never talk.
  static constexpr size_t kPinnedFastboxBytes = size_t{64} << 20;
  std::vector<uint32_t> seq_out_;  // per destination: number of the next message sent
  std::vector<uint32_t> seq_in_;   // per source: number of the next message to handle
  std::vector<std::vector<Cell*>> held_;  // per source: cells that arrived ahead of their turn

  std::vector<std::deque<OutMsg>> pending_;  // per destination, FIFO
  size_t pending_count_ = 0;
  PostedQueue<Request> posted_;          // receives in posting order
  UnexpectedQueue<Unexpected> unexpected_;  // arrivals in arrival order (owned)
  std::vector<Request*> free_requests_;  // recycled
  std::unordered_set<Request*> waiting_sends_;  // RTS sent: the ids a CTS or FIN may name
  HostCopyEngine host_copier_;
  DefaultStreamOrder default_stream_;  // device sends wait for the program's default stream
  std::map<int, std::unique_ptr<CudaCopyEngine>> cuda_copiers_;  // per device, made on first use
  std::vector<std::deque<Request*>> lmt_wait_;  // receiver: matched RTS per source, FIFO
  std::vector<Request*> lmt_recv_active_;        // receiver: the ring transfer per source
  std::vector<Request*> lmt_recv_next_;          // receiver: a chained one with its CTS sent
  std::vector<Request*> lmt_send_active_;        // sender: the ring transfer per destination
  std::vector<std::deque<Request*>> lmt_send_queue_;  // sender: CTS'd, waiting for the active
  std::list<Request*> lmt_active_;              // both sides: pipelines to advance
  std::map<std::pair<int, int>, std::unique_ptr<RingPair>> rings_;
  std::vector<bool> peer_failed_;
  std::unordered_map<int, std::vector<bool>> context_members_;  // by context, by world rank
  std::vector<int> outstanding_;  // requests waiting on each peer (liveness checks)
  // The source a probe is looking for while Iprobe runs (kAnySource: every peer), watched by the
  // liveness check as a receive's would be.
  static constexpr int kNotProbing = -3;
  static_assert(kNotProbing < 0 && kNotProbing != kMatchAnySource, "neither a rank nor kAnySource");
  int probing_ = kNotProbing;
  Status drain_error_;  // an arrival the peer check took in was bad: Progress reports it
  double next_peer_check_ = 0;
  uint64_t progress_calls_ = 0;
};

}  // namespace mpigpu::transport
