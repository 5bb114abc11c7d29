// The ibverbs channel's data path (see ib_channel.h; connections: ib_connect.cc).
#include "internode/ib/ib_channel.h"

#include <errno.h>
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "internode/ib/ib_config.h"
#include "internode/ib/ib_conn.h"
#include "memcopy/log.h"

namespace mpigpu::internode {

using namespace ibconn;  // NOLINT: the channel's own wire constants
using transport::MsgHeader;
using transport::PeerState;

namespace {

class DropSink final : public transport::ChannelSink {
 public:
  Status Deliver(const MsgHeader&, const unsigned char*, size_t) override { return Status::Ok(); }
  transport::PayloadPlace PlacePayload(const MsgHeader&, size_t) override { return {}; }
};

}  // namespace

bool IbChannel::TrySend(int dst, MsgHeader* h, const transport::Payload& p, Status* copy_error) {
  Conn* c = Out(dst);
  if (c == nullptr) {  // first contact: dial; the message waits in the backlog meanwhile
    *copy_error = Dial(dst);
    if (!copy_error->ok()) return true;
    c = Out(dst);
  }
  if (c->st == Conn::St::kBroken) return true;  // the peer is lost: the liveness check fails it
  if (p.len > caps_.max_payload) {
    *copy_error = Status(Err::kInternal, "ibverbs channel: payload larger than a buffer");
    return true;
  }
  if (c->st == Conn::St::kUp && c->backlog.empty() && SendNow(c, *h, p, copy_error)) return true;
  // Not connected yet, or no credit: the message waits here, packed, in the pair's order (as a
  // socket's buffer would hold it), up to kMaxBacklog; Poll moves it.
  if (c->backlog_bytes >= kMaxBacklog) return false;
  std::vector<unsigned char> m(sizeof *h + p.len);
  std::memcpy(m.data(), h, sizeof *h);
  if (p.user != nullptr) {
    Status st = host_->CopyPackedNow(PackDir::kPack, *p.user, p.offset, p.len, m.data() + sizeof *h);
    if (!st.ok()) {
      *copy_error = std::move(st);
      return true;
    }
  } else if (p.len > 0) {
    std::memcpy(m.data() + sizeof *h, p.bytes, p.len);
  }
  c->backlog_bytes += m.size();
  c->backlog.push_back(std::move(m));
  ++backlogged_;
  return true;
}

void IbChannel::FlushBacklog(Conn* c) {
  while (!c->backlog.empty() && c->st == Conn::St::kUp) {
    std::vector<unsigned char>& m = c->backlog.front();
    MsgHeader h;
    std::memcpy(&h, m.data(), sizeof h);
    Status ignored;
    transport::Payload p;
    p.bytes = m.data() + sizeof h;
    p.len = m.size() - sizeof h;
    if (!SendNow(c, h, p, &ignored)) return;
    c->backlog_bytes -= m.size();
    c->backlog.pop_front();
  }
}

bool IbChannel::SendNow(Conn* c, const MsgHeader& h, const transport::Payload& p,
                        Status* copy_error) {
  // Acquire: the peer's count arrives by RDMA WRITE; what it says was freed is free. Its
  // messages to us carry the same count (piggy), often newer.
  const uint64_t consumed = std::max(__atomic_load_n(c->credit, __ATOMIC_ACQUIRE), c->piggy);
  if (c->sent - consumed >= c->window || c->sent - c->send_done >= c->nbufs ||
      c->sq_used >= c->sq_cap)
    return false;
  const uint32_t slot = static_cast<uint32_t>(c->sent % c->nbufs);
  char* b = c->bufs + slot * buf_size_;
  std::memcpy(b, &h, sizeof h);
  // Piggybacked credits: the header's reserved word carries how many of the peer's messages we
  // consumed on its connection to us, so that a pair that talks both ways needs no credit
  // WRITEs (Consumed sends one only when a quarter is unreported).
  // (No connection from it yet: it sent nothing, 0 is true.)
  Conn* in = In(c->peer);
  const uint64_t told = in != nullptr ? in->consumed : 0;
  const uint32_t word = static_cast<uint32_t>(told);
  std::memcpy(b + offsetof(MsgHeader, reserved), &word, sizeof word);
  if (p.user != nullptr) {
    Status st = host_->CopyPackedNow(PackDir::kPack, *p.user, p.offset, p.len,
                                     b + sizeof h);
    if (!st.ok()) {
      *copy_error = std::move(st);
      return true;
    }
  } else if (p.len > 0) {
    std::memcpy(b + sizeof h, p.bytes, p.len);
  }
  const uint32_t len = static_cast<uint32_t>(sizeof h + p.len);
  ibv_sge sge{reinterpret_cast<uint64_t>(b), len, c->mr->lkey};
  ibv_send_wr wr{}, *bad = nullptr;
  // Selective signaling: a completion every half of the slots (and for a goodbye, which Close
  // waits for) says every SEND before it is done too (RC completes a send queue in order); the
  // slots and the send queue are freed in batches, and rxe writes and we poll one CQE instead
  // of each. Unsignaled sends still fail loudly: a QP in error flushes them with their status.
  const bool signal = c->sent + 1 - c->signaled >= std::max<size_t>(1, c->nbufs / 2) ||
                      (h.flags & transport::kFlagChannel) || c->sq_used + 1 >= c->sq_cap;
  wr.wr_id = WrId(kSend, c->index, static_cast<uint32_t>(c->sent + 1));
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = (signal ? IBV_SEND_SIGNALED : 0) | (len <= c->max_inline ? IBV_SEND_INLINE : 0);
  if (const int rc = ibv_post_send(c->id->qp, &wr, &bad); rc != 0) {
    Break(c, std::string("ibv_post_send: ") + std::strerror(rc));
    return true;
  }
  ++c->sent;
  ++c->sq_used;
  if (signal) c->signaled = c->sent;
  if (in != nullptr && told > in->reported) in->reported = told;
  MPIGPU_TRACE("ibverbs: sent type %d op %d (%u bytes) to rank %d, %llu sent, %llu consumed",
               static_cast<int>(h.type), h.op, len, c->peer,
               static_cast<unsigned long long>(c->sent), static_cast<unsigned long long>(consumed));
  return true;
}

Status IbChannel::PostRead(int peer, void* laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey,
                           uint32_t len, uint64_t cookie, bool* posted) {
  *posted = false;
  Conn* c = peer >= 0 && peer < static_cast<int>(in_.size()) ? In(peer) : nullptr;
  if (c == nullptr || c->st == Conn::St::kBroken)
    return Status(Err::kPeerFailed, "ibverbs: no connection from rank " + std::to_string(peer));
  if (c->sq_used >= c->sq_cap - kCreditSlots - 1) return Status::Ok();  // room for credits, bye
  ibv_sge sge{reinterpret_cast<uint64_t>(laddr), len, lkey};
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = WrId(kRead, c->index, static_cast<uint32_t>(cookie));
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  if (const int rc = ibv_post_send(c->id->qp, &wr, &bad); rc != 0) {
    const std::string why = std::string("ibv_post_send (READ): ") + std::strerror(rc);
    Break(c, why);
    return Status(Err::kPeerFailed, "ibverbs: " + why);
  }
  ++c->sq_used;
  *posted = true;
  MPIGPU_TRACE("ibverbs: READ of %u bytes from rank %d posted", len, peer);
  return Status::Ok();
}

Status IbChannel::PostFin(int peer, uint32_t imm, bool* posted) {
  *posted = false;
  Conn* c = peer >= 0 && peer < static_cast<int>(in_.size()) ? In(peer) : nullptr;
  if (c == nullptr || c->st == Conn::St::kBroken)
    return Status(Err::kPeerFailed, "ibverbs: no connection from rank " + std::to_string(peer));
  if (c->sq_used >= c->sq_cap - kCreditSlots - 1) return Status::Ok();  // room for credits, bye
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = WrId(kFin, c->index, imm);
  wr.num_sge = 0;  // zero bytes (C9-88: no address or key needed)
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
  wr.imm_data = htonl(imm);
  if (const int rc = ibv_post_send(c->id->qp, &wr, &bad); rc != 0) {
    const std::string why = std::string("ibv_post_send (FIN): ") + std::strerror(rc);
    Break(c, why);
    return Status(Err::kPeerFailed, "ibverbs: " + why);
  }
  ++c->sq_used;
  *posted = true;
  return Status::Ok();
}

// A receive buffer of `c` was consumed and posted again: tell the sender every quarter.
Status IbChannel::Consumed(Conn* c, bool force) {
  const uint64_t step = force ? 1 : std::max<uint64_t>(1, credits_ / 4);
  if (c->st != Conn::St::kUp || c->consumed - c->reported < step ||
      c->credit_writes >= kCreditSlots || c->sq_used >= c->sq_cap)
    return Status::Ok();
  uint64_t* src = reinterpret_cast<uint64_t*>(c->extra() + 3 * kSmall) +
                  c->credit_slot++ % kCreditSlots;
  *src = c->consumed;
  ibv_sge sge{reinterpret_cast<uint64_t>(src), sizeof *src, c->mr->lkey};
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = WrId(kCredit, c->index, 0);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = c->credit_addr;
  wr.wr.rdma.rkey = c->credit_rkey;
  if (const int rc = ibv_post_send(c->id->qp, &wr, &bad); rc != 0) {
    Break(c, std::string("ibv_post_send (credits): ") + std::strerror(rc));
    return Status::Ok();
  }
  c->reported = c->consumed;
  ++c->credit_writes;
  ++c->sq_used;
  return Status::Ok();
}

Status IbChannel::OnCompletion(const ibv_wc& wc) {
  const Kind kind = static_cast<Kind>(wc.wr_id >> 56);
  const uint32_t index = static_cast<uint32_t>(wc.wr_id >> 32) & 0xffffff;
  const uint32_t cookie = static_cast<uint32_t>(wc.wr_id);
  if (index >= conns_.size()) return Status(Err::kInternal, "ibverbs: a completion for no connection");
  Conn* c = conns_[index].get();
  if (kind != kRecv && kind != kSend) --c->sq_used;  // a SEND's tells how many (below)
  if (wc.status != IBV_WC_SUCCESS) {
    const std::string why = dev_->api().ibv_wc_status_str(wc.status);
    if (kind == kRead && read_done_) read_done_(cookie, false, "rank " + std::to_string(c->peer) + ": " + why);
    if (kind == kBye) c->bye_done = true;
    Break(c, why);
    return Status::Ok();
  }
  switch (kind) {
    case kRecv: {
      char* b = c->outgoing ? c->extra() + kSmall * (1 + cookie) : c->bufs + cookie * buf_size_;
      if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
        if (!c->outgoing || !(wc.wc_flags & IBV_WC_WITH_IMM)) {
          Break(c, "a WRITE with immediate where none is expected");
          return Status::Ok();
        }
        // A FIN: its receive goes back at once (same slot), then the LMT hears of it.
        ibv_sge sge{reinterpret_cast<uint64_t>(b), static_cast<uint32_t>(kSmall), c->mr->lkey};
        ibv_recv_wr wr{}, *bad = nullptr;
        wr.wr_id = wc.wr_id;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        if (const int rc = ibv_post_recv(c->id->qp, &wr, &bad); rc != 0) {
          Break(c, std::string("ibv_post_recv (FIN): ") + std::strerror(rc));
          return Status::Ok();
        }
        if (fin_done_) fin_done_(c->peer, ntohl(wc.imm_data));
        return Status::Ok();
      }
      MsgHeader h;
      if (wc.byte_len < sizeof h) {
        Break(c, "a message shorter than its header");
        return Status::Ok();
      }
      std::memcpy(&h, b, sizeof h);
      h.src = c->peer;
      if (!c->outgoing) {
        // The peer's count of our messages it consumed (SendNow): it frees our connection's
        // credits. Only a count within a window behind what we sent can be new (we never have
        // more than a window out): older ones are stale, and a bad word cannot open the window.
        Conn* o = Out(c->peer);
        if (o != nullptr) {
          const uint64_t behind = static_cast<uint32_t>(static_cast<uint32_t>(o->sent) - h.reserved);
          if (behind <= std::min<uint64_t>(o->sent, o->window))
            o->piggy = std::max(o->piggy, o->sent - behind);
        }
      }
      h.reserved = 0;
      MPIGPU_TRACE("ibverbs: received type %d op %d (%u bytes) from rank %d", static_cast<int>(h.type),
                   h.op, wc.byte_len, c->peer);
      Status st;
      if (h.flags & transport::kFlagChannel) {
        if (h.op == kOpBye) c->bye = true;
      } else if (c->outgoing) {
        Break(c, "a message on the connection we opened");
        return Status::Ok();
      } else {
        transport::ChannelSink* sink = sink_;
        DropSink drop;
        st = (sink != nullptr ? sink : &drop)->Deliver(h, reinterpret_cast<unsigned char*>(b) + sizeof h,
                                                       wc.byte_len - sizeof h);
      }
      if (c->outgoing || c->st == Conn::St::kBroken) return st;
      // Its buffer goes back to the receive queue, then the sender hears of it.
      ibv_sge sge{reinterpret_cast<uint64_t>(b), static_cast<uint32_t>(buf_size_), c->mr->lkey};
      ibv_recv_wr wr{}, *bad = nullptr;
      wr.wr_id = wc.wr_id;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      if (const int rc = ibv_post_recv(c->id->qp, &wr, &bad); rc != 0) {
        Break(c, std::string("ibv_post_recv: ") + std::strerror(rc));
        return st;
      }
      ++c->consumed;
      st.KeepFirst(Consumed(c, false));
      return st;
    }
    case kSend: {
      // Its cookie is the low 32 bits of `sent` after it: that many SENDs are done.
      const uint32_t n = cookie - static_cast<uint32_t>(c->send_done);
      c->send_done += n;
      c->sq_used -= static_cast<int>(n);
      return Status::Ok();
    }
    case kBye:
      c->bye_done = true;
      if (c->outgoing) ++c->send_done;
      return Status::Ok();
    case kCredit:
      --c->credit_writes;
      return Consumed(c, false);
    case kRead:
      MPIGPU_TRACE("ibverbs: READ from rank %d done", c->peer);
      if (read_done_) read_done_(cookie, true, "");
      return Status::Ok();
    case kFin:
      return Status::Ok();
  }
  return Status(Err::kInternal, "ibverbs: a completion of an unknown kind");
}

Status IbChannel::Poll(transport::ChannelSink* sink) {
  sink_ = sink;
  // rdma_cm's events are a read(2) each time: looked at on every poll only while a connection
  // is being made, else every kCmEvery-th (a new peer's request waits that long).
  if (connecting_ > 0 || ++cm_skip_ >= kCmEvery) {
    MPIGPU_RETURN_IF_ERROR(CmEvents());
    AsyncEvents();
    // Now and then, every count not yet reported goes out, however small: a sender never waits
    // for the quarter that would make us report.
    for (Conn* c : in_)
      if (c != nullptr && c->consumed != c->reported) MPIGPU_RETURN_IF_ERROR(Consumed(c, true));
  }
  if (backlogged_ > 0) {
    backlogged_ = 0;
    for (Conn* c : out_)
      if (c != nullptr && !c->backlog.empty()) {
        FlushBacklog(c);
        backlogged_ += !c->backlog.empty();
      }
  }
  ibv_wc wc[32];
  more_ = false;
  Status st;
  for (int round = 0; round < 16 && st.ok(); ++round) {
    const int n = ibv_poll_cq(dev_->cq(), 32, wc);
    if (n < 0) return Status(Err::kSystem, "ibverbs: ibv_poll_cq failed");
    for (int i = 0; i < n; ++i) st.KeepFirst(OnCompletion(wc[i]));
    if (n < 32) return st;
  }
  more_ = true;
  return st;
}

PeerState IbChannel::Peer(int peer, bool probe) {
  if (peer < 0 || peer >= static_cast<int>(out_.size()) || peer == rank_) return PeerState::kAlive;
  Conn* i = In(peer);
  Conn* o = Out(peer);
  if ((i != nullptr && i->bye) || (o != nullptr && o->bye)) return PeerState::kFinalized;
  if ((i != nullptr && i->st == Conn::St::kBroken) || (o != nullptr && o->st == Conn::St::kBroken))
    return PeerState::kLost;
  if (probe && o == nullptr && !closing_ && !peers_.empty()) {
    if (!Dial(peer).ok()) return PeerState::kLost;
  }
  if (connecting_ > 0) (void)CmEvents();
  return PeerState::kAlive;
}

}  // namespace mpigpu::internode
