// The ibverbs channel's connections (see ib_channel.h): the rdma_cm listener and dials, queue
// pairs and their buffers, admission by the job's secret, breaks (completion errors, port and QP
// events), goodbyes and close. Messages move in ib_channel.cc.
#include "internode/ib/ib_channel.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "internode/ib/ib_config.h"
#include "internode/ib/ib_conn.h"
#include "internode/net_config.h"
#include "internode/tcp/tcp_channel.h"
#include "memcopy/clock.h"
#include "memcopy/log.h"
#include "transport/core/job_secret.h"

namespace mpigpu::internode {

using namespace ibconn;  // NOLINT: the channel's own wire constants
using transport::MsgHeader;
using transport::PeerState;

static_assert(sizeof(IbChannel::ConnectReq) <= 56, "fits an RC connect request's private data");

namespace {

// What both ends of a connection ask of rdma_cm: `data` as the private data (the request, the
// answer), as many outstanding RDMA READs as the device allows each way, and the retries.
rdma_conn_param ConnParam(const IbDevice& dev, const void* data, size_t len) {
  rdma_conn_param p{};
  p.private_data = data;
  p.private_data_len = static_cast<uint8_t>(len);
  p.responder_resources = static_cast<uint8_t>(dev.rd_atom());
  p.initiator_depth = static_cast<uint8_t>(dev.rd_atom());
  p.retry_count = 7;
  p.rnr_retry_count = 7;
  return p;
}

}  // namespace

IbChannel::IbChannel(std::unique_ptr<IbDevice> dev) : dev_(std::move(dev)) {}

IbChannel::~IbChannel() {
  if (!conns_.empty() || listen_ != nullptr || ec_ != nullptr) (void)Close();
}

bool IbChannel::ParseCard(const std::string& card, sockaddr_in* out) {
  if (card.compare(0, 3, "ib:") != 0) return false;
  const std::string rest = card.substr(3);
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= rest.size()) return false;
  std::memset(out, 0, sizeof *out);
  out->sin_family = AF_INET;
  if (::inet_pton(AF_INET, rest.substr(0, colon).c_str(), &out->sin_addr) != 1) return false;
  char* end = nullptr;
  const long port = std::strtol(rest.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 1 || port > 65535) return false;
  out->sin_port = htons(static_cast<uint16_t>(port));
  return true;
}

Status IbChannel::Attach(transport::TransportHost* host, char*, char*) {
  host_ = host;
  rank_ = host->rank();
  const IbConfig& c = GetIbConfig();
  buf_size_ = c.eager_size + sizeof(MsgHeader);
  credits_ = static_cast<uint32_t>(c.credits);
  caps_ = transport::ChannelCaps{"ibverbs", 0, buf_size_ - sizeof(MsgHeader)};
  out_.assign(host->size(), nullptr);
  in_.assign(host->size(), nullptr);
  const size_t words = (static_cast<size_t>(host->size()) * 64 + 4095) / 4096 * 4096;
  credit_words_ = static_cast<char*>(std::aligned_alloc(4096, words));
  if (credit_words_ == nullptr) return Status(Err::kNoMemory, "ibverbs: credit words");
  std::memset(credit_words_, 0, words);
  MPIGPU_RETURN_IF_ERROR(dev_->Register(credit_words_, words, &credit_mr_));
  // The device's asynchronous events (port down, QP errors) are read in Poll, never waited for.
  const int afd = dev_->ctx()->async_fd;
  const int afl = ::fcntl(afd, F_GETFL);
  async_ok_ = afl >= 0 && ::fcntl(afd, F_SETFL, afl | O_NONBLOCK) == 0;
  if (!async_ok_) MPIGPU_WARN("ibverbs: the device's event fd cannot be made non-blocking: "
                              "port and QP errors are seen only through the connections");
  return Listen();
}

Status IbChannel::Listen() {
  const VerbsApi& v = dev_->api();
  ec_ = v.rdma_create_event_channel();
  if (ec_ == nullptr) return SysError("ibverbs: rdma_create_event_channel");
  const int fl = ::fcntl(ec_->fd, F_GETFL);
  if (fl < 0 || ::fcntl(ec_->fd, F_SETFL, fl | O_NONBLOCK) != 0) return SysError("ibverbs: fcntl");
  if (v.rdma_create_id(ec_, &listen_, nullptr, RDMA_PS_TCP) != 0)
    return SysError("ibverbs: rdma_create_id");
  // The device's address (its RoCE v2 GID's, or MPIGPU_NET_IF's), else the bootstrap's.
  if (!dev_->has_addr())
    MPIGPU_RETURN_IF_ERROR(transport::TcpChannel::ListenAddress("", host_->boot().LocalAddress(), &addr_));
  else
    addr_ = dev_->addr();
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr = addr_;
  char text[INET_ADDRSTRLEN] = "?";
  ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  if (v.rdma_bind_addr(listen_, reinterpret_cast<sockaddr*>(&a)) != 0)
    return Status(Err::kSystem, std::string("ibverbs: rdma_cm cannot bind ") + text + " (" +
                                    std::strerror(errno) +
                                    "): set MPIGPU_NET_IF to the RDMA device's IP address");
  if (v.rdma_listen(listen_, 512) != 0) return SysError("ibverbs: rdma_listen");
  card_ = std::string("ib:") + text + ":" + std::to_string(ntohs(v.rdma_get_src_port(listen_)));
  return Status::Ok();
}

Status IbChannel::SetCards(const std::vector<std::string>& cards) {
  peers_.assign(cards.size(), sockaddr_in{});
  for (size_t r = 0; r < cards.size(); ++r)
    if (!ParseCard(cards[r], &peers_[r]))
      return Status(Err::kInvalidArg, "ibverbs: rank " + std::to_string(r) + " published '" +
                                          cards[r] +
                                          "', not an ibverbs address (every rank must use the "
                                          "same MPIGPU_NETMOD)");
  if (host_->boot().secret().size() != transport::kJobSecretBytes)
    return Status(Err::kInvalidArg, "ibverbs: the job has no secret to admit connections with");
  return Status::Ok();
}

Status IbChannel::Dial(int dst) {
  if (dst < 0 || static_cast<size_t>(dst) >= peers_.size())
    return Status(Err::kInternal, "ibverbs: no address for rank " + std::to_string(dst));
  auto c = std::make_unique<Conn>();
  c->index = static_cast<uint32_t>(conns_.size());
  c->peer = dst;
  c->outgoing = true;
  out_[dst] = c.get();
  const VerbsApi& v = dev_->api();
  Conn* raw = c.get();
  conns_.push_back(std::move(c));
  ++connecting_;
  if (v.rdma_create_id(ec_, &raw->id, raw, RDMA_PS_TCP) != 0) {
    raw->id = nullptr;
    Break(raw, std::string("rdma_create_id: ") + std::strerror(errno));
    return Status::Ok();
  }
  sockaddr_in src{};
  src.sin_family = AF_INET;
  src.sin_addr = addr_;
  if (v.rdma_resolve_addr(raw->id, reinterpret_cast<sockaddr*>(&src),
                          reinterpret_cast<sockaddr*>(&peers_[dst]), kCmTimeoutMs) != 0)
    Break(raw, std::string("rdma_resolve_addr: ") + std::strerror(errno));
  return Status::Ok();
}

Status IbChannel::MakeQp(Conn* c) {
  const VerbsApi& v = dev_->api();
  c->nbufs = c->outgoing ? credits_ : credits_;
  ibv_qp_init_attr a{};
  a.send_cq = a.recv_cq = dev_->cq();
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = c->outgoing ? credits_ + 4 : kCreditSlots + 3 + 2 * dev_->rd_atom();
  a.cap.max_recv_wr = c->outgoing ? 2 + kFinSlots : credits_;
  a.cap.max_send_sge = a.cap.max_recv_sge = 1;
  a.cap.max_inline_data = 128;
  if (v.rdma_create_qp(c->id, dev_->pd(), &a) != 0) {
    a.cap.max_inline_data = 0;
    if (v.rdma_create_qp(c->id, dev_->pd(), &a) != 0) return SysError("ibverbs: rdma_create_qp");
  }
  c->max_inline = a.cap.max_inline_data;
  c->sq_cap = static_cast<int>(a.cap.max_send_wr);
  c->extra_at = c->nbufs * buf_size_;
  const size_t bytes = (c->extra_at + kExtra + 4095) / 4096 * 4096;
  c->bufs = static_cast<char*>(std::aligned_alloc(4096, bytes));
  if (c->bufs == nullptr) return Status(Err::kNoMemory, "ibverbs: connection buffers");
  std::memset(c->bufs + c->extra_at, 0, kExtra);
  MPIGPU_RETURN_IF_ERROR(dev_->Register(c->bufs, bytes, &c->mr));
  // Receives: every buffer of an incoming connection; on an outgoing one, room for the goodbye
  // and for kFinSlots FINs (zero-byte WRITEs with immediate: they write nothing, so their
  // receives share the two goodbye slots; a receive queue is consumed in order, whatever comes).
  const uint32_t nrecv = c->outgoing ? 2 + kFinSlots : credits_;
  for (uint32_t i = 0; i < nrecv; ++i) {
    const uint32_t slot = c->outgoing ? i % 2 : i;
    char* at = c->outgoing ? c->extra() + kSmall * (1 + slot) : c->bufs + slot * buf_size_;
    ibv_sge sge{reinterpret_cast<uint64_t>(at),
                static_cast<uint32_t>(c->outgoing ? kSmall : buf_size_), c->mr->lkey};
    ibv_recv_wr wr{}, *bad = nullptr;
    wr.wr_id = WrId(kRecv, c->index, slot);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (const int rc = ibv_post_recv(c->id->qp, &wr, &bad); rc != 0)
      return SysError("ibverbs: ibv_post_recv", rc);
  }
  return Status::Ok();
}

Status IbChannel::CmEvents() {
  const VerbsApi& v = dev_->api();
  cm_skip_ = 0;
  for (int i = 0; i < 64; ++i) {
    rdma_cm_event* ev = nullptr;
    if (v.rdma_get_cm_event(ec_, &ev) != 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();
      return SysError("ibverbs: rdma_get_cm_event");
    }
    MPIGPU_TRACE("ibverbs: rdma_cm %s (status %d)", v.rdma_event_str(ev->event), ev->status);
    bool acked = false;
    Status st = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ? OnConnectRequest(ev, &acked)
                                                          : OnCmEvent(ev);
    if (!acked) v.rdma_ack_cm_event(ev);
    MPIGPU_RETURN_IF_ERROR(st);
  }
  return Status::Ok();
}

Status IbChannel::OnCmEvent(rdma_cm_event* ev) {
  const VerbsApi& v = dev_->api();
  Conn* c = static_cast<Conn*>(ev->id->context);
  if (c == nullptr || c->st == Conn::St::kBroken) return Status::Ok();
  switch (ev->event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      if (v.rdma_resolve_route(c->id, kCmTimeoutMs) != 0)
        Break(c, std::string("rdma_resolve_route: ") + std::strerror(errno));
      break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
      if (c->id->verbs != dev_->ctx()) {
        Break(c, "the route goes through another RDMA device than " + dev_->name());
        break;
      }
      Status st = MakeQp(c);
      if (!st.ok()) {
        Break(c, st.ToString());
        break;
      }
      ConnectReq req{};
      req.magic = kMagic;
      req.rank = rank_;
      std::memcpy(req.secret, host_->boot().secret().data(), sizeof req.secret);
      req.credit_addr = reinterpret_cast<uint64_t>(credit_words_ + 64 * c->peer);
      req.credit_rkey = credit_mr_->rkey;
      req.credits = credits_;
      // A stale count from an earlier connection to this peer must not grant credits.
      std::memset(credit_words_ + 64 * c->peer, 0, 8);
      c->credit = reinterpret_cast<const uint64_t*>(credit_words_ + 64 * c->peer);
      rdma_conn_param p = ConnParam(*dev_, &req, sizeof req);
      c->st = Conn::St::kConnecting;
      if (v.rdma_connect(c->id, &p) != 0) Break(c, std::string("rdma_connect: ") + std::strerror(errno));
      break;
    }
    case RDMA_CM_EVENT_ESTABLISHED:
      if (c->outgoing) {
        AcceptRep rep{};
        if (ev->param.conn.private_data == nullptr || ev->param.conn.private_data_len < sizeof rep) {
          Break(c, "the accept carried no credits");
          break;
        }
        std::memcpy(&rep, ev->param.conn.private_data, sizeof rep);
        if (rep.magic != kMagic || rep.credits == 0 || rep.buf_size != buf_size_) {
          Break(c, "the peer's eager buffers differ (MPIGPU_IB_EAGER_SIZE must be the same in "
                   "every rank)");
          break;
        }
        c->window = std::min(rep.credits, credits_);
      }
      MPIGPU_INFO("ibverbs: connection %s rank %d up (QP %u, %u credits)",
                  c->outgoing ? "to" : "from", c->peer, c->id->qp->qp_num,
                  c->outgoing ? c->window : credits_);
      c->st = Conn::St::kUp;
      --connecting_;
      // Buffers consumed before this event was read were not reported (nor would be, if the
      // sender has no credit left to send more): report them now.
      if (!c->outgoing) return Consumed(c, /*force=*/true);
      break;
    case RDMA_CM_EVENT_DISCONNECTED:
      Break(c, "disconnected");
      break;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      Break(c, v.rdma_event_str(ev->event));
      break;
    default:
      break;
  }
  return Status::Ok();
}

Status IbChannel::OnConnectRequest(rdma_cm_event* ev, bool* acked) {
  const VerbsApi& v = dev_->api();
  rdma_cm_id* id = ev->id;
  ConnectReq req{};
  const bool sized = ev->param.conn.private_data != nullptr &&
                     ev->param.conn.private_data_len >= sizeof req;
  if (sized) std::memcpy(&req, ev->param.conn.private_data, sizeof req);
  std::string refuse;
  if (!sized || req.magic != kMagic) refuse = "not an mpigpu connection";
  else if (!transport::SameJobSecret(req.secret, host_->boot().secret())) refuse = "a wrong job secret";
  else if (req.rank < 0 || req.rank >= host_->size() || req.rank == rank_) refuse = "a bad rank";
  else if (in_[req.rank] != nullptr && in_[req.rank]->st != Conn::St::kBroken)
    refuse = "a second connection for rank " + std::to_string(req.rank);
  else if (closing_) refuse = "this rank is finalizing";
  else if (id->verbs != dev_->ctx()) refuse = "another RDMA device";
  if (!refuse.empty()) {
    refusals_log_.Log([](const std::string& l) { MPIGPU_WARN("%s", l.c_str()); },
                      "ibverbs: refusing a connection (" + refuse + ")", MonotonicSeconds());
    v.rdma_reject(id, nullptr, 0);
    v.rdma_ack_cm_event(ev);
    *acked = true;
    v.rdma_destroy_id(id);
    return Status::Ok();
  }
  auto c = std::make_unique<Conn>();
  c->index = static_cast<uint32_t>(conns_.size());
  c->peer = req.rank;
  c->outgoing = false;
  c->id = id;
  c->st = Conn::St::kConnecting;
  c->credit_addr = req.credit_addr;
  c->credit_rkey = req.credit_rkey;
  c->peer_slots = req.credits;
  id->context = c.get();
  Conn* raw = c.get();
  conns_.push_back(std::move(c));
  in_[raw->peer] = raw;
  ++connecting_;
  Status st = MakeQp(raw);
  if (!st.ok()) {
    v.rdma_reject(id, nullptr, 0);
    Break(raw, st.ToString());
    return Status::Ok();
  }
  AcceptRep rep{kMagic, credits_, static_cast<uint32_t>(buf_size_)};
  rdma_conn_param p = ConnParam(*dev_, &rep, sizeof rep);
  if (v.rdma_accept(id, &p) != 0) Break(raw, std::string("rdma_accept: ") + std::strerror(errno));
  return Status::Ok();
}

void IbChannel::BreakAll(const std::string& why) {
  for (auto& c : conns_) Break(c.get(), why);
}

void IbChannel::AsyncEvents() {
  if (!async_ok_) return;
  const VerbsApi& v = dev_->api();
  const uint8_t port = static_cast<uint8_t>(GetIbConfig().port);
  ibv_async_event ev{};
  while (v.ibv_get_async_event(dev_->ctx(), &ev) == 0) {
    const char* what = v.ibv_event_type_str(ev.event_type);
    switch (ev.event_type) {
      case IBV_EVENT_PORT_ERR:
        if (ev.element.port_num == port && port_down_since_ < 0) {
          port_down_since_ = MonotonicSeconds();
          MPIGPU_WARN("ibverbs: port %u of %s went down (%s): connections break in %zu s unless "
                      "it comes back (MPIGPU_IB_PORT_DOWN_S)", port, dev_->name().c_str(), what,
                      GetIbConfig().port_down_s);
        }
        break;
      case IBV_EVENT_PORT_ACTIVE:
        if (ev.element.port_num == port && port_down_since_ >= 0) {
          port_down_since_ = -1;
          MPIGPU_INFO("ibverbs: port %u of %s is active again", port, dev_->name().c_str());
        }
        break;
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR:
        for (auto& c : conns_)
          if (c->id != nullptr && c->id->qp == ev.element.qp)
            Break(c.get(), std::string("the device reported ") + what);
        break;
      case IBV_EVENT_DEVICE_FATAL:
        BreakAll(dev_->name() + ": " + what);
        break;
      default:
        break;
    }
    v.ibv_ack_async_event(&ev);
  }
  if (port_down_since_ >= 0 &&
      MonotonicSeconds() - port_down_since_ >= static_cast<double>(GetIbConfig().port_down_s)) {
    BreakAll("port " + std::to_string(port) + " of " + dev_->name() + " has been down for " +
             std::to_string(GetIbConfig().port_down_s) + " s");
  }
}

void IbChannel::Break(Conn* c, const std::string& why) {
  if (c->st == Conn::St::kBroken) return;
  if (c->st != Conn::St::kUp) --connecting_;
  c->st = Conn::St::kBroken;
  if (!closing_ && !c->bye)
    MPIGPU_INFO("ibverbs: the connection %s rank %d broke: %s", c->outgoing ? "to" : "from",
                c->peer, why.c_str());
  // The QP goes to the error state: what is in flight flushes, nothing more moves.
  if (c->id != nullptr && c->id->qp != nullptr) (void)dev_->api().rdma_disconnect(c->id);
}

Status IbChannel::Close() {
  if (dev_ == nullptr) return Status::Ok();
  closing_ = true;
  const VerbsApi& v = dev_->api();
  // Goodbyes on every connection that is up: after our messages on the ones we opened (they
  // need a credit), from the small area on the ones peers opened (their two goodbye slots).
  const double deadline = MonotonicSeconds() + static_cast<double>(GetNetConfig().net_timeout_s);
  auto bye_pending = [&] {
    bool any = false;
    for (auto& c : conns_) {
      if (c->st == Conn::St::kBroken) continue;
      if (c->st != Conn::St::kUp) {  // still connecting: what waits for it must go first
        any = true;
        continue;
      }
      if (!c->bye_posted) {
        MsgHeader h = ByeHeader();
        if (c->outgoing) {
          Status ignored;
          const uint64_t before = c->sent;
          FlushBacklog(c.get());
          if (c->backlog.empty() && SendNow(c.get(), h, transport::Payload{}, &ignored) &&
              c->sent > before) {
            c->bye_posted = true;
          }
        } else if (c->sq_used < c->sq_cap) {
          std::memcpy(c->extra(), &h, sizeof h);
          ibv_sge sge{reinterpret_cast<uint64_t>(c->extra()), sizeof h, c->mr->lkey};
          ibv_send_wr wr{}, *bad = nullptr;
          wr.wr_id = WrId(kBye, c->index, 0);
          wr.sg_list = &sge;
          wr.num_sge = 1;
          wr.opcode = IBV_WR_SEND;
          wr.send_flags = IBV_SEND_SIGNALED;
          if (ibv_post_send(c->id->qp, &wr, &bad) == 0) {
            ++c->sq_used;
            c->bye_posted = true;
          } else {
            Break(c.get(), "ibv_post_send (goodbye)");
            continue;
          }
        }
      }
      if (!c->bye_posted || (c->outgoing ? c->send_done < c->sent : !c->bye_done)) any = true;
    }
    return any;
  };
  while (!conns_.empty() && bye_pending() && MonotonicSeconds() < deadline) {
    Status st = Poll(sink_);
    if (!st.ok()) break;
  }
  for (auto& c : conns_)
    if (c->id != nullptr && c->id->qp != nullptr && c->st != Conn::St::kBroken)
      (void)v.rdma_disconnect(c->id);
  // Events of ids about to go must be acknowledged (rdma_destroy_id waits for that).
  rdma_cm_event* ev = nullptr;
  while (ec_ != nullptr && v.rdma_get_cm_event(ec_, &ev) == 0) {
    if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
      rdma_cm_id* id = ev->id;
      v.rdma_reject(id, nullptr, 0);
      v.rdma_ack_cm_event(ev);
      v.rdma_destroy_id(id);
    } else {
      v.rdma_ack_cm_event(ev);
    }
  }
  for (auto& c : conns_) Destroy(c.get());
  conns_.clear();
  if (listen_ != nullptr) v.rdma_destroy_id(listen_);
  listen_ = nullptr;
  if (ec_ != nullptr) v.rdma_destroy_event_channel(ec_);
  ec_ = nullptr;
  dev_->Deregister(credit_mr_);
  credit_mr_ = nullptr;
  std::free(credit_words_);
  credit_words_ = nullptr;
  return Status::Ok();
}

void IbChannel::Destroy(Conn* c) {
  const VerbsApi& v = dev_->api();
  if (c->id != nullptr) {
    if (c->id->qp != nullptr) v.rdma_destroy_qp(c->id);
    v.rdma_destroy_id(c->id);
    c->id = nullptr;
  }
  dev_->Deregister(c->mr);
  c->mr = nullptr;
  std::free(c->bufs);
  c->bufs = nullptr;
}

}  // namespace mpigpu::internode
