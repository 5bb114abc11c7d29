// Engine: the transport of one process, the core above its back-ends (transport/core/backend.h).
// The API above reaches it only through Messenger (transport/core/messenger.h, made by
// CreateMessenger); the back-ends below through LmtHost and ChannelSink.
//
// What the core does, whatever carries the bytes: requests (a pool, handle reuse), MPI matching
// (posted and unexpected queues), the per-destination FIFO of messages that wait for room on
// their channel, the protocol choice, progress, peer liveness and finalize. What it does not:
// move bytes. Each peer has a Channel (its small messages, in order) and a list of LMT back-ends
// in order of preference (its large ones); the Assembly it is made with (transport/core/
// assembly.h; wiring/ holds this build's) builds them from the configuration (MPIGPU_CHANNEL,
// MPIGPU_LMT) and chooses the bootstrap of a job beyond this node.
//
// Bootstrap (transport/local_job.h): the job's ranks on this node meet in one shared segment;
// behind its rank table each back-end gets the areas it asked for (SegmentNeeds). Without a
// launcher (no MPIGPU_RANK) the process is a one-rank job.
//
// Protocols, chosen per message by its packed size:
//   - eager (size <= min(MPIGPU_EAGER_LIMIT, the channel's largest payload)): the payload travels
//     in one channel message. An unexpected eager message is copied out at once, so the channel
//     never waits for the application.
//   - rendezvous: RTS (size, location, address; maybe a back-end's offer, e.g. a CUDA IPC handle)
//     -> the receiver matches it -> the first back-end in the pair's list that takes it carries
//     the data and completes both sides with its own control messages.
// Every message from one sender travels through its channel in order, and messages that find no
// room wait in a per-destination FIFO, so MPI's non-overtaking order holds.
//
// Send cancellation (MPI_Cancel of a send, engine_cancel.cc): the receiver's engine takes the
// message back while no receive has matched it, and answers; the send completes on the answer.
//
// Progress: every call that waits or tests calls Progress(), which polls the channels (arrivals
// are matched or handed to their back-end), moves the waiting messages, advances the busy
// back-ends and, every few milliseconds, checks that the peers with outstanding work are alive
// (a dead peer fails those requests with kPeerFailed). A nested call returns at once.
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

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
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
#include "transport/core/assembly.h"
#include "transport/core/backend.h"
#include "transport/core/match.h"
#include "transport/core/messenger.h"
#include "transport/core/request.h"
#include "transport/core/wire.h"
#include "transport/local_job.h"
#include "transport/transport_config.h"

namespace mpigpu::transport {

// Messenger first: the API's calls need no this-adjusting thunk; then ChannelSink, whose Deliver
// runs for every arrival.
class Engine final : public Messenger, public ChannelSink, public LmtHost {
 public:
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Joins the job described by `job` (creating or attaching its segment) with the back-ends and
  // bootstrap `parts` makes, waiting up to MPIGPU_BOOTSTRAP_TIMEOUT for the other ranks.
  // wiring::StartEngine passes this build's.
  static Status Create(const JobInfo& job, const Assembly& parts, std::unique_ptr<Engine>* out);

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // Counters the back-ends and channels keep (LmtBackend::AddStats, Channel::AddStats).
  TransportStats stats() const;

  // The name of the back-end whose offer an RTS of a `bytes`-byte contiguous send from a buffer
  // at `loc` to `peer` would carry (it then goes by rendezvous whatever its size), or nullptr.
  const char* OfferingLmt(int peer, MemLoc loc, size_t bytes) const;
  // The names of the back-ends that may carry `peer`'s large messages, in order of preference,
  // and its channel's capabilities (tests pick what they exercise by them). peer: a rank.
  std::vector<std::string> LmtPath(int peer) const;
  const ChannelCaps& ChannelCapsFor(int peer) const override { return chan_[peer]->caps(); }
  // What this rank published for its peers to reach it (its channels' cards; "" for none).
  std::string Card() const;

  // Starts a send of buf's packed stream to `dst` (tag >= 0, context >= 0). The request is
  // done when the buffer may be reused.
  Status Isend(const UserBuffer& buf, int dst, int tag, int context, Request** out) override;
  // Isend and Issend: `sync` sends by rendezvous whatever the size.
  Status StartSend(const UserBuffer& buf, int dst, int tag, int context, bool sync, Request** out);
  // A blocking send's shortcut: a contiguous host message of at most the eager size goes out at
  // once when nothing waits before it to `dst` and its channel has room. Then it is sent and
  // done (the buffer may be reused) and no request exists; true. Otherwise nothing happens
  // (false) and the caller uses Isend, which also reports any bad argument.
  bool TrySendNow(const UserBuffer& buf, int dst, int tag, int context) override;
  // A blocking receive's shortcut, the mirror of TrySendNow: for a contiguous host buffer and one
  // source, when no posted receive or unexpected message could take the message first, it asks
  // src's channel up to `spins` times for src's next message (Channel::TryRecvEagerNow; no
  // Progress meanwhile). If that one is eager and matches, it is copied straight into buf and
  // consumed: true, with *info and *st (ok, or kTruncate as Wait would give). Otherwise nothing
  // was taken (false) and the caller uses Irecv, which also reports any bad argument.
  bool TryRecvNow(const UserBuffer& buf, int src, int tag, int context, int spins, MsgInfo* info,
                  Status* st) override;
  // Starts a receive into buf; src may be kAnySource, tag kAnyTag.
  Status Irecv(const UserBuffer& buf, int src, int tag, int context, Request** out) override;
  // Looks for a matching message that has arrived, without receiving it.
  Status Iprobe(int src, int tag, int context, bool* found, MsgInfo* info) override;
  Status Issend(const UserBuffer& buf, int dst, int tag, int context, Request** out) override;
  bool CancelRecv(Request* req) override;
  void CancelSend(Request* req) override;

  // Does all work possible now; returns an engine-level error (a broken segment), request
  // errors stay with their requests.
  Status Progress() override;
  // Progress until `req` is done or `timeout_s` passed (kTimeout); request errors are in req.
  Status Wait(Request* req, double timeout_s = -1);
  // Lets go of a request: deleted now if done, else when it completes.
  void Release(Request* req) override;
  void Idle() override;

  // Completes outstanding sends, waits (bounded) for every peer to finalize or die (on this node
  // through the segment, on others through the bootstrap's Depart/Departed), removes the shared
  // memory this process created. kPeerFailed names the ranks that died or left without
  // finalizing. The engine is unusable afterwards.
  Status Finalize() override;

  bool PeerAlive(int rank) override;
  // The ranks that take part in `context` (a communicator's): a rank's death fails the wildcard
  // (kAnySource) receives of the contexts it belongs to only. A context never declared counts
  // every rank as a member.
  void SetContextMembers(int context, const std::vector<int>& world_ranks) override;
  // Marks a peer as failed (tests, the API's fault handling): its requests fail.
  void FailPeer(int rank, const std::string& why);
  // Tests: arms the fault `what` in the back-end that knows it (LmtBackend::InjectFault), e.g.
  // "ring-copy", "ring-setup"; false when none does.
  bool InjectFault(const std::string& what);

  // LmtHost (for the back-ends).
  const TransportConfig& config() const override { return *config_; }
  const LocalJob& job() const override { return job_; }  // a NodeJob to the back-ends
  const Bootstrap& boot() const override { return *boot_; }
  Status CopierFor(MemLoc loc, CopyEngine** out) override;
  Status CopyPackedByEngine(PackDir dir, const UserBuffer& user, size_t offset, size_t n,
                            void* plain) override;
  // Here, to be inlined into every eager delivery.
  Status UnpackDelivered(int src, const UserBuffer& buf, size_t offset, size_t n,
                         const void* payload) override {
    if (n > 0 && buf.loc.is_device()) chan_[src]->PrepareDeviceCopy();
    return CopyPackedNow(PackDir::kUnpack, buf, offset, n, const_cast<void*>(payload));
  }
  void SendControl(int dst, MsgHeader h, const void* payload, size_t len) override;
  bool TrySendData(int dst, MsgHeader h, const Payload& p, Status* copy_error) override;
  bool ChannelLends(int dst, const void* p, size_t n) const override {
    return chan_[dst]->Lends(dst, p, n);
  }
  void SettleChannel(int dst) override { chan_[dst]->Settle(dst); }
  size_t ChannelPayloadMax(int peer) const override;
  void Complete(Request* req, Status st) override;
  Request* WaitingSend(uint64_t id) override;
  void FallBack(Request* req) override;
  void Busy(LmtBackend* b) override;
  // ChannelSink: a message arrived, in its pair's order.
  Status Deliver(const MsgHeader& h, const unsigned char* payload, size_t len) override;
  // ChannelSink: a control message's payload goes where its back-end says.
  PayloadPlace PlacePayload(const MsgHeader& h, size_t len) override;

 private:
  // A message waiting for room on its channel (a copy is kept only when it must wait).
  struct OutMsg {
    int dst = -1;
    MsgHeader hdr{};
    Request* req = nullptr;  // eager: packed at send time and completed; RTS: waits for answers
    Payload payload;  // eager: the user buffer's packed bytes; else inline_payload's (TrySend)
    size_t inline_len = 0;  // control message or RTS offer: bytes of `inline_payload`
    std::array<unsigned char, kCtlPayloadMax> inline_payload;  // not zeroed: written up to len
  };
  // An arrived message no receive matched yet (key: its envelope).
  struct Unexpected : MatchEntry {
    MsgHeader hdr{};
    uint64_t number = 0;  // arrived_from_[hdr.src] when it came
    std::vector<unsigned char> payload;  // eager data, or an RTS's offer
  };

  Engine() = default;
  Status StartUp(const JobInfo& job, const Assembly& parts);
  Status ExchangeCards();
  bool PeerFinalized(int rank);
  void LogPaths() const;

  // Sending side.
  Status SendOrQueue(OutMsg& msg);  // copied only when it must wait
  bool TrySend(OutMsg& msg);
  void FlushPending();
  OutMsg Eager(int dst, int tag, int context, const UserBuffer& buf) const;
  size_t EagerMax(int peer) const { return eager_max_[peer]; }
  // Receiving side.
  // Every process has at least one channel (Bootstrap). Here, to be inlined into Progress.
  Status PollArrivals() {
    Status st = channels_[0]->Poll(this);
    for (size_t i = 1; i < channels_.size() && st.ok(); ++i) st = channels_[i]->Poll(this);
    return st;
  }
  bool ArrivalsPending() const;
  void DeliverEager(Request* req, const MsgHeader& h, const void* payload);
  void StartRendezvousRecv(Request* req, const MsgHeader& h, const unsigned char* offer);
  // Asks the pair's back-ends after req->lmt_index_ to take the matched receive.
  void OfferToLmts(Request* req, const unsigned char* offer);
  Status ProgressBackends();
  // Send cancellation (engine_cancel.cc): a cancel's ask (receiver) or answer (sender) arrived;
  // a failed peer's cancels end.
  Status OnCoreControl(const MsgHeader& h);
  void EndCancels(int rank, const Status& why);
  void CheckPeers();
  void TakeArrivalsBeforeFailing();
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
  bool finalized_ = false;
  bool in_progress_ = false;

  LocalJob job_;  // the job segment, the rank table, who is alive
  Bootstrap* boot_ = nullptr;  // job_, or net_boot_ for a job that spans nodes or has PMIx's
  std::shared_ptr<Bootstrap> net_boot_;
  std::unique_ptr<BackendSet> backends_;  // every channel and LMT back-end this process runs
  // Per peer: its channel, its LMT back-ends in order of preference, its eager size.
  std::vector<Channel*> chan_;
  std::vector<const std::vector<LmtBackend*>*> lmt_path_;
  // Of lmt_path_, those that make offers for sends from [0] host, [1] device buffers.
  std::vector<std::array<const std::vector<LmtBackend*>*, 2>> offerers_;
  std::vector<Channel*> channels_;  // backends_'s channels (those of chan_), polled by progress
  std::vector<size_t> eager_max_;
  std::array<LmtBackend*, 256> by_wire_id_{};  // control messages find their back-end here
  std::vector<LmtBackend*> busy_;  // back-ends whose Progress has work

  std::vector<std::deque<OutMsg>> pending_;  // per destination, FIFO
  size_t pending_count_ = 0;
  PostedQueue<Request> posted_;          // receives in posting order
  UnexpectedQueue<Unexpected> unexpected_;  // arrivals in arrival order (owned)
  std::vector<Request*> free_requests_;  // recycled
  std::unordered_set<Request*> waiting_sends_;  // RTS sent: the ids an answer may name
  std::unordered_set<Request*> cancelling_;  // sends whose cancel awaits its answer (ids too)
  // Per peer, the messages (eager and RTS) handed to its channel / taken from it so far. A pair's
  // messages arrive in order, so both sides number each one alike: a cancel names its message by
  // that number (channels need not carry any id of ours; the shared-memory fastbox does not).
  std::vector<uint64_t> sent_to_, arrived_from_;
  HostCopyEngine host_copier_;
  DefaultStreamOrder default_stream_;  // device sends wait for the program's default stream
  std::map<int, std::unique_ptr<CudaCopyEngine>> cuda_copiers_;  // per device, made on first use
  std::vector<bool> peer_failed_;
  std::vector<EndedRank> ended_;  // the bootstrap's latest word on ranks that ended (CheckPeers)
  std::vector<double> ended_told_;  // when that word first named each rank (0: never)
  static constexpr double kEndedGrace = 1;  // s a connection has to close behind its messages
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
