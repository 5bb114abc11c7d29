// The seam between the engine core and the ways bytes move (interface version kBackendVersion).
// One thread per process calls everything here (the engine's); nothing in it is shared between
// processes except what a back-end places in the job segment, documented in its own header.
//
// Two kinds of back-end, each a complete table of operations with its capabilities as data (the
// model: NCCL's ncclNet_t / ncclTransport with canConnect, UCX's uct_iface_ops_t with capability
// flags); the core never asks which one it holds:
//   - a Channel carries every small message of the pairs it serves (eager messages, RTS, the
//     back-ends' control messages) in each pair's order: shared-memory fastboxes and cells
//     (transport/shm), a stream socket (transport/sock);
//   - an LmtBackend carries the data of rendezvous messages: CUDA IPC, CMA, the shared ring
//     (transport/lmt), or frames on the channel itself (transport/lmt/chan_lmt).
// For each peer the engine holds one channel and a list of LMT back-ends in order of preference;
// a matched RTS asks each in turn whether it carries this message for this pair (StartRecv).
//
// Back-ends see the engine only through TransportHost / LmtHost below: never its queues, never
// another back-end. They read a request through its accessors and change it only through
// LmtHost (Carry, Offered, Complete, FallBack). A back-end's per-request state is its own LmtOp
// (core/request.h); its wire messages are MsgHeaders of type kCtl with its wire_id, their body
// and payload its own.
//
// Streams (a socket) move large data without extra copies through three operations (version 2):
// a payload a channel may send straight from the sender's memory and keep referencing until the
// socket took it (Payload::lend, Channel::Lends / Settle), and a frame's payload read straight
// into the place its owner names before the bytes are read (ChannelSink::PlacePayload, which the
// engine asks of the back-end named by a control message's wire id: LmtBackend::PlacePayload).
// Channels that copy every message into shared memory keep the stubs (lend ignored, nothing
// placed).
//
// To add a back-end: implement the table (a stub returns "not carried" or does nothing), give it
// a wire_id not taken in transport/core/wire_ids.h, its capabilities as flags and limits, and a
// row in wiring/backends.cc's table and a place in its preference lists.
// To add an operation (one-sided put, get, atomics next): a virtual in the table, its explicit
// "unsupported" stub in LmtBackendStubs / NodeChannelStubs (UCX's uct ops way: every back-end
// answers it), and a capability flag the engine asks before it calls the operation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "memcopy/status.h"
#include "pipeline/copy_engine.h"
#include "pipeline/layout.h"
#include "transport/core/bootstrap.h"
#include "transport/core/request.h"
#include "transport/core/node_job.h"
#include "transport/core/wire.h"

namespace mpigpu {
// The transport's settings (transport/transport_config.h): back-ends that read them include it.
struct TransportConfig;
}  // namespace mpigpu

namespace mpigpu::transport {

constexpr int kBackendVersion = 2;

// Bytes a component needs in the job segment: `dense` is touched at once by every rank (pinned
// areas, formatted headers); `sparse` gets memory only where a pair touches it.
struct SegmentNeeds {
  size_t dense = 0;
  size_t sparse = 0;
};

// The engine starts every area on a page and rounds its size up to whole pages (pinning and
// populating work in pages): a component's area is SegmentPages(what it asked for) bytes.
constexpr size_t kSegmentPage = 4096;
constexpr size_t SegmentPages(size_t bytes) {
  return (bytes + kSegmentPage - 1) / kSegmentPage * kSegmentPage;
}

// Counters the back-ends keep, summed by the engine (Engine::stats).
struct TransportStats {
  uint64_t sends_notified = 0;  // device sends completed by the receiver's kernel (no FIN)
  // Payload bytes of stream channels (Channel::AddStats): written, and of them copied into the
  // connection's buffer first (packed, or what the socket did not take of an unlent payload);
  // read, and of them read into the connection's buffer and copied from there (delivered from
  // it, or moved to the place PlacePayload named).
  uint64_t stream_bytes_sent = 0;
  uint64_t stream_bytes_sent_copied = 0;
  uint64_t stream_bytes_read = 0;
  uint64_t stream_bytes_read_copied = 0;
  // Connections to ranks a stream channel made (dialled and made, or accepted and admitted):
  // one per pair unless both dialled at once.
  uint64_t stream_connections = 0;
  // Peers whose messages to this rank came on the connection this rank sends to them on.
  uint64_t stream_shared_pairs = 0;
};

// What every back-end may ask of the engine.
class TransportHost {
 public:
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const TransportConfig& config() const = 0;
  // The job's ranks on this node (their pids and GPUs).
  virtual const NodeJob& job() const = 0;
  // What the rank learns from the whole job (its secret, the cards' exchange).
  virtual const Bootstrap& boot() const = 0;
  // Alive and not failed (this rank always is).
  virtual bool PeerAlive(int rank) = 0;
  // The copy engine for buffers at `loc` (host, or that device's streams), made on first use.
  virtual Status CopierFor(MemLoc loc, CopyEngine** out) = 0;
  // Copies packed bytes [offset, offset + n) of `user` to or from host memory `plain`; complete
  // on return. A contiguous host buffer (every small message's case) is one memcpy, inline here;
  // the rest goes to CopyPackedByEngine.
  Status CopyPackedNow(PackDir dir, const UserBuffer& user, size_t offset, size_t n, void* plain) {
    if (n == 0) return Status::Ok();
    if (!user.loc.is_host() || !user.layout.contiguous())
      return CopyPackedByEngine(dir, user, offset, n, plain);
    char* p = static_cast<char*>(user.ptr) + offset;
    if (dir == PackDir::kPack) std::memcpy(plain, p, n);
    else std::memcpy(p, plain, n);
    return Status::Ok();
  }
  // CopyPackedNow of a device or strided buffer (n > 0): through a copy engine.
  virtual Status CopyPackedByEngine(PackDir dir, const UserBuffer& user, size_t offset, size_t n,
                                    void* plain) = 0;

 protected:
  ~TransportHost() = default;
};

// Where a message's payload comes from: packed bytes [offset, offset + len) of a user buffer,
// or plain host bytes.
struct Payload {
  const UserBuffer* user = nullptr;
  size_t offset = 0;
  const void* bytes = nullptr;
  size_t len = 0;
  // The payload's memory (host bytes, or a contiguous host user buffer) outlives the send: a
  // channel with caps().lends may write it from there after TrySend returned, until
  // Channel::Lends no longer names it (or Settle). Others copy it as always.
  bool lend = false;
};

// Where the payload of an arriving frame goes (ChannelSink::PlacePayload).
struct PayloadPlace {
  unsigned char* at = nullptr;  // host memory for the whole payload; null: the channel's own
  bool later = false;           // no room yet: stop reading this connection until the next Poll
};

// A peer as the connections of a channel that reaches other nodes show it.
enum class PeerState {
  kAlive,      // nothing says otherwise
  kFinalized,  // it said goodbye (finalize) and closed
  kLost,       // its connection broke, was refused, or closed without a goodbye
};

// A channel's capabilities: named flags (UCX's UCT_IFACE_FLAG_* way) and limits.
struct ChannelCaps {
  enum Flag : uint32_t {
    kFastPaths = 1u << 0,  // TrySendEagerNow / TryRecvEagerNow can succeed
    kSameNode = 1u << 1,   // reaches only ranks on this node
    kLends = 1u << 2,      // writes lent payloads from the sender's memory (Payload::lend)
    kPlaces = 1u << 3,     // reads payloads where the sink places them (ChannelSink::PlacePayload)
  };
  const char* name;
  uint32_t flags;      // Flag bits
  size_t max_payload;  // limit: largest payload of one message (bounds the eager size)

  constexpr bool has(Flag f) const { return (flags & f) != 0; }
};

// Where a channel delivers what arrives: the engine.
class ChannelSink {
 public:
  // `len`: the payload's bytes (the channel checked that they are in its memory, or in the place
  // PlacePayload named, which is then `payload`).
  virtual Status Deliver(const MsgHeader& h, const unsigned char* payload, size_t len) = 0;
  // Channels with caps().places ask this before reading the `len` payload bytes of a message
  // whose header `h` (src set) arrived: {at}: read them to `at`, then Deliver(h, at, len);
  // {later}: not now (the connection waits, the pair's order holds); {}: Deliver from the
  // channel's memory as usual. Asked again before every further read into `at`: an answer of
  // {} then means the place is gone (its request failed): the channel drops the rest of the
  // payload and does not deliver it, so that nothing is written to memory no longer owned.
  virtual PayloadPlace PlacePayload(const MsgHeader& h, size_t len) = 0;

 protected:
  ~ChannelSink() = default;
};

class Channel {
 public:
  virtual ~Channel() = default;
  virtual const ChannelCaps& caps() const = 0;
  // Its areas in the job segment, from the job's settings (the same in every rank).
  virtual SegmentNeeds Needs(const TransportConfig& c, int nranks) const = 0;
  // The job segment exists (`dense`, `sparse`: this channel's areas); before the ranks join.
  virtual Status Attach(TransportHost* host, char* dense, char* sparse) = 0;
  // Sends `h` (its order fields are the channel's to set) with payload `p` if there is room now:
  // true when sent, or when packing the payload failed or the peer's connection is lost
  // (*copy_error; nothing sent); false when there is no room (nothing done: the caller retries
  // later, keeping the pair's order). With p.lend (and caps().lends) "sent" may mean "taken by
  // reference": see Lends.
  virtual bool TrySend(int dst, MsgHeader* h, const Payload& p, Status* copy_error) = 0;
  // Whether the channel still reads lent payload memory in [p, p + n) for `dst` (then its
  // owner keeps it). At most one lent payload per destination is held at a time.
  virtual bool Lends(int dst, const void* p, size_t n) const = 0;
  // The lent memory held for `dst` is copied into the channel's own (its owner is going away).
  virtual void Settle(int dst) = 0;
  // Adds its counters (TransportStats's stream_* for a stream channel).
  virtual void AddStats(TransportStats* stats) const = 0;
  // Fast paths of blocking calls (caps().fast_paths; a stub refuses): an eager message of host
  // bytes sent at once, true when sent ...
  virtual bool TrySendEagerNow(int dst, int tag, int context, const void* data, size_t n) = 0;
  // ... and a look, up to `spins` times, at src's next message where it can be taken without a
  // poll: when it is the pair's next one, an eager one of `context` and `tag` (or kAnyTag), and
  // nothing else from src waits before it, what fits of its payload is copied to host memory
  // `data` (`capacity` bytes) and it is consumed: true, with *info its envelope and size. False,
  // nothing taken, when none came, or another or something else arrived meanwhile (the full path
  // decides then). One call per message: the shortcut of every blocking receive.
  virtual bool TryRecvEagerNow(int src, int tag, int context, void* data, size_t capacity,
                               int spins, MsgInfo* info) = 0;
  // Delivers what has arrived, each pair's messages in order, and moves what waits to go out.
  virtual Status Poll(ChannelSink* sink) = 0;
  // Something arrived that Poll has not delivered yet.
  virtual bool Pending() const = 0;
  // A device buffer is about to be copied into or out of a delivered payload (pin the memory).
  virtual void PrepareDeviceCopy() = 0;
  // Finalize: release what the channel holds.
  virtual Status Close() = 0;
  // The card peers need to reach this rank (an address), "" when it needs none; asked after
  // Attach. When any channel has one, the engine exchanges cards (Bootstrap::Allgather) after
  // the ranks joined and gives every rank's to SetCards, in rank order.
  virtual std::string Card() const = 0;
  virtual Status SetCards(const std::vector<std::string>& cards) = 0;
  // How `peer` looks from this channel's connections. The engine asks it for peers on other
  // nodes (caps().same_node false); their rank table answers for the node's own. `probe`: dial a
  // peer never talked to, so that a refusal (a dead process) shows.
  virtual PeerState Peer(int peer, bool probe) = 0;
};

// The explicit stubs of a channel that reaches the ranks of its node only (and copies every
// payload: nothing lent).
class NodeChannelStubs : public Channel {
 public:
  bool Lends(int, const void*, size_t) const override { return false; }
  void Settle(int) override {}
  void AddStats(TransportStats*) const override {}
  std::string Card() const override { return {}; }
  Status SetCards(const std::vector<std::string>&) override { return Status::Ok(); }
  PeerState Peer(int, bool) override { return PeerState::kAlive; }
};

// An LMT back-end's capabilities: named flags and limits.
struct LmtCaps {
  enum Flag : uint32_t {
    kSameNode = 1u << 0,       // needs the peer on this node (shared memory, its pid, its GPU)
    kSingleCopy = 1u << 1,     // the bytes move once, buffer to buffer
    kNeedsCts = 1u << 2,       // the receiver answers the RTS before data moves
    kDeviceBuffers = 1u << 3,  // carries GPU buffers
    kStrided = 1u << 4,        // carries non-contiguous layouts
    kOffersHost = 1u << 5,     // may attach an offer to the RTS of a send from host memory ...
    kOffersDevice = 1u << 6,   // ... from device memory (Offer): asked for every such send
    kUniversal = 1u << 7,      // StartRecv takes every message (a pair's list must end with one)
  };
  const char* name;
  uint8_t wire_id;   // its messages' MsgHeader::lmt (core/wire_ids.h)
  uint32_t flags;    // Flag bits
  int max_inflight;  // limit: transfers per ordered pair at a time (0: no limit)

  constexpr bool has(Flag f) const { return (flags & f) != 0; }
};

class LmtBackend;

// What an LMT back-end may ask of the engine beyond TransportHost.
class LmtHost : public TransportHost {
 public:
  // Sends a control message (h.type kCtl, h.lmt the back-end) with `len` bytes of payload (at
  // most kCtlPayloadMax, copied) after what waits for `dst`.
  virtual void SendControl(int dst, MsgHeader h, const void* payload, size_t len) = 0;
  // Sends a control message whose payload is `p` (packed bytes of a user buffer, or host bytes),
  // now, if nothing waits for `dst` and the channel has room: true when sent or the packing
  // failed (*copy_error); false: nothing done, try later. p.lend: see Payload and ChannelLends.
  virtual bool TrySendData(int dst, MsgHeader h, const Payload& p, Status* copy_error) = 0;
  // The channel to `dst` still reads lent memory in [p, p + n) (Channel::Lends); Settle: it
  // copies what it holds lent for `dst` (Channel::Settle).
  virtual bool ChannelLends(int dst, const void* p, size_t n) const = 0;
  virtual void SettleChannel(int dst) = 0;
  // Unpacks `n` bytes of a payload the channel from `src` delivered into packed offset `offset`
  // of `buf` (the channel's memory is prepared for device copies first); complete on return.
  virtual Status UnpackDelivered(int src, const UserBuffer& buf, size_t offset, size_t n,
                                 const void* payload) = 0;
  // The largest payload the channel to `peer` carries, and that channel's capabilities.
  virtual size_t ChannelPayloadMax(int peer) const = 0;
  virtual const ChannelCaps& ChannelCapsFor(int peer) const = 0;
  // The one narrow call that ends a request the back-end carries or offered for (its status;
  // the engine then calls Finished on the back-ends that hold state for it).
  virtual void Complete(Request* req, Status st) = 0;
  // A back-end claims a request, the only writes it makes to one: it carries `req`'s data from
  // now on, with its state `op` (null: none; StartRecv of a receive, or a send the answer to its
  // RTS hands to it) ...
  void Carry(Request* req, LmtBackend* b, std::unique_ptr<LmtOp> op) {
    req->state_ = Request::State::kLmt;
    req->lmt_ = b;
    req->op_ = std::move(op);
  }
  // ... or its offer rides on a send's RTS, with its state `op` (Offer).
  void Offered(Request* req, LmtBackend* b, std::unique_ptr<LmtOp> op) {
    req->offer_lmt_ = b;
    req->offer_op_ = std::move(op);
  }
  // In LmtBackend::Finished: the back-end takes its state back, to reuse it (LmtOpPool::Give).
  std::unique_ptr<LmtOp> TakeOp(Request* req) { return std::move(req->op_); }
  std::unique_ptr<LmtOp> TakeOfferOp(Request* req) { return std::move(req->offer_op_); }
  // Our send named by `id` (an RTS's sreq) while it waits for an answer (kWaitCts), else null:
  // a stale or forged id is never trusted.
  virtual Request* WaitingSend(uint64_t id) = 0;
  // The receive `req`, which `from` took in StartRecv, goes to the next back-end in the pair's
  // list after all.
  virtual void FallBack(Request* req) = 0;
  // `b` has work: the engine calls its Progress until it returns idle.
  virtual void Busy(LmtBackend* b) = 0;
};

class LmtBackend {
 public:
  virtual ~LmtBackend() = default;
  virtual const LmtCaps& caps() const = 0;
  virtual SegmentNeeds Needs(const TransportConfig& c, int nranks) const = 0;
  // The job segment exists; before the ranks join.
  virtual Status Attach(LmtHost* host, char* dense, char* sparse) = 0;
  // Every rank has joined: the rank table (pids, GPUs) is complete.
  virtual void Joined() = 0;
  // Sender: whether a contiguous send of `bytes` from `loc` to `peer` would get an offer (Offer).
  virtual bool Offers(int peer, MemLoc loc, size_t bytes) const = 0;
  // Sender: whether `req` goes by rendezvous even when small, with an offer for this back-end as
  // the RTS's payload (written to `offer`, kCtlPayloadMax bytes; returns its length, 0: none).
  virtual size_t Offer(Request* req, unsigned char* offer) = 0;
  // Receiver: takes the matched rendezvous receive `req` (req->rts()) if it can carry it for this
  // pair (true, after LmtHost::Carry: it is the back-end's until it completes it or calls
  // FallBack), else false and nothing changed. `offer`: the RTS's payload when the sender offered it to this back-end.
  virtual bool StartRecv(Request* req, const unsigned char* offer) = 0;
  // Where the payload of one of its control messages that is arriving goes (asked by channels
  // with caps().places, through ChannelSink::PlacePayload, with its contract): a rendezvous
  // data frame straight into the receive buffer or a staging chunk.
  virtual PayloadPlace PlacePayload(const MsgHeader& h, size_t len) = 0;
  // One of this back-end's control messages arrived (checked: h.lmt is ours).
  virtual Status OnControl(const MsgHeader& h, const unsigned char* payload, size_t len) = 0;
  // Advances its transfers; *busy: whether it still has work.
  virtual Status Progress(bool* busy) = 0;
  // `req`, for which it holds state (it is req->carrier() or req->offerer()), completed, for
  // whatever reason (its own Complete, a dead peer, finalize): forget it. Called once per request
  // even when the back-end is both offerer and carrier; req->op<T>() / offer_op<T>() are still
  // there.
  virtual void Finished(Request* req) = 0;
  // `rank` died: fail what depends on it (with `why`).
  virtual void FailPeer(int rank, const Status& why) = 0;
  // Housekeeping on the engine's peer-check cadence (every ~20 ms while progress runs), busy or
  // not: health checks of what the back-end runs on its own (the resident copy kernel).
  virtual void Tick() = 0;
  // The program leaves the library for a while (a blocking collective ended; it will likely
  // synchronise its GPU next): let go of what that synchronisation would wait for, without
  // waiting (the resident copy kernel leaves once idle instead of after its idle time).
  virtual void Idle() = 0;
  // Finalize waits while this is true: copies a peer's send is waiting for.
  virtual bool Serving() const = 0;
  // Finalize: release what it holds (pins, mappings, kernels).
  virtual Status Close() = 0;
  virtual void AddStats(TransportStats* stats) const = 0;
  // Tests: arms a fault this back-end knows by name (true), else false.
  virtual bool InjectFault(const std::string& what) = 0;

  bool listed_busy = false;  // the engine's: in its busy list
};

// The explicit stubs of the operations a back-end may not need (UCX's way): no segment area,
// nothing to do once joined, no offers, nothing a peer waits for at finalize, nothing to release,
// no counters, no faults to inject. A back-end derives from this and overrides what it does.
class LmtBackendStubs : public LmtBackend {
 public:
  SegmentNeeds Needs(const TransportConfig&, int) const override { return {}; }
  void Joined() override {}
  bool Offers(int, MemLoc, size_t) const override { return false; }
  size_t Offer(Request*, unsigned char*) override { return 0; }
  PayloadPlace PlacePayload(const MsgHeader&, size_t) override { return {}; }
  void Tick() override {}
  void Idle() override {}
  bool Serving() const override { return false; }
  Status Close() override { return Status::Ok(); }
  void AddStats(TransportStats*) const override {}
  bool InjectFault(const std::string&) override { return false; }
};

// A back-end's control message to be filled: its wire id, its message `op`, the send it answers.
inline MsgHeader ControlHeader(uint8_t wire_id, uint8_t op, uint64_t sreq = 0, uint8_t flags = 0) {
  MsgHeader h{};
  h.type = MsgType::kCtl;
  h.lmt = wire_id;
  h.op = op;
  h.flags = flags;
  h.sreq = sreq;
  return h;
}

}  // namespace mpigpu::transport
