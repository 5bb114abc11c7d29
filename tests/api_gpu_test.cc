// The public API with device buffers (MPIGPU_BUF_GPU / MPIGPU_BUF_GPU_DEVICE(n)) between forked
// ranks: contiguous ping-pong around the eager limit, device vector columns (regular: one
// strided layout; irregular: packed with one Copy2D per piece), host<->device mixes, and
// collectives on device buffers. Ranks skip where no CUDA device exists.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "memcopy/memcopy.h"
#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"
#include "memcopy/pattern.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;

#define CUDA_OK(call) RANK_CHECK((call) == cudaSuccess)

// Runs body(rank) in n ranks with the API initialised; every rank skips without a GPU (the
// decision is the ranks': the parent must not touch CUDA before it forks).
std::string RunGpuJob(int n, const std::function<void(int)>& body) {
  return RunJob(n, [&](int) {
    if (CudaDeviceCount() == 0) return kRankSkip;
    return RunApiRank(body);
  });
}

void* DevAlloc(size_t bytes) {
  void* p = nullptr;
  CUDA_OK(cudaMalloc(&p, bytes ? bytes : 1));
  return p;
}

// cudaMemcpy from pageable memory may return before the data reaches the device, and the
// transport copies on its own non-blocking streams: synchronise before handing the buffer over
// (as with CUDA-aware MPI).
void ToDev(void* d, const void* h, size_t bytes) {
  CUDA_OK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());
}
std::vector<unsigned char> FromDev(const void* d, size_t bytes) {
  std::vector<unsigned char> h(bytes);
  CUDA_OK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  return h;
}

TEST(ApiGpuTest, ContiguousPingPongAroundEagerLimit) {
  std::string r = RunGpuJob(2, [](int rank) {
    const size_t kEager = 64 << 10;
    uint32_t seed = 1;
    for (size_t bytes : {size_t{1}, kEager - 1, kEager, kEager + 1, size_t{8} << 20}) {
      // Device -> device, then host -> device and device -> host.
      for (int mode = 0; mode < 3; ++mode, ++seed) {
        const MPIGPU_Buftype send_bt = mode == 1 ? MPIGPU_BUF_HOST : MPIGPU_BUF_GPU;
        const MPIGPU_Buftype recv_bt = mode == 2 ? MPIGPU_BUF_HOST : MPIGPU_BUF_GPU_DEVICE(0);
        std::vector<unsigned char> host(bytes + 1, 0xEE);
        void* dev = DevAlloc(bytes + 1);
        CUDA_OK(cudaMemset(dev, 0xEE, bytes + 1));
        CUDA_OK(cudaDeviceSynchronize());  // finished before the buffer is handed over
        if (rank == 0) {
          FillPattern(host.data(), bytes, seed);
          ToDev(dev, host.data(), bytes);
          void* src = send_bt == MPIGPU_BUF_HOST ? static_cast<void*>(host.data()) : dev;
          API_OK(MPIGPU_Send(src, send_bt, static_cast<int>(bytes), MPIGPU_BYTE, 1, 1, kWorld));
        } else {
          void* dst = recv_bt == MPIGPU_BUF_HOST ? static_cast<void*>(host.data()) : dev;
          MPIGPU_Status st;
          API_OK(MPIGPU_Recv(dst, recv_bt, static_cast<int>(bytes), MPIGPU_BYTE, 0, 1, kWorld,
                             &st));
          std::vector<unsigned char> got =
              recv_bt == MPIGPU_BUF_HOST ? host : FromDev(dev, bytes + 1);
          const long long bad = FirstMismatch(got.data(), bytes, seed);
          if (bad != -1)
            std::fprintf(stderr, "%zu bytes, mode %d: byte %lld is %d, expected %d\n", bytes, mode,
                         bad, got[bad], PatternByte(seed, bad));
          RANK_CHECK(bad == -1);
          RANK_CHECK(got[bytes] == 0xEE);
          RANK_CHECK(st.count_bytes == bytes);
        }
        CUDA_OK(cudaFree(dev));
      }
    }
  });
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Cancel takes back a device send nobody matched (its RTS carries a CUDA IPC offer, which the
// sender's back-end drops when the send completes cancelled); the second send with the same
// envelope, into a device or a host buffer, arrives whole.
TEST(ApiGpuTest, CancelTakesBackDeviceSends) {
  std::string r = RunGpuJob(2, [](int rank) {
    uint32_t seed = 40;
    for (size_t bytes : {size_t{1}, size_t{64} << 10, size_t{4} << 20}) {
      for (int to_host = 0; to_host < 2; ++to_host, ++seed) {
        const int tag = 300 + static_cast<int>(seed);
        void* a = DevAlloc(bytes);
        void* b = DevAlloc(bytes + 1);
        std::vector<unsigned char> host(bytes + 1, 0xEE);
        if (rank == 0) {
          FillPattern(host.data(), bytes, seed + 1000);
          ToDev(a, host.data(), bytes);
          FillPattern(host.data(), bytes, seed);
          ToDev(b, host.data(), bytes);
          MPIGPU_Request q, keep;
          MPIGPU_Status st;
          API_OK(MPIGPU_Isend(a, MPIGPU_BUF_GPU, static_cast<int>(bytes), MPIGPU_BYTE, 1, tag,
                              kWorld, &q));
          API_OK(MPIGPU_Isend(b, MPIGPU_BUF_GPU, static_cast<int>(bytes), MPIGPU_BYTE, 1, tag,
                              kWorld, &keep));
          API_OK(MPIGPU_Cancel(&q));
          API_OK(MPIGPU_Wait(&q, &st));
          RANK_CHECK(st.cancelled == 1);
          API_OK(MPIGPU_Send(nullptr, MPIGPU_BUF_HOST, 0, MPIGPU_BYTE, 1, 1, kWorld));  // go
          API_OK(MPIGPU_Wait(&keep, &st));
          RANK_CHECK(st.cancelled == 0);
        } else {
          CUDA_OK(cudaMemset(b, 0xEE, bytes + 1));
          CUDA_OK(cudaDeviceSynchronize());
          API_OK(MPIGPU_Recv(nullptr, MPIGPU_BUF_HOST, 0, MPIGPU_BYTE, 0, 1, kWorld,
                             MPIGPU_STATUS_IGNORE));
          MPIGPU_Status st;
          void* dst = to_host ? static_cast<void*>(host.data()) : b;
          API_OK(MPIGPU_Recv(dst, to_host ? MPIGPU_BUF_HOST : MPIGPU_BUF_GPU_DEVICE(0),
                             static_cast<int>(bytes), MPIGPU_BYTE, 0, tag, kWorld, &st));
          std::vector<unsigned char> got = to_host ? host : FromDev(b, bytes + 1);
          RANK_CHECK(st.count_bytes == bytes && st.cancelled == 0);
          RANK_CHECK(FirstMismatch(got.data(), bytes, seed) == -1 && got[bytes] == 0xEE);
          int flag = 1;
          API_OK(MPIGPU_Iprobe(0, tag, kWorld, &flag, &st));
          RANK_CHECK(flag == 0);
        }
        API_OK(MPIGPU_Barrier(kWorld));
        CUDA_OK(cudaFree(a));
        CUDA_OK(cudaFree(b));
      }
    }
  });
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// MPIGPU_Alloc_mem memory is pinned where a GPU exists, and host<->device messages from and to
// it (rendezvous sized: the single-copy IPC paths) arrive whole.
TEST(ApiGpuTest, AllocMemIsPinnedAndMeetsDeviceBuffers) {
  std::string r = RunGpuJob(2, [](int rank) {
    const size_t n = size_t{5} << 20;
    void* host = nullptr;
    API_OK(MPIGPU_Alloc_mem(n + 1, &host));
    cudaPointerAttributes a{};
    CUDA_OK(cudaPointerGetAttributes(&a, host));
    RANK_CHECK(a.type == cudaMemoryTypeHost);  // pinned, not pageable (unregistered)
    unsigned char* h = static_cast<unsigned char*>(host);
    void* dev = DevAlloc(n + 1);
    for (int dir = 0; dir < 2; ++dir) {  // 0: host (rank 0) -> device (rank 1); 1: reverse
      const uint32_t seed = 40 + dir;
      const bool sender = rank == dir;
      const bool on_host = rank == 0;
      std::memset(h, 0xEE, n + 1);
      CUDA_OK(cudaMemset(dev, 0xEE, n + 1));
      CUDA_OK(cudaDeviceSynchronize());
      void* buf = on_host ? host : dev;
      const MPIGPU_Buftype bt = on_host ? MPIGPU_BUF_HOST : MPIGPU_BUF_GPU;
      if (sender) {
        std::vector<unsigned char> pattern(n);
        FillPattern(pattern.data(), n, seed);
        if (on_host) std::memcpy(h, pattern.data(), n);
        else ToDev(dev, pattern.data(), n);
        API_OK(MPIGPU_Send(buf, bt, static_cast<int>(n), MPIGPU_BYTE, 1 - rank, 5, kWorld));
      } else {
        API_OK(MPIGPU_Recv(buf, bt, static_cast<int>(n), MPIGPU_BYTE, 1 - rank, 5, kWorld,
                           MPIGPU_STATUS_IGNORE));
        std::vector<unsigned char> got =
            on_host ? std::vector<unsigned char>(h, h + n + 1) : FromDev(dev, n + 1);
        RANK_CHECK(FirstMismatch(got.data(), n, seed) == -1 && got[n] == 0xEE);
      }
    }
    CUDA_OK(cudaFree(dev));
    API_OK(MPIGPU_Free_mem(host));
  });
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// A rows x cols matrix of doubles on the device; Value(i, j) at (i, j).
double Value(int i, int j) { return i * 1000.0 + j; }

TEST(ApiGpuTest, DeviceVectorColumns) {
  std::string r = RunGpuJob(2, [](int rank) {
    const int rows = 4096, cols = 16;
    const size_t n = static_cast<size_t>(2 * rows + 2) * cols;  // room for count 2 of a column
    MPIGPU_Datatype column;
    API_OK(MPIGPU_Type_vector(rows, 1, cols, MPIGPU_DOUBLE, &column));
    API_OK(MPIGPU_Type_commit(&column));
    std::vector<double> h(n);
    for (size_t k = 0; k < n; ++k) h[k] = rank == 0 ? Value(k / cols, k % cols) : -1;
    auto* d = static_cast<double*>(DevAlloc(n * sizeof(double)));
    ToDev(d, h.data(), n * sizeof(double));
    if (rank == 0) {
      // Regular (one strided layout; 32 KiB: eager), then count 2 (irregular: sent packed).
      API_OK(MPIGPU_Send(d + 3, MPIGPU_BUF_GPU, 1, column, 1, 1, kWorld));
      API_OK(MPIGPU_Send(d + 1, MPIGPU_BUF_GPU, 2, column, 1, 2, kWorld));
    } else {
      API_OK(MPIGPU_Recv(d + 5, MPIGPU_BUF_GPU, 1, column, 0, 1, kWorld, MPIGPU_STATUS_IGNORE));
      API_OK(MPIGPU_Recv(d + 7, MPIGPU_BUF_GPU, 2, column, 0, 2, kWorld, MPIGPU_STATUS_IGNORE));
      std::vector<unsigned char> raw = FromDev(d, n * sizeof(double));
      std::vector<double> got(n);
      std::memcpy(got.data(), raw.data(), raw.size());
      std::vector<double> want(n, -1);
      const size_t ext = static_cast<size_t>(rows - 1) * cols + 1;
      for (int i = 0; i < rows; ++i) want[5 + static_cast<size_t>(i) * cols] = Value(i, 3);
      for (int e = 0; e < 2; ++e)
        for (int i = 0; i < rows; ++i) {
          const size_t src = 1 + e * ext + static_cast<size_t>(i) * cols;
          want[7 + e * ext + static_cast<size_t>(i) * cols] = Value(src / cols, src % cols);
        }
      RANK_CHECK(got == want);
    }
    CUDA_OK(cudaFree(d));
    API_OK(MPIGPU_Type_free(&column));
  });
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Derived types with data below the buffer pointer (a negative-stride vector), a struct with
// holes, and a type too complex to list (more than 2^20 pieces), between device buffers (both
// sides typed, packed through the packer's device branch) and from device to host; then
// MPIGPU_Pack/Unpack between a typed device buffer and a host/device packed buffer.
TEST(ApiGpuTest, DeviceDerivedTypesAndPack) {
  std::string r = RunGpuJob(2, [](int rank) {
    const int n = 100;
    MPIGPU_Datatype neg, holes, many;
    API_OK(MPIGPU_Type_vector(n, 1, -3, MPIGPU_INT, &neg));  // ints at 0, -12, -24, ...
    const int bl[2] = {1, 2};
    const MPIGPU_Aint disp[2] = {0, 8};
    const MPIGPU_Datatype types[2] = {MPIGPU_INT, MPIGPU_SHORT};  // int, hole, 2 shorts
    API_OK(MPIGPU_Type_create_struct(2, bl, disp, types, &holes));
    const int big = (1 << 20) + 5;
    API_OK(MPIGPU_Type_vector(big, 1, -2, MPIGPU_CHAR, &many));
    for (MPIGPU_Datatype* t : {&neg, &holes, &many}) API_OK(MPIGPU_Type_commit(t));
    const size_t ints = 3 * n, hbytes = 12 * 64, cbytes = 2 * static_cast<size_t>(big);
    std::vector<int> hi(ints);
    std::vector<unsigned char> hh(hbytes), hc(cbytes);
    for (size_t i = 0; i < ints; ++i) hi[i] = rank == 0 ? static_cast<int>(i * 7) : -1;
    for (size_t i = 0; i < hbytes; ++i) hh[i] = rank == 0 ? static_cast<unsigned char>(i) : 0xEE;
    for (size_t i = 0; i < cbytes; ++i) hc[i] = rank == 0 ? static_cast<unsigned char>(i * 3) : 0;
    auto* di = static_cast<int*>(DevAlloc(ints * sizeof(int)));
    auto* dh = static_cast<unsigned char*>(DevAlloc(hbytes));
    auto* dc = static_cast<unsigned char*>(DevAlloc(cbytes));
    ToDev(di, hi.data(), ints * sizeof(int));
    ToDev(dh, hh.data(), hbytes);
    ToDev(dc, hc.data(), cbytes);
    const int last = static_cast<int>(ints) - 1;
    if (rank == 0) {
      API_OK(MPIGPU_Send(di + last, MPIGPU_BUF_GPU, 1, neg, 1, 1, kWorld));
      API_OK(MPIGPU_Send(dh, MPIGPU_BUF_GPU, 64, holes, 1, 2, kWorld));
      API_OK(MPIGPU_Send(dc + cbytes - 1, MPIGPU_BUF_GPU, 1, many, 1, 3, kWorld));
      API_OK(MPIGPU_Send(dh, MPIGPU_BUF_GPU, 64, holes, 1, 4, kWorld));
    } else {
      // 1. negative stride both sides: the same ints land at the same places.
      API_OK(MPIGPU_Recv(di + last, MPIGPU_BUF_GPU, 1, neg, 0, 1, kWorld, MPIGPU_STATUS_IGNORE));
      std::vector<unsigned char> raw = FromDev(di, ints * sizeof(int));
      std::vector<int> got(ints);
      std::memcpy(got.data(), raw.data(), raw.size());
      for (size_t i = 0; i < ints; ++i)
        RANK_CHECK(got[i] == ((ints - 1 - i) % 3 == 0 ? static_cast<int>(i * 7) : -1));
      // 2. struct with holes both sides: the holes keep the receiver's bytes.
      API_OK(MPIGPU_Recv(dh, MPIGPU_BUF_GPU, 64, holes, 0, 2, kWorld, MPIGPU_STATUS_IGNORE));
      raw = FromDev(dh, hbytes);
      for (size_t i = 0; i < hbytes; ++i) {
        const size_t o = i % 12;
        RANK_CHECK(raw[i] == (o < 4 || o >= 8 ? static_cast<unsigned char>(i) : 0xEE));
      }
      // 3. the unlisted type -> contiguous device chars.
      API_OK(MPIGPU_Recv(dc, MPIGPU_BUF_GPU, big, MPIGPU_CHAR, 0, 3, kWorld,
                         MPIGPU_STATUS_IGNORE));
      raw = FromDev(dc, static_cast<size_t>(big));
      for (int i = 0; i < big; ++i)
        RANK_CHECK(raw[i] == static_cast<unsigned char>((cbytes - 1 - 2 * static_cast<size_t>(i)) * 3));
      // 4. device struct -> host packed bytes (8 per element: the int, then the two shorts;
      // the hole is no data), then Pack/Unpack on the device.
      const size_t packed = 8 * 64;
      std::vector<unsigned char> flat(packed + 128, 0x5A);  // room to spare: stays untouched
      MPIGPU_Status st;
      API_OK(MPIGPU_Recv(flat.data(), MPIGPU_BUF_HOST, static_cast<int>(flat.size()), MPIGPU_BYTE,
                         0, 4, kWorld, &st));
      int got_bytes = -1;
      API_OK(MPIGPU_Get_count(&st, MPIGPU_BYTE, &got_bytes));
      RANK_CHECK(got_bytes == static_cast<int>(packed));
      for (int e = 0; e < 64; ++e)
        for (int b = 0; b < 8; ++b)
          RANK_CHECK(flat[e * 8 + b] == static_cast<unsigned char>(e * 12 + (b < 4 ? b : b + 4)));
      for (size_t i = packed; i < flat.size(); ++i) RANK_CHECK(flat[i] == 0x5A);
      flat.resize(packed);
      auto* dp = static_cast<unsigned char*>(DevAlloc(packed));
      int pos = 0;
      API_OK(MPIGPU_Pack(dh, MPIGPU_BUF_GPU, 64, holes, dp, MPIGPU_BUF_GPU,
                         static_cast<int>(packed), &pos, kWorld));
      RANK_CHECK(pos == static_cast<int>(packed));
      RANK_CHECK(FromDev(dp, packed) == flat);
      std::vector<unsigned char> fill(hbytes, 0x11);
      ToDev(dh, fill.data(), hbytes);
      pos = 0;
      API_OK(MPIGPU_Unpack(flat.data(), MPIGPU_BUF_HOST, static_cast<int>(packed), &pos, dh,
                           MPIGPU_BUF_GPU, 64, holes, kWorld));
      raw = FromDev(dh, hbytes);
      for (size_t i = 0; i < hbytes; ++i) {
        const size_t o = i % 12;
        RANK_CHECK(raw[i] == (o < 4 || o >= 8 ? static_cast<unsigned char>(i) : 0x11));
      }
      CUDA_OK(cudaFree(dp));
    }
    CUDA_OK(cudaFree(di));
    CUDA_OK(cudaFree(dh));
    CUDA_OK(cudaFree(dc));
    for (MPIGPU_Datatype* t : {&neg, &holes, &many}) API_OK(MPIGPU_Type_free(t));
  });
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

TEST(ApiGpuTest, CollectivesOnDeviceBuffers) {
  std::string r = RunGpuJob(3, [](int rank) {
    const int count = 30000;  // 240 KB of doubles: rendezvous
    std::vector<double> h(count);
    for (int i = 0; i < count; ++i) h[i] = rank == 1 ? i * 2.0 : -1;
    auto* d = static_cast<double*>(DevAlloc(count * sizeof(double)));
    ToDev(d, h.data(), count * sizeof(double));
    API_OK(MPIGPU_Bcast(d, MPIGPU_BUF_GPU, count, MPIGPU_DOUBLE, 1, kWorld));
    std::vector<unsigned char> raw = FromDev(d, count * sizeof(double));
    std::memcpy(h.data(), raw.data(), raw.size());
    for (int i = 0; i < count; ++i) RANK_CHECK(h[i] == i * 2.0);
    // Allreduce device -> device, and Reduce device -> host at the root.
    for (int i = 0; i < count; ++i) h[i] = rank + i;
    ToDev(d, h.data(), count * sizeof(double));
    auto* out = static_cast<double*>(DevAlloc(count * sizeof(double)));
    API_OK(MPIGPU_Allreduce(d, MPIGPU_BUF_GPU, out, MPIGPU_BUF_GPU, count, MPIGPU_DOUBLE,
                            MPIGPU_SUM, kWorld));
    raw = FromDev(out, count * sizeof(double));
    std::memcpy(h.data(), raw.data(), raw.size());
    for (int i = 0; i < count; ++i) RANK_CHECK(h[i] == 3.0 * i + 3);
    std::vector<double> host_out(count, -1);
    API_OK(MPIGPU_Reduce(d, MPIGPU_BUF_GPU, host_out.data(), MPIGPU_BUF_HOST, count,
                         MPIGPU_DOUBLE, MPIGPU_MAX, 0, kWorld));
    if (rank == 0)
      for (int i = 0; i < count; ++i) RANK_CHECK(host_out[i] == 2.0 + i);
    CUDA_OK(cudaFree(d));
    CUDA_OK(cudaFree(out));
  });
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing
