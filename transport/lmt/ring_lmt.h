// The shared ring (the paper's LMT): a pinned shared-memory ring per ordered pair, both sides
// copying through it in units with pipelined async copies (pipeline/pipeline.h), any buffer
// location and layout on either side. The universal back-end of the shared-memory channel.
//
// Wire (kCtl, lmt kWireIdRing):
//   kCts   receiver -> sender: the ring is ready (RingCts body; bytes: to transfer; sreq: the
//          send). kChained: same unit size as the transfer before; start at unit first_slot
//          without waiting for the ring to drain.
//   kFail  receiver -> sender: the receiver could not start this send's transfer (sreq): the
//          send fails instead of waiting for a CTS.
//   kAbort either side -> the other: a transfer failed part-way; the ring between them (sender
//          -> receiver; kFromReceiver: sent by its receiver) is retired.
// The receiver runs one transfer per source at a time, plus one chained behind it (its CTS goes
// out at once, so the sender refills the units the active transfer frees and the ring does not
// run dry between messages); the sender one per destination.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ringbuf/lmt_ring.h"
#include "ringbuf/segment.h"
#include "transport/core/backend.h"
#include "transport/core/wire_ids.h"

namespace mpigpu::transport {

class RingLmt final : public LmtBackendStubs {
 public:
  RingLmt() = default;
  ~RingLmt() override;

  const LmtCaps& caps() const override { return kCaps; }
  Status Attach(LmtHost* host, char* dense, char* sparse) override;
  bool StartRecv(Request* req, const unsigned char* offer) override;
  Status OnControl(const MsgHeader& h, const unsigned char* payload, size_t len) override;
  Status Progress(bool* busy) override;
  void Finished(Request* req) override;
  void FailPeer(int rank, const Status& why) override;
  Status Close() override;
  bool InjectFault(const std::string& what) override;

 private:
  static constexpr LmtCaps kCaps{"ring", kWireIdRing,
                                 LmtCaps::kSameNode | LmtCaps::kNeedsCts |
                                     LmtCaps::kDeviceBuffers | LmtCaps::kStrided |
                                     LmtCaps::kUniversal,
                                 /*max_inflight=*/2};
  enum Op : uint8_t { kCts = 1, kFail = 2, kAbort = 3 };
  static constexpr uint8_t kChained = 1;      // kCts
  static constexpr uint8_t kFromReceiver = 2;  // kAbort
  struct RingCts {
    uint32_t unit;        // unit size
    uint32_t fill_block;  // the receiver's fill block (LmtFillBlock)
    uint32_t first_slot;  // the transfer's first unit
    MemLoc loc;           // the receiver's buffer location
    uint64_t token;       // the random part of the ring's name (RingSegmentName)
  };
  // The ring of one ordered pair, mapped in this process. The receiver creates its region.
  struct RingPair {
    ShmSegment region;
    LmtRing ring;
    bool creator = false;
    bool pinned = false;
    uint64_t token = 0;
    // Receiver: unit size and end slot of the last transfer given a CTS (the chain rule of
    // ringbuf/lmt_ring.h); chain_unit 0 until the first.
    size_t chain_unit = 0;
    size_t chain_slot = 0;
    // Receiver: a transfer failed part-way and may have left units in the ring; later ring
    // transfers from this sender fail instead of reading them.
    bool broken = false;
  };
  struct RingOp;

  void TryStartRecv(int src);
  Status StartSend(Request* req, const MsgHeader& cts);
  Status RingFor(int src, int dst, bool pin, uint64_t token, RingPair** out);
  void Activate(Request* req);
  void Retire(Request* req, const Status& st);
  void AbortRecv(int src, const Status& why);
  void FailSends(int dst, const Status& why);
  void SendAbort(int peer, bool as_receiver);
  void SendFail(int src, uint64_t sreq);

  LmtHost* host_ = nullptr;
  int rank_ = 0;
  std::vector<std::deque<Request*>> wait_;   // receiver: matched RTS per source, FIFO
  std::vector<Request*> recv_active_;        // receiver: the transfer per source
  std::vector<Request*> recv_next_;          // receiver: a chained one with its CTS sent
  std::vector<Request*> send_active_;        // sender: the transfer per destination
  std::vector<std::deque<Request*>> send_queue_;  // sender: CTS'd, waiting for the active one
  std::list<Request*> active_;              // both sides: pipelines to advance
  std::map<std::pair<int, int>, std::unique_ptr<RingPair>> rings_;
  bool inject_failure_ = false;        // "ring-copy"
  bool inject_setup_failure_ = false;  // "ring-setup"
};

}  // namespace mpigpu::transport
