// CUDA IPC: single copies of device buffers between processes on this node, on the copy engine
// or, when small (or strided and not large) and both ends are this GPU's memory, on the resident
// copy kernel (transport/lmt/device_copier.h).
//   - Pull (device send): the sender offers its buffer in the RTS (IpcOffer: the export and its
//     shape), so the message goes by rendezvous whatever its size; the receiver maps it and
//     copies once (D->D over NVLink, or D->H), then sends kFin. When that copy runs on its
//     resident kernel, the kernel itself stores the send's token into the sender's notify slot
//     (below) instead: one message hop less.
//   - Put (host send, contiguous device receive): the receiver sends kPut with its exported
//     buffer; the sender copies H2D straight into it and answers kPutDone (kPutFailed: use the
//     next back-end; the send then waits for that one's answer).
// Not offered below MPIGPU_SHARED_GPU_IPC_MIN to a rank on this same GPU unless MPS serves it
// (memcopy/mps.h; MPIGPU_GPU_COPIER_SHARED=auto, or 1 declares it): a device copy between two processes' contexts runs on the
// SMs and costs a context switch (about 140 us on one H200, 2026-11-24:
// benchmarks/results/2026-11-24-shared-gpu-context-h200/), while the copy engines move the bytes
// through host memory without one. MPIGPU_LMT=ipc offers it to every peer.
//
// Notify words, in the job segment (this back-end's dense area): kNotifySlots 32-bit words per
// rank. Rank r's slots are handed out by r alone (free_slots_) to its device sends whose RTS
// offers a pull. The receiver's resident kernel stores the send's token there (after its copy
// and a system fence); r polls its waiting sends' slots with acquire loads (PollNotifies), so the
// receiver's reads of the send buffer are done before r reuses it. A slot goes back to the free
// list only when the receiver answered (once: by token, or by kFin, also a failed copy's); a send
// that failed otherwise (a dead peer) keeps its slot for good, so a late store cannot complete
// another send (DropSlot).
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "transport/core/backend.h"
#include "transport/core/wire_ids.h"
#include "transport/lmt/cuda_ipc.h"
#include "transport/lmt/device_copier.h"

namespace mpigpu::transport {

class IpcLmt final : public LmtBackend {
 public:
  IpcLmt();  // out of line: the op pools hold types this header only names
  ~IpcLmt() override;

  const LmtCaps& caps() const override { return kCaps; }
  SegmentNeeds Needs(const TransportConfig& c, int nranks) const override;
  Status Attach(LmtHost* host, char* dense, char* sparse) override;
  void Joined() override;
  bool Offers(int peer, MemLoc loc, size_t bytes) const override;
  size_t Offer(Request* req, unsigned char* offer) override;
  // Its control messages carry no data frames: payloads are delivered from the channel.
  PayloadPlace PlacePayload(const MsgHeader&, size_t) override { return {}; }
  bool StartRecv(Request* req, const unsigned char* offer) override;
  Status OnControl(const MsgHeader& h, const unsigned char* payload, size_t len) override;
  Status Progress(bool* busy) override;
  void Finished(Request* req) override;
  void FailPeer(int rank, const Status& why) override;
  void Tick() override;
  void Idle() override;
  bool Serving() const override { return !active_.empty(); }
  Status Close() override;
  void AddStats(TransportStats* s) const override { s->sends_notified += sends_notified_; }
  bool InjectFault(const std::string&) override { return false; }

 private:
  static constexpr LmtCaps kCaps{"cuda-ipc", kWireIdIpc,
                                 LmtCaps::kSameNode | LmtCaps::kSingleCopy |
                                     LmtCaps::kDeviceBuffers | LmtCaps::kStrided |
                                     LmtCaps::kOffersDevice,
                                 /*max_inflight=*/0};
  enum Op : uint8_t { kFin = 1, kPut = 2, kPutDone = 3 };
  static constexpr uint8_t kCopyError = 1;  // kFin, kPutDone: the copy failed on that side
  static constexpr uint8_t kPutFailed = 2;  // kPutDone: the sender could not copy: fall back
  static constexpr uint32_t kNotifySlots = 64;
  static constexpr uint32_t kNoNotify = ~0u;
  // The RTS's payload (pull), and kPut's: the exported buffer and its shape (a vector: `count`
  // blocks of `block` bytes, `stride` apart; contiguous: count 1). A pull's offer may name one of
  // the sender's notify slots (kNoNotify: the receiver sends kFin).
  struct IpcOffer {
    IpcExport ipc;
    uint64_t count;
    uint64_t block;
    uint64_t stride;
    uint32_t notify_slot;   // kNoNotify, or the slot among the sender's
    uint32_t notify_token;  // never 0
  };
  static_assert(sizeof(IpcOffer) <= kCtlPayloadMax, "an offer fits a control payload");
  struct PutRef {
    uint64_t rreq;  // kPut, kPutDone: the receive's id among ours (puts_)
  };
  struct SendOffer;
  struct CopyOp;

  void Unavailable(const Status& why);
  Status Map(int peer, const IpcExport& e, void** ptr, CopyEngine** copier, MemLoc* loc);
  bool TryPull(Request* req, const IpcOffer& offer);
  bool TryPutRequest(Request* req);
  Status StartPut(Request* req, const MsgHeader& h, const IpcOffer& offer);
  Status IssueSingleCopy(Request* req, CopyOp* op, const CopyDesc& d, MemLoc dst_loc,
                         MemLoc src_loc, CopyEngine* engine);
  void Run(Request* req);
  void SendFin(int src, uint64_t sreq, bool failed);
  void SendPutDone(int dst, uint64_t rreq, uint8_t flags);
  void PollNotifies();
  void DropSlot(Request* req, bool reusable);
  bool PeerTokenStored(const CopyOp& op, int peer) const;
  bool NotifyMapped();
  Status StopGpuCopier();
  uint32_t NotifyIndex(int rank, uint32_t slot) const {
    return static_cast<uint32_t>(rank) * kNotifySlots + slot;
  }

  LmtHost* host_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  bool ok_ = true;  // cleared for good the first time CUDA IPC fails (logged once)
  std::unique_ptr<IpcCache> cache_;  // made on first use
  DeviceCopier gpu_copier_;           // set up on first use, on the current device
  bool gpu_copier_ok_ = true;         // cleared for good if it cannot be set up
  std::vector<bool> shares_gpu_;      // per rank: on this GPU, off the fast path (no MPS)
  std::list<Request*> active_;        // copies running (pulls, puts)
  std::unordered_map<uint64_t, Request*> puts_;  // receives waiting for the sender's put
  uint64_t next_put_id_ = 0;
  std::atomic<uint32_t>* notify_words_ = nullptr;
  size_t notify_bytes_ = 0;
  std::vector<uint32_t> free_slots_;     // our free notify slots
  std::vector<Request*> notify_waits_;   // our sends with a slot, until complete
  uint32_t notify_tokens_ = 0;           // last token handed out (0 is skipped)
  uint32_t* notify_dev_ = nullptr;       // the region as our GPU addresses it: set while pinned
  bool notify_ok_ = true;                // cleared for good if pinning fails
  uint64_t sends_notified_ = 0;          // sends completed by the receiver's kernel (no kFin)
  LmtOpPool<CopyOp> copy_ops_;
  LmtOpPool<SendOffer> offer_ops_;
};

}  // namespace mpigpu::transport
