// Rendezvous data as frames on the pair's channel: the receiver answers the RTS with kCts when
// it matched, and the sender streams its packed bytes in kData frames, frame k carrying
// LmtUnitLen(total, unit, fill_block, k) bytes (pipeline/pipeline.h) with the unit and fill
// block the CTS names. Any buffer location and layout, any channel: the universal back-end of
// channels that share no memory (the socket channel; the network ones), and a check of the seam
// (MPIGPU_LMT=chan runs every large message of the shared-memory channel through it).
//
// No copy the socket does not need, by buffer:
//   - contiguous host memory: the sender lends each frame's payload from the user buffer
//     (Payload::lend: written from there; the send completes once the channel no longer lends
//     it), and the receiver places each frame's payload straight into the receive buffer
//     (PlacePayload) where the channel places payloads;
//   - device memory: staged through pinned host chunks (a private LmtRing of kStageChunks units
//     of UnitFor's size: the ring's device units, cut to the channel's payload) by the pipeline
//     engine (pipeline/pipeline.h), asynchronously on the buffer's copy engine: the sender's
//     LmtSender runs the D2H copies of the next chunks ahead while published chunks are lent to
//     the socket (a chunk is refilled once the channel no longer lends it); the
//     receiver reads frames into free chunks (PlacePayload; "later" while none is free) and its
//     LmtReceiver runs the H2D copies behind the reads. Vector layouts too (CopyPacked's strided
//     copies; frames cut on the receiver's block, LmtFillBlock). A receiver whose channel does
//     not place payloads unpacks each frame when it is delivered (a synchronous copy);
//   - strided host memory: the same staging through plain (unpinned) chunks, the copies on the
//     host copy engine (each complete when issued): packed once into a chunk that is lent,
//     unpacked once from the chunk its frame was read into. (It also runs the staging's
//     machinery where no GPU is: the CPU tests' vector cases.)
// A staged send takes its chunks on its turn: one staged send per destination at a time, in the
// order their CTS came (a window of device sends holds one set of chunks per peer); a staged
// receive takes its chunks when its first frame arrives (posted receives hold none).
// Chunks are pooled; a failed staged transfer (a copy error, the peer lost, an abort)
// waits for its copies in flight (bounded: they are local copies), then gives its chunks back.
//
// Wire (kCtl, lmt kWireIdChan):
//   kCts   receiver -> sender: sreq the send; body CtsBody{rreq: the receive's id among ours,
//          unit, fill_block}; bytes: how many to send (the receive's capacity may truncate).
//   kData  sender -> receiver: body ChanRef{rreq, offset}; the payload is packed bytes
//          [offset, offset + len) in order (a channel keeps the pair's order).
//   kAbort sender -> receiver: the sender could not read its buffer: the receive fails.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "transport/core/backend.h"
#include "transport/core/wire_ids.h"

namespace mpigpu::transport {

class ChanLmt final : public LmtBackendStubs {
 public:
  ChanLmt();
  ~ChanLmt() override;
  const LmtCaps& caps() const override { return kCaps; }
  Status Attach(LmtHost* host, char*, char*) override;
  bool StartRecv(Request* req, const unsigned char* offer) override;
  PayloadPlace PlacePayload(const MsgHeader& h, size_t len) override;
  Status OnControl(const MsgHeader& h, const unsigned char* payload, size_t len) override;
  Status Progress(bool* busy) override;
  void Finished(Request* req) override;
  void FailPeer(int rank, const Status& why) override;
  Status Close() override;
  // "chan-stage-copy": the next staged transfer fails after its first chunk, as a failed copy.
  bool InjectFault(const std::string& what) override;

  static constexpr size_t kChunk = size_t{256} << 10;  // a frame of host memory
  static constexpr size_t kStageChunks = 8;             // pinned chunks per staged transfer

 private:
  static constexpr LmtCaps kCaps{
      "chan", kWireIdChan,
      LmtCaps::kNeedsCts | LmtCaps::kDeviceBuffers | LmtCaps::kStrided | LmtCaps::kUniversal,
      /*max_inflight=*/0};
  enum Op : uint8_t { kCts = 1, kData = 2, kAbort = 3 };
  struct ChanRef {
    uint64_t rreq;
    uint64_t offset;
  };
  struct CtsBody {
    uint64_t rreq;
    uint32_t unit;
    uint32_t fill_block;
  };
  struct Stage;  // pinned chunks (a private LmtRing)
  struct SendOp;
  struct RecvOp;

  // The frame (and staging chunk) size a receive from `peer` names in its CTS.
  size_t UnitFor(int peer, uint64_t total, bool device) const;
  void SendAbort(int dst, uint64_t rreq);
  Status TakeStage(size_t unit, bool pinned, std::unique_ptr<Stage>* out);
  void StartStagedRecv(Request* req);
  Status StartStagedSend(Request* req);
  void GiveStage(std::unique_ptr<Stage> stage);
  // Advances one send: true when it is done (completed or failed).
  bool ProgressSend(Request* req);
  Status ProgressStagedSend(Request* req, bool* done);
  // Waits for a failed staged transfer's copies, then pools its chunks.
  void Unstage(Request* req, std::unique_ptr<Stage> stage, CopyEngine* copier, bool in_flight,
               bool lent);

  LmtHost* host_ = nullptr;
  std::list<Request*> sends_;                     // sending their frames
  std::unordered_map<uint64_t, Request*> recvs_;  // receiving theirs, by id
  std::list<Request*> staged_recvs_;              // of recvs_, those copying chunks H2D
  std::unordered_set<int> staging_to_;            // Progress: peers whose staged send ran
  std::vector<std::unique_ptr<Stage>> pool_;      // free pinned chunks
  uint64_t next_id_ = 0;
  bool inject_copy_failure_ = false;
};

}  // namespace mpigpu::transport
