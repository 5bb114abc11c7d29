// The ibverbs rendezvous: zero-copy RDMA READ by the receiver from the sender's buffer.
//   - The sender of a contiguous host buffer larger than the pair's eager size registers it
//     (through the registration cache, ib_reg.h: a buffer used again reuses its region) and
//     offers it in the RTS (IbOffer: address, rkey, length). A device buffer likewise, where the
//     RDMA device takes dma-bufs (GPUDirect RDMA, ib_dmabuf.h; a region per message).
//   - The receiver, when its buffer is contiguous host memory too (or device memory it can
//     register the same way; its GPU's RDMA writes are flushed before it completes), registers it
//     and READs the message in MPIGPU_IB_CHUNK pieces on the connection the RTS came on (the
//     QP's send queue bounds the READs in flight; the rest wait here), then tells the sender it
//     is done: where
//     the offer names a FIN number (IbOffer::fin), a zero-byte RDMA WRITE with immediate = that
//     number, posted right after the last READ with IBV_SEND_FENCE (it leaves once the READs
//     completed, so the sender's buffer was read; no wait for the receiver's progress engine, no
//     channel message, no credit), where MPIGPU_IB_FIN_IMM=1; else (the default, or the sender has
//     IbLinks::kFinSlots such messages in flight to that peer) kFin on the channel once the READs
//     completed. The sender completes and releases its region. A failed READ fails the receive
//     and sends kFin with kFailed (the send fails): the fenced WRITE is flushed with the READs.
//   - Anything else (strided buffers on either side, device buffers without dma-buf on either
//     side, a registration refused: the first dma-buf failure turns the device path off) falls
//     back to the next back-end, chan_lmt: frames on the ibverbs channel, device data staged
//     through host memory by the engine's copy engines. Where it goes is logged at
//     MPIGPU_DEBUG=info. The dma-buf registration runs only on hardware with dma-buf support,
//     which no machine of this project has (rxe answers EOPNOTSUPP): untested beyond its export.
// Wire (kCtl, lmt kWireIdIb): kFin receiver -> sender, sreq the send, flags kFailed on a failed
// READ.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "internode/ib/ib_links.h"
#include "internode/ib/ib_reg.h"
#include "transport/core/backend.h"
#include "transport/core/wire_ids.h"

namespace mpigpu::internode {

class IbLmt final : public transport::LmtBackendStubs {
 public:
  explicit IbLmt(IbLinks* links);
  const transport::LmtCaps& caps() const override { return caps_; }
  Status Attach(transport::LmtHost* host, char*, char*) override;
  bool Offers(int peer, MemLoc loc, size_t bytes) const override;
  size_t Offer(transport::Request* req, unsigned char* offer) override;
  bool StartRecv(transport::Request* req, const unsigned char* offer) override;
  Status OnControl(const transport::MsgHeader& h, const unsigned char* payload,
                   size_t len) override;
  Status Progress(bool* busy) override;
  void Finished(transport::Request* req) override;
  void FailPeer(int rank, const Status& why) override;

  struct IbOffer {
    uint64_t addr;
    uint64_t len;
    uint32_t rkey;
    uint32_t fin;  // the immediate of the FIN WRITE; 0: answer with kFin on the channel
  };

  static constexpr transport::LmtCaps kCaps{
      "ibverbs", transport::kWireIdIb,
      transport::LmtCaps::kSingleCopy | transport::LmtCaps::kOffersHost, /*max_inflight=*/0};

 private:
  enum Op : uint8_t { kFin = 1 };
  static constexpr uint8_t kFailed = 1;
  struct SendOp;
  struct RecvOp;

  // Registers the message's buffer: host memory through the cache (a failure warned of once),
  // device memory through its dma-buf (ib_dmabuf.h; the first failure turns the device path
  // off, logged once).
  Status Register(const transport::Request& req, size_t len, IbRegion* out);
  bool DeviceOk() const { return caps_.has(transport::LmtCaps::kDeviceBuffers) && !device_failed_; }
  void OnRead(uint64_t cookie, bool ok, const std::string& why);
  void OnFin(int peer, uint32_t fin);
  void Finish(transport::Request* req);

  transport::LmtCaps caps_ = kCaps;  // device buffers too where the device takes dma-bufs
  bool device_failed_ = false;
  IbLinks* links_;
  IbRegistrar reg_;
  transport::LmtHost* host_ = nullptr;
  std::unordered_map<uint32_t, transport::Request*> recvs_;  // by cookie
  std::vector<transport::Request*> posting_;                 // READs (or the FIN) to post
  std::unordered_map<uint32_t, transport::Request*> fin_sends_;  // by IbOffer::fin
  std::unordered_map<int, int> fin_out_;  // per peer: sends waiting for a FIN WRITE
  uint32_t next_fin_ = 0;
  uint32_t next_id_ = 0;
  bool warned_ = false;
};

}  // namespace mpigpu::internode
