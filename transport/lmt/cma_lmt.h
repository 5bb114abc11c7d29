// CMA: single copies between the host buffers of two processes on this node (process_vm_readv /
// writev, transport/lmt/cma.h). Contiguous host buffers on both sides only.
//   - A plain copy: the receiver reads the sender's buffer at once when it matches the RTS, then
//     sends kFin (kCopyError if it could not: the send fails too).
//   - A cooperative copy (after one plain copy showed that the kernel allows it, for messages of
//     at least two MPIGPU_CMA_CHUNKs): the receiver opens a generation in the pair's CmaSlot (in
//     the job segment's sparse tail) and sends kGo; both sides then claim chunks, and each
//     completes when the slot says every byte is there. One at a time per pair (the slot).
// If the kernel refuses (ptrace scope, seccomp), CMA is off for good and the next back-end in
// the pair's list carries the message.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <string>
#include <vector>

#include "transport/lmt/cma.h"
#include "transport/core/backend.h"
#include "transport/core/wire_ids.h"

namespace mpigpu::transport {

class CmaLmt final : public LmtBackendStubs {
 public:
  const LmtCaps& caps() const override { return kCaps; }
  SegmentNeeds Needs(const TransportConfig& c, int nranks) const override;
  Status Attach(LmtHost* host, char* dense, char* sparse) override;
  bool StartRecv(Request* req, const unsigned char* offer) override;
  Status OnControl(const MsgHeader& h, const unsigned char* payload, size_t len) override;
  Status Progress(bool* busy) override;
  void Finished(Request* req) override;
  void FailPeer(int rank, const Status& why) override;

 private:
  static constexpr LmtCaps kCaps{"cma", kWireIdCma, LmtCaps::kSameNode | LmtCaps::kSingleCopy,
                                 /*max_inflight=*/1};
  enum Op : uint8_t { kFin = 1, kGo = 2 };
  static constexpr uint8_t kCopyError = 1;  // kFin
  struct CmaGo {
    uint64_t addr;   // the receiver's buffer
    uint32_t chunk;  // chunk size
    uint32_t gen;    // the transfer's generation in the pair's slot
  };
  struct CoopOp;

  CmaSlot* SlotOf(int sender, int receiver) const {
    return slots_ + static_cast<size_t>(sender) * size_ + receiver;
  }
  void SendFin(int src, uint64_t sreq, bool failed);
  void TryStartCoop(int src);
  Status Advance(Request* req, bool* done);

  LmtHost* host_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  CmaSlot* slots_ = nullptr;  // in the segment's sparse tail: one per ordered pair
  bool ok_ = true;            // cleared for good the first time process_vm_readv is refused
  bool verified_ = false;     // one plain copy worked: cooperative copies may start
  std::vector<uint32_t> gen_;  // receiver: last generation used per source
  std::vector<std::deque<Request*>> wait_;  // receiver: cooperative copies per source, FIFO
  std::vector<Request*> recv_active_;       // receiver: the one running per source
  std::list<Request*> active_;              // both sides: copies running
};

}  // namespace mpigpu::transport
