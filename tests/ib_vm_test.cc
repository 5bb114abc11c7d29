// The ibverbs netmod on a real RDMA device: in CI, Soft-RoCE (rxe0) inside the VM of
// //tests/rdma_vm:rdma_vm_ib_test, run with MPIGPU_NETMOD=ibverbs MPIGPU_SHM=0 (every pair of the
// one machine through the netmod). Elsewhere (no RDMA device, or other settings) every test skips
// with the reason.
//   - 4 ranks, every ordered pair, sizes around the eager size and the READ chunk, received from
//     ANY_SOURCE, every byte checked; strided layouts (they fall back to frames on the channel);
//     every pair is checked to run on the ibverbs channel and READ rendezvous.
//   - A peer killed (SIGKILL) in the middle of a rendezvous: the sender while the receiver READs
//     its buffer, the receiver while it READs: the survivor's request ends with PROC_FAILED.
//   - The device's dma-buf answer: rxe has none, so device data is staged through host memory.
//   - Strangers at a rank's rdma_cm port without the job's secret are rejected.
//   - The registration cache on the rendezvous path: a buffer sent and received again reuses its
//     regions (hits, one registration per side); a buffer unmapped and mapped again at the same
//     address carries its new bytes, on either side (a stale region would read old pages or
//     write into freed ones).
//   - The link under rxe0 taken down mid-rendezvous (IB_VM_LINK_DEV, a step of its own): both
//     ranks' requests end with PROC_FAILED, none hangs (the waits are bounded).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "internode/ib/ib_channel.h"
#include "internode/ib/ib_config.h"
#include "internode/ib/ib_device.h"
#include "internode/ib/ib_reg.h"
#include "internode/ib/verbs_api.h"
#include "internode/net_config.h"
#include "memreg/memhooks.h"
#include "memreg/reg_cache_config.h"
#include "memcopy/pattern.h"
#include "tests/engine_util.h"
#include "tests/multiproc.h"
#include "transport/engine.h"
#include "transport/transport_config.h"

namespace mpigpu::transport {
namespace {

using mpigpu::testing::FillPattern;
using mpigpu::testing::FirstMismatch;
using mpigpu::testing::HostBuffer;
using mpigpu::testing::JoinJob;
using mpigpu::testing::RunJob;

// Why this machine cannot run these tests ("" when it can). The parent must not open the device:
// its verbs context (librdmacm keeps it open) would be inherited by the forked ranks, and a
// context is its opener's alone (the kernel refuses the children's work requests). So the parent
// only looks for a device in sysfs; the ranks open it.
std::string WhyNot() {
  const NetConfig& net = GetNetConfig();
  if (net.netmod != NetmodMode::kIbverbs || net.shm)
    return "needs MPIGPU_NETMOD=ibverbs MPIGPU_SHM=0 (set by //tests/rdma_vm:rdma_vm_ib_test)";
  std::error_code ec;
  const std::filesystem::path sys("/sys/class/infiniband");
  if (!std::filesystem::is_directory(sys, ec) || std::filesystem::is_empty(sys, ec))
    return "no RDMA device in /sys/class/infiniband; runs in //tests/rdma_vm:rdma_vm_ib_test";
  return "";
}

#define SKIP_WITHOUT_RDMA()                        \
  do {                                             \
    const std::string why = WhyNot();              \
    if (!why.empty()) GTEST_SKIP() << why;         \
  } while (0)

// The registration cache's cases: on by default where an RDMA device is.
#define SKIP_WITHOUT_REG_CACHE()                                                 \
  do {                                                                           \
    SKIP_WITHOUT_RDMA();                                                         \
    if (!memreg::GetRegCacheConfig().enabled)                                    \
      GTEST_SKIP() << "MPIGPU_IB_REG_CACHE=0: the registration cache is off";    \
  } while (0)

void WaitOk(Engine* e, Request* r) {
  Status st = e->Wait(r, 120);
  if (!st.ok() || !r->status().ok())
    std::fprintf(stderr, "wait: %s / %s\n", st.ToString().c_str(), r->status().ToString().c_str());
  RANK_CHECK(st.ok() && r->status().ok());
}

TEST(IbVmTest, FourRanksEveryPairAroundThresholdsFromAnySource) {
  SKIP_WITHOUT_RDMA();
  const int kRanks = 4;
  std::string r = RunJob(kRanks, [&](int rank) {
    auto e = JoinJob();
    for (int p = 0; p < kRanks; ++p) {
      if (p == rank) continue;
      RANK_CHECK(std::string(e->ChannelCapsFor(p).name) == "ibverbs");
      RANK_CHECK(!e->LmtPath(p).empty() && e->LmtPath(p)[0] == "ibverbs");
    }
    const size_t eager = std::min(GetTransportConfig().eager_limit, e->ChannelCapsFor((rank + 1) % kRanks).max_payload);
    const size_t chunk = GetIbConfig().chunk;
    const std::vector<size_t> sizes = {0, 1, 7, eager - 1, eager, eager + 1,
                                       chunk - 1, chunk, chunk + 1, 3 * chunk + 5};
    for (size_t k = 0; k < sizes.size(); ++k) {
      const size_t n = sizes[k];
      auto seed = [&](int src, int dst) { return static_cast<uint32_t>(k * 64 + src * 8 + dst); };
      std::vector<std::vector<unsigned char>> in(kRanks - 1, std::vector<unsigned char>(n + 1, 0xEE));
      std::vector<std::vector<unsigned char>> out(kRanks);
      std::vector<Request*> recvs, sends;
      for (auto& b : in) {
        Request* q = nullptr;
        RANK_CHECK(e->Irecv(HostBuffer(b.data(), n), kAnySource, static_cast<int>(k), 0, &q).ok());
        recvs.push_back(q);
      }
      for (int p = 0; p < kRanks; ++p) {
        if (p == rank) continue;
        out[p].resize(n);
        FillPattern(out[p].data(), n, seed(rank, p));
        Request* q = nullptr;
        RANK_CHECK(e->Isend(HostBuffer(out[p].data(), n), p, static_cast<int>(k), 0, &q).ok());
        sends.push_back(q);
      }
      std::vector<bool> from(kRanks, false);
      for (size_t i = 0; i < recvs.size(); ++i) {
        WaitOk(e.get(), recvs[i]);
        const MsgInfo info = recvs[i]->info();
        RANK_CHECK(info.bytes == n && info.source >= 0 && info.source < kRanks &&
                   info.source != rank && !from[info.source]);
        from[info.source] = true;
        const long long bad = FirstMismatch(in[i].data(), n, seed(info.source, rank));
        if (bad != -1) std::fprintf(stderr, "%zu bytes from rank %d: byte %lld wrong\n", n, info.source, bad);
        RANK_CHECK(bad == -1 && in[i][n] == 0xEE);
        e->Release(recvs[i]);
      }
      for (Request* q : sends) {
        WaitOk(e.get(), q);
        e->Release(q);
      }
    }
    // Strided layouts on either side (carried as frames on the channel): to the next rank.
    for (size_t blocks : {size_t{5}, eager / 48 + 7, 3 * chunk / 48 + 11}) {
      const int to = (rank + 1) % kRanks, from = (rank + kRanks - 1) % kRanks;
      std::vector<unsigned char> src(blocks * 80), dst(blocks * 2 * 40, 0xEE);
      FillPattern(src.data(), src.size(), 900 + rank);
      Request *s = nullptr, *q = nullptr;
      RANK_CHECK(e->Irecv({dst.data(), MemLoc::Host(), Layout::Vector(blocks * 2, 24, 40)}, from, 77, 0, &q).ok());
      RANK_CHECK(e->Isend({src.data(), MemLoc::Host(), Layout::Vector(blocks, 48, 80)}, to, 77, 0, &s).ok());
      WaitOk(e.get(), q);
      WaitOk(e.get(), s);
      RANK_CHECK(q->info().bytes == blocks * 48);
      for (size_t p = 0; p < blocks * 48; ++p)
        RANK_CHECK(dst[(p / 24) * 40 + p % 24] ==
                   mpigpu::testing::PatternByte(900 + from, (p / 48) * 80 + p % 48));
      e->Release(q);
      e->Release(s);
    }
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, 300);
  EXPECT_EQ(r, "");
}

// The victim dies while the receiver's READs are under way, whatever the speed of the machine:
// the receiver's buffer starts zeroed and the sender's holds 0x5A, so the first READ chunk that
// lands shows in byte 0 while the last is still to come (64 MiB: many chunks). Then the receiver,
// as victim, kills itself; as survivor it tells the sender through a pipe made before the fork,
// and the sender, polling that pipe while it progresses, kills itself. The survivor's request
// must end with PROC_FAILED within seconds, not hang.
std::string KillMidRendezvous(bool kill_sender) {
  const size_t bytes = size_t{64} << 20;
  int go[2];
  if (::pipe2(go, O_NONBLOCK | O_CLOEXEC) != 0) return "pipe2 failed";
  std::string r = RunJob(2, [&](int rank) {
    auto e = JoinJob();
    const bool sender = rank == 0;
    std::vector<unsigned char> buf(bytes, sender ? 0x5A : 0x00);
    Request* q = nullptr;
    RANK_CHECK((sender ? e->Isend(HostBuffer(buf.data(), bytes), 1, 3, 0, &q)
                       : e->Irecv(HostBuffer(buf.data(), bytes), 0, 3, 0, &q)).ok());
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    if (!sender) {  // progress until the first chunk landed
      const volatile unsigned char* first = buf.data();
      while (*first == 0 && !q->done() && std::chrono::steady_clock::now() < until)
        RANK_CHECK(e->Progress().ok());
      if (q->done()) std::fprintf(stderr, "the whole message landed at once: too fast to test\n");
      RANK_CHECK(*first == 0x5A && !q->done());
      if (!kill_sender) ::kill(::getpid(), SIGKILL);
      RANK_CHECK(::write(go[1], "k", 1) == 1);
    } else if (kill_sender) {  // progress until the receiver says its READs are under way
      char c = 0;
      while (::read(go[0], &c, 1) != 1 && std::chrono::steady_clock::now() < until)
        RANK_CHECK(e->Progress().ok());
      RANK_CHECK(c == 'k' && !q->done());
      ::kill(::getpid(), SIGKILL);
    }
    const auto t0 = std::chrono::steady_clock::now();
    RANK_CHECK(e->Wait(q, 60).ok());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "%s: %s after %.2f s\n", sender ? "sender" : "receiver",
                 q->status().ToString().c_str(), s);
    RANK_CHECK(q->status().code() == Err::kPeerFailed);
    e->Release(q);
    (void)e->Finalize();  // PROC_FAILED: the job lost a rank
    return 0;
  }, 120, {kill_sender ? 0 : 1});
  ::close(go[0]);
  ::close(go[1]);
  return r;
}

TEST(IbVmTest, ASenderKilledWhileItsBufferIsReadFailsTheReceive) {
  SKIP_WITHOUT_RDMA();
  EXPECT_EQ(KillMidRendezvous(/*kill_sender=*/true), "");
}

TEST(IbVmTest, AReceiverKilledWhileItReadsFailsTheSend) {
  SKIP_WITHOUT_RDMA();
  EXPECT_EQ(KillMidRendezvous(/*kill_sender=*/false), "");
}

// rxe has no dma-buf registration (EOPNOTSUPP): device data goes staged through host memory.
// (In a forked rank: see WhyNot.)
TEST(IbVmTest, SoftRoceAnswersNoDmaBufSoDeviceDataIsStaged) {
  SKIP_WITHOUT_RDMA();
  std::string r = RunJob(1, [](int) {
    std::unique_ptr<internode::IbDevice> dev;
    std::string none;
    RANK_CHECK(internode::IbDevice::Open(1024, &dev, &none).ok() && dev != nullptr);
    std::fprintf(stderr, "device %s: dma-buf %s\n", dev->name().c_str(),
                 dev->dmabuf() ? "supported" : "not supported: staged");
    if (dev->name().rfind("rxe", 0) == 0) RANK_CHECK(!dev->dmabuf());
    return 0;
  });
  EXPECT_EQ(r, "");
}


// Strangers at a rank's rdma_cm port are refused before any QP of the job is made for them: a
// connect request without the job's secret (a wrong one, or none) gets REJECTED, and the job's
// own messages go on. Rank 0 publishes its card to rank 1, which plays the stranger with a
// connection of its own (its own event channel, PD, CQ and QP) while rank 0 progresses.
// Returns the rdma_cm event the stranger's connect ended with.
std::string StrangerConnects(const std::string& card, const void* priv, uint8_t priv_len) {
  const internode::VerbsApi* v = internode::Verbs();
  RANK_CHECK(v != nullptr);
  sockaddr_in dst{};
  RANK_CHECK(internode::IbChannel::ParseCard(card, &dst));
  rdma_event_channel* ec = v->rdma_create_event_channel();
  RANK_CHECK(ec != nullptr);
  rdma_cm_id* id = nullptr;
  RANK_CHECK(v->rdma_create_id(ec, &id, nullptr, RDMA_PS_TCP) == 0);
  sockaddr_in src = dst;
  src.sin_port = 0;
  RANK_CHECK(v->rdma_resolve_addr(id, reinterpret_cast<sockaddr*>(&src), reinterpret_cast<sockaddr*>(&dst), 5000) == 0);
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  std::string last;
  for (;;) {
    rdma_cm_event* ev = nullptr;
    RANK_CHECK(v->rdma_get_cm_event(ec, &ev) == 0);
    const rdma_cm_event_type type = ev->event;
    last = v->rdma_event_str(type);
    v->rdma_ack_cm_event(ev);
    if (type == RDMA_CM_EVENT_ADDR_RESOLVED) {
      RANK_CHECK(v->rdma_resolve_route(id, 5000) == 0);
    } else if (type == RDMA_CM_EVENT_ROUTE_RESOLVED) {
      pd = v->ibv_alloc_pd(id->verbs);
      cq = v->ibv_create_cq(id->verbs, 8, nullptr, nullptr, 0);
      RANK_CHECK(pd != nullptr && cq != nullptr);
      ibv_qp_init_attr a{};
      a.send_cq = a.recv_cq = cq;
      a.qp_type = IBV_QPT_RC;
      a.cap.max_send_wr = a.cap.max_recv_wr = 1;
      a.cap.max_send_sge = a.cap.max_recv_sge = 1;
      RANK_CHECK(v->rdma_create_qp(id, pd, &a) == 0);
      rdma_conn_param p{};
      p.private_data = priv;
      p.private_data_len = priv_len;
      p.retry_count = 1;
      RANK_CHECK(v->rdma_connect(id, &p) == 0);
    } else {
      break;  // REJECTED, ESTABLISHED, or an error
    }
  }
  if (last == "RDMA_CM_EVENT_ESTABLISHED") (void)v->rdma_disconnect(id);
  if (id->qp != nullptr) v->rdma_destroy_qp(id);
  v->rdma_destroy_id(id);
  if (cq != nullptr) v->ibv_destroy_cq(cq);
  if (pd != nullptr) v->ibv_dealloc_pd(pd);
  v->rdma_destroy_event_channel(ec);
  return last;
}

TEST(IbVmTest, StrangersWithoutTheJobsSecretAreRejected) {
  SKIP_WITHOUT_RDMA();
  std::string r = RunJob(2, [](int rank) {
    auto e = JoinJob();
    char card[64] = {};
    char done = 0;
    Request* q = nullptr;
    if (rank == 0) {
      const std::string mine = e->Card();
      RANK_CHECK(mine.size() < sizeof card);
      std::memcpy(card, mine.data(), mine.size());
      RANK_CHECK(e->Isend(HostBuffer(card, sizeof card), 1, 1, 0, &q).ok());
      WaitOk(e.get(), q);
      e->Release(q);
      // Progress (a blocking receive) while rank 1 plays the stranger.
      RANK_CHECK(e->Irecv(HostBuffer(&done, 1), 1, 2, 0, &q).ok());
      WaitOk(e.get(), q);
      e->Release(q);
      RANK_CHECK(done == 1);
    } else {
      RANK_CHECK(e->Irecv(HostBuffer(card, sizeof card), 0, 1, 0, &q).ok());
      WaitOk(e.get(), q);
      e->Release(q);
      // A request shaped as the job's (internode::IbChannel::ConnectReq) with a wrong secret ...
      internode::IbChannel::ConnectReq req{};
      req.magic = internode::IbChannel::kConnectMagic;
      req.rank = 1;
      std::memset(req.secret, 0xAB, sizeof req.secret);
      const std::string wrong = StrangerConnects(card, &req, sizeof req);
      std::fprintf(stderr, "stranger with a wrong secret: %s\n", wrong.c_str());
      RANK_CHECK(wrong == "RDMA_CM_EVENT_REJECTED");
      // ... and one with no private data at all.
      const std::string none = StrangerConnects(card, nullptr, 0);
      std::fprintf(stderr, "stranger without private data: %s\n", none.c_str());
      RANK_CHECK(none == "RDMA_CM_EVENT_REJECTED");
      done = 1;
      RANK_CHECK(e->Isend(HostBuffer(&done, 1), 0, 2, 0, &q).ok());
      WaitOk(e.get(), q);
      e->Release(q);
    }
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, 120);
  EXPECT_EQ(r, "");
}

void PrintCacheStats(int rank, const char* what) {
  const memreg::RegCache::Stats s = internode::IbRegCacheStats();
  std::fprintf(stderr,
               "rank %d %s: ibverbs regions: hits %llu misses %llu registrations %llu "
               "deregistrations %llu invalidations %llu flushes %llu per-message %llu\n",
               rank, what, static_cast<unsigned long long>(s.hits),
               static_cast<unsigned long long>(s.misses),
               static_cast<unsigned long long>(s.registrations),
               static_cast<unsigned long long>(s.deregistrations),
               static_cast<unsigned long long>(s.invalidations),
               static_cast<unsigned long long>(s.flushes),
               static_cast<unsigned long long>(s.uncached));
}

// One rendezvous message of `n` bytes, rank 0 to rank 1, from and into `buf`, every byte checked
// against `seed` on the receiver.
void OneRendezvous(Engine* e, int rank, unsigned char* buf, size_t n, uint32_t seed, int tag) {
  Request* q = nullptr;
  if (rank == 0) {
    FillPattern(buf, n, seed);
    RANK_CHECK(e->Isend(HostBuffer(buf, n), 1, tag, 0, &q).ok());
  } else {
    std::memset(buf, 0xEE, n);
    RANK_CHECK(e->Irecv(HostBuffer(buf, n), 0, tag, 0, &q).ok());
  }
  WaitOk(e, q);
  e->Release(q);
  if (rank == 1) {
    const long long bad = FirstMismatch(buf, n, seed);
    if (bad != -1) std::fprintf(stderr, "seed %u: byte %lld of %zu wrong\n", seed, bad, n);
    RANK_CHECK(bad == -1);
  }
}

// The same buffers again and again: the regions come from the cache after the first message.
TEST(IbVmTest, RepeatedRendezvousReusesTheRegistrations) {
  SKIP_WITHOUT_REG_CACHE();
  std::string r = RunJob(2, [](int rank) {
    auto e = JoinJob();
    RANK_CHECK(std::string(e->ChannelCapsFor(1 - rank).name) == "ibverbs");
    const size_t n = size_t{1} << 20;
    const int kIters = 8;
    // A mapping of its own (what the cache keeps; a heap buffer is registered per message).
    void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    RANK_CHECK(p != MAP_FAILED);
    auto* buf = static_cast<unsigned char*>(p);
    const memreg::RegCache::Stats before = internode::IbRegCacheStats();
    for (int i = 0; i < kIters; ++i) OneRendezvous(e.get(), rank, buf, n, 100 + i, 5);
    PrintCacheStats(rank, "after 8 messages of 1 MiB");
    const memreg::RegCache::Stats s = internode::IbRegCacheStats();
    // Every message after the first found its region (one registration, seven hits); a
    // registration the hooks had to drop meanwhile would cost one more, never a miss per message.
    RANK_CHECK(s.registrations - before.registrations <= 2);
    RANK_CHECK(s.hits - before.hits >= kIters - 2);
    RANK_CHECK(e->Finalize().ok());
    ::munmap(p, n);
    return 0;
  }, 240);
  EXPECT_EQ(r, "");
}

// A buffer unmapped and mapped again at the same address between two messages, on both sides:
// the second message must carry the new pages' bytes (sender) into the new pages (receiver).
TEST(IbVmTest, ABufferRemappedAtTheSameAddressSendsItsNewBytes) {
  SKIP_WITHOUT_REG_CACHE();
  std::string r = RunJob(2, [](int rank) {
    auto e = JoinJob();
    const size_t n = size_t{2} << 20;
    void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    RANK_CHECK(p != MAP_FAILED);
    auto* buf = static_cast<unsigned char*>(p);
    OneRendezvous(e.get(), rank, buf, n, 7, 6);
    OneRendezvous(e.get(), rank, buf, n, 8, 6);  // a hit
    const memreg::RegCache::Stats before = internode::IbRegCacheStats();
    RANK_CHECK(::munmap(p, n) == 0);
    void* again = ::mmap(p, n, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    RANK_CHECK(again == p);  // new pages at the very same address
    OneRendezvous(e.get(), rank, buf, n, 9, 6);
    PrintCacheStats(rank, "after the remap");
    const memreg::RegCache::Stats s = internode::IbRegCacheStats();
    RANK_CHECK(s.invalidations + s.flushes > before.invalidations + before.flushes);
    RANK_CHECK(s.registrations > before.registrations);  // the new pages were registered
    RANK_CHECK(e->Finalize().ok());
    ::munmap(p, n);
    return 0;
  }, 240);
  EXPECT_EQ(r, "");
}

// A large malloc'd block (above glibc's largest mmap threshold, 32 MiB: a mapping of its own
// each time) sent from and received into twice (the second a hit), freed, malloc'd again (glibc
// maps it anew, most often at the same address), new bytes written: on both sides the message
// must carry the new block's bytes (sender) into the new block's pages (receiver).
TEST(IbVmTest, AFreedBlockMallocdAgainSendsItsNewBytes) {
  SKIP_WITHOUT_REG_CACHE();
  std::string r = RunJob(2, [](int rank) {
    auto e = JoinJob();
    const size_t block = size_t{40} << 20, n = size_t{2} << 20;
    int same = 0;
    for (int round = 0; round < 2; ++round) {
      auto* p = static_cast<unsigned char*>(std::malloc(block));
      RANK_CHECK(p != nullptr);
      const auto a = reinterpret_cast<uintptr_t>(p);
      RANK_CHECK(memreg::memhooks::OwnMapping(a, a + block, nullptr, nullptr));
      const memreg::RegCache::Stats s0 = internode::IbRegCacheStats();
      OneRendezvous(e.get(), rank, p + 4096, n, 20 + round, 7);
      OneRendezvous(e.get(), rank, p + 4096, n, 30 + round, 7);  // a hit
      const memreg::RegCache::Stats s1 = internode::IbRegCacheStats();
      RANK_CHECK(s1.hits > s0.hits);
      std::free(p);
      auto* q = static_cast<unsigned char*>(std::malloc(block));
      RANK_CHECK(q != nullptr);
      same += q == p;
      OneRendezvous(e.get(), rank, q + 4096, n, 40 + round, 7);  // fills q (sender), checks (receiver)
      const memreg::RegCache::Stats s2 = internode::IbRegCacheStats();
      RANK_CHECK(s2.registrations > s1.registrations);  // the new block's pages registered
      std::free(q);
    }
    PrintCacheStats(rank, "after free + malloc");
    std::fprintf(stderr, "rank %d: %d of 2 blocks malloc'd again at the freed address\n", rank,
                 same);
    RANK_CHECK(same > 0);  // otherwise nothing was tested
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, 240);
  EXPECT_EQ(r, "");
}

// A buffer on glibc's heap (no allocation owns its mapping) is registered for each message and
// deregistered after it: never kept, so bytes written between messages, and a buffer freed and
// malloc'd again, arrive as written.
TEST(IbVmTest, AHeapBufferIsRegisteredPerMessage) {
  SKIP_WITHOUT_REG_CACHE();
  std::string r = RunJob(2, [](int rank) {
    auto e = JoinJob();
    std::free(std::malloc(size_t{1} << 20));  // glibc's mmap threshold rises to 1 MiB
    const size_t n = 256 << 10;               // above the eager size: a rendezvous
    for (int round = 0; round < 2; ++round) {
      auto* p = static_cast<unsigned char*>(std::malloc(n));
      RANK_CHECK(p != nullptr);
      const auto a = reinterpret_cast<uintptr_t>(p);
      RANK_CHECK(!memreg::memhooks::OwnMapping(a, a + n, nullptr, nullptr));  // on the heap
      const memreg::RegCache::Stats s0 = internode::IbRegCacheStats();
      for (int i = 0; i < 3; ++i) OneRendezvous(e.get(), rank, p, n, 50 + 3 * round + i, 8);
      const memreg::RegCache::Stats s1 = internode::IbRegCacheStats();
      RANK_CHECK(s1.uncached - s0.uncached >= 3);
      RANK_CHECK(s1.hits == s0.hits);
      RANK_CHECK(s1.entries == s0.entries);  // nothing kept
      std::free(p);
    }
    PrintCacheStats(rank, "after the heap buffers");
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, 240);
  EXPECT_EQ(r, "");
}

// The link under the RDMA device goes down in the middle of a rendezvous (the receiver takes it
// down once its READs have brought the message's first bytes and not yet its last): the receive
// fails (its READs fail or flush), and so does the send, whose connections are idle while it
// waits for the FIN (the device's PORT_ERR event, held for MPIGPU_IB_PORT_DOWN_S). Each rank
// must see PROC_FAILED, never a hang: the waits are bounded. Two ranks on two nodes of this
// machine (MULTIPROC_NODES=2): a peer on this node counts as alive while its process lives,
// whatever its connection says. A small exchange first makes both connections.
TEST(IbVmTest, LinkDownMidRendezvousFailsBothSides) {
  SKIP_WITHOUT_RDMA();
  const char* dev = std::getenv("IB_VM_LINK_DEV");
  const char* nodes = std::getenv("MULTIPROC_NODES");
  if (dev == nullptr || nodes == nullptr || std::string(nodes) != "2")
    GTEST_SKIP() << "needs IB_VM_LINK_DEV (the netdev under the RDMA device; this test takes "
                    "it down) and MULTIPROC_NODES=2: the ib.link_down step of "
                    "//tests/rdma_vm:rdma_vm_ib_test sets them";
  const std::string down = std::string("ip link set dev ") + dev + " down";
  const std::string up = std::string("ip link set dev ") + dev + " up";
  // When the link went down (steady clock, one per machine), shared with the forked ranks.
  void* shared = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* down_at = static_cast<std::atomic<int64_t>*>(shared);
  down_at->store(0, std::memory_order_relaxed);
  auto now_ns = [] {
    return static_cast<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch()).count());
  };
  auto since_down = [&] {
    const int64_t t = down_at->load(std::memory_order_acquire);
    return t == 0 ? -1.0 : static_cast<double>(now_ns() - t) * 1e-9;
  };
  std::string r = RunJob(2, [&](int rank) {
    auto e = JoinJob();
    RANK_CHECK(std::string(e->ChannelCapsFor(1 - rank).name) == "ibverbs");
    char hello = static_cast<char>(rank), got = -1;
    Request *hs = nullptr, *hr = nullptr;
    RANK_CHECK(e->Irecv(HostBuffer(&got, 1), 1 - rank, 2, 0, &hr).ok());
    RANK_CHECK(e->Isend(HostBuffer(&hello, 1), 1 - rank, 2, 0, &hs).ok());
    WaitOk(e.get(), hr);
    WaitOk(e.get(), hs);
    e->Release(hr);
    e->Release(hs);
    const size_t bytes = size_t{128} << 20;
    std::vector<unsigned char> buf(bytes, rank == 0 ? 0x5A : 0x00);
    Request* q = nullptr;
    RANK_CHECK((rank == 0 ? e->Isend(HostBuffer(buf.data(), bytes), 1, 3, 0, &q)
                          : e->Irecv(HostBuffer(buf.data(), bytes), 0, 3, 0, &q)).ok());
    if (rank == 1) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (std::chrono::steady_clock::now() < until && !q->done() && buf[0] != 0x5A)
        RANK_CHECK(e->Progress().ok());
      std::fprintf(stderr, "receiver: first byte %s, last byte %s\n",
                   buf[0] == 0x5A ? "arrived" : "not arrived",
                   buf[bytes - 1] == 0x5A ? "arrived" : "not arrived");
      RANK_CHECK(buf[0] == 0x5A && buf[bytes - 1] != 0x5A && !q->done());  // mid-transfer
      std::fprintf(stderr, "receiver: %s\n", down.c_str());
      RANK_CHECK(std::system(down.c_str()) == 0);
      down_at->store(now_ns(), std::memory_order_release);
    }
    const Status st = e->Wait(q, 30);  // the bound: a hang fails here
    std::fprintf(stderr, "%s: wait %s, request %s (%s), %.2f s after the link went down\n",
                 rank == 0 ? "sender" : "receiver", st.ToString().c_str(),
                 ErrName(q->status().code()), q->status().message().c_str(), since_down());
    RANK_CHECK(st.ok());
    RANK_CHECK(q->status().code() == Err::kPeerFailed);
    e->Release(q);
    (void)e->Finalize();  // the peer is lost: PROC_FAILED
    return 0;
  }, 120);
  if (std::system(up.c_str()) != 0) ADD_FAILURE() << up << " failed";
  ::munmap(shared, 4096);
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::transport
