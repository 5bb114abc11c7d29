// What the ibverbs rendezvous back-end (ib_lmt.h) needs of the ibverbs channel's connections:
// the device, and RDMA READs on the connection a peer opened to this rank (the one its RTS came
// on), their completions handed back; the completion notice (FIN) as a zero-byte RDMA WRITE with
// immediate on that same connection, fenced behind the READs, and such notices arriving on the
// connections this rank opened (each of which keeps kFinSlots receives posted for them). A narrow interface of the ib layer, so that the LMT
// back-end never sees the channel itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "internode/ib/ib_device.h"
#include "memcopy/status.h"

namespace mpigpu::internode {

class IbLinks {
 public:
  // A READ finished: `ok`, else `why`.
  using ReadDone = std::function<void(uint64_t cookie, bool ok, const std::string& why)>;
  // A FIN came from `peer` with `imm` (on the connection we opened to it).
  using FinDone = std::function<void(int peer, uint32_t imm)>;
  // FINs a connection we open can take at once: a sender offers write-with-immediate FINs for
  // at most this many rendezvous messages in flight per peer.
  static constexpr int kFinSlots = 32;

  virtual const IbDevice& device() const = 0;
  virtual void SetReadDone(ReadDone done) = 0;
  // Posts a READ of `len` bytes from the peer's (raddr, rkey) into (laddr, lkey), on the
  // connection `peer` opened to us. *posted false: no room now (try again later). An error:
  // the connection is gone (the peer is lost).
  virtual Status PostRead(int peer, void* laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey,
                          uint32_t len, uint64_t cookie, bool* posted) = 0;
  virtual void SetFinDone(FinDone done) = 0;
  // Posts the FIN `imm` to `peer` behind the READs posted before it (IBV_SEND_FENCE: it leaves
  // once they completed, so the sender's buffer was read), on the connection `peer` opened to us.
  // *posted false: no room now. An error: the connection is gone.
  virtual Status PostFin(int peer, uint32_t imm, bool* posted) = 0;

 protected:
  ~IbLinks() = default;
};

}  // namespace mpigpu::internode
