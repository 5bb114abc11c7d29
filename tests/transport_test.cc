// The intranode transport between forked ranks: every size around every threshold, vector
// layouts, wildcards and order, many outstanding requests, truncation, a dead peer.
// The same source runs as transport_test (MPIGPU_LMT=auto: CMA where the kernel allows it) and
// transport_ring_test (MPIGPU_LMT=ring with small units, so long messages wrap the ring often).
#include "transport/engine.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "transport/transport_config.h"
#include "memcopy/memcopy.h"
#include "memcopy/mps.h"
#include "memcopy/pattern.h"
#include "tests/gpu_util.h"
#include "tests/engine_util.h"
#include "tests/multiproc.h"
#include "memreg/pin_cache.h"
#include "memreg/pin_cache_config.h"
#include "pipeline/pipeline.h"

namespace mpigpu::transport {
namespace {

using mpigpu::testing::FillPattern;
using mpigpu::testing::FirstMismatch;
using mpigpu::testing::RunJob;

std::unique_ptr<Engine> Join() { return mpigpu::testing::JoinJob(); }

UserBuffer Host(void* p, size_t n) { return mpigpu::testing::HostBuffer(p, n); }

// Whether a contiguous device send of `bytes` to `peer` is offered as a CUDA IPC single copy.
bool OffersIpc(const Engine& e, int peer, size_t bytes) {
  const char* b = e.OfferingLmt(peer, MemLoc::Device(0), bytes);
  return b != nullptr && std::string(b) == "cuda-ipc";
}

void WaitOk(Engine& e, Request* r) {
  Status st = e.Wait(r, 60);
  if (!st.ok() || !r->status().ok())
    std::fprintf(stderr, "wait: %s / %s\n", st.ToString().c_str(), r->status().ToString().c_str());
  RANK_CHECK(st.ok() && r->status().ok());
}

// Sends buf to dst and waits until it is done.
void SendOk(Engine* e, const UserBuffer& buf, int dst, int tag, int ctx = 0) {
  Request* req = nullptr;
  RANK_CHECK(e->Isend(buf, dst, tag, ctx, &req).ok());
  WaitOk(*e, req);
  e->Release(req);
}

// Receives into buf and waits until it is done; what arrived.
MsgInfo RecvOk(Engine* e, const UserBuffer& buf, int src, int tag, int ctx = 0) {
  Request* req = nullptr;
  RANK_CHECK(e->Irecv(buf, src, tag, ctx, &req).ok());
  WaitOk(*e, req);
  const MsgInfo info = req->info();
  e->Release(req);
  return info;
}

// Runs body(rank, engine) in n forked ranks between Join() and Finalize(); "" on success.
std::string RunEngineJob(int n, const std::function<void(int, Engine*)>& body,
                         int timeout_s = 60) {
  return RunJob(n, [&](int rank) {
    auto e = Join();
    body(rank, e.get());
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, timeout_s);
}

// The same on GPUs, two ranks: body(rank, device, engine). Rank r uses device r mod count, or
// device 0 for both ranks when same_gpu. Every rank skips with fewer than min_gpus GPUs (the
// ranks decide: the parent must not touch CUDA before it forks).
// With `fast_path_or_two`, ranks also skip on one GPU unless it takes the shared-GPU fast path
// (MPS detected, or MPIGPU_GPU_COPIER_SHARED=1).
std::string RunGpuEngineJob(bool same_gpu, const std::function<void(int, int, Engine*)>& body,
                            int timeout_s, int min_gpus = 1, bool fast_path_or_two = false) {
  return RunJob(2, [&](int rank) {
    int gpus = CudaDeviceCount();
    if (gpus < min_gpus) return mpigpu::testing::kRankSkip;
    if (fast_path_or_two && gpus < 2 &&
        !KeepSharedGpuPath(GetTransportConfig().gpu_copier_shared, MpsOfDevice(0).active))
      return mpigpu::testing::kRankSkip;
    const int dev = same_gpu ? 0 : rank % gpus;
    RANK_CHECK(cudaSetDevice(dev) == cudaSuccess);
    auto e = Join();
    body(rank, dev, e.get());
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, timeout_s);
}

// In a rank: a device buffer holding host's bytes, ready for the engine.
void* DeviceCopyOf(const std::vector<unsigned char>& host) {
  void* dbuf = nullptr;
  RANK_CHECK(cudaMalloc(&dbuf, host.size()) == cudaSuccess);
  RANK_CHECK(cudaMemcpy(dbuf, host.data(), host.size(), cudaMemcpyHostToDevice) == cudaSuccess);
  // A pageable cudaMemcpy H2D may return before its DMA lands, and mpigpu copies on its own
  // non-blocking streams: as with any CUDA-aware MPI, the data must be ready first.
  RANK_CHECK(cudaDeviceSynchronize() == cudaSuccess);
  return dbuf;
}

// In a rank: host->size() bytes of dbuf into *host.
void CopyToHost(std::vector<unsigned char>* host, const void* dbuf) {
  RANK_CHECK(cudaMemcpy(host->data(), dbuf, host->size(), cudaMemcpyDeviceToHost) == cudaSuccess);
}

// A vector layout: count blocks of `block` bytes, `stride` bytes apart.
struct Shape {
  size_t count, block, stride;
  size_t extent() const { return (count - 1) * stride + block; }
  Layout layout() const { return Layout::Vector(count, block, stride); }
};

// In the receiver: dst, laid out as recv and filled with 0xEE before, holds the packed bytes of
// a sender buffer laid out as send and filled with PatternByte(seed, offset); recv's gaps are
// untouched.
void CheckVectorReceived(const unsigned char* dst, const Shape& send, const Shape& recv,
                         uint32_t seed) {
  const size_t packed = send.count * send.block;
  for (size_t p = 0; p < packed; ++p) {
    const size_t from = (p / send.block) * send.stride + p % send.block;
    const size_t to = (p / recv.block) * recv.stride + p % recv.block;
    if (dst[to] != mpigpu::testing::PatternByte(seed, from))
      std::fprintf(stderr, "seed %u: packed byte %zu wrong\n", seed, p);
    RANK_CHECK(dst[to] == mpigpu::testing::PatternByte(seed, from));
  }
  for (size_t b = 0; b + 1 < recv.count; ++b)
    for (size_t g = recv.block; g < recv.stride; ++g) RANK_CHECK(dst[b * recv.stride + g] == 0xEE);
}

std::vector<size_t> ThresholdSizes() {
  const TransportConfig& c = GetTransportConfig();
  const size_t eager = std::min(c.eager_limit, c.cell_size);
  const size_t unit = c.lmt_unit_host;
  const size_t ring = c.lmt_unit_host * c.lmt_units;
  return {0, 1, 7, eager - 1, eager, eager + 1, unit - 1, unit, unit + 1, ring - 1, ring, ring + 1,
          3 * ring + 5, size_t{64} << 20};
}

TEST(TransportTest, PingPongEverySizeAroundThresholds) {
  std::string r = RunEngineJob(2, [](int rank, Engine* e) {
    uint32_t seed = 1;
    for (size_t n : ThresholdSizes()) {
      std::vector<unsigned char> buf(n + 1, 0xEE);
      if (rank == 0) FillPattern(buf.data(), n, seed);
      for (int leg = 0; leg < 2; ++leg) {
        if ((leg == 0) == (rank == 0)) {
          SendOk(e, Host(buf.data(), n), 1 - rank, 5);
          continue;
        }
        const MsgInfo info = RecvOk(e, Host(buf.data(), n), 1 - rank, 5);
        RANK_CHECK(info.bytes == n && info.source == 1 - rank && info.tag == 5);
        if (FirstMismatch(buf.data(), n, seed) != -1)
          std::fprintf(stderr, "size %zu: mismatch at %lld\n", n, FirstMismatch(buf.data(), n, seed));
        RANK_CHECK(FirstMismatch(buf.data(), n, seed) == -1);
        RANK_CHECK(buf[n] == 0xEE);  // nothing written past the buffer
      }
      ++seed;
    }
  }, 120);
  EXPECT_EQ(r, "");
}

TEST(TransportTest, VectorLayoutsOnEitherSide) {
  std::string r = RunEngineJob(2, [](int rank, Engine* e) {
    const size_t eager = std::min(GetTransportConfig().eager_limit, GetTransportConfig().cell_size);
    // The sender's and the receiver's shapes, same packed size.
    for (size_t total_blocks : {size_t{3}, eager / 48 + 7, 3 * GetTransportConfig().lmt_unit_host / 48 + 11,
                                size_t{40000}}) {
      const Shape send{total_blocks, 48, 80}, recv{total_blocks * 2, 24, 40};
      if (rank == 0) {
        std::vector<unsigned char> src(send.extent());
        FillPattern(src.data(), src.size(), 9);
        SendOk(e, {src.data(), MemLoc::Host(), send.layout()}, 1, 1);
      } else {
        std::vector<unsigned char> dst(recv.extent(), 0xEE);
        const MsgInfo info = RecvOk(e, {dst.data(), MemLoc::Host(), recv.layout()}, 0, 1);
        RANK_CHECK(info.bytes == total_blocks * 48);
        CheckVectorReceived(dst.data(), send, recv, 9);
      }
    }
  }, 120);
  EXPECT_EQ(r, "");
}

TEST(TransportTest, WildcardsAndNonOvertakingOrder) {
  std::string r = RunEngineJob(3, [](int rank, Engine* e) {
    const int kMsgs = 200;
    if (rank > 0) {
      // Mixed sizes (eager and rendezvous) from each sender, same tag: must arrive in order.
      for (int i = 0; i < kMsgs; ++i) {
        size_t n = (i % 10 == 0) ? 200000 : 8;
        std::vector<unsigned char> buf(n);
        std::memcpy(buf.data(), &i, sizeof i);
        buf[n - 1] = static_cast<unsigned char>(rank);
        SendOk(e, Host(buf.data(), n), 0, 3);
      }
    } else {
      std::vector<int> next(3, 0);
      for (int k = 0; k < 2 * kMsgs; ++k) {
        std::vector<unsigned char> buf(200000);
        const MsgInfo info = RecvOk(e, Host(buf.data(), buf.size()), kAnySource, kAnyTag);
        int src = info.source, i;
        std::memcpy(&i, buf.data(), sizeof i);
        RANK_CHECK(src == 1 || src == 2);
        RANK_CHECK(info.tag == 3);
        RANK_CHECK(i == next[src]);  // per-sender order kept
        RANK_CHECK(buf[info.bytes - 1] == src);
        ++next[src];
      }
    }
  });
  EXPECT_EQ(r, "");
}

TEST(TransportTest, TagsAndContextsSelectMessages) {
  std::string r = RunEngineJob(2, [](int rank, Engine* e) {
    if (rank == 0) {
      for (int ctx : {0, 2})
        for (int tag : {1, 2}) {
          int v = ctx * 10 + tag;
          SendOk(e, Host(&v, sizeof v), 1, tag, ctx);
        }
    } else {
      // Receive in another order than sent: tag and context pick the message.
      for (int ctx : {2, 0})
        for (int tag : {2, 1}) {
          int v = -1;
          RecvOk(e, Host(&v, sizeof v), 0, tag, ctx);
          RANK_CHECK(v == ctx * 10 + tag);
        }
      bool found = true;
      MsgInfo info;
      RANK_CHECK(e->Iprobe(kAnySource, kAnyTag, 0, &found, &info).ok() && !found);
    }
  });
  EXPECT_EQ(r, "");
}

// A window of large messages in flight at once, rank 0 -> rank 1, both posted before any wait:
// on the ring, transfers of one unit size chain (the next one's CTS goes out while the current
// one drains) and a unit size change waits for the ring to drain. Each message has its own
// pattern; every byte and the guard byte after each buffer are checked.
void SendWindow(int rank, int dev, Engine* e, bool on_device, const std::vector<size_t>& sizes,
                uint32_t seed) {
  const MemLoc loc = on_device ? MemLoc::Device(dev) : MemLoc::Host();
  std::vector<std::vector<unsigned char>> host;
  std::vector<void*> dbufs;
  std::vector<Request*> reqs;
  for (size_t i = 0; i < sizes.size(); ++i) {
    host.emplace_back(sizes[i] + 1, 0xEE);
    if (rank == 0) FillPattern(host[i].data(), sizes[i], seed + i);
    void* p = on_device ? DeviceCopyOf(host[i]) : host[i].data();
    dbufs.push_back(on_device ? p : nullptr);
    Request* req = nullptr;
    const UserBuffer ub{p, loc, Layout::Contiguous(sizes[i])};
    RANK_CHECK((rank == 0 ? e->Isend(ub, 1, 7, 0, &req) : e->Irecv(ub, 0, 7, 0, &req)).ok());
    reqs.push_back(req);
  }
  for (Request* req : reqs) WaitOk(*e, req);
  for (size_t i = 0; i < sizes.size(); ++i) {
    e->Release(reqs[i]);
    if (rank == 1) {
      if (on_device) CopyToHost(&host[i], dbufs[i]);
      const long long bad = FirstMismatch(host[i].data(), sizes[i], seed + i);
      if (bad != -1 || host[i][sizes[i]] != 0xEE)
        std::fprintf(stderr, "window message %zu (%zu bytes): first mismatch at %lld\n", i,
                     sizes[i], bad);
      RANK_CHECK(bad == -1 && host[i][sizes[i]] == 0xEE);
    }
    if (dbufs[i]) cudaFree(dbufs[i]);
  }
}

TEST(TransportTest, WindowsOfLargeMessagesArriveWholeAndInOrder) {
  std::string r = RunEngineJob(2, [](int rank, Engine* e) {
    const size_t ring = GetTransportConfig().lmt_unit_host * GetTransportConfig().lmt_units;
    const std::vector<size_t> sizes = {3 * ring + 5, 3 * ring + 5, ring + 1, 100000,
                                       3 * ring + 5, ring - 1,     ring,     5 * ring + 3};
    for (int round = 0; round < 3; ++round) SendWindow(rank, 0, e, false, sizes, 300 + 20 * round);
  });
  EXPECT_EQ(r, "");
}

// A ring transfer that fails part-way (injected on the receiver) must not let the transfer
// chained behind it read its leftover units: both fail on the receiver, later ring transfers on
// that pair fail on both sides with a clear error, nothing hangs, and other messages still
// arrive whole.
TEST(TransportTest, AFailedRingTransferFailsItsChainInsteadOfCorruptingIt) {
  if (GetTransportConfig().lmt != LmtMode::kRing)
    GTEST_SKIP() << "needs MPIGPU_LMT=ring (transport_ring_test runs it)";
  std::string r = RunEngineJob(2, [](int rank, Engine* e) {
    const size_t ring = GetTransportConfig().lmt_unit_host * GetTransportConfig().lmt_units;
    const size_t big = 3 * ring + 5;
    std::vector<std::vector<unsigned char>> bufs(3, std::vector<unsigned char>(big));
    if (rank == 1) RANK_CHECK(e->InjectFault("ring-copy"));
    Request* reqs[3];
    for (int i = 0; i < 2; ++i) {  // A and B, chained on the ring
      if (rank == 0) FillPattern(bufs[i].data(), big, 60 + i);
      RANK_CHECK((rank == 0 ? e->Isend(Host(bufs[i].data(), big), 1, 20 + i, 0, &reqs[i])
                            : e->Irecv(Host(bufs[i].data(), big), 0, 20 + i, 0, &reqs[i]))
                     .ok());
    }
    for (int i = 0; i < 2; ++i) {
      RANK_CHECK(e->Wait(reqs[i], 60).ok());
      // The receiver fails both. A sender may have published all of its units before it heard
      // (the ring can hold the whole message), so its side may have succeeded.
      if (rank == 1 && reqs[i]->status().ok())
        std::fprintf(stderr, "ring message %d did not fail on the receiver\n", i);
      RANK_CHECK(rank == 0 || !reqs[i]->status().ok());
      e->Release(reqs[i]);
    }
    // An eager message still arrives; a later ring message fails on both sides, named.
    char small[100];
    if (rank == 0) {
      std::memset(small, 7, sizeof small);
      SendOk(e, Host(small, sizeof small), 1, 30);
      RANK_CHECK(e->Isend(Host(bufs[2].data(), big), 1, 31, 0, &reqs[2]).ok());
    } else {
      RecvOk(e, Host(small, sizeof small), 0, 30);
      for (char c : small) RANK_CHECK(c == 7);
      RANK_CHECK(e->Irecv(Host(bufs[2].data(), big), 0, 31, 0, &reqs[2]).ok());
    }
    RANK_CHECK(e->Wait(reqs[2], 60).ok());
    RANK_CHECK(!reqs[2]->status().ok());
    if (rank == 1)
      RANK_CHECK(reqs[2]->status().message().find("shared ring from rank 0") != std::string::npos);
    e->Release(reqs[2]);
  });
  EXPECT_EQ(r, "");
}

// TrySendNow (blocking sends' shortcut) never passes a message queued before it: with few
// cells (transport_cells_test) the destination's FIFO fills, TrySendNow declines, Isend queues;
// the receiver sees every message in order and whole. What it declines is sent by Isend.
TEST(TransportTest, SendNowKeepsOrderBehindQueuedSends) {
  std::string r = RunEngineJob(2, [](int rank, Engine* e) {
    const int kN = 400;
    const size_t eager = std::min(GetTransportConfig().eager_limit, GetTransportConfig().cell_size);
    std::vector<std::vector<unsigned char>> bufs(kN);
    std::vector<Request*> reqs;
    int now = 0;
    for (int i = 0; i < kN; ++i) {
      const size_t n = i % 3 == 0 ? eager : 8 + i % 50;  // cells and fastboxes mixed
      bufs[i].assign(n, 0);
      if (rank == 0) {
        FillPattern(bufs[i].data(), n, 500 + i);
        // Every third message goes through Isend without waiting, so the FIFO can fill.
        if (i % 3 != 1 && e->TrySendNow(Host(bufs[i].data(), n), 1, 9, 0)) {
          ++now;
          continue;
        }
        Request* q = nullptr;
        RANK_CHECK(e->Isend(Host(bufs[i].data(), n), 1, 9, 0, &q).ok());
        reqs.push_back(q);
      } else {
        const MsgInfo info = RecvOk(e, Host(bufs[i].data(), n), 0, 9);
        RANK_CHECK(info.bytes == n);
        if (FirstMismatch(bufs[i].data(), n, 500 + i) != -1)
          std::fprintf(stderr, "message %d arrived out of order or damaged\n", i);
        RANK_CHECK(FirstMismatch(bufs[i].data(), n, 500 + i) == -1);
      }
    }
    for (Request* q : reqs) {
      WaitOk(*e, q);
      e->Release(q);
    }
    if (rank == 0) RANK_CHECK(now > 0);  // the shortcut did run
  });
  EXPECT_EQ(r, "");
}

// A blocking receive's shortcut (TryRecvNow) takes a fastbox message only when it is the pair's
// next one, matches, and no posted receive or unexpected message could claim it first; whichever
// path a receive takes, it gets the same bytes and status.
TEST(TransportTest, RecvNowTakesOnlyTheNextMatchingMessage) {
  std::string r = RunEngineJob(2, [](int rank, Engine* e) {
    const size_t eager = std::min(GetTransportConfig().eager_limit, GetTransportConfig().cell_size);
    const size_t box = GetTransportConfig().fastbox_size;
    std::vector<unsigned char> big(eager), small(8), go(1);
    MsgInfo info;
    Status st;
    const int kRounds = 300;
    if (rank == 0) {
      FillPattern(big.data(), big.size(), 1);
      FillPattern(small.data(), small.size(), 2);
      SendOk(e, Host(big.data(), big.size()), 1, 1);  // a cell, then (with fastboxes) a slot
      SendOk(e, Host(small.data(), small.size()), 1, 2);
      RecvOk(e, Host(go.data(), 1), 1, 9);
      SendOk(e, Host(small.data(), small.size()), 1, 5);
      for (int i = 0; i < kRounds; ++i) {  // a ping-pong: the receiver waits for each message
        const size_t n = 1 + (i * 7) % std::max<size_t>(box, 1);
        std::vector<unsigned char> m(n);
        FillPattern(m.data(), n, 100 + i);
        SendOk(e, Host(m.data(), n), 1, 10 + i % 3);
        RecvOk(e, Host(go.data(), 1), 1, 9);
      }
      return;
    }
    // The pair's next message is the cell: the slot behind it is not taken out of order. (The
    // pause, without progress, lets both arrive first, so the slot is what the shortcut sees.)
    std::vector<unsigned char> got(small.size()), got_big(big.size());
    usleep(50 * 1000);
    RANK_CHECK(!e->TryRecvNow(Host(got.data(), got.size()), 0, 2, 0, 1 << 20, &info, &st));
    // A receive larger than a slot is posted at once (it most likely waits for a cell).
    RANK_CHECK(!e->TryRecvNow(Host(got_big.data(), box + 1), 0, 2, 0, 1 << 20, &info, &st));
    RANK_CHECK(RecvOk(e, Host(got.data(), got.size()), 0, 2).bytes == small.size());
    RANK_CHECK(FirstMismatch(got.data(), got.size(), 2) == -1);
    RANK_CHECK(RecvOk(e, Host(got_big.data(), got_big.size()), 0, 1).bytes == big.size());
    RANK_CHECK(FirstMismatch(got_big.data(), got_big.size(), 1) == -1);
    // A posted receive comes first in MPI's order.
    Request* posted = nullptr;
    RANK_CHECK(e->Irecv(Host(got.data(), got.size()), 0, kAnyTag, 0, &posted).ok());
    SendOk(e, Host(go.data(), 1), 0, 9);
    RANK_CHECK(!e->TryRecvNow(Host(small.data(), small.size()), 0, 5, 0, 1 << 20, &info, &st));
    WaitOk(*e, posted);
    RANK_CHECK(posted->info().tag == 5 && FirstMismatch(got.data(), got.size(), 2) == -1);
    e->Release(posted);
    // Every fourth receive is one byte short: truncated, the byte past it untouched.
    int shortcut = 0;
    for (int i = 0; i < kRounds; ++i) {
      const size_t n = 1 + (i * 7) % std::max<size_t>(box, 1);
      const size_t cap = i % 4 == 0 ? n - 1 : n;
      std::vector<unsigned char> m(n + 1, 0xEE);
      const UserBuffer into = Host(m.data(), cap);
      if (e->TryRecvNow(into, 0, kAnyTag, 0, 1 << 20, &info, &st)) {
        ++shortcut;
      } else {
        Request* q = nullptr;
        RANK_CHECK(e->Irecv(into, 0, kAnyTag, 0, &q).ok());
        RANK_CHECK(e->Wait(q, 60).ok());
        info = q->info();
        st = q->status();
        e->Release(q);
      }
      RANK_CHECK(info.source == 0 && info.tag == 10 + i % 3 && info.bytes == n);
      RANK_CHECK(cap == n ? st.ok() : st.code() == Err::kTruncate);
      RANK_CHECK(FirstMismatch(m.data(), cap, 100 + i) == -1);
      RANK_CHECK(m[cap] == 0xEE);
      SendOk(e, Host(go.data(), 1), 0, 9);
    }
    // The shortcut did run where the channel has one (the shared-memory one's fastboxes).
    if (box > 0 && e->ChannelCapsFor(0).fast_paths) RANK_CHECK(shortcut > 0);
    else RANK_CHECK(shortcut == 0);
  });
  EXPECT_EQ(r, "");
}

TEST(TransportTest, ThousandOutstandingRequestsCompleteInAnyOrder) {
  std::string r = RunEngineJob(2, [](int rank, Engine* e) {
    const int kN = 1000;
    std::vector<std::vector<int>> bufs(kN, std::vector<int>(64 * (1 + rank)));
    std::vector<Request*> reqs(kN);
    for (int i = 0; i < kN; ++i) {
      // Mostly small, some rendezvous-sized; both ranks send and receive at once.
      size_t n = (i % 50 == 0) ? 100000 : 64;
      bufs[i].assign(n / sizeof(int) + 1, rank == 0 ? i : -1);
      Status st = rank == 0 ? e->Isend(Host(bufs[i].data(), n), 1, i, 0, &reqs[i])
                            : e->Irecv(Host(bufs[i].data(), n), 0, i, 0, &reqs[i]);
      RANK_CHECK(st.ok());
    }
    // Wait in reverse order.
    for (int i = kN - 1; i >= 0; --i) {
      WaitOk(*e, reqs[i]);
      if (rank == 1) {
        size_t n = (i % 50 == 0) ? 100000 : 64;
        for (size_t k = 0; k < n / sizeof(int); ++k) RANK_CHECK(bufs[i][k] == i);
      }
      e->Release(reqs[i]);
    }
  });
  EXPECT_EQ(r, "");
}

TEST(TransportTest, RandomStressWithChecksums) {
  const unsigned seed = 20261122;
  std::string r = RunEngineJob(4, [seed](int rank, Engine* e) {
    std::mt19937 rng(seed);  // the same plan in every rank
    const int kMsgs = 300;
    struct Msg { int src, dst, tag; size_t n; };
    std::vector<Msg> plan;
    for (int i = 0; i < kMsgs; ++i) {
      int src = rng() % 4, dst = rng() % 4;
      size_t n = std::vector<size_t>{0, 1, 100, 65535, 65536, 65537, 300000}[rng() % 7];
      plan.push_back({src, dst, static_cast<int>(rng() % 4), n});
    }
    std::vector<std::vector<unsigned char>> sbuf, rbuf;
    std::vector<Request*> reqs;
    std::vector<int> recv_index;
    for (int i = 0; i < kMsgs; ++i) {
      const Msg& m = plan[i];
      if (m.src == rank) {
        sbuf.emplace_back(m.n);
        FillPattern(sbuf.back().data(), m.n, 1000 + i);
        Request* req;
        RANK_CHECK(e->Isend(Host(sbuf.back().data(), m.n), m.dst, i, 0, &req).ok());
        reqs.push_back(req);
      }
      if (m.dst == rank) {
        rbuf.emplace_back(m.n);
        Request* req;
        RANK_CHECK(e->Irecv(Host(rbuf.back().data(), m.n), m.src, i, 0, &req).ok());
        reqs.push_back(req);
        recv_index.push_back(i);
      }
    }
    for (Request* req : reqs) WaitOk(*e, req);
    for (size_t k = 0; k < recv_index.size(); ++k) {
      int i = recv_index[k];
      if (FirstMismatch(rbuf[k].data(), plan[i].n, 1000 + i) != -1)
        std::fprintf(stderr, "stress seed %u: message %d corrupt\n", seed, i);
      RANK_CHECK(FirstMismatch(rbuf[k].data(), plan[i].n, 1000 + i) == -1);
    }
    for (Request* req : reqs) e->Release(req);
  }, 120);
  EXPECT_EQ(r, "") << "seed " << seed;
}

TEST(TransportTest, TruncationReportsTheRealSizeAndLeavesTheRestUntouched) {
  std::string r = RunEngineJob(2, [](int rank, Engine* e) {
    for (size_t n : {size_t{100}, size_t{1} << 20}) {
      if (rank == 0) {
        std::vector<unsigned char> buf(n);
        FillPattern(buf.data(), n, 4);
        SendOk(e, Host(buf.data(), n), 1, 0);
      } else {
        std::vector<unsigned char> buf(n, 0xEE);
        Request* req;
        RANK_CHECK(e->Irecv(Host(buf.data(), n / 2), 0, 0, 0, &req).ok());
        RANK_CHECK(e->Wait(req, 60).ok());
        RANK_CHECK(req->status().code() == Err::kTruncate);
        RANK_CHECK(req->info().bytes == n);
        RANK_CHECK(FirstMismatch(buf.data(), n / 2, 4) == -1);
        for (size_t i = n / 2; i < n; ++i) RANK_CHECK(buf[i] == 0xEE);
        e->Release(req);
      }
    }
  });
  EXPECT_EQ(r, "");
}

TEST(TransportTest, BadArgumentsAreRejectedAndNothingIsSent) {
  std::string r = RunEngineJob(2, [](int, Engine* e) {
    char b[8];
    Request* req = nullptr;
    RANK_CHECK(e->Isend(Host(b, 8), 2, 0, 0, &req).code() == Err::kInvalidArg && req == nullptr);
    RANK_CHECK(e->Isend(Host(b, 8), -1, 0, 0, &req).code() == Err::kInvalidArg);
    RANK_CHECK(e->Isend(Host(b, 8), 1, -5, 0, &req).code() == Err::kInvalidArg);
    RANK_CHECK(e->Isend(Host(nullptr, 8), 1, 0, 0, &req).code() == Err::kInvalidArg);
    RANK_CHECK(e->Irecv(Host(b, 8), 7, 0, 0, &req).code() == Err::kInvalidArg);
    RANK_CHECK(e->Irecv(Host(b, 8), 0, -7, 0, &req).code() == Err::kInvalidArg);
    RANK_CHECK(e->Irecv({b, MemLoc::Host(), Layout::Vector(3, 4, 2)}, 0, 0, 0, &req).code() ==
               Err::kInvalidArg);
    bool found = true;
    MsgInfo info;
    RANK_CHECK(e->Iprobe(kAnySource, kAnyTag, 0, &found, &info).ok() && !found);
  });
  EXPECT_EQ(r, "");
}

TEST(TransportTest, ADeadPeerFailsTheBlockedReceiveWithinSeconds) {
  std::string r = RunJob(2, [](int rank) {
    auto e = Join();
    if (rank == 1) _exit(3);  // dies without a word
    char b[4];
    Request* req;
    RANK_CHECK(e->Irecv(Host(b, 4), 1, 0, 0, &req).ok());
    auto t0 = std::chrono::steady_clock::now();
    RANK_CHECK(e->Wait(req, 20).ok());
    RANK_CHECK(req->status().code() == Err::kPeerFailed);
    RANK_CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    // Sends to it fail at once too.
    Request* s;
    RANK_CHECK(e->Isend(Host(b, 4), 1, 0, 0, &s).ok() && s->done() &&
               s->status().code() == Err::kPeerFailed);
    e->Release(s);
    e->Release(req);
    return 0;
  }, 60, {1});
  EXPECT_EQ(r, "");
}

// GPU buffers through the engine: every location pair, sizes around the thresholds. Rank r uses
// device r mod count, or device 0 for both ranks (IPC within one GPU).
std::string RunGpuPairs(bool same_gpu) {
  return RunGpuEngineJob(same_gpu, [](int rank, int dev, Engine* e) {
    uint32_t seed = 50;
    const size_t unit = GetTransportConfig().lmt_unit_gpu, small = GetTransportConfig().lmt_unit_gpu_min;
    const size_t copier = GetTransportConfig().gpu_copier_max;  // resident kernel up to it, then copy engine
    std::vector<size_t> sizes = ThresholdSizes();
    // Around both unit bounds and where the adaptive unit doubles (16 units of the smallest).
    for (size_t extra : {unit - 1, unit, unit + 1, 9 * unit + 3, small - 1, small + 1,
                         kLmtGpuSplit * small, kLmtGpuSplit * small + 1, copier, copier + 1})
      sizes.push_back(extra);
    for (int send_dev : {0, 1})
      for (int recv_dev : {0, 1})
        for (size_t n : sizes) {
          ++seed;
          const bool me_send = rank == 0;
          const bool on_dev = me_send ? send_dev : recv_dev;
          MemLoc loc = on_dev ? MemLoc::Device(dev) : MemLoc::Host();
          std::vector<unsigned char> host(n + 1, 0xEE);
          if (me_send) FillPattern(host.data(), n, seed);
          void* dbuf = on_dev ? DeviceCopyOf(host) : nullptr;
          UserBuffer buf{on_dev ? dbuf : host.data(), loc, Layout::Contiguous(n)};
          if (me_send) {
            SendOk(e, buf, 1, 1);
          } else {
            RecvOk(e, buf, 0, 1);
            if (on_dev) CopyToHost(&host, dbuf);
            long long bad = FirstMismatch(host.data(), n, seed);
            if (bad != -1)
              std::fprintf(stderr, "%s->%s %zu bytes: first mismatch at %lld\n", send_dev ? "D" : "H",
                           recv_dev ? "D" : "H", n, bad);
            RANK_CHECK(bad == -1 && host[n] == 0xEE);
          }
          if (dbuf) cudaFree(dbuf);
        }
  }, 300);
}

TEST(TransportGpuTest, EveryLocationPairAroundThresholds) {
  std::string r = RunGpuPairs(false);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

TEST(TransportGpuTest, BothRanksOnOneGpu) {
  std::string r = RunGpuPairs(true);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Pageable host buffers reused (the pin cache, memreg/pin_cache.h): one host buffer per rank,
// mapped once, carries every size around the thresholds three times (first use unpinned, then
// pinned, then a hit), new bytes each time, against device buffers on the other side; halfway the
// host buffer's memory is replaced at the same address (munmap, mmap MAP_FIXED): the bytes that
// arrive must be the new ones.
std::string RunGpuReusedPageable(bool same_gpu) {
  return RunGpuEngineJob(same_gpu, [](int rank, int dev, Engine* e) {
    uint32_t seed = 900;
    const size_t pin_min = memreg::GetPinCacheConfig().min_bytes;
    const size_t ipc_min = GetTransportConfig().shared_gpu_ipc_min;
    const size_t cap = (24 << 20) + 4096;
    // Thresholds set to 0 (MPIGPU_SHARED_GPU_IPC_MIN=0, as the MPS runs set) or near the buffer's
    // end leave out the sizes they would make impossible (0 - 1 wraps around).
    std::vector<size_t> sizes;
    for (size_t n : {size_t{4096}, pin_min - 1, pin_min, pin_min + 4097, size_t{1} << 20,
                     ipc_min - 1, ipc_min, ipc_min + 12345, size_t{24} << 20})
      if (n > 0 && n < cap) sizes.push_back(n);
    void* m = mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    RANK_CHECK(m != MAP_FAILED);
    unsigned char* host = static_cast<unsigned char*>(m);
    for (int host_sends : {1, 0}) {
      if (host_sends == 0) {  // the memory goes and comes back at the same address
        RANK_CHECK(munmap(host, cap) == 0);
        RANK_CHECK(mmap(host, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                        -1, 0) == host);
      }
      for (size_t n : sizes) {
        for (int use = 0; use < 3; ++use) {
          ++seed;
          // Rank 0 sends: from its host buffer (host_sends) or a device buffer; rank 1 receives
          // into the other kind.
          const bool me_send = rank == 0;
          const bool on_host = me_send == static_cast<bool>(host_sends);
          std::vector<unsigned char> img(n + 1, 0xEE);
          if (me_send) FillPattern(img.data(), n, seed);
          void* dbuf = on_host ? nullptr : DeviceCopyOf(img);
          if (on_host) std::memcpy(host, img.data(), n + 1);
          UserBuffer buf{on_host ? static_cast<void*>(host) : dbuf,
                         on_host ? MemLoc::Host() : MemLoc::Device(dev), Layout::Contiguous(n)};
          if (me_send) {
            SendOk(e, buf, 1, 1);
          } else {
            RecvOk(e, buf, 0, 1);
            if (on_host) std::memcpy(img.data(), host, n + 1);
            else CopyToHost(&img, dbuf);
            const long long bad = FirstMismatch(img.data(), n, seed);
            if (bad != -1)
              std::fprintf(stderr, "%s %zu bytes, use %d: first mismatch at %lld\n",
                           host_sends ? "H->D" : "D->H", n, use + 1, bad);
            RANK_CHECK(bad == -1 && img[n] == 0xEE);
          }
          if (dbuf) cudaFree(dbuf);
        }
      }
    }
    const auto st = memreg::PinCacheStats();
    std::fprintf(stderr, "rank %d pin cache: %s; hits %llu, registrations %llu, first uses %llu\n",
                 rank, memreg::PinCacheActive() ? "on" : memreg::PinCacheWhyNot(),
                 (unsigned long long)st.hits, (unsigned long long)st.registrations,
                 (unsigned long long)st.first_uses);
    munmap(host, cap);
  }, 300);
}

TEST(TransportGpuTest, ReusedPageableHostBuffers) {
  std::string r = RunGpuReusedPageable(false);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

TEST(TransportGpuTest, ReusedPageableHostBuffersOnOneGpu) {
  std::string r = RunGpuReusedPageable(true);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Vector layouts on device memory on either side (halo columns): one strided copy through the
// resident kernel (small) or the copy engine (large), or the ring when the shapes differ.
TEST(TransportGpuTest, DeviceVectorLayouts) {
  std::string r = RunGpuEngineJob(false, [](int rank, int dev, Engine* e) {
    struct Case { Shape send, recv; };
    std::vector<Case> cases;
    for (size_t rows : {size_t{64}, size_t{2048}, size_t{65536}}) {
      cases.push_back({{rows, 8, 4096}, {rows, 8, 2048}});       // column to column
      cases.push_back({{rows, 8, 4096}, {1, rows * 8, rows * 8}});  // column to packed
      cases.push_back({{1, rows * 8, rows * 8}, {rows, 8, 512}});   // packed to column
      cases.push_back({{rows, 16, 64}, {rows * 2, 8, 24}});       // different blocks: the ring
    }
    uint32_t seed = 900;
    for (const Case& c : cases) {
      ++seed;
      const Shape& me = rank == 0 ? c.send : c.recv;
      std::vector<unsigned char> host(me.extent(), 0xEE);
      if (rank == 0) FillPattern(host.data(), host.size(), seed);
      void* dbuf = DeviceCopyOf(host);
      const UserBuffer ub{dbuf, MemLoc::Device(dev), me.layout()};
      if (rank == 0) {
        SendOk(e, ub, 1, 4);
      } else {
        RecvOk(e, ub, 0, 4);
        CopyToHost(&host, dbuf);
        CheckVectorReceived(host.data(), c.send, c.recv, seed);
      }
      cudaFree(dbuf);
    }
  }, 180);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Windows of device messages whose sizes make the adaptive ring unit change in mid-window
// (with the defaults: 512 KiB for 1 MiB, 1 MiB just above, 2 MiB for 3-4 MiB, 4 MiB for 16 MiB):
// chained runs and drains mix.
TEST(TransportGpuTest, WindowsOfDeviceMessagesWithChangingUnits) {
  std::string r = RunGpuEngineJob(false, [](int rank, int dev, Engine* e) {
    const size_t mib = size_t{1} << 20;
    const std::vector<size_t> sizes = {mib, mib, mib + 3, 4 * mib, 16 * mib, 16 * mib - 1,
                                       3 * mib, mib, 16 * mib, 700000};
    SendWindow(rank, dev, e, true, sizes, 1500);
  }, 180);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// A freed and reallocated send buffer (often at the same address) must never be read through
// the receiver's stale IPC mapping: each message carries the bytes of the buffer it was sent from.
TEST(TransportGpuTest, ReallocatedSendBufferCarriesNewBytes) {
  std::string r = RunGpuEngineJob(false, [](int rank, int dev, Engine* e) {
    for (size_t n : {size_t{4096}, size_t{3} << 20}) {
      void* seen[3] = {};
      for (int round = 0; round < 3; ++round) {
        const uint32_t seed = 700 + round;
        std::vector<unsigned char> host(n);
        void* dbuf = nullptr;
        if (rank == 0) {
          FillPattern(host.data(), n, seed);
          dbuf = DeviceCopyOf(host);
          SendOk(e, {dbuf, MemLoc::Device(dev), Layout::Contiguous(n)}, 1, round);
          seen[round] = dbuf;
        } else {
          RANK_CHECK(cudaMalloc(&dbuf, n) == cudaSuccess);
          RecvOk(e, {dbuf, MemLoc::Device(dev), Layout::Contiguous(n)}, 0, round);
          CopyToHost(&host, dbuf);
          RANK_CHECK(FirstMismatch(host.data(), n, seed) == -1);
        }
        RANK_CHECK(cudaFree(dbuf) == cudaSuccess);
      }
      if (rank == 0 && seen[0] == seen[1])
        std::fprintf(stderr, "note: reallocation reused address %p (the stale case ran)\n", seen[0]);
    }
  }, 120);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Device sends whose receiver copies them on its resident kernel complete when that kernel
// stores the send's token into the sender's notify slot, with no FIN. Windows of 100 sends (more
// than the 64 slots: the rest are answered by FIN) mix copier sizes (contiguous up to
// MPIGPU_GPU_COPIER_MAX, columns) with copy-engine ones (FIN); slots are reused across rounds.
// Every byte is checked, and the sender counts exactly the sends its slots completed.
TEST(TransportGpuTest, DeviceSendsCompleteThroughTheReceiversKernel) {
  std::string r = RunGpuEngineJob(false, [](int rank, int dev, Engine* e) {
    constexpr size_t kWindow = 100, kRounds = 3, kSpan = 64 << 10, kSlots = 64;
    const size_t copier_max = GetTransportConfig().gpu_copier_max;
    const size_t strided_max = GetTransportConfig().gpu_copier_strided_max;
    if (copier_max < 4096 || copier_max + 8 > kSpan || strided_max < 4096)
      std::fprintf(stderr, "this test assumes MPIGPU_GPU_COPIER_MAX in [4K, 64K - 8] and "
                           "MPIGPU_GPU_COPIER_STRIDED_MAX >= 4K\n");
    RANK_CHECK(copier_max >= 4096 && copier_max + 8 <= kSpan && strided_max >= 4096);
    const bool ipc = OffersIpc(*e, 1 - rank, copier_max);
    // Message i's shape within its own kSpan bytes.
    auto shape = [&](size_t i) -> Shape {
      switch (i % 5) {
        case 0: return {1, 8, 8};
        case 1: return {1, 4096, 4096};
        case 2: return {1, copier_max, copier_max};
        case 3: return {512, 8, 64};           // a column
        default: return {1, copier_max + 8, copier_max + 8};  // the copy engine's
      }
    };
    auto on_copier = [&](size_t i) { return i % 5 != 4; };
    char* base = nullptr;
    RANK_CHECK(cudaMalloc(reinterpret_cast<void**>(&base), kWindow * kSpan) == cudaSuccess);
    uint64_t expected = 0;
    for (size_t round = 0; round < kRounds; ++round) {
      const uint32_t seed = 4000 + static_cast<uint32_t>(round);
      if (rank == 0) {
        RANK_CHECK(testing::FillPatternOnDevice(base, kWindow * kSpan, seed) == cudaSuccess);
      } else {
        RANK_CHECK(cudaMemset(base, 0xEE, kWindow * kSpan) == cudaSuccess);
      }
      RANK_CHECK(cudaDeviceSynchronize() == cudaSuccess);
      std::vector<Request*> reqs(kWindow);
      for (size_t i = 0; i < kWindow; ++i) {
        const UserBuffer ub{base + i * kSpan, MemLoc::Device(dev), shape(i).layout()};
        Status st = rank == 0 ? e->Isend(ub, 1, static_cast<int>(i), 0, &reqs[i])
                              : e->Irecv(ub, 0, static_cast<int>(i), 0, &reqs[i]);
        RANK_CHECK(st.ok());
        if (rank == 0 && i < kSlots && on_copier(i)) ++expected;  // the first 64 have slots
      }
      for (Request* q : reqs) {
        WaitOk(*e, q);
        e->Release(q);
      }
      if (rank == 1) {
        std::vector<unsigned char> host(kWindow * kSpan);
        CopyToHost(&host, base);
        for (size_t i = 0; i < kWindow; ++i) {
          const Shape sh = shape(i);
          const unsigned char* got = host.data() + i * kSpan;
          for (size_t b = 0; b < kSpan; ++b) {
            const bool sent = b < sh.extent() && b % sh.stride < sh.block;
            const unsigned char want =
                sent ? mpigpu::testing::PatternByte(seed, i * kSpan + b) : 0xEE;
            if (got[b] != want)
              std::fprintf(stderr, "round %zu message %zu byte %zu: %u, want %u\n", round, i, b,
                           got[b], want);
            RANK_CHECK(got[b] == want);
          }
        }
      }
    }
    if (rank == 0) {
      const uint64_t notified = e->stats().sends_notified;
      if (notified != (ipc ? expected : 0))
        std::fprintf(stderr, "sends completed by the peer's kernel: %llu, want %llu\n",
                     static_cast<unsigned long long>(notified),
                     static_cast<unsigned long long>(ipc ? expected : 0));
      RANK_CHECK(notified == (ipc ? expected : 0));
    }
    RANK_CHECK(cudaFree(base) == cudaSuccess);
  }, 180, /*min_gpus=*/1, /*fast_path_or_two=*/true);
  if (r == mpigpu::testing::kSkipped)
    GTEST_SKIP() << "needs two GPUs (the resident copy kernel is off when ranks share one, "
                    "unless MPS serves it or MPIGPU_GPU_COPIER_SHARED=1)";
  EXPECT_EQ(r, "");
}

// Device sends to a rank on the same GPU (no MPS declared) below MPIGPU_SHARED_GPU_IPC_MIN are
// not offered as an IPC single copy; to a rank on another GPU, or from that size, they are.
TEST(TransportGpuTest, SmallDeviceSendsToARankOnTheSameGpuSkipTheIpcCopy) {
  std::string r = RunGpuEngineJob(false, [](int rank, int, Engine* e) {
    const TransportConfig& c = GetTransportConfig();
    if (c.lmt != LmtMode::kAuto) return;  // forced back-ends decide alone
    const std::vector<std::string> path = e->LmtPath(1 - rank);
    if (std::find(path.begin(), path.end(), "cuda-ipc") == path.end()) return;  // not offered
    const bool shared = CudaDeviceCount() == 1 &&
                        !KeepSharedGpuPath(c.gpu_copier_shared, MpsOfDevice(0).active);
    const int peer = 1 - rank;
    RANK_CHECK(OffersIpc(*e, peer, c.shared_gpu_ipc_min));
    if (c.shared_gpu_ipc_min > 0) RANK_CHECK(OffersIpc(*e, peer, c.shared_gpu_ipc_min - 1) == !shared);
    RANK_CHECK(OffersIpc(*e, peer, 8) == (!shared || c.shared_gpu_ipc_min <= 8));
  }, 60);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// A receive into a pointer tagged GPU that is not device memory. On the resident kernel (two GPUs,
// or MPIGPU_GPU_COPIER_SHARED=1) the copy faults and the receiver's CUDA context is lost; on the
// copy engine the copy is refused and the context lives on (both seen on one H200 on 2026-11-24).
// Either way no end waits: the receive ends with the error; a single-copy (CUDA IPC) send ends with
// it too, by the receiver's FIN, since the kernel never stored its token (an eager send, as with
// MPIGPU_LMT=ring, is done once packed). The job goes on: a host message passes, and a later
// device message arrives whole if the receiver's context lived, else fails on both ends. Under
// MPS the fault also takes the sender's context (one server for both): then no later device
// message is tried.
TEST(TransportGpuTest, AFaultingReceiveCopyEndsBothEndsInsteadOfHanging) {
  std::string r = RunGpuEngineJob(false, [](int rank, int dev, Engine* e) {
    constexpr size_t kBytes = 4096;  // a copier size
    const bool ipc = OffersIpc(*e, 1 - rank, kBytes);
    char* dbuf = nullptr;
    RANK_CHECK(cudaMalloc(reinterpret_cast<void**>(&dbuf), kBytes) == cudaSuccess);
    RANK_CHECK((rank == 0 ? testing::FillPatternOnDevice(dbuf, kBytes, 77)
                          : cudaMemset(dbuf, 0xEE, kBytes)) == cudaSuccess);
    RANK_CHECK(cudaDeviceSynchronize() == cudaSuccess);
    const UserBuffer dev_buf{dbuf, MemLoc::Device(dev), Layout::Contiguous(kBytes)};
    // Waits for q, which must end (not time out) with an ok status iff `ok`.
    auto must_end = [&](Request* q, bool ok, const char* what) {
      Status st = e->Wait(q, 60);
      if (!st.ok() || q->status().ok() != ok)
        std::fprintf(stderr, "rank %d, %s: wait %s, request %s\n", rank, what,
                     st.ToString().c_str(), q->status().ToString().c_str());
      RANK_CHECK(st.ok() && q->status().ok() == ok);
      e->Release(q);
    };
    unsigned char alive = 0;  // the receiver's CUDA context after the fault
    // The sender's: under MPS the ranks' contexts share one server, and a fault reaches both.
    unsigned char sender_alive = 0;
    Request* q = nullptr;
    if (rank == 0) {
      // A single-copy send ends as its receive does; an eager one succeeds once packed.
      RANK_CHECK(e->Isend(dev_buf, 1, 1, 0, &q).ok());
      must_end(q, !ipc, "device send into the faulting receive");
      RecvOk(e, Host(&alive, 1), 1, 2);
      sender_alive = cudaDeviceSynchronize() == cudaSuccess;
      SendOk(e, Host(&sender_alive, 1), 1, 4);
      if (sender_alive) {  // a lost context fails the send at once, with nothing sent
        RANK_CHECK(e->Isend(dev_buf, 1, 3, 0, &q).ok());
        must_end(q, !ipc || alive, "device send after the fault");
      }
    } else {
      void* unmapped = reinterpret_cast<void*>(uintptr_t{0x1000});
      RANK_CHECK(e->Irecv({unmapped, MemLoc::Device(dev), Layout::Contiguous(kBytes)}, 0, 1, 0,
                          &q).ok());
      must_end(q, false, "receive into an unmapped address");
      alive = cudaDeviceSynchronize() == cudaSuccess;
      std::fprintf(stderr, "rank 1: CUDA context %s after the fault\n", alive ? "alive" : "lost");
      // mpigpu reported the refused copy in its status and left no error for our next check.
      if (alive) RANK_CHECK(cudaGetLastError() == cudaSuccess);
      SendOk(e, Host(&alive, 1), 0, 2);
      RecvOk(e, Host(&sender_alive, 1), 0, 4);
      std::fprintf(stderr, "rank 0: CUDA context %s after the fault\n",
                   sender_alive ? "alive" : "lost");
      if (sender_alive) {
        RANK_CHECK(e->Irecv(dev_buf, 0, 3, 0, &q).ok());
        must_end(q, alive, "device receive after the fault");
      }
      if (alive && sender_alive) {
        unsigned long long bad = 1;
        RANK_CHECK(testing::CountMismatchesOnDevice(dbuf, kBytes, 77, &bad) == cudaSuccess);
        RANK_CHECK(bad == 0);
      }
      // A faulted kernel's stop reports the fault; the harness's Finalize then returns Ok.
      Status fin = e->Finalize();
      std::fprintf(stderr, "rank 1 finalize after the fault: %s\n", fin.ToString().c_str());
    }
    if (rank == 1 ? alive : sender_alive) RANK_CHECK(cudaFree(dbuf) == cudaSuccess);
  }, 180);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

TEST(TransportTest, OneRankJobWithoutLauncher) {
  pid_t pid = fork();
  if (pid == 0) {
    unsetenv("MPIGPU_RANK");
    JobInfo job;
    RANK_CHECK(JobInfo::FromEnvironment(&job).ok() && job.size == 1 && job.rank == 0);
    std::unique_ptr<Engine> e;
    RANK_CHECK(Engine::Create(job, &e).ok());
    for (size_t n : {size_t{10}, size_t{1} << 20}) {  // eager and rendezvous to self
      std::vector<unsigned char> a(n), b(n);
      FillPattern(a.data(), n, 3);
      Request *s, *q;
      RANK_CHECK(e->Irecv(Host(b.data(), n), 0, 1, 0, &q).ok());
      RANK_CHECK(e->Isend(Host(a.data(), n), 0, 1, 0, &s).ok());
      WaitOk(*e, s);
      WaitOk(*e, q);
      RANK_CHECK(FirstMismatch(b.data(), n, 3) == -1);
      e->Release(s);
      e->Release(q);
    }
    RANK_CHECK(e->Finalize().ok());
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace mpigpu::transport
