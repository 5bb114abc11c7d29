// The registration cache over real verbs (Soft-RoCE in the VM; any RDMA device): source buffers
// are registered through RegCache with ibv_reg_mr and RDMA-written, in one process, from one RC
// queue pair to another on the same port, into a fixed destination. Each case then replaces the
// source's pages at the same address (munmap + mmap, MAP_FIXED over it, mremap away, madvise
// DONTNEED, free + malloc) and writes new bytes: the new bytes must arrive. The cache's client is
// the ibverbs netmod's (whole own mappings kept; heap buffers registered per use, also checked).
// A control shows the check can fail: an MR kept over an unmapped range still sends the old bytes.
//
// Where no RDMA device exists every test skips, saying so. The device: the first one, or
// REG_CACHE_TEST_IB_DEV; port 1; the GID: the first IPv4-mapped one, else the first non-zero one.
#include <infiniband/verbs.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memreg/memhooks.h"
#include "memreg/reg_cache.h"

namespace mpigpu::memreg {
namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
constexpr size_t kLen = 256 * 1024;

// One device, one PD and CQ, two RC QPs connected to each other.
class Loopback {
 public:
  // "" on success, else why not (the skip reason or the failure).
  std::string Open(bool* no_device) {
    *no_device = false;
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (list == nullptr || n == 0) {
      if (list) ibv_free_device_list(list);
      *no_device = true;
      return "no RDMA device (ibv_get_device_list found none; load rdma_rxe on a netdev, as the "
             "rxe VM does)";
    }
    const char* want = std::getenv("REG_CACHE_TEST_IB_DEV");
    ibv_device* dev = list[0];
    for (int i = 0; want && i < n; ++i)
      if (std::strcmp(ibv_get_device_name(list[i]), want) == 0) dev = list[i];
    name_ = ibv_get_device_name(dev);
    ctx_ = ibv_open_device(dev);
    ibv_free_device_list(list);
    if (!ctx_) return "ibv_open_device(" + name_ + "): " + strerror(errno);
    ibv_port_attr port{};
    if (ibv_query_port(ctx_, 1, &port)) return std::string("ibv_query_port: ") + strerror(errno);
    if (port.state != IBV_PORT_ACTIVE) {
      *no_device = true;
      return name_ + " port 1 is not active (state " + std::to_string(port.state) + ")";
    }
    gid_index_ = -1;
    for (int i = 0; i < port.gid_tbl_len; ++i) {
      ibv_gid g{};
      if (ibv_query_gid(ctx_, 1, i, &g)) continue;
      static const uint8_t zero[16] = {};
      static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
      if (!std::memcmp(g.raw, zero, 16)) continue;
      if (gid_index_ < 0 || !std::memcmp(g.raw, v4, 12)) {
        gid_index_ = i;
        gid_ = g;
        if (!std::memcmp(g.raw, v4, 12)) break;
      }
    }
    if (gid_index_ < 0) return name_ + ": no GID on port 1";
    mtu_ = port.active_mtu < IBV_MTU_1024 ? port.active_mtu : IBV_MTU_1024;
    pd_ = ibv_alloc_pd(ctx_);
    cq_ = pd_ ? ibv_create_cq(ctx_, 16, nullptr, nullptr, 0) : nullptr;
    if (!cq_) return std::string("ibv_alloc_pd/ibv_create_cq: ") + strerror(errno);
    for (ibv_qp*& qp : qp_) {
      ibv_qp_init_attr a{};
      a.send_cq = a.recv_cq = cq_;
      a.qp_type = IBV_QPT_RC;
      a.cap.max_send_wr = a.cap.max_recv_wr = 8;
      a.cap.max_send_sge = a.cap.max_recv_sge = 1;
      qp = ibv_create_qp(pd_, &a);
      if (!qp) return std::string("ibv_create_qp: ") + strerror(errno);
    }
    for (int i = 0; i < 2; ++i) {
      std::string e = Connect(qp_[i], qp_[1 - i]->qp_num);
      if (!e.empty()) return e;
    }
    return "";
  }

  ~Loopback() {
    for (ibv_qp* qp : qp_)
      if (qp) ibv_destroy_qp(qp);
    if (cq_) ibv_destroy_cq(cq_);
    if (pd_) ibv_dealloc_pd(pd_);
    if (ctx_) ibv_close_device(ctx_);
  }

  ibv_pd* pd() { return pd_; }
  const std::string& name() const { return name_; }

  // RDMA WRITE of [src, src + len) (lkey) to remote_addr (rkey), waited for (5 s at most).
  std::string Write(const void* src, size_t len, uint32_t lkey, void* remote_addr, uint32_t rkey) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(src), static_cast<uint32_t>(len), lkey};
    ibv_send_wr wr{}, *bad = nullptr;
    wr.wr_id = 7;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(remote_addr);
    wr.wr.rdma.rkey = rkey;
    if (int e = ibv_post_send(qp_[0], &wr, &bad)) return std::string("ibv_post_send: ") + strerror(e);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    ibv_wc wc{};
    for (;;) {
      const int got = ibv_poll_cq(cq_, 1, &wc);
      if (got < 0) return "ibv_poll_cq failed";
      if (got == 1) break;
      if (std::chrono::steady_clock::now() > deadline) return "no completion within 5 s";
    }
    if (wc.status != IBV_WC_SUCCESS)
      return std::string("completion: ") + ibv_wc_status_str(wc.status);
    return "";
  }

 private:
  std::string Connect(ibv_qp* qp, uint32_t remote_qpn) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                          IBV_QP_ACCESS_FLAGS))
      return std::string("QP to INIT: ") + strerror(e);
    a = ibv_qp_attr{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = mtu_;
    a.dest_qp_num = remote_qpn;
    a.rq_psn = 0;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = gid_;
    a.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_index_);
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.port_num = 1;
    if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                          IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
      return std::string("QP to RTR: ") + strerror(e);
    a = ibv_qp_attr{};
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = 0;
    a.max_rd_atomic = 1;
    if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                          IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                          IBV_QP_MAX_QP_RD_ATOMIC))
      return std::string("QP to RTS: ") + strerror(e);
    return "";
  }

  std::string name_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_[2] = {nullptr, nullptr};
  ibv_gid gid_{};
  int gid_index_ = -1;
  ibv_mtu mtu_ = IBV_MTU_1024;
};

class RegCacheRdmaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bool no_device = false;
    const std::string why = lb_.Open(&no_device);
    if (no_device) GTEST_SKIP() << why;
    ASSERT_EQ(why, "");
    ASSERT_TRUE(memhooks::HooksActive()) << memhooks::HooksInactiveReason();
    dst_ = static_cast<char*>(mmap(nullptr, kLen, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(dst_, MAP_FAILED);
    dst_mr_ = ibv_reg_mr(lb_.pd(), dst_, kLen, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    ASSERT_NE(dst_mr_, nullptr) << strerror(errno);
    ibv_pd* pd = lb_.pd();
    // The ibverbs netmod's client (internode/ib/ib_reg.cc): whole own mappings kept, any other
    // range registered per use.
    cache_ = std::make_unique<RegCache>(true, 1024);
    RegCache::Client c;
    c.name = "ibverbs";
    c.reg = [pd](void* addr, size_t len, void** handle) -> Status {
      ibv_mr* mr = ibv_reg_mr(pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
      if (mr == nullptr)
        return Status(errno == ENOMEM ? Err::kNoMemory : Err::kSystem,
                      std::string("ibv_reg_mr: ") + strerror(errno));
      *handle = mr;
      return Status::Ok();
    };
    c.dereg = [](void* handle) { ibv_dereg_mr(static_cast<ibv_mr*>(handle)); };
    c.span = RegCache::OwnMappingSpan();
    ASSERT_EQ(cache_->AddClient(std::move(c)), 0);
    ASSERT_TRUE(cache_->caching()) << cache_->why_not_caching();
    ASSERT_TRUE(memhooks::TrackingMappings());
    std::fprintf(stderr, "device %s\n", lb_.name().c_str());
  }
  void TearDown() override {
    cache_.reset();
    if (dst_mr_) ibv_dereg_mr(dst_mr_);
    if (dst_ && dst_ != MAP_FAILED) munmap(dst_, kLen);
  }

  // Sends `src` through the cache and checks every byte arrived.
  void SendAndCheck(const char* src, const char* what) {
    std::memset(dst_, 0, kLen);
    Region* r = nullptr;
    Status st = cache_->Acquire(const_cast<char*>(src), kLen, &r);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const std::string e =
        lb_.Write(src, kLen, static_cast<ibv_mr*>(r->handle[0])->lkey, dst_, dst_mr_->rkey);
    cache_->Release(r);
    ASSERT_EQ(e, "") << what;
    ASSERT_EQ(std::memcmp(dst_, src, kLen), 0)
        << what << ": the bytes that arrived are not the buffer's (a stale registration?)";
  }

  Loopback lb_;
  char* dst_ = nullptr;
  ibv_mr* dst_mr_ = nullptr;
  std::unique_ptr<RegCache> cache_;
};

char* MapFilled(void* at, int value) {
  void* p = mmap(at, kLen, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
  if (p == MAP_FAILED) return nullptr;
  std::memset(p, value, kLen);
  return static_cast<char*>(p);
}

// The check can fail: an MR kept over an unmapped-then-remapped range sends the old pages.
TEST_F(RegCacheRdmaTest, ControlAStaleRegistrationSendsOldBytes) {
  char* src = MapFilled(nullptr, 1);
  ASSERT_NE(src, nullptr);
  ibv_mr* mr = ibv_reg_mr(lb_.pd(), src, kLen, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr) << strerror(errno);
  ASSERT_EQ(munmap(src, kLen), 0);
  ASSERT_EQ(MapFilled(src, 2), src);
  std::memset(dst_, 0, kLen);
  ASSERT_EQ(lb_.Write(src, kLen, mr->lkey, dst_, dst_mr_->rkey), "");
  ibv_dereg_mr(mr);
  EXPECT_EQ(dst_[0], 1) << "the device sent the new bytes through the old MR (on-demand paging?): "
                           "this control cannot show staleness here";
  EXPECT_NE(std::memcmp(dst_, src, kLen), 0);
  munmap(src, kLen);
}

TEST_F(RegCacheRdmaTest, MunmapAndMapAgain) {
  char* src = MapFilled(nullptr, 1);
  ASSERT_NE(src, nullptr);
  SendAndCheck(src, "first");
  SendAndCheck(src, "again (a hit)");
  const auto regs = cache_->stats().registrations;
  ASSERT_EQ(munmap(src, kLen), 0);
  ASSERT_EQ(MapFilled(src, 2), src);
  SendAndCheck(src, "after munmap + mmap at the same address");
  EXPECT_EQ(cache_->stats().registrations, regs + 1);
  ASSERT_EQ(MapFilled(src, 3), src);  // MAP_FIXED over the mapping, no munmap
  SendAndCheck(src, "after mmap MAP_FIXED over it");
  munmap(src, kLen);
}

TEST_F(RegCacheRdmaTest, MremapAndMadvise) {
  char* src = MapFilled(nullptr, 1);
  char* other = MapFilled(nullptr, 9);
  ASSERT_TRUE(src && other);
  SendAndCheck(src, "first");
  ASSERT_EQ(mremap(src, kLen, kLen, MREMAP_MAYMOVE | MREMAP_FIXED, other), other);
  ASSERT_EQ(MapFilled(src, 4), src);
  SendAndCheck(src, "after mremap away + mmap at the same address");
  SendAndCheck(other, "the moved pages at their new address");
  ASSERT_EQ(madvise(src, kLen, MADV_DONTNEED), 0);
  std::memset(src, 5, kLen);
  SendAndCheck(src, "after madvise(MADV_DONTNEED)");
  munmap(src, kLen);
  munmap(other, kLen);
}

// A large block (above glibc's largest mmap threshold, 32 MiB: a mapping of its own each time)
// sent twice (the second a hit), freed, malloc'd again (at the same address, new pages), new
// bytes written: the new bytes must arrive.
TEST_F(RegCacheRdmaTest, FreeAndMallocAgain) {
  const size_t n = 40 << 20;
  int same = 0;
  for (int round = 0; round < 3; ++round) {
    char* p = static_cast<char*>(malloc(n));
    ASSERT_NE(p, nullptr);
    std::memset(p, 10 + round, n);
    const auto regs = cache_->stats().registrations;
    SendAndCheck(p + kPage, "malloc'd block");
    SendAndCheck(p + kPage, "malloc'd block again (a hit)");
    EXPECT_EQ(cache_->stats().registrations, regs + 1) << "the block's mapping is kept";
    free(p);
    char* q = static_cast<char*>(malloc(n));
    ASSERT_NE(q, nullptr);
    same += q == p;
    std::memset(q, 20 + round, n);
    SendAndCheck(q + kPage, q == p ? "re-malloc'd at the same address" : "re-malloc'd elsewhere");
    free(q);
  }
  std::fprintf(stderr, "free + malloc: %d of 3 rounds at the same address\n", same);
  EXPECT_GT(same, 0) << "malloc never returned the freed address: nothing was tested";
}

// A heap buffer (no allocation owns its mapping): registered per use, so bytes written between
// uses, and a buffer freed and malloc'd again, arrive as written.
TEST_F(RegCacheRdmaTest, HeapBufferRegisteredPerUse) {
  free(malloc(1 << 20));  // glibc's mmap threshold rises to 1 MiB: the blocks below are heap
  for (int round = 0; round < 3; ++round) {
    char* p = static_cast<char*>(malloc(kLen + 100));
    ASSERT_NE(p, nullptr);
    const auto a = reinterpret_cast<uintptr_t>(p);
    if (memhooks::OwnMapping(a, a + kLen, nullptr, nullptr)) {
      free(p);
      GTEST_SKIP() << "glibc mapped a 256 KiB block on its own (its threshold did not rise)";
    }
    const auto before = cache_->stats();
    std::memset(p, 30 + round, kLen);
    SendAndCheck(p, "heap buffer");
    std::memset(p, 40 + round, kLen);
    SendAndCheck(p, "heap buffer, new bytes");
    const auto after = cache_->stats();
    EXPECT_EQ(after.uncached, before.uncached + 2);
    EXPECT_EQ(after.hits, before.hits);
    EXPECT_EQ(after.entries, before.entries) << "nothing kept";
    free(p);
  }
}
}  // namespace
}  // namespace mpigpu::memreg
