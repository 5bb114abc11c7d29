// Rendezvous data as frames on the pair's channel: the receiver answers the RTS with kCts when
// it matched, and the sender streams its packed bytes in kData frames of up to
// min(the channel's largest payload, kChunk), each unpacked into the receive buffer where it
// lands. Any buffer location and layout, any channel: the universal back-end of channels that
// share no memory (the socket channel; the network ones), and a check of the seam (MPIGPU_LMT=chan
// runs every large message of the shared-memory channel through it).
//
// Wire (kCtl, lmt kWireIdChan):
//   kCts   receiver -> sender: sreq the send; body ChanRef{rreq: the receive's id among ours};
//          bytes: how many to send (the receive's capacity may truncate).
//   kData  sender -> receiver: body ChanRef{rreq, offset}; the payload is packed bytes
//          [offset, offset + len) in order (a channel keeps the pair's order).
//   kAbort sender -> receiver: the sender could not read its buffer: the receive fails.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>

#include "transport/core/backend.h"
#include "transport/core/wire_ids.h"

namespace mpigpu::transport {

class ChanLmt final : public LmtBackendStubs {
 public:
  const LmtCaps& caps() const override { return kCaps; }
  Status Attach(LmtHost* host, char*, char*) override;
  bool StartRecv(Request* req, const unsigned char* offer) override;
  Status OnControl(const MsgHeader& h, const unsigned char* payload, size_t len) override;
  Status Progress(bool* busy) override;
  void Finished(Request* req) override;
  void FailPeer(int rank, const Status& why) override;

  static constexpr size_t kChunk = size_t{256} << 10;

 private:
  static constexpr LmtCaps kCaps{"chan", kWireIdChan, /*same_node=*/false, /*single_copy=*/false,
                                 /*needs_cts=*/true, /*device_buffers=*/true, /*strided=*/true,
                                 /*max_inflight=*/0, /*offers_host=*/false, /*offers_device=*/false, /*universal=*/true};
  enum Op : uint8_t { kCts = 1, kData = 2, kAbort = 3 };
  struct ChanRef {
    uint64_t rreq;
    uint64_t offset;
  };
  struct SendOp;
  struct RecvOp;

  void SendAbort(int dst, uint64_t rreq);

  LmtHost* host_ = nullptr;
  std::list<Request*> sends_;                     // sending their frames
  std::unordered_map<uint64_t, Request*> recvs_;  // receiving theirs, by id
  uint64_t next_id_ = 0;
};

}  // namespace mpigpu::transport
