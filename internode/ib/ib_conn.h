// The ibverbs channel's connection (IbChannel::Conn) and the wire constants its two halves
// share: ib_connect.cc makes and ends connections (rdma_cm, queue pairs, goodbyes, port and QP
// events), ib_channel.cc moves messages on them (sends with credits, receives, RDMA READs and
// FINs for the rendezvous, completions). Internal to internode/ib.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "internode/ib/ib_channel.h"

namespace mpigpu::internode::ibconn {

// wr_id: kind << 56 | connection index << 32 | the kind's cookie (a receive slot, the low 32
// bits of a SEND's count, an LMT's id).
enum Kind : uint64_t { kRecv = 1, kSend = 2, kCredit = 3, kRead = 4, kBye = 5, kFin = 6 };
inline uint64_t WrId(Kind k, uint32_t conn, uint32_t cookie) {
  return static_cast<uint64_t>(k) << 56 | static_cast<uint64_t>(conn & 0xffffff) << 32 | cookie;
}
constexpr uint32_t kMagic = IbChannel::kConnectMagic;
constexpr uint8_t kOpBye = 1;                // a channel message (kFlagChannel): goodbye
constexpr int kCmTimeoutMs = 2000;
constexpr unsigned kCmEvery = 1024;        // polls between looks at rdma_cm's events when idle
constexpr int kCreditSlots = 4;              // credit writes in flight per connection
constexpr size_t kSmall = 64;                // a header alone (goodbyes)
// The small area after a connection's buffers: the goodbye we send, two receive slots for the
// goodbye that comes back on a connection we opened, the credit counts we write.
constexpr size_t kExtra = 3 * kSmall + kCreditSlots * sizeof(uint64_t);

inline transport::MsgHeader ByeHeader() {
  transport::MsgHeader h{};
  h.type = transport::MsgType::kCtl;
  h.flags = transport::kFlagChannel;
  h.op = kOpBye;
  return h;
}

}  // namespace mpigpu::internode::ibconn

namespace mpigpu::internode {

struct IbChannel::Conn {
  enum class St { kResolving, kConnecting, kUp, kBroken };
  uint32_t index = 0;
  int peer = -1;
  bool outgoing = false;
  rdma_cm_id* id = nullptr;
  St st = St::kResolving;
  char* bufs = nullptr;  // outgoing: send slots; incoming: receive buffers; then kExtra bytes
  size_t nbufs = 0;
  ibv_mr* mr = nullptr;
  uint32_t max_inline = 0;
  int sq_used = 0, sq_cap = 0;  // send-queue work requests outstanding, and room
  // outgoing
  std::deque<std::vector<unsigned char>> backlog;  // packed messages waiting for the QP
  size_t backlog_bytes = 0;
  uint32_t window = 0;
  uint64_t sent = 0, send_done = 0;
  uint64_t signaled = 0;  // `sent` at the last signaled SEND (the others are unsignaled)
  const uint64_t* credit = nullptr;  // the peer's consumed count (written by its RDMA WRITEs)
  uint64_t piggy = 0;  // the same count as its messages to us carried it (MsgHeader::reserved)
  // incoming
  uint64_t consumed = 0, reported = 0;
  int credit_writes = 0;
  uint32_t credit_slot = 0;  // the next of the kCreditSlots words a credit write is sent from
  uint64_t credit_addr = 0;
  uint32_t credit_rkey = 0;
  uint32_t peer_slots = 0;
  // both
  bool bye = false;       // the peer said goodbye on it
  bool bye_posted = false, bye_done = false;
  size_t extra_at = 0;
  char* extra() const { return bufs + extra_at; }
};

}  // namespace mpigpu::internode
