// The TCP netmod's data path (transport/sock/stream_channel.h, transport/lmt/chan_lmt.h) between
// two forked ranks of this node over loopback (MPIGPU_SHM=0): sends lent from the user buffer,
// payloads read straight into the receive buffer, device buffers staged through pinned chunks.
// For every pair of buffer locations (host only without a GPU; H->D, D->H, D->D skip with a
// reason without one): sizes around the eager limit, the frame (chunk) size and the staging
// ring's size; receive buffers smaller than the message; vector layouts; a peer killed in the
// middle of a transfer, either end; a staging copy that fails (GPU).
// tcp_datapath_test runs it with the kernel's socket buffers; tcp_datapath_smallbuf_test with
// MPIGPU_NET_SOCKBUF=16K, so that the socket takes every frame in pieces (the "socket took part of
// it" path: the rest lent or copied, and reads of a placed payload in many steps).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "internode/net_config.h"
#include "memcopy/clock.h"
#include "memcopy/memcopy.h"
#include "memcopy/pattern.h"
#include "tests/engine_util.h"
#include "tests/gpu_util.h"
#include "tests/multiproc.h"
#include "transport/engine.h"
#include "transport/lmt/chan_lmt.h"
#include "transport/transport_config.h"

namespace mpigpu::transport {
namespace {

using mpigpu::testing::FillPattern;
using mpigpu::testing::FirstMismatch;
using mpigpu::testing::HostBuffer;
using mpigpu::testing::RunJob;

constexpr size_t kChunk = ChanLmt::kChunk;
constexpr size_t kRing = ChanLmt::kChunk * ChanLmt::kStageChunks;

// A buffer location pair, sender -> receiver.
struct Pair {
  bool send_dev, recv_dev;
  std::string name() const {
    return std::string(send_dev ? "D" : "H") + "->" + (recv_dev ? "D" : "H");
  }
};
const std::vector<Pair> kHostPairs = {{false, false}};
const std::vector<Pair> kGpuPairs = {{false, true}, {true, false}, {true, true}};

bool SmallSocketBuffers() { return GetNetConfig().net_sockbuf > 0; }

// A rank's buffer of `extent` bytes, host or device; host() is its bytes as seen on the host.
class Buf {
 public:
  Buf(bool dev, size_t extent) : dev_(dev), host_(extent, 0xEE) {
    if (dev_) {
      RANK_CHECK(cudaMalloc(&dptr_, std::max<size_t>(extent, 1)) == cudaSuccess);
      Push();
    }
  }
  ~Buf() {
    if (dptr_ != nullptr) (void)cudaFree(dptr_);
  }
  std::vector<unsigned char>& host() { return host_; }
  void* ptr() { return dev_ ? dptr_ : host_.data(); }
  MemLoc loc() const { return dev_ ? MemLoc::Device(0) : MemLoc::Host(); }
  // The host bytes to the device copy (after filling them), and back (before checking them).
  void Push() {
    if (!dev_) return;
    RANK_CHECK(cudaMemcpy(dptr_, host_.data(), host_.size(), cudaMemcpyHostToDevice) ==
               cudaSuccess);
    RANK_CHECK(cudaDeviceSynchronize() == cudaSuccess);
  }
  void Pull() {
    if (dev_)
      RANK_CHECK(cudaMemcpy(host_.data(), dptr_, host_.size(), cudaMemcpyDeviceToHost) ==
                 cudaSuccess);
  }
  UserBuffer user(const Layout& l) { return UserBuffer{ptr(), loc(), l}; }

 private:
  bool dev_;
  std::vector<unsigned char> host_;
  void* dptr_ = nullptr;
};

// Waits for q (bounded) and returns its status; the wait itself must not fail.
Status WaitDone(Engine* e, Request* q, double timeout_s = 60) {
  Status st = e->Wait(q, timeout_s);
  if (!st.ok()) std::fprintf(stderr, "wait: %s\n", st.ToString().c_str());
  RANK_CHECK(st.ok() && q->done());
  Status result = q->status();
  e->Release(q);
  return result;
}

void SendOk(Engine* e, const UserBuffer& b, int dst, int tag) {
  Request* q = nullptr;
  RANK_CHECK(e->Isend(b, dst, tag, 0, &q).ok());
  Status st = WaitDone(e, q);
  if (!st.ok()) std::fprintf(stderr, "send: %s\n", st.ToString().c_str());
  RANK_CHECK(st.ok());
}

void RecvOk(Engine* e, const UserBuffer& b, int src, int tag) {
  Request* q = nullptr;
  RANK_CHECK(e->Irecv(b, src, tag, 0, &q).ok());
  RANK_CHECK(WaitDone(e, q).ok());
}

// Runs body(rank, engine) in two ranks; every rank skips when `gpu` and there is no GPU.
std::string RunPairJob(bool gpu, const std::function<void(int, Engine*)>& body,
                       int timeout_s = 240) {
  return RunJob(2, [&](int rank) {
    if (gpu) {
      if (CudaDeviceCount() < 1) return mpigpu::testing::kRankSkip;
      RANK_CHECK(cudaSetDevice(0) == cudaSuccess);
    }
    auto e = mpigpu::testing::JoinJob();
    RANK_CHECK(e->ChannelCapsFor(1 - rank).places);  // the path under test: a stream channel
    body(rank, e.get());
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, timeout_s);
}

// Sizes around the eager limit, the host frame (kChunk) and the chunks a staged transfer holds;
// with `payload_max` (the channel's largest frame) nonzero, also around the device chunk sizes
// (ChanLmt::UnitFor: the ring's device units cut to the channel's payload) and their 8-chunk
// stages (the smaller unit serves messages up to twice its size only, so its "stage" sizes run
// in the larger unit: more sizes across a unit change, no harm).
std::vector<size_t> Sizes(size_t payload_max = 0) {
  const size_t eager = GetTransportConfig().eager_limit;
  std::vector<size_t> s = {1,         eager - 1,     eager,     eager + 1, kChunk - 1,
                           kChunk,    kChunk + 1,    2 * kChunk + 1,       kRing - 1,
                           kRing,     kRing + 1,     3 * kRing + 5};
  if (payload_max > 0) {
    const TransportConfig& c = GetTransportConfig();
    for (size_t unit : {std::min(payload_max, c.lmt_unit_gpu_min),
                        std::min(payload_max, c.lmt_unit_gpu)}) {
      const size_t stage = unit * ChanLmt::kStageChunks;
      for (size_t n : {unit - 1, unit, unit + 1, 2 * unit + 1, 2 * unit + 7, stage - 1, stage,
                       stage + 1})
        s.push_back(n);
    }
  }
  s.push_back(SmallSocketBuffers() ? 5 * kRing + 3 : (size_t{64} << 20) + 3);
  return s;
}

// Every size of Sizes() from rank 0 to rank 1 for each pair, checked whole and bounded.
void SizesForPairs(const std::vector<Pair>& pairs, int rank, Engine* e) {
  uint32_t seed = 10;
  const size_t payload_max = e->ChannelPayloadMax(1 - rank);
  for (const Pair& p : pairs) {
    for (size_t n : Sizes(p.send_dev || p.recv_dev ? payload_max : 0)) {
      ++seed;
      if (rank == 0) {
        Buf b(p.send_dev, n);
        FillPattern(b.host().data(), n, seed);
        b.Push();
        SendOk(e, b.user(Layout::Contiguous(n)), 1, 3);
      } else {
        Buf b(p.recv_dev, n + 1);  // one guard byte past the receive
        Request* q = nullptr;
        RANK_CHECK(e->Irecv(b.user(Layout::Contiguous(n)), 0, 3, 0, &q).ok());
        Status st = WaitDone(e, q);
        RANK_CHECK(st.ok());
        b.Pull();
        const long long bad = FirstMismatch(b.host().data(), n, seed);
        if (bad != -1 || b.host()[n] != 0xEE)
          std::fprintf(stderr, "%s %zu bytes: first mismatch at %lld, guard %02x\n",
                       p.name().c_str(), n, bad, b.host()[n]);
        RANK_CHECK(bad == -1 && b.host()[n] == 0xEE);
      }
    }
  }
}

TEST(TcpDatapathTest, HostSizesAroundEagerChunkAndStage) {
  EXPECT_EQ(RunPairJob(false, [](int rank, Engine* e) { SizesForPairs(kHostPairs, rank, e); }),
            "");
}

// A large contiguous message: the sender's payload bytes are written from the user buffer or its
// staging chunks (none copied into the connection's buffer), the receiver's read into the receive
// buffer or a chunk (at most the 4 KiB tail of each 256 KiB frame's read lands in the
// connection's buffer and is copied: the next frame's head and the start of its payload; the
// first frame's head comes with one ordinary read of up to 256 KiB).
void MoveWithoutUserSpaceCopies(const std::vector<Pair>& pairs, int rank, Engine* e) {
  const size_t n = SmallSocketBuffers() ? size_t{16} << 20 : size_t{64} << 20;
  uint32_t seed = 70;
  for (const Pair& p : pairs) {
    ++seed;
    Buf b(rank == 0 ? p.send_dev : p.recv_dev, n);
    const TransportStats before = e->stats();
    if (rank == 0) {
      FillPattern(b.host().data(), n, seed);
      b.Push();
      SendOk(e, b.user(Layout::Contiguous(n)), 1, 9);
    } else {
      Request* q = nullptr;
      RANK_CHECK(e->Irecv(b.user(Layout::Contiguous(n)), 0, 9, 0, &q).ok());
      RANK_CHECK(WaitDone(e, q).ok());
      b.Pull();
      RANK_CHECK(FirstMismatch(b.host().data(), n, seed) == -1);
    }
    const TransportStats after = e->stats();
    const uint64_t sent = after.stream_bytes_sent - before.stream_bytes_sent;
    const uint64_t sent_copied = after.stream_bytes_sent_copied - before.stream_bytes_sent_copied;
    const uint64_t read = after.stream_bytes_read - before.stream_bytes_read;
    const uint64_t read_copied = after.stream_bytes_read_copied - before.stream_bytes_read_copied;
    std::fprintf(stderr, "%s rank %d: payload bytes sent %llu (copied %llu), read %llu (copied %llu)\n",
                 p.name().c_str(), rank, static_cast<unsigned long long>(sent),
                 static_cast<unsigned long long>(sent_copied), static_cast<unsigned long long>(read),
                 static_cast<unsigned long long>(read_copied));
    if (rank == 0) RANK_CHECK(sent >= n && sent_copied == 0);
    else RANK_CHECK(read >= n && read_copied <= n / 64 + 2 * ChanLmt::kChunk);
  }
}

TEST(TcpDatapathTest, LargeHostMessagesMoveWithoutUserSpaceCopies) {
  EXPECT_EQ(RunPairJob(false, [](int rank, Engine* e) {
    MoveWithoutUserSpaceCopies(kHostPairs, rank, e);
  }), "");
}

TEST(TcpDatapathGpuTest, LargeMessagesOfEveryLocationPairMoveWithoutUserSpaceCopies) {
  std::string r = RunPairJob(true, [](int rank, Engine* e) {
    MoveWithoutUserSpaceCopies(kGpuPairs, rank, e);
  });
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// The sender finishes, finalizes and exits while its frames still sit in the receiver's socket:
// the receiver, which reads them only afterwards (into staging chunks that fill up, so reading
// pauses many times), still gets every byte, and the goodbye after them.
TEST(TcpDatapathTest, FramesOfASenderThatAlreadyLeftAreAllDelivered) {
  EXPECT_EQ(RunPairJob(false, [](int rank, Engine* e) {
    const size_t rows = 3 * kRing / 8 + 5;
    const Layout layout = Layout::Vector(rows, 8, 16);  // strided: staged on both ends
    Buf b(false, layout.extent());
    if (rank == 0) {
      FillPattern(b.host().data(), b.host().size(), 91);
      SendOk(e, b.user(layout), 1, 10);
      return;  // RunPairJob finalizes: the goodbye, the close, the exit
    }
    Request* q = nullptr;
    RANK_CHECK(e->Irecv(b.user(layout), 0, 10, 0, &q).ok());
    // Long enough to match the RTS and send the CTS, then no progress while the data comes.
    const double until = MonotonicSeconds() + 0.2;
    while (MonotonicSeconds() < until) RANK_CHECK(e->Progress().ok());
    ::usleep(1000 * 1000);
    RANK_CHECK(WaitDone(e, q, 30).ok());
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < 8; ++j)
        RANK_CHECK(b.host()[i * 16 + j] == mpigpu::testing::PatternByte(91, i * 16 + j));
  }), "");
}

// One connection carries both directions of a pair (a reply carries the ACK of what it
// answers): after a ping-pong, each rank sends on the connection its peer's messages came on.
// The first sender is either rank (the receiver, waiting, may dial it too).
TEST(TcpDatapathTest, APairTalksOnOneConnection) {
  for (int first : {0, 1}) {
    EXPECT_EQ(RunPairJob(false, [first](int rank, Engine* e) {
      for (int i = 0; i < 50; ++i) {
        int v = i * 2 + rank;
        if (rank == first) {
          SendOk(e, HostBuffer(&v, sizeof v), 1 - rank, 3);
          RecvOk(e, HostBuffer(&v, sizeof v), 1 - rank, 3);
          RANK_CHECK(v == i * 2 + (1 - rank));
        } else {
          int got = -1;
          RecvOk(e, HostBuffer(&got, sizeof got), 1 - rank, 3);
          RANK_CHECK(got == i * 2 + (1 - rank));
          SendOk(e, HostBuffer(&v, sizeof v), 1 - rank, 3);
        }
      }
      const TransportStats s = e->stats();
      if (s.stream_shared_pairs != 1)
        std::fprintf(stderr, "rank %d: shared pairs %llu, connections %llu\n", rank,
                     static_cast<unsigned long long>(s.stream_shared_pairs),
                     static_cast<unsigned long long>(s.stream_connections));
      RANK_CHECK(s.stream_shared_pairs == 1);
      RANK_CHECK(s.stream_connections >= 1 && s.stream_connections <= 2);
    }), "") << "first sender: rank " << first;
  }
}

// The higher rank sends and finalizes at once, while the lower rank is not yet looking: its
// dial holds the messages until the lower rank's answer, which nobody reads after Finalize
// began; Close sends them anyway, and they arrive in order.
TEST(TcpDatapathTest, AHigherRankThatSendsAndLeavesAtOnceIsHeard) {
  EXPECT_EQ(RunPairJob(false, [](int rank, Engine* e) {
    constexpr int kMsgs = 20;
    if (rank == 1) {
      for (int i = 0; i < kMsgs; ++i) SendOk(e, HostBuffer(&i, sizeof i), 0, 8);
      return;  // RunPairJob finalizes at once
    }
    ::usleep(300 * 1000);  // not polling: the answer to rank 1's dial comes late
    for (int i = 0; i < kMsgs; ++i) {
      int v = -1;
      RecvOk(e, HostBuffer(&v, sizeof v), 1, 8);
      RANK_CHECK(v == i);
    }
  }), "");
}

// Both ranks send first, at once: both dial; the higher rank's frames wait for the lower's
// answer and move to the lower rank's dial, in order; one connection carries both directions.
TEST(TcpDatapathTest, SimultaneousFirstSendsKeepOrder) {
  for (int round = 0; round < 5; ++round) {
    EXPECT_EQ(RunPairJob(false, [](int rank, Engine* e) {
      constexpr int kMsgs = 200;
      std::vector<int> in(kMsgs, -1);
      std::vector<Request*> reqs;
      for (int i = 0; i < kMsgs; ++i) {
        Request* q = nullptr;
        RANK_CHECK(e->Irecv(HostBuffer(&in[static_cast<size_t>(i)], sizeof(int)), 1 - rank, 4, 0,
                            &q).ok());
        reqs.push_back(q);
      }
      std::vector<int> out(kMsgs);
      for (int i = 0; i < kMsgs; ++i) {
        out[static_cast<size_t>(i)] = rank * 100000 + i;
        Request* q = nullptr;
        RANK_CHECK(e->Isend(HostBuffer(&out[static_cast<size_t>(i)], sizeof(int)), 1 - rank, 4, 0,
                            &q).ok());
        reqs.push_back(q);
      }
      for (Request* q : reqs) RANK_CHECK(WaitDone(e, q, 30).ok());
      for (int i = 0; i < kMsgs; ++i)
        RANK_CHECK(in[static_cast<size_t>(i)] == (1 - rank) * 100000 + i);
      RANK_CHECK(e->stats().stream_shared_pairs == 1);  // the lower rank's dial carries both
    }), "") << "round " << round;
  }
}

TEST(TcpDatapathGpuTest, EveryLocationPairSizesAroundEagerChunkAndStage) {
  std::string r = RunPairJob(true, [](int rank, Engine* e) { SizesForPairs(kGpuPairs, rank, e); });
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Receive buffers smaller than the message: kTruncate with the sender's size, the first
// `capacity` bytes right, nothing written past them.
void TruncationForPairs(const std::vector<Pair>& pairs, int rank, Engine* e) {
  const size_t eager = GetTransportConfig().eager_limit;
  struct Case { size_t n, cap; };
  const std::vector<Case> cases = {{eager + 1, eager},        {3 * kChunk + 5, kChunk + 1},
                                   {3 * kRing + 5, kRing - 1}, {kRing + 1, 1},
                                   {2 * kChunk, kChunk},       {kRing, 0}};
  uint32_t seed = 200;
  for (const Pair& p : pairs) {
    for (const Case& c : cases) {
      ++seed;
      if (rank == 0) {
        Buf b(p.send_dev, c.n);
        FillPattern(b.host().data(), c.n, seed);
        b.Push();
        SendOk(e, b.user(Layout::Contiguous(c.n)), 1, 4);
      } else {
        Buf b(p.recv_dev, c.n);
        Request* q = nullptr;
        RANK_CHECK(e->Irecv(b.user(Layout::Contiguous(c.cap)), 0, 4, 0, &q).ok());
        RANK_CHECK(e->Wait(q, 60).ok() && q->done());
        RANK_CHECK(q->status().code() == Err::kTruncate);
        RANK_CHECK(q->info().bytes == c.n);
        e->Release(q);
        b.Pull();
        RANK_CHECK(FirstMismatch(b.host().data(), c.cap, seed) == -1);
        for (size_t i = c.cap; i < c.n; ++i) RANK_CHECK(b.host()[i] == 0xEE);
      }
    }
    // A strided receive (staged) smaller than the message: rows of 8 bytes, 24 apart.
    for (size_t rows : {size_t{1000}, kChunk / 8 + 1, kRing / 8 + 3}) {
      ++seed;
      const size_t n = 3 * kRing + 5;
      const Layout recv = Layout::Vector(rows, 8, 24);
      if (rank == 0) {
        Buf b(p.send_dev, n);
        FillPattern(b.host().data(), n, seed);
        b.Push();
        SendOk(e, b.user(Layout::Contiguous(n)), 1, 4);
        continue;
      }
      Buf b(p.recv_dev, recv.extent() + 16);
      Request* q = nullptr;
      RANK_CHECK(e->Irecv(b.user(recv), 0, 4, 0, &q).ok());
      RANK_CHECK(e->Wait(q, 60).ok() && q->done());
      RANK_CHECK(q->status().code() == Err::kTruncate && q->info().bytes == n);
      e->Release(q);
      b.Pull();
      for (size_t i = 0; i < rows * 8; ++i)
        RANK_CHECK(b.host()[(i / 8) * 24 + i % 8] == mpigpu::testing::PatternByte(seed, i));
      for (size_t r = 0; r < rows; ++r)  // the gaps and the bytes past the last row untouched
        for (size_t g = 8; g < 24; ++g) RANK_CHECK(b.host()[r * 24 + g] == 0xEE);
    }
  }
}

TEST(TcpDatapathTest, HostTruncation) {
  EXPECT_EQ(RunPairJob(false, [](int rank, Engine* e) { TruncationForPairs(kHostPairs, rank, e); }),
            "");
}

TEST(TcpDatapathGpuTest, EveryLocationPairTruncation) {
  std::string r =
      RunPairJob(true, [](int rank, Engine* e) { TruncationForPairs(kGpuPairs, rank, e); });
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Vector layouts on either side, packed streams of several frames and staging rings.
struct Shape {
  size_t count, block, stride;
  size_t extent() const { return (count - 1) * stride + block; }
  Layout layout() const { return Layout::Vector(count, block, stride); }
};

void VectorsForPairs(const std::vector<Pair>& pairs, int rank, Engine* e) {
  struct Case { Shape send, recv; };
  std::vector<Case> cases;
  for (size_t rows : {size_t{4096}, size_t{65536}, size_t{300001}}) {
    cases.push_back({{rows, 8, 264}, {rows, 8, 24}});               // column to column
    cases.push_back({{rows, 8, 64}, {1, rows * 8, rows * 8}});      // column to packed
    cases.push_back({{1, rows * 8, rows * 8}, {rows, 8, 40}});      // packed to column
    cases.push_back({{rows, 16, 48}, {rows * 2, 8, 24}});           // different blocks
  }
  cases.push_back({{3, 3 * kChunk + 7, 4 * kChunk}, {1, 9 * kChunk + 21, 9 * kChunk + 21}});
  cases.push_back({{1, 9 * kChunk + 21, 9 * kChunk + 21}, {3, 3 * kChunk + 7, 3 * kChunk + 9}});
  uint32_t seed = 300;
  for (const Pair& p : pairs) {
    for (const Case& c : cases) {
      ++seed;
      const Shape& me = rank == 0 ? c.send : c.recv;
      Buf b(rank == 0 ? p.send_dev : p.recv_dev, me.extent());
      if (rank == 0) {
        FillPattern(b.host().data(), me.extent(), seed);
        b.Push();
        SendOk(e, b.user(me.layout()), 1, 5);
        continue;
      }
      Request* q = nullptr;
      RANK_CHECK(e->Irecv(b.user(me.layout()), 0, 5, 0, &q).ok());
      Status st = WaitDone(e, q);
      if (!st.ok()) std::fprintf(stderr, "%s vector: %s\n", p.name().c_str(), st.ToString().c_str());
      RANK_CHECK(st.ok());
      b.Pull();
      const unsigned char* dst = b.host().data();
      const size_t packed = c.send.count * c.send.block;
      for (size_t i = 0; i < packed; ++i) {
        const size_t from = (i / c.send.block) * c.send.stride + i % c.send.block;
        const size_t to = (i / c.recv.block) * c.recv.stride + i % c.recv.block;
        if (dst[to] != mpigpu::testing::PatternByte(seed, from)) {
          std::fprintf(stderr, "%s vector case %u: packed byte %zu wrong\n", p.name().c_str(),
                       seed, i);
          RANK_CHECK(false);
        }
      }
      for (size_t blk = 0; blk + 1 < c.recv.count; ++blk)
        for (size_t g = c.recv.block; g < c.recv.stride; ++g)
          RANK_CHECK(dst[blk * c.recv.stride + g] == 0xEE);
    }
  }
}

TEST(TcpDatapathTest, HostVectorLayouts) {
  EXPECT_EQ(RunPairJob(false, [](int rank, Engine* e) { VectorsForPairs(kHostPairs, rank, e); }),
            "");
}

TEST(TcpDatapathGpuTest, EveryLocationPairVectorLayouts) {
  std::string r = RunPairJob(true, [](int rank, Engine* e) { VectorsForPairs(kGpuPairs, rank, e); });
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// The most payload a loopback connection holds in the kernel, both ends' socket buffers together
// (the kernel doubles SO_SNDBUF/SO_RCVBUF; without MPIGPU_NET_SOCKBUF, the autotuning maxima of
// tcp_wmem and tcp_rmem): what one side can move while the other does not progress.
size_t KernelSocketBytes() {
  if (SmallSocketBuffers()) return 4 * GetNetConfig().net_sockbuf;
  size_t total = 0;
  for (const char* path : {"/proc/sys/net/ipv4/tcp_wmem", "/proc/sys/net/ipv4/tcp_rmem"}) {
    unsigned long long lo = 0, def = 0, hi = 0;
    std::FILE* f = std::fopen(path, "r");
    const bool ok = f != nullptr && std::fscanf(f, "%llu %llu %llu", &lo, &def, &hi) == 3;
    if (f != nullptr) std::fclose(f);
    total += ok ? static_cast<size_t>(hi) : size_t{64} << 20;  // unknown: a generous guess
  }
  return total;
}

// Two ranks that take turns to progress, through a pipe to each made before the fork: while one
// progresses the other waits on its pipe without touching its sockets, so a turn moves at most
// what the connection holds in the kernel (KernelSocketBytes) and the engine's own buffers,
// however fast the machine. Tokens: kTurn (your turn), kDying (the sender is about to die).
class Turns {
 public:
  static constexpr char kTurn = 't', kDying = 'k';
  Turns() {
    for (auto& p : to_) ok_ = ok_ && ::pipe2(p, O_CLOEXEC) == 0;
  }
  ~Turns() {
    for (auto& p : to_)
      for (int fd : p)
        if (fd >= 0) ::close(fd);
  }
  bool ok() const { return ok_; }
  void Pass(int rank, char token) { RANK_CHECK(::write(to_[1 - rank][1], &token, 1) == 1); }
  // The other rank's next token (bounded: a rank that neither passes nor dies fails the case).
  char Wait(int rank) {
    pollfd p{to_[rank][0], POLLIN, 0};
    RANK_CHECK(::poll(&p, 1, 30 * 1000) == 1);
    char token = 0;
    RANK_CHECK(::read(to_[rank][0], &token, 1) == 1);
    return token;
  }

 private:
  int to_[2][2] = {{-1, -1}, {-1, -1}};  // to_[r]: the pipe rank r reads
  bool ok_ = true;
};

// A peer killed in the middle of a large transfer: the survivor's request ends with kPeerFailed,
// within the wait's bound. The transfer is held at a known point whatever the machine's speed:
// the ranks take turns to progress (Turns), and the victim dies at the start of its first turn
// after at least 1 MiB of the message has moved through its socket (so the CTS and some frames
// are behind it). By then at most 1 MiB, one turn's worth and the engine's buffers have moved,
// far less than the message, so neither request can have ended; the victim tells the survivor
// before it dies, and the survivor, which made no progress since, waits for the failure.
// `victim`: the rank that dies (0: the sender, 1: the receiver).
// `vector`: both buffers strided (rows of 64 bytes, 80 apart), so that both ends stage.
std::string KillMidTransfer(const Pair& p, int victim, bool vector = false) {
  constexpr uint64_t kBeforeKill = uint64_t{1} << 20;
  // What can move before the victim stops: 1 MiB, the victim's last turn and what the other end
  // is ahead by (each at most the kernel's buffers), and what the engine holds (a staging ring
  // and a frame). The message is at least twice that, on a host with huge socket buffers too.
  const size_t held = kBeforeKill + 2 * KernelSocketBytes() + kRing + kChunk;
  const size_t n = std::max(SmallSocketBuffers() ? size_t{32} << 20 : size_t{512} << 20,
                            (2 * held + kBeforeKill - 1) / kBeforeKill * kBeforeKill);
  const Layout layout = vector ? Layout::Vector(n / 64, 64, 80) : Layout::Contiguous(n);
  const bool gpu = p.send_dev || p.recv_dev;
  Turns turns;
  if (!turns.ok()) return "pipe2 failed";
  return RunJob(2, [&](int rank) {
    if (gpu) {
      if (CudaDeviceCount() < 1) return mpigpu::testing::kRankSkip;
      RANK_CHECK(cudaSetDevice(0) == cudaSuccess);
    }
    auto e = mpigpu::testing::JoinJob();
    Buf b(rank == 0 ? p.send_dev : p.recv_dev, layout.extent());
    Request* q = nullptr;
    if (rank == 0) RANK_CHECK(e->Isend(b.user(layout), 1, 6, 0, &q).ok());
    else RANK_CHECK(e->Irecv(b.user(layout), 0, 6, 0, &q).ok());
    // The bytes of this message's frames this rank has sent (rank 0) or read (rank 1).
    auto moved = [&] {
      const TransportStats s = e->stats();
      return rank == 0 ? s.stream_bytes_sent : s.stream_bytes_read;
    };
    const uint64_t start = moved();
    const double until = MonotonicSeconds() + 30;
    for (bool first = true;; first = false) {
      if (rank == 1 || !first) {  // rank 0 has the first turn
        if (turns.Wait(rank) == Turns::kDying) break;  // the survivor: the victim is going
      }
      if (rank == victim && moved() - start >= kBeforeKill) {
        if (q->done()) std::fprintf(stderr, "rank %d: the transfer ended before the kill\n", rank);
        RANK_CHECK(!q->done());
        turns.Pass(rank, Turns::kDying);
        _exit(3);
      }
      if (MonotonicSeconds() > until)
        std::fprintf(stderr, "rank %d: %llu bytes moved in 30 s\n", rank,
                     static_cast<unsigned long long>(moved() - start));
      RANK_CHECK(MonotonicSeconds() <= until);
      for (int i = 0; i < 8; ++i) RANK_CHECK(e->Progress().ok());
      turns.Pass(rank, Turns::kTurn);
    }
    if (q->done()) std::fprintf(stderr, "rank %d: the transfer ended before the kill\n", rank);
    RANK_CHECK(!q->done());
    Status st = WaitDone(e.get(), q, 20);
    if (st.code() != Err::kPeerFailed)
      std::fprintf(stderr, "%s, rank %d killed: survivor got %s\n", p.name().c_str(), victim,
                   st.ToString().c_str());
    RANK_CHECK(st.code() == Err::kPeerFailed);
    (void)e->Finalize();  // reports the dead peer
    return 0;
  }, 60, {victim});
}

TEST(TcpDatapathTest, HostPeerKilledMidTransfer) {
  for (bool vector : {false, true})
    for (int victim : {0, 1})
      EXPECT_EQ(KillMidTransfer(kHostPairs[0], victim, vector), "")
          << "victim " << victim << (vector ? ", vectors (staged)" : "");
}

TEST(TcpDatapathGpuTest, EveryLocationPairPeerKilledMidTransfer) {
  // A rank that may die cannot report a skip: a one-rank job asks for the GPU first.
  if (RunJob(1, [](int) { return CudaDeviceCount() < 1 ? mpigpu::testing::kRankSkip : 0; }) ==
      mpigpu::testing::kSkipped)
    GTEST_SKIP() << "no CUDA device";
  for (const Pair& p : kGpuPairs)
    for (bool vector : {false, true})
      for (int victim : {0, 1})
        EXPECT_EQ(KillMidTransfer(p, victim, vector), "")
            << p.name() << ", victim " << victim << (vector ? ", vectors" : "");
}

// A staging copy that fails (injected after the first chunk) fails that transfer on the side it
// happens (the sender's abort fails the receive too); the chunks go back, the frames still on
// the way are dropped, and the next messages of every pair arrive whole. `vector`: both buffers
// strided (host ones stage too).
void FailedStagingCopies(const std::vector<Pair>& pairs, bool vector, int rank, Engine* e) {
  const size_t n = 3 * kRing + 8;
  const Layout layout = vector ? Layout::Vector(n / 8, 8, 24) : Layout::Contiguous(n);
  uint32_t seed = 400;
  for (int failing : {0, 1}) {  // the rank whose staging copy fails
    for (const Pair& p : pairs) {
      const bool staged = vector || (failing == 0 ? p.send_dev : p.recv_dev);
      if (!staged) continue;
      if (rank == failing) RANK_CHECK(e->InjectFault("chan-stage-copy"));
      ++seed;
      if (rank == 0) {
        Buf b(p.send_dev, layout.extent());
        Request* q = nullptr;
        RANK_CHECK(e->Isend(b.user(layout), 1, 7, 0, &q).ok());
        Status st = WaitDone(e, q);
        // The sender's own failure fails its send; a receive's failure need not.
        if (failing == 0) RANK_CHECK(!st.ok());
      } else {
        Buf b(p.recv_dev, layout.extent());
        Request* q = nullptr;
        RANK_CHECK(e->Irecv(b.user(layout), 0, 7, 0, &q).ok());
        Status st = WaitDone(e, q);
        if (st.ok()) std::fprintf(stderr, "%s: the receive succeeded\n", p.name().c_str());
        RANK_CHECK(!st.ok());
      }
      // The next message of the pair arrives whole.
      if (rank == 0) {
        Buf b(p.send_dev, layout.extent());
        FillPattern(b.host().data(), b.host().size(), seed);
        b.Push();
        SendOk(e, b.user(layout), 1, 8);
      } else {
        Buf b(p.recv_dev, layout.extent());
        Request* q = nullptr;
        RANK_CHECK(e->Irecv(b.user(layout), 0, 8, 0, &q).ok());
        RANK_CHECK(WaitDone(e, q).ok());
        b.Pull();
        RANK_CHECK(FirstMismatch(b.host().data(), b.host().size(), seed) == -1 || vector);
        if (vector)  // the same layout on both ends: the blocks match the sender's bytes
          for (size_t i = 0; i < layout.count; ++i)
            for (size_t j = 0; j < layout.block; ++j)
              RANK_CHECK(b.host()[i * layout.stride + j] ==
                         mpigpu::testing::PatternByte(seed, i * layout.stride + j));
      }
    }
  }
}

TEST(TcpDatapathTest, AFailedStagingCopyOfHostVectorsFailsTheTransferAndTheJobGoesOn) {
  EXPECT_EQ(RunPairJob(false, [](int rank, Engine* e) {
    FailedStagingCopies(kHostPairs, true, rank, e);
  }), "");
}

TEST(TcpDatapathGpuTest, AFailedStagingCopyFailsTheTransferAndTheJobGoesOn) {
  std::string r = RunPairJob(true, [](int rank, Engine* e) {
    FailedStagingCopies(kGpuPairs, false, rank, e);
    FailedStagingCopies(kGpuPairs, true, rank, e);
  });
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::transport
