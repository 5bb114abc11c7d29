// The ibverbs netmod's channel: every small message to a peer on another node (or, with
// MPIGPU_SHM=0, on this one) as a SEND on a reliable-connected queue pair. Files: ib_connect.cc
// (connections), ib_channel.cc (messages), ib_conn.h (what both share).
//
// Connections (rdma_cm, librdmacm): each rank listens on its device's address (IbDevice) and an
// ephemeral port, and publishes "ib:a.b.c.d:port" as its card. A rank dials a peer on its first
// message to it and uses that QP for its messages to that peer; the peer's come on the QP the
// peer opens (as the TCP netmod: no connect race, two QPs per talking pair). The connect request's
// private data carries the dialer's rank, the job's secret (checked in constant time before the
// QP is accepted; strangers are rejected and logged) and where its credit word is; the accept's
// carries how many receive buffers it posted.
//
// Eager: per connection, MPIGPU_IB_CREDITS receive buffers of MPIGPU_IB_EAGER_SIZE + 64 bytes,
// registered once and pre-posted by the acceptor; the dialer holds as many registered send slots.
// A message (MsgHeader + payload) is packed into a free slot and posted as one SEND (inline up
// to the QP's inline size); one SEND in every half of the slots is signaled, and its completion
// frees the slots of those before it (selective signaling: fewer CQEs for rxe to write and us
// to poll). Credits: the receiver counts the buffers it consumed and re-posted; that count rides
// in the reserved word of every header it sends back on its own connection to the sender
// (piggybacked: a ping-pong needs nothing else), and whenever a quarter of the credits is
// unreported it RDMA-WRITEs the count into the sender's credit word, so credits never need a
// receive buffer of their own and cannot deadlock; the sender sends while sent - consumed <
// credits, consumed being the newer of the two.
// Why not an RDMA-write eager ring (MVAPICH's fast path): it saves the receive-queue work per
// message but needs a per-peer ring polled in memory (O(peers) polling per progress call), tail
// bookkeeping written back the same way, and careful ordering of a payload's last byte; with
// one CQ polled by the progress engine, SEND/RECV gives each pair's order, the length and the
// source in the completion, at the cost of one receive WQE per message. The ring can be added as
// a second channel later.
//
// Liveness: a connection that breaks (rdma_cm DISCONNECTED, REJECTED, UNREACHABLE, a failed
// completion) makes its peer kLost, unless the peer said goodbye first (a channel message sent
// by Close on every connection: kFinalized). A killed process's kernel tears its connections
// down, which the peer sees as DISCONNECTED. `probe` of a peer never talked to dials it.
// The device's asynchronous events are read with rdma_cm's (non-blocking): a QP's fatal error
// breaks its connection; a port that went down (PORT_ERR: its link is down, or the netdev under
// Soft-RoCE) and stays down MPIGPU_IB_PORT_DOWN_S breaks every connection, so a rank waiting on
// an idle connection (a sender waiting for its FIN) learns within seconds that nothing can come;
// PORT_ACTIVE before that forgives it; DEVICE_FATAL breaks every connection at once.
#pragma once

#include <netinet/in.h>

#include <memory>
#include <string>
#include <vector>

#include "internode/ib/ib_device.h"
#include "internode/ib/ib_links.h"
#include "memcopy/log_limit.h"
#include "transport/core/backend.h"
#include "transport/core/job_secret.h"

namespace mpigpu::internode {

class IbChannel final : public transport::Channel, public IbLinks {
 public:
  explicit IbChannel(std::unique_ptr<IbDevice> dev);
  ~IbChannel() override;

  const transport::ChannelCaps& caps() const override { return caps_; }
  transport::SegmentNeeds Needs(const TransportConfig&, int) const override { return {}; }
  Status Attach(transport::TransportHost* host, char* dense, char* sparse) override;
  bool TrySend(int dst, transport::MsgHeader* h, const transport::Payload& p,
               Status* copy_error) override;
  // Payloads are copied into registered send slots: nothing is lent (caps().lends is false).
  bool Lends(int, const void*, size_t) const override { return false; }
  void Settle(int) override {}
  void AddStats(transport::TransportStats*) const override {}
  bool TrySendEagerNow(int, int, int, const void*, size_t) override { return false; }
  bool TryRecvEagerNow(int, int, int, void*, size_t, int, transport::MsgInfo*) override {
    return false;
  }
  Status Poll(transport::ChannelSink* sink) override;
  bool Pending() const override { return more_; }
  void PrepareDeviceCopy() override {}
  Status Close() override;
  std::string Card() const override { return card_; }
  Status SetCards(const std::vector<std::string>& cards) override;
  transport::PeerState Peer(int peer, bool probe) override;

  // IbLinks
  const IbDevice& device() const override { return *dev_; }
  void SetReadDone(ReadDone done) override { read_done_ = std::move(done); }
  Status PostRead(int peer, void* laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey,
                  uint32_t len, uint64_t cookie, bool* posted) override;
  void SetFinDone(FinDone done) override { fin_done_ = std::move(done); }
  Status PostFin(int peer, uint32_t imm, bool* posted) override;

  // "ib:a.b.c.d:port" into an address; false for anything else.
  static bool ParseCard(const std::string& card, sockaddr_in* out);

  // A connect request's private data (at most 56 bytes for RC), and the accept's.
  static constexpr uint32_t kConnectMagic = 0x6d706962;  // "mpib"
  struct ConnectReq {
    uint32_t magic;  // kConnectMagic
    int32_t rank;
    unsigned char secret[transport::kJobSecretBytes];
    uint64_t credit_addr;  // where the acceptor writes its consumed count
    uint32_t credit_rkey;
    uint32_t credits;  // send slots the dialer has
  };
  struct AcceptRep {
    uint32_t magic;
    uint32_t credits;  // receive buffers posted
    uint32_t buf_size;
  };

 private:
  struct Conn;

  Status Listen();
  Status Dial(int dst);
  Status CmEvents();
  void AsyncEvents();
  void BreakAll(const std::string& why);
  Status OnCmEvent(rdma_cm_event* ev);
  Status OnConnectRequest(rdma_cm_event* ev, bool* acked);
  Status MakeQp(Conn* c);
  Status OnCompletion(const ibv_wc& wc);
  Status Consumed(Conn* c, bool force);
  void Break(Conn* c, const std::string& why);
  bool SendNow(Conn* c, const transport::MsgHeader& h, const transport::Payload& p,
               Status* copy_error);
  void FlushBacklog(Conn* c);
  void Destroy(Conn* c);
  Conn* Out(int peer) const { return out_[peer]; }
  Conn* In(int peer) const { return in_[peer]; }

  std::unique_ptr<IbDevice> dev_;
  transport::TransportHost* host_ = nullptr;
  transport::ChannelCaps caps_{};
  int rank_ = 0;
  std::string card_;
  std::vector<sockaddr_in> peers_;
  in_addr addr_{};  // ours
  rdma_event_channel* ec_ = nullptr;
  rdma_cm_id* listen_ = nullptr;
  std::vector<std::unique_ptr<Conn>> conns_;  // every connection made (index: wr_id's)
  std::vector<Conn*> out_, in_;               // per rank: ours to it, its to us (latest)
  char* credit_words_ = nullptr;              // per rank: the count its receiver writes
  ibv_mr* credit_mr_ = nullptr;
  size_t buf_size_ = 0;
  uint32_t credits_ = 0;
  bool more_ = false;       // the CQ may hold more than the last Poll took
  unsigned cm_skip_ = 0;    // polls since rdma_cm's events were last read
  bool async_ok_ = false;   // the device's async event fd is non-blocking (else not read)
  double port_down_since_ = -1;  // when PORT_ERR came (MonotonicSeconds), -1: port up
  int connecting_ = 0;      // connections not yet up or broken
  bool closing_ = false;
  // Refused connection requests are logged through it (a flood writes a few lines and a count).
  LogLimit refusals_log_{"ibverbs: connections refused"};
  int backlogged_ = 0;      // connections that may hold a backlog (a hint: Poll recounts)
  static constexpr size_t kMaxBacklog = size_t{8} << 20;
  transport::ChannelSink* sink_ = nullptr;  // the engine, once it polled
  ReadDone read_done_;
  FinDone fin_done_;
};

}  // namespace mpigpu::internode
