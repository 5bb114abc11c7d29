// The shared-memory channel (Nemesis): every pair's small messages through the job segment.
//   - Cells: each rank owns MPIGPU_CELLS_PER_RANK free cells and one receive queue (a lock-free
//     MPSC list, ringbuf/cell_queue.h); a message takes a free cell of the sender's and is
//     enqueued on the receiver's queue.
//   - Fastboxes: each ordered pair has a small ring of slots (ringbuf/fastbox.h), polled by the
//     receiver only for the senders that said they use theirs; the first message of a pair goes
//     through a cell and opens the sender's fastbox (sparse memory, touched only by pairs that
//     talk): kFlagBoxOn tells the receiver to watch it from that message on.
// A pair's messages may take either way, so each carries its number in the pair's order (seq);
// the receiver handles them by number (a cell that comes early waits in held_).
// A fastbox slot carries an eager message behind a compact EagerHeader (the header and a short
// payload share the slot's first line with its stamp), any other behind the whole MsgHeader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ringbuf/cell_queue.h"
#include "ringbuf/fastbox.h"
#include "transport/core/backend.h"

namespace mpigpu::transport {

class ShmChannel final : public NodeChannelStubs {
 public:
  ShmChannel() = default;
  ~ShmChannel() override;

  const ChannelCaps& caps() const override { return caps_; }
  SegmentNeeds Needs(const TransportConfig& c, int nranks) const override;
  Status Attach(TransportHost* host, char* dense, char* sparse) override;
  bool TrySend(int dst, MsgHeader* h, const Payload& p, Status* copy_error) override;
  bool TrySendEagerNow(int dst, int tag, int context, const void* data, size_t n) override;
  bool TryRecvEagerNow(int src, int tag, int context, void* data, size_t capacity, int spins,
                       MsgInfo* info) override;
  Status Poll(ChannelSink* sink) override;
  bool Pending() const override;
  void PrepareDeviceCopy() override;
  Status Close() override;

 private:
  // An eager message's header in a fastbox slot: what matching and ordering need (the sender is
  // the slot's pair). The payload's size is the slot's length minus this header.
  struct EagerHeader {
    MsgType type;  // kEager
    uint8_t pad[3];
    int32_t tag;
    int32_t context;
    uint32_t seq;
  };
  static_assert(sizeof(EagerHeader) == 16 && offsetof(EagerHeader, type) == 0 &&
                    offsetof(MsgHeader, type) == 0,
                "both headers start with the type; the compact one leaves 40 payload bytes in "
                "a fastbox slot's first line");
  // Fastboxes are opened per pair on first use (OpenFastbox). Sender: per destination, whether
  // ours is open (kBoxFailed: it cannot be, or there are no fastboxes); receiver: per source,
  // whether it told us it uses its box (kFlagBoxOn), and those sources, the only boxes polled.
  enum : uint8_t { kBoxOff = 0, kBoxOn = 1, kBoxFailed = 2 };
  static constexpr uint8_t kFlagBoxOn = kFlagChannel;
  // The fastboxes are pinned with the cells up to this size (62 ranks with 4 KiB slots);
  // beyond it pinning would fault in every pair's slots, also those of pairs that never talk.
  static constexpr size_t kPinnedFastboxBytes = size_t{64} << 20;

  static size_t QueueBytes(const TransportConfig& c, int nranks);
  static size_t FastboxBytes(const TransportConfig& c, int nranks);
  void PublishEagerBox(Fastbox* box, int dst, int tag, int context, uint32_t seq, size_t bytes);
  void OpenFastbox(int dst, MsgHeader* h);
  Status DecodeBox(int src, const Fastbox& b, MsgHeader* h, const unsigned char** payload,
                   size_t* len) const;
  Status Handle(ChannelSink* sink, const MsgHeader& h, const unsigned char* payload, size_t len);
  Status HandleCell(ChannelSink* sink, Cell* cell);
  Status TakeFastboxInOrder(ChannelSink* sink, int src, const Fastbox& b, bool* took);
  Status DrainInOrder(ChannelSink* sink, int src);

  ChannelCaps caps_{"shm", ChannelCaps::kFastPaths | ChannelCaps::kSameNode,
                    /*max_payload=*/0};  // its cell size, at Attach
  TransportHost* host_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  size_t fastbox_size_ = 0;  // MPIGPU_FASTBOX_SIZE
  bool pin_ = true;          // MPIGPU_PIN_SHM
  CellQueues queues_;
  Fastboxes fastboxes_;  // invalid when MPIGPU_FASTBOX_SIZE=0
  std::vector<uint8_t> box_to_;
  std::vector<uint8_t> box_from_;  // bytes, not bits: read on every poll
  std::vector<int> box_sources_;
  std::vector<uint32_t> seq_out_;  // per destination: number of the next message sent
  std::vector<uint32_t> seq_in_;   // per source: number of the next message to handle
  std::vector<std::vector<Cell*>> held_;  // per source: cells that arrived ahead of their turn
  // The cells and the fastboxes (while few): pinned the first time a GPU buffer is copied into
  // or out of a payload.
  char* cells_mem_ = nullptr;
  size_t cells_bytes_ = 0;
  char* boxes_mem_ = nullptr;
  size_t boxes_bytes_ = 0;
  bool pin_tried_ = false;
  bool cells_pinned_ = false;
  bool boxes_pinned_ = false;
};

}  // namespace mpigpu::transport
