#include "transport/shm/shm_channel.h"

#include <cstring>
#include <string>
#include <utility>

#include "memcopy/log.h"
#include "memcopy/memcopy.h"
#include "ringbuf/numa.h"
#include "ringbuf/populate.h"

namespace mpigpu::transport {
ShmChannel::~ShmChannel() {
  for (std::vector<Cell*>& held : held_)
    for (Cell* c : held) queues_.Free(c);
  (void)Close();
}

size_t ShmChannel::QueueBytes(const TransportConfig& c, int nranks) {
  return CellQueues::BytesFor(nranks, c.cells_per_rank, c.cell_size);
}

// A slot holds MPIGPU_FASTBOX_SIZE payload bytes behind either header (see TrySend).
size_t ShmChannel::FastboxBytes(const TransportConfig& c, int nranks) {
  if (c.fastbox_size == 0) return 0;
  return SegmentPages(Fastboxes::BytesFor(nranks, c.fastbox_size + sizeof(MsgHeader)));
}

SegmentNeeds ShmChannel::Needs(const TransportConfig& c, int nranks) const {
  return SegmentNeeds{QueueBytes(c, nranks), FastboxBytes(c, nranks)};
}

Status ShmChannel::Attach(TransportHost* host, char* dense, char* sparse) {
  host_ = host;
  rank_ = host->rank();
  size_ = host->size();
  const TransportConfig& c = host->config();
  fastbox_size_ = c.fastbox_size;
  pin_ = c.pin_shm;
  caps_.max_payload = c.cell_size;
  const size_t queue_bytes = QueueBytes(c, size_);
  const size_t fbox_bytes = FastboxBytes(c, size_);
  if (queue_bytes == 0)
    return Status(Err::kInvalidArg, "MPIGPU_CELLS_PER_RANK / MPIGPU_CELL_SIZE out of range");
  if (c.fastbox_size && fbox_bytes == 0)
    return Status(Err::kInvalidArg, "MPIGPU_FASTBOX_SIZE out of range");
  const size_t fbox_data = c.fastbox_size + sizeof(MsgHeader);
  const int timeout_ms = BootstrapTimeoutMs(c);
  if (host->job().leader()) {  // the node's segment is new: format its areas
    if (fbox_bytes) {
      // The header is the one part of the sparse tail written now: its page first gets memory.
      MPIGPU_RETURN_IF_ERROR(PopulateForWrite(sparse, kSegmentPage, "the fastboxes' header"));
      MPIGPU_RETURN_IF_ERROR(
          Fastboxes::Format(sparse, fbox_bytes, size_, fbox_data, rank_, &fastboxes_));
    }
    MPIGPU_RETURN_IF_ERROR(
        CellQueues::Format(dense, queue_bytes, size_, c.cells_per_rank, c.cell_size, &queues_));
  } else {
    // Format runs before the queues publish their magic, which CellQueues::Attach waits for.
    MPIGPU_RETURN_IF_ERROR(CellQueues::Attach(dense, queue_bytes, &queues_, timeout_ms));
    if (fbox_bytes) MPIGPU_RETURN_IF_ERROR(Fastboxes::Attach(sparse, fbox_bytes, rank_, &fastboxes_));
  }
  cells_mem_ = dense;
  cells_bytes_ = SegmentPages(queue_bytes);
  if (fbox_bytes <= kPinnedFastboxBytes) {
    boxes_mem_ = sparse;
    boxes_bytes_ = fbox_bytes;
  }
  seq_out_.assign(size_, 0);
  seq_in_.assign(size_, 0);
  held_.resize(size_);
  box_to_.assign(size_, fastboxes_.valid() ? kBoxOff : kBoxFailed);  // MPIGPU_FASTBOX_SIZE=0: none
  box_from_.assign(size_, 0);
  return Status::Ok();
}

// Pins the cells and fastboxes (every rank's: this process unpacks from any of them) the first
// time a GPU buffer is copied into or out of one. A pageable cell costs the driver a staging copy,
// and a small pageable host-to-device copy runs on the SMs, which pays a context switch whenever
// ranks share a GPU (one H200, 2026-11-24: about 140 us per switch up to 64 KiB; pinned, the copy
// engine takes them from 32 KiB). MPIGPU_PIN_SHM=0 leaves them pageable.
void ShmChannel::PrepareDeviceCopy() {
  if (pin_tried_ || !pin_ || cells_bytes_ == 0) return;
  pin_tried_ = true;
  Status st = PinHostRange(cells_mem_, cells_bytes_);
  cells_pinned_ = st.ok();
  if (st.ok() && boxes_bytes_ > 0) {
    st = PinHostRange(boxes_mem_, boxes_bytes_);
    boxes_pinned_ = st.ok();
  }
  if (!st.ok()) MPIGPU_INFO("eager cells stay pageable: %s", st.ToString().c_str());
}

Status ShmChannel::Close() {
  Status st;
  if (std::exchange(cells_pinned_, false)) st.KeepFirst(UnpinHostRange(cells_mem_));
  if (std::exchange(boxes_pinned_, false)) st.KeepFirst(UnpinHostRange(boxes_mem_));
  return st;
}

bool ShmChannel::TrySendEagerNow(int dst, int tag, int context, const void* data, size_t n) {
  // The hot case, a slot of the pair's fastbox ring: written here, with no header to build.
  if (box_to_[dst] != kBoxOn || n > fastbox_size_) return false;
  Fastbox* box = fastboxes_.TryBegin(dst);
  if (box == nullptr) return false;
  if (n > 0) std::memcpy(box->data + sizeof(EagerHeader), data, n);
  PublishEagerBox(box, dst, tag, context, seq_out_[dst]++, n);
  return true;
}

// Completes an eager message whose payload is already in `box` (behind the compact header) and
// hands the slot to the receiver.
void ShmChannel::PublishEagerBox(Fastbox* box, int dst, int tag, int context, uint32_t seq,
                                 size_t bytes) {
  const EagerHeader e{MsgType::kEager, {}, tag, context, seq};
  std::memcpy(box->data, &e, sizeof e);
  box->len = static_cast<uint32_t>(sizeof e + bytes);
  fastboxes_.Publish(dst, box);
}

// Sender: the first message to a peer goes through a cell; it gets the pair's fastbox memory
// (sparse until now) and tells the receiver to watch the fastbox from this message on (in the
// pair's order, so no later fastbox message can be missed). If the memory cannot be had (a full
// /dev/shm), the pair keeps to the cells.
void ShmChannel::OpenFastbox(int dst, MsgHeader* h) {
  Status st = fastboxes_.PreparePair(dst);
  if (!st.ok()) {
    box_to_[dst] = kBoxFailed;
    MPIGPU_INFO("no fastbox to rank %d, cells only: %s", dst, st.ToString().c_str());
    return;
  }
  box_to_[dst] = kBoxOn;
  h->flags |= kFlagBoxOn;
}

bool ShmChannel::TrySend(int dst, MsgHeader* h, const Payload& p, Status* copy_error) {
  const bool eager = h->type == MsgType::kEager;
  // A fastbox slot carries an eager message behind the compact EagerHeader, others behind the
  // whole MsgHeader; a cell has a header line of its own.
  const size_t box_hdr = eager ? sizeof(EagerHeader) : sizeof(MsgHeader);
  unsigned char* payload_dst = nullptr;
  Fastbox* box = nullptr;
  Cell* cell = nullptr;
  if (box_to_[dst] == kBoxOn && p.len <= fastbox_size_ &&
      (box = fastboxes_.TryBegin(dst)) != nullptr) {
    payload_dst = box->data + box_hdr;
  } else if ((cell = queues_.Alloc(rank_)) != nullptr) {
    payload_dst = cell->payload();
  } else {
    return false;  // no cell free: the message waits in the pair's FIFO
  }
  if (p.user != nullptr) {
    if (p.user->loc.is_device()) PrepareDeviceCopy();
    Status st = host_->CopyPackedNow(PackDir::kPack, *p.user, p.offset, p.len, payload_dst);
    if (!st.ok()) {
      if (cell) queues_.Free(cell);  // an unpublished slot stays the sender's: nothing to undo
      *copy_error = std::move(st);
      return true;
    }
  } else if (p.len > 0) {
    std::memcpy(payload_dst, p.bytes, p.len);
  }
  h->seq = seq_out_[dst]++;
  if (cell && box_to_[dst] == kBoxOff) OpenFastbox(dst, h);
  if (box && eager) {
    PublishEagerBox(box, dst, h->tag, h->context, h->seq, p.len);
  } else if (box) {
    std::memcpy(box->data, h, sizeof *h);
    box->len = static_cast<uint32_t>(box_hdr + p.len);
    fastboxes_.Publish(dst, box);
  } else {
    static_assert(sizeof(cell->hdr) >= sizeof(MsgHeader), "header fits");
    std::memcpy(cell->hdr, h, sizeof *h);
    cell->payload_len = static_cast<uint32_t>(p.len);
    queues_.Enqueue(dst, cell);
  }
  return true;
}

bool ShmChannel::TryRecvEagerNow(int src, int tag, int context, void* data, size_t capacity,
                                 int spins, MsgInfo* info) {
  // A receive larger than a slot most likely waits for a cell: posted at once, it takes the cell
  // where it lands, and its posting is off the message's path. A held cell comes first.
  if (!box_from_[src] || capacity > fastbox_size_ || !held_[src].empty()) return false;
  for (int spin = 0; spin < spins; ++spin) {
    const Fastbox* b = fastboxes_.Peek(src);
    if (b == nullptr) {
      // A cell sends the receive down the full path at once, to be received where it lands
      // instead of being parked as unexpected and copied twice.
      if (queues_.Pending(rank_)) return false;
      continue;
    }
    // Only a compact eager header, well formed, in turn and of this receive's envelope; anything
    // else (a bad one included, which Poll reports) is the full path's.
    if (static_cast<MsgType>(b->data[0]) != MsgType::kEager || b->len < sizeof(EagerHeader) ||
        b->len > fastboxes_.data())
      return false;
    EagerHeader e;
    std::memcpy(&e, b->data, sizeof e);
    if (e.seq != seq_in_[src] || e.context != context || (tag != kAnyTag && e.tag != tag))
      return false;
    const size_t bytes = b->len - sizeof e;
    const size_t n = bytes < capacity ? bytes : capacity;
    if (n > 0) std::memcpy(data, b->data + sizeof e, n);
    *info = MsgInfo{src, e.tag, bytes};
    fastboxes_.Release(src);
    ++seq_in_[src];
    return true;
  }
  return false;
}

bool ShmChannel::Pending() const { return queues_.Pending(rank_); }

// Messages of one pair are handled in the order they were sent: a message whose number is not
// the next expected one waits (a queue cell in held_, a fastbox message in its box).
Status ShmChannel::Poll(ChannelSink* sink) {
  Status st;
  for (size_t i = 0; i < box_sources_.size() && st.ok(); ++i) st = DrainInOrder(sink, box_sources_[i]);
  for (int budget = 64; budget > 0 && st.ok(); --budget) {
    Cell* cell = queues_.Dequeue(rank_);
    if (cell == nullptr) break;
    MsgHeader h;
    std::memcpy(&h, cell->hdr, sizeof h);
    if (h.src < 0 || h.src >= size_) {
      queues_.Free(cell);
      return Status(Err::kInternal, "cell from unknown rank " + std::to_string(h.src));
    }
    if (h.seq != seq_in_[h.src]) {
      held_[h.src].push_back(cell);  // a fastbox message sent before it is still to come
      continue;
    }
    st = HandleCell(sink, cell);
    if (st.ok()) st = DrainInOrder(sink, h.src);
  }
  return st;
}

// Hands a message to the sink, after noting a sender that opened its fastbox.
inline Status ShmChannel::Handle(ChannelSink* sink, const MsgHeader& h, const unsigned char* payload,
                          size_t len) {
  if ((h.flags & kFlagBoxOn) && !box_from_[h.src]) {  // its later messages may use the fastbox
    box_from_[h.src] = 1;
    box_sources_.push_back(h.src);
  }
  return sink->Deliver(h, payload, len);
}

Status ShmChannel::HandleCell(ChannelSink* sink, Cell* cell) {
  MsgHeader h;
  std::memcpy(&h, cell->hdr, sizeof h);
  Status st;
  if (cell->payload_len > queues_.cell_payload())
    st = Status(Err::kInternal, "cell from rank " + std::to_string(h.src) + " has a bad length " +
                                    std::to_string(cell->payload_len));
  else
    st = Handle(sink, h, cell->payload(), cell->payload_len);
  queues_.Free(cell);
  ++seq_in_[h.src];
  return st;
}

// The header and payload of the fastbox message `b` from src: compact eager messages are
// widened to a MsgHeader.
Status ShmChannel::DecodeBox(int src, const Fastbox& b, MsgHeader* h,
                             const unsigned char** payload, size_t* len) const {
  const bool eager = static_cast<MsgType>(b.data[0]) == MsgType::kEager;
  const size_t hdr = eager ? sizeof(EagerHeader) : sizeof(MsgHeader);
  if (b.len < hdr || b.len > fastboxes_.data())
    return Status(Err::kInternal, "fastbox message from rank " + std::to_string(src) +
                                      " has a bad length " + std::to_string(b.len));
  *payload = b.data + hdr;
  *len = b.len - hdr;
  if (!eager) {
    std::memcpy(h, b.data, sizeof *h);
    h->src = src;  // the slot's pair says who sent it
    return Status::Ok();
  }
  EagerHeader e;
  std::memcpy(&e, b.data, sizeof e);
  *h = MsgHeader{};
  h->type = MsgType::kEager;
  h->src = src;
  h->tag = e.tag;
  h->context = e.context;
  h->seq = e.seq;
  h->bytes = *len;
  return Status::Ok();
}

// Handles `b`, the next message in src's fastbox ring, if it is the pair's next one (*took says
// so).
Status ShmChannel::TakeFastboxInOrder(ChannelSink* sink, int src, const Fastbox& b, bool* took) {
  *took = false;
  MsgHeader h;
  const unsigned char* payload = nullptr;
  size_t len = 0;
  MPIGPU_RETURN_IF_ERROR(DecodeBox(src, b, &h, &payload, &len));
  if (h.seq != seq_in_[src]) return Status::Ok();  // an earlier queue message goes first
  *took = true;
  Status st = Handle(sink, h, payload, len);
  fastboxes_.Release(src);
  ++seq_in_[src];
  return st;
}

// Handles src's waiting messages (held cells, the fastbox) while the next one in order is there.
Status ShmChannel::DrainInOrder(ChannelSink* sink, int src) {
  for (bool moved = true; moved;) {
    moved = false;
    std::vector<Cell*>& held = held_[src];
    for (size_t i = 0; i < held.size(); ++i) {
      MsgHeader h;
      std::memcpy(&h, held[i]->hdr, sizeof h);
      if (h.seq != seq_in_[src]) continue;
      Cell* cell = held[i];
      held.erase(held.begin() + static_cast<long>(i));
      MPIGPU_RETURN_IF_ERROR(HandleCell(sink, cell));
      moved = true;
      break;
    }
    if (moved) continue;
    // Looked at here: an empty ring, every poll's last look, costs no call.
    const Fastbox* b = box_from_[src] ? fastboxes_.Peek(src) : nullptr;
    if (b != nullptr) MPIGPU_RETURN_IF_ERROR(TakeFastboxInOrder(sink, src, *b, &moved));
  }
  return Status::Ok();
}

}  // namespace mpigpu::transport
