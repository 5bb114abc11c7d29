#include "tools/sweep_measure.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "memcopy/memcopy.h"
#include "memcopy/pattern.h"
#include "mpigpu_api/mpigpu.h"

namespace mpigpu {
namespace sweep {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kTagData = 1;
constexpr int kTagAck = 2;
constexpr int kTagCheck = 3;
constexpr int kTagSetup = 4;
// -c sends up to a window of messages into separate slots; this bounds the slots' memory.
constexpr size_t kCheckBytes = size_t{64} << 20;
constexpr size_t kNameBytes = 256;

// ---- fatal errors on the measured path (both ranks must stay in step, so no recovery) ----

[[noreturn]] void Die(int code, const std::string& msg) {
  std::fprintf(stderr, "\nmpigpu-sweep: %s\n", msg.c_str());
  std::fflush(stderr);
  MPIGPU_Abort(MPIGPU_COMM_WORLD, code);
  _exit(code);
}

void ApiCheck(int rc, const char* call) {
  if (rc == MPIGPU_SUCCESS) return;
  char text[MPIGPU_MAX_ERROR_STRING];
  int len = 0;
  MPIGPU_Error_string(rc, text, &len);
  Die(1, std::string(call) + " failed: " + text);
}
#define SWEEP_API(call) ApiCheck((call), #call)

void CudaCheck(cudaError_t e, const char* call) {
  if (e != cudaSuccess) Die(1, std::string(call) + " failed: " + cudaGetErrorString(e));
}
#define SWEEP_CUDA(call) CudaCheck((call), #call)


// ---- data pattern for -c: byte i of a buffer filled with seed s ----

using ::mpigpu::testing::PatternByte;  // memcopy/pattern.h: the tests' pattern too

// Distinct per size, sending rank and slot, so a stale or misplaced message is caught.
uint32_t Seed(size_t size_index, int sender, int slot) {
  return static_cast<uint32_t>((size_index + 1) * 100000 + static_cast<size_t>(sender) * 10000 +
                               static_cast<size_t>(slot));
}
constexpr uint32_t kPoisonSeed = 0xDEADu;

// A buffer in host (pageable, page aligned: what an application has) or device memory.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { Free(); }

  void Alloc(Loc loc, size_t bytes, bool pinned_host = false) {
    Free();
    loc_ = loc;
    pinned_ = pinned_host && loc == Loc::kHost;
    bytes_ = std::max<size_t>(bytes, 1);
    if (loc == Loc::kHost) {
      if (pinned_) {
        if (MPIGPU_Alloc_mem(bytes_, &ptr_) != MPIGPU_SUCCESS) Die(1, "MPIGPU_Alloc_mem failed");
      } else if (posix_memalign(&ptr_, 4096, bytes_) != 0) {
        Die(1, "out of host memory");
      }
      std::memset(ptr_, 0, bytes_);  // touch the pages before timing
    } else {
      SWEEP_CUDA(cudaMalloc(&ptr_, bytes_));
      SWEEP_CUDA(cudaMemset(ptr_, 0, bytes_));
      // cudaMemset is asynchronous and mpigpu copies on its own non-blocking streams: it must
      // land before a receive can write here.
      SWEEP_CUDA(cudaDeviceSynchronize());
    }
  }

  void* ptr() const { return ptr_; }
  char* at(size_t offset) const { return static_cast<char*>(ptr_) + offset; }
  MPIGPU_Buftype tag() const { return loc_ == Loc::kHost ? MPIGPU_BUF_HOST : MPIGPU_BUF_GPU; }

  // Slot k (of `slot_bytes` bytes) gets seed seeds[k].
  void Fill(size_t slot_bytes, const std::vector<uint32_t>& seeds) {
    const size_t total = slot_bytes * seeds.size();
    std::vector<uint8_t> host(loc_ == Loc::kDevice ? total : 0);
    uint8_t* p = loc_ == Loc::kDevice ? host.data() : static_cast<uint8_t*>(ptr_);
    for (size_t k = 0; k < seeds.size(); ++k)
      ::mpigpu::testing::FillPattern(p + k * slot_bytes, slot_bytes, seeds[k]);
    if (loc_ == Loc::kDevice && total > 0) {
      SWEEP_CUDA(cudaMemcpy(ptr_, host.data(), total, cudaMemcpyHostToDevice));
      // A pageable H2D cudaMemcpy may return before its DMA lands, and mpigpu's non-blocking
      // streams do not wait for it: the data (or the poison) must be there before the MPIGPU call.
      SWEEP_CUDA(cudaDeviceSynchronize());
    }
  }

  // The first slot that does not hold its seed's pattern: -1 when all do.
  int Verify(size_t slot_bytes, const std::vector<uint32_t>& seeds, long long* byte, int* got,
             int* want) const {
    const size_t total = slot_bytes * seeds.size();
    std::vector<uint8_t> host(loc_ == Loc::kDevice ? total : 0);
    const uint8_t* p = static_cast<const uint8_t*>(ptr_);
    if (loc_ == Loc::kDevice) {
      if (total > 0) SWEEP_CUDA(cudaMemcpy(host.data(), ptr_, total, cudaMemcpyDeviceToHost));
      p = host.data();
    }
    for (size_t k = 0; k < seeds.size(); ++k) {
      const long long i = ::mpigpu::testing::FirstMismatch(p + k * slot_bytes, slot_bytes, seeds[k]);
      if (i >= 0) {
        *byte = i;
        *got = p[k * slot_bytes + i];
        *want = PatternByte(seeds[k], static_cast<uint64_t>(i));
        return static_cast<int>(k);
      }
    }
    return -1;
  }

 private:
  void Free() {
    if (ptr_ == nullptr) return;
    if (pinned_) MPIGPU_Free_mem(ptr_);
    else if (loc_ == Loc::kHost) free(ptr_);
    else cudaFree(ptr_);
    ptr_ = nullptr;
  }

  void* ptr_ = nullptr;
  Loc loc_ = Loc::kHost;
  bool pinned_ = false;  // from MPIGPU_Alloc_mem
  size_t bytes_ = 0;
};

// Pinned host memory (the staging buffers and the limit copies' host side).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
  }
  cudaError_t Alloc(size_t bytes) { return cudaMallocHost(&ptr_, std::max<size_t>(bytes, 1)); }
  void* ptr() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) {
      int keep = 0;
      cudaGetDevice(&keep);
      cudaSetDevice(device_);
      cudaFree(ptr_);
      cudaSetDevice(keep);
    }
  }
  cudaError_t Alloc(int device, size_t bytes) {
    device_ = device;
    int keep = 0;
    cudaGetDevice(&keep);
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaMalloc(&ptr_, std::max<size_t>(bytes, 1));
    cudaSetDevice(keep);
    return e;
  }
  void* ptr() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
  int device_ = 0;
};

class Stream {
 public:
  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (s_ != nullptr) cudaStreamDestroy(s_);
  }
  cudaError_t Create(int device) {
    int keep = 0;
    cudaGetDevice(&keep);
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking);
    cudaSetDevice(keep);
    return e;
  }
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

std::string DeviceName(int device) {
  if (device < 0) return "host";
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) return "GPU " + std::to_string(device);
  return std::string(p.name) + ", GPU " + std::to_string(device);
}

// ---- progress (stderr, only on a terminal) ----

class Progress {
 public:
  explicit Progress(bool on) : on_(on) {}
  ~Progress() { Clear(); }
  void Show(const std::string& text) {
    if (!on_) return;
    std::fprintf(stderr, "\r%-78.78s", text.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void Clear() {
    if (!on_ || !shown_) return;
    std::fprintf(stderr, "\r%78s\r", "");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool on_;
  bool shown_ = false;
};

// ---- one test, one pair: the shared state of the measuring functions ----

struct Ctx {
  const Options* o = nullptr;
  const RankSetup* setup = nullptr;
  int rank = 0;
  int peer = 1;
  Test test = Test::kLatency;
  Pair pair;
  Loc my_loc = Loc::kHost;
  Buffer sbuf, rbuf;          // the measured messages (max_size each)
  Buffer check_s, check_r;    // -c: window slots
  std::vector<MPIGPU_Request> reqs;
};

int Count(size_t size) { return static_cast<int>(size); }  // size <= kMaxMessage < INT_MAX

[[noreturn]] void CheckFailed(const Ctx& c, size_t size, const char* what, int slot, int slots,
                              long long byte, int got, int want) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "DATA CHECK FAILED: %s %s, %zu-byte %s %d of %d received by rank %d: byte %lld "
                "is 0x%02x, expected 0x%02x",
                TestName(c.test), PairName(c.pair).c_str(), size, what, slot + 1, slots, c.rank,
                byte, got, want);
  Die(kExitCheckFailed, buf);
}

// Whether this rank receives data messages in the test.
bool Receives(const Ctx& c) { return c.test != Test::kBw || c.rank == 1; }
bool Sends(const Ctx& c) { return c.test != Test::kBw || c.rank == 0; }

// -c, after the timed loop: the receive buffer holds the last timed message; then a window of
// fresh messages (each slot its own pattern) goes through and every slot is verified.
void CheckSize(Ctx& c, size_t size_index, size_t size) {
  long long byte;
  int got, want;
  if (Receives(c) &&
      c.rbuf.Verify(size, {Seed(size_index, c.peer, 0)}, &byte, &got, &want) >= 0)
    CheckFailed(c, size, "timed message (the last)", 0, 1, byte, got, want);

  int slots = 1;
  if (c.test != Test::kLatency) {
    size_t fit = size == 0 ? static_cast<size_t>(c.o->window) : kCheckBytes / size;
    slots = static_cast<int>(std::max<size_t>(1, std::min<size_t>(c.o->window, fit)));
  }
  std::vector<uint32_t> mine, theirs;
  for (int k = 0; k < slots; ++k) {
    mine.push_back(Seed(size_index, c.rank, k + 1));
    theirs.push_back(Seed(size_index, c.peer, k + 1));
  }
  if (Sends(c)) c.check_s.Fill(size, mine);
  if (Receives(c)) c.check_r.Fill(size, std::vector<uint32_t>(slots, kPoisonSeed));
  SWEEP_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
  std::vector<MPIGPU_Request> reqs;
  for (int k = 0; k < slots; ++k) {
    const size_t off = static_cast<size_t>(k) * size;
    if (Receives(c)) {
      reqs.emplace_back();
      SWEEP_API(MPIGPU_Irecv(c.check_r.at(off), c.check_r.tag(), Count(size), MPIGPU_BYTE, c.peer,
                             kTagCheck, MPIGPU_COMM_WORLD, &reqs.back()));
    }
    if (Sends(c)) {
      reqs.emplace_back();
      SWEEP_API(MPIGPU_Isend(c.check_s.at(off), c.check_s.tag(), Count(size), MPIGPU_BYTE, c.peer,
                             kTagCheck, MPIGPU_COMM_WORLD, &reqs.back()));
    }
  }
  SWEEP_API(MPIGPU_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPIGPU_STATUSES_IGNORE));
  if (Receives(c)) {
    int bad = c.check_r.Verify(size, theirs, &byte, &got, &want);
    if (bad >= 0) CheckFailed(c, size, "check message", bad, slots, byte, got, want);
  }
}

// mpigpu itself: OSU's loops through the public API. Returns rank 0's value.
double MeasureMpigpu(Ctx& c, size_t size_index, size_t size) {
  const int iters = Iterations(*c.o, c.test, size);
  const int warm = Warmup(*c.o, c.test, size);
  const int window = c.o->window;
  const int n = Count(size);
  if (c.o->check) {
    if (Sends(c)) c.sbuf.Fill(size, {Seed(size_index, c.rank, 0)});
    if (Receives(c)) c.rbuf.Fill(size, {kPoisonSeed});
  }
  char ack = 0;
  c.reqs.assign(static_cast<size_t>(2 * window), MPIGPU_REQUEST_NULL);
  SWEEP_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
  double t0 = MPIGPU_Wtime();
  for (int i = 0; i < warm + iters; ++i) {
    if (i == warm) t0 = MPIGPU_Wtime();
    switch (c.test) {
      case Test::kLatency:
        if (c.rank == 0) {
          SWEEP_API(MPIGPU_Send(c.sbuf.ptr(), c.sbuf.tag(), n, MPIGPU_BYTE, 1, kTagData,
                                MPIGPU_COMM_WORLD));
          SWEEP_API(MPIGPU_Recv(c.rbuf.ptr(), c.rbuf.tag(), n, MPIGPU_BYTE, 1, kTagData,
                                MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
        } else {
          SWEEP_API(MPIGPU_Recv(c.rbuf.ptr(), c.rbuf.tag(), n, MPIGPU_BYTE, 0, kTagData,
                                MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
          SWEEP_API(MPIGPU_Send(c.sbuf.ptr(), c.sbuf.tag(), n, MPIGPU_BYTE, 0, kTagData,
                                MPIGPU_COMM_WORLD));
        }
        break;
      case Test::kBw:
        if (c.rank == 0) {
          for (int w = 0; w < window; ++w)
            SWEEP_API(MPIGPU_Isend(c.sbuf.ptr(), c.sbuf.tag(), n, MPIGPU_BYTE, 1, kTagData,
                                   MPIGPU_COMM_WORLD, &c.reqs[static_cast<size_t>(w)]));
          SWEEP_API(MPIGPU_Waitall(window, c.reqs.data(), MPIGPU_STATUSES_IGNORE));
          SWEEP_API(MPIGPU_Recv(&ack, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 1, kTagAck,
                                MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
        } else {
          for (int w = 0; w < window; ++w)
            SWEEP_API(MPIGPU_Irecv(c.rbuf.ptr(), c.rbuf.tag(), n, MPIGPU_BYTE, 0, kTagData,
                                   MPIGPU_COMM_WORLD, &c.reqs[static_cast<size_t>(w)]));
          SWEEP_API(MPIGPU_Waitall(window, c.reqs.data(), MPIGPU_STATUSES_IGNORE));
          SWEEP_API(MPIGPU_Send(&ack, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 0, kTagAck,
                                MPIGPU_COMM_WORLD));
        }
        break;
      case Test::kBibw:
        for (int w = 0; w < window; ++w)
          SWEEP_API(MPIGPU_Irecv(c.rbuf.ptr(), c.rbuf.tag(), n, MPIGPU_BYTE, c.peer, kTagData,
                                 MPIGPU_COMM_WORLD, &c.reqs[static_cast<size_t>(w)]));
        for (int w = 0; w < window; ++w)
          SWEEP_API(MPIGPU_Isend(c.sbuf.ptr(), c.sbuf.tag(), n, MPIGPU_BYTE, c.peer, kTagData,
                                 MPIGPU_COMM_WORLD, &c.reqs[static_cast<size_t>(window + w)]));
        SWEEP_API(MPIGPU_Waitall(2 * window, c.reqs.data(), MPIGPU_STATUSES_IGNORE));
        break;
    }
  }
  const double elapsed = MPIGPU_Wtime() - t0;
  if (c.o->check) CheckSize(c, size_index, size);
  const double bytes = static_cast<double>(size) * window * iters;
  switch (c.test) {
    case Test::kLatency: return PingPongLatencyUs(elapsed, iters);
    case Test::kBw: return BandwidthGBs(bytes, elapsed);
    case Test::kBibw: return BandwidthGBs(2 * bytes, elapsed);
  }
  return kNaN;
}

// ---- the limit column: rank 0 alone, CUDA runtime (or host memcpy for H->H) ----

class LimitCopier {
 public:
  // `a` = rank 0's device, `b` = rank 1's device.
  Status Init(const Pair& pair, size_t max_size, int a, int b) {
    pair_ = pair;
    a_ = a;
    b_ = b;
    if (pair.src == Loc::kHost && pair.dst == Loc::kHost) {
      host_.resize(std::max<size_t>(max_size, 1) * 4);
      what_ = "single-thread host memcpy";
      return Status::Ok();
    }
    // Forward (rank 0's side -> rank 1's side) and reverse copies, each with its own buffers.
    const int src_dev = pair.src == Loc::kDevice ? a : b;
    const int dst_dev = pair.dst == Loc::kDevice ? b : a;
    for (int dir = 0; dir < 2; ++dir) {
      Loc from = dir == 0 ? pair.src : pair.dst;
      Loc to = dir == 0 ? pair.dst : pair.src;
      int from_dev = dir == 0 ? src_dev : dst_dev;
      int to_dev = dir == 0 ? dst_dev : src_dev;
      if (from == Loc::kHost) MPIGPU_CUDA_CHECK(host_src_[dir].Alloc(max_size));
      else MPIGPU_CUDA_CHECK(dev_src_[dir].Alloc(from_dev, max_size));
      if (to == Loc::kHost) MPIGPU_CUDA_CHECK(host_dst_[dir].Alloc(max_size));
      else MPIGPU_CUDA_CHECK(dev_dst_[dir].Alloc(to_dev, max_size));
      // The stream lives on the device whose copy engine moves the data (the source GPU for
      // device sources, else the destination GPU).
      MPIGPU_CUDA_CHECK(stream_[dir].Create(from == Loc::kDevice ? from_dev : to_dev));
    }
    if (pair.src == Loc::kDevice && pair.dst == Loc::kDevice) {
      peer_ = a != b;
      if (peer_) {
        // Direct NVLink/PCIe P2P where the devices allow it (otherwise the runtime stages).
        for (auto [x, y] : {std::pair<int, int>{a, b}, std::pair<int, int>{b, a}}) {
          int can = 0;
          cudaDeviceCanAccessPeer(&can, x, y);
          if (!can) continue;
          int keep = 0;
          cudaGetDevice(&keep);
          cudaSetDevice(x);
          cudaError_t e = cudaDeviceEnablePeerAccess(y, 0);
          if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();  // fine: clear it
          cudaSetDevice(keep);
        }
        what_ = "cudaMemcpyPeerAsync GPU" + std::to_string(a) + "->GPU" + std::to_string(b);
      } else {
        what_ = "same-device D2D cudaMemcpyAsync on GPU" + std::to_string(a) +
                " (one GPU visible)";
      }
    } else {
      what_ = pair.src == Loc::kHost ? "pinned H2D cudaMemcpyAsync" : "pinned D2H cudaMemcpyAsync";
    }
    return Status::Ok();
  }

  const std::string& what() const { return what_; }

  // Latency (us) of one copy issued and waited for; bandwidth (GB/s) of a window of copies in
  // one (bw) or both (bibw) directions, then one wait.
  Status Measure(Test test, size_t size, int iters, int warm, int window, double* value) {
    const bool bidir = test == Test::kBibw;
    const int per_iter = test == Test::kLatency ? 1 : window;
    if (!host_.empty()) {
      *value = HostMeasure(test, size, iters, warm, per_iter);
      return Status::Ok();
    }
    double t0 = MPIGPU_Wtime();
    for (int i = 0; i < warm + iters; ++i) {
      if (i == warm) t0 = MPIGPU_Wtime();
      for (int k = 0; k < per_iter; ++k) {
        MPIGPU_RETURN_IF_ERROR(Issue(0, size));
        if (bidir) MPIGPU_RETURN_IF_ERROR(Issue(1, size));
      }
      MPIGPU_CUDA_CHECK(cudaStreamSynchronize(stream_[0].get()));
      if (bidir) MPIGPU_CUDA_CHECK(cudaStreamSynchronize(stream_[1].get()));
    }
    const double elapsed = MPIGPU_Wtime() - t0;
    if (test == Test::kLatency) *value = PerOpUs(elapsed, iters);
    else *value = BandwidthGBs(static_cast<double>(size) * per_iter * iters * (bidir ? 2 : 1),
                               elapsed);
    return Status::Ok();
  }

 private:
  Status Issue(int dir, size_t size) {
    const Loc from = dir == 0 ? pair_.src : pair_.dst;
    const Loc to = dir == 0 ? pair_.dst : pair_.src;
    void* src = from == Loc::kHost ? host_src_[dir].ptr() : dev_src_[dir].ptr();
    void* dst = to == Loc::kHost ? host_dst_[dir].ptr() : dev_dst_[dir].ptr();
    cudaStream_t s = stream_[dir].get();
    if (from == Loc::kDevice && to == Loc::kDevice) {
      const int from_dev = dir == 0 ? a_ : b_;
      const int to_dev = dir == 0 ? b_ : a_;
      if (peer_) MPIGPU_CUDA_CHECK(cudaMemcpyPeerAsync(dst, to_dev, src, from_dev, size, s));
      else MPIGPU_CUDA_CHECK(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, s));
    } else {
      MPIGPU_CUDA_CHECK(cudaMemcpyAsync(dst, src, size,
                                 from == Loc::kHost ? cudaMemcpyHostToDevice
                                                    : cudaMemcpyDeviceToHost,
                                 s));
    }
    return Status::Ok();
  }

  // H->H: memcpy between two regions; both directions at once on two threads (started once
  // per size, so thread start-up is not what is measured).
  double HostMeasure(Test test, size_t size, int iters, int warm, int per_iter) {
    char* base = host_.data();
    const size_t stride = std::max<size_t>(size, 1);
    auto run = [size](char* dst, const char* src, long count) {
      for (long k = 0; k < count; ++k) std::memcpy(dst, src, size);
    };
    const long timed = static_cast<long>(iters) * per_iter;
    run(base + stride, base, static_cast<long>(warm) * per_iter);
    double t0 = MPIGPU_Wtime();
    if (test == Test::kBibw) {
      std::thread other([&] { run(base + 3 * stride, base + 2 * stride, timed); });
      run(base + stride, base, timed);
      other.join();
    } else {
      run(base + stride, base, timed);
    }
    const double elapsed = MPIGPU_Wtime() - t0;
    if (test == Test::kLatency) return PerOpUs(elapsed, iters);
    return BandwidthGBs(static_cast<double>(size) * timed * (test == Test::kBibw ? 2 : 1),
                        elapsed);
  }

  Pair pair_;
  int a_ = 0, b_ = 0;
  bool peer_ = false;
  std::string what_;
  std::vector<char> host_;  // H->H: four regions of max_size
  PinnedBuffer host_src_[2], host_dst_[2];
  DeviceBuffer dev_src_[2], dev_dst_[2];
  Stream stream_[2];
};

// ---- NCCL, loaded at run time ----

// The few NCCL types and entry points used here (ABI of nccl.h, NCCL 2.x).
struct NcclUniqueId {
  char internal[128];
};
using NcclComm = struct NcclCommOpaque*;
using NcclResult = int;      // ncclSuccess = 0
constexpr int kNcclInt8 = 0;  // ncclInt8

struct Nccl {
  void* lib = nullptr;
  NcclResult (*GetUniqueId)(NcclUniqueId*) = nullptr;
  NcclResult (*CommInitRank)(NcclComm*, int, NcclUniqueId, int) = nullptr;
  NcclResult (*Send)(const void*, size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  NcclResult (*Recv)(void*, size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  NcclResult (*GroupStart)() = nullptr;
  NcclResult (*GroupEnd)() = nullptr;
  NcclResult (*CommDestroy)(NcclComm) = nullptr;
  const char* (*GetErrorString)(NcclResult) = nullptr;

  // Loads libnccl.so.2; false with the reason.
  bool Load(std::string* why) {
    lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* e = dlerror();
      *why = std::string("libnccl.so.2 not found (") + (e ? e : "?") + ")";
      return false;
    }
    bool ok = Sym(&GetUniqueId, "ncclGetUniqueId") && Sym(&CommInitRank, "ncclCommInitRank") &&
              Sym(&Send, "ncclSend") && Sym(&Recv, "ncclRecv") &&
              Sym(&GroupStart, "ncclGroupStart") && Sym(&GroupEnd, "ncclGroupEnd") &&
              Sym(&CommDestroy, "ncclCommDestroy") && Sym(&GetErrorString, "ncclGetErrorString");
    if (!ok) *why = "libnccl.so.2 lacks ncclSend/ncclRecv (NCCL older than 2.7?)";
    return ok;
  }

  template <typename F>
  bool Sym(F* f, const char* name) {
    *f = reinterpret_cast<F>(dlsym(lib, name));
    return *f != nullptr;
  }

  void Check(NcclResult r, const char* call) const {
    if (r != 0)
      Die(1, std::string(call) + " failed: " + (GetErrorString ? GetErrorString(r) : "?"));
  }
};

// Both ranks learn whether both `ok`; returns the agreement.
bool BothOk(const Ctx& c, bool ok) {
  int mine = ok ? 1 : 0, theirs = 0;
  SWEEP_API(MPIGPU_Sendrecv(&mine, MPIGPU_BUF_HOST, 1, MPIGPU_INT, c.peer, kTagSetup, &theirs,
                            MPIGPU_BUF_HOST, 1, MPIGPU_INT, c.peer, kTagSetup, MPIGPU_COMM_WORLD,
                            MPIGPU_STATUS_IGNORE));
  return mine && theirs;
}

// The NCCL peer: set up once (on the first D->D pair), then used for every test there.
class NcclPeer {
 public:
  ~NcclPeer() {
    if (comm_ != nullptr) nccl_.CommDestroy(comm_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // Both ranks call it; false (with the reason in why()) when NCCL cannot run here.
  bool Setup(const Ctx& c) {
    if (tried_) return comm_ != nullptr;
    tried_ = true;
    const RankSetup& s = *c.setup;
    bool ok = true;
    if (s.device_count < 2 || s.device == s.peer_device) {
      why_ = "NCCL needs a GPU per rank (" + std::to_string(s.device_count) + " visible)";
      ok = false;
    } else if (!nccl_.Load(&why_)) {
      ok = false;
    }
    if (!BothOk(c, ok)) {
      if (ok) why_ = "rank " + std::to_string(c.peer) + " cannot use NCCL";
      return false;
    }
    setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink SHARP off unless the user says otherwise
    NcclUniqueId id{};
    if (c.rank == 0) nccl_.Check(nccl_.GetUniqueId(&id), "ncclGetUniqueId");
    SWEEP_API(MPIGPU_Bcast(&id, MPIGPU_BUF_HOST, static_cast<int>(sizeof id), MPIGPU_BYTE, 0,
                           MPIGPU_COMM_WORLD));
    nccl_.Check(nccl_.CommInitRank(&comm_, 2, id, c.rank), "ncclCommInitRank");
    SWEEP_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    return true;
  }

  const std::string& why() const { return why_; }

  double Measure(const Ctx& c, size_t size) {
    if (size == 0) return kNaN;  // nothing to move
    const int iters = Iterations(*c.o, c.test, size);
    const int warm = Warmup(*c.o, c.test, size);
    const int window = c.o->window;
    void* s = c.sbuf.ptr();
    void* r = c.rbuf.ptr();
    SWEEP_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
    double t0 = MPIGPU_Wtime();
    for (int i = 0; i < warm + iters; ++i) {
      if (i == warm) t0 = MPIGPU_Wtime();
      switch (c.test) {
        case Test::kLatency:
          if (c.rank == 0) {
            Chk(nccl_.Send(s, size, kNcclInt8, 1, comm_, stream_));
            Chk(nccl_.Recv(r, size, kNcclInt8, 1, comm_, stream_));
          } else {
            Chk(nccl_.Recv(r, size, kNcclInt8, 0, comm_, stream_));
            Chk(nccl_.Send(s, size, kNcclInt8, 0, comm_, stream_));
          }
          break;
        case Test::kBw:
          Chk(nccl_.GroupStart());
          for (int w = 0; w < window; ++w) {
            if (c.rank == 0) Chk(nccl_.Send(s, size, kNcclInt8, 1, comm_, stream_));
            else Chk(nccl_.Recv(r, size, kNcclInt8, 0, comm_, stream_));
          }
          Chk(nccl_.GroupEnd());
          // The 1-byte ack back, as in the mpigpu loop.
          if (c.rank == 0) Chk(nccl_.Recv(r, 1, kNcclInt8, 1, comm_, stream_));
          else Chk(nccl_.Send(s, 1, kNcclInt8, 0, comm_, stream_));
          break;
        case Test::kBibw:
          Chk(nccl_.GroupStart());
          for (int w = 0; w < window; ++w) {
            Chk(nccl_.Send(s, size, kNcclInt8, c.peer, comm_, stream_));
            Chk(nccl_.Recv(r, size, kNcclInt8, c.peer, comm_, stream_));
          }
          Chk(nccl_.GroupEnd());
          break;
      }
      SWEEP_CUDA(cudaStreamSynchronize(stream_));
    }
    const double elapsed = MPIGPU_Wtime() - t0;
    const double bytes = static_cast<double>(size) * window * iters;
    switch (c.test) {
      case Test::kLatency: return PingPongLatencyUs(elapsed, iters);
      case Test::kBw: return BandwidthGBs(bytes, elapsed);
      case Test::kBibw: return BandwidthGBs(2 * bytes, elapsed);
    }
    return kNaN;
  }

 private:
  void Chk(NcclResult r) const { nccl_.Check(r, "NCCL send/recv"); }

  Nccl nccl_;
  NcclComm comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool tried_ = false;
  std::string why_;
};

// ---- the paper's manual staging: D2H into pinned host memory, host send/recv, H2D ----

class StagedPeer {
 public:
  void Setup(const Ctx& c, size_t max_size) {
    if (c.my_loc != Loc::kDevice) return;
    SWEEP_CUDA(hs_.Alloc(max_size));
    SWEEP_CUDA(hr_.Alloc(max_size));
  }

  double Measure(const Ctx& c, size_t size) {
    const int iters = Iterations(*c.o, c.test, size);
    const int warm = Warmup(*c.o, c.test, size);
    const int window = c.o->window;
    const int n = Count(size);
    char ack = 0;
    SWEEP_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
    double t0 = MPIGPU_Wtime();
    for (int i = 0; i < warm + iters; ++i) {
      if (i == warm) t0 = MPIGPU_Wtime();
      switch (c.test) {
        case Test::kLatency:
          if (c.rank == 0) {
            Send(c, n, size);
            Recv(c, n, size);
          } else {
            Recv(c, n, size);
            Send(c, n, size);
          }
          break;
        case Test::kBw:
          for (int w = 0; w < window; ++w) {
            if (c.rank == 0) Send(c, n, size);
            else Recv(c, n, size);
          }
          if (c.rank == 0)
            SWEEP_API(MPIGPU_Recv(&ack, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 1, kTagAck,
                                  MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
          else
            SWEEP_API(MPIGPU_Send(&ack, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 0, kTagAck,
                                  MPIGPU_COMM_WORLD));
          break;
        case Test::kBibw:
          for (int w = 0; w < window; ++w) {
            const void* out = StageOut(c, size);
            void* in = InBuffer(c);
            SWEEP_API(MPIGPU_Sendrecv(out, MPIGPU_BUF_HOST, n, MPIGPU_BYTE, c.peer, kTagData, in,
                                      MPIGPU_BUF_HOST, n, MPIGPU_BYTE, c.peer, kTagData,
                                      MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
            StageIn(c, size);
          }
          break;
      }
    }
    const double elapsed = MPIGPU_Wtime() - t0;
    const double bytes = static_cast<double>(size) * window * iters;
    switch (c.test) {
      case Test::kLatency: return PingPongLatencyUs(elapsed, iters);
      case Test::kBw: return BandwidthGBs(bytes, elapsed);
      case Test::kBibw: return BandwidthGBs(2 * bytes, elapsed);
    }
    return kNaN;
  }

 private:
  // The host buffer that goes out: the pinned copy of a device buffer, or the host buffer.
  const void* StageOut(const Ctx& c, size_t size) {
    if (c.my_loc == Loc::kHost) return c.sbuf.ptr();
    if (size > 0) SWEEP_CUDA(cudaMemcpy(hs_.ptr(), c.sbuf.ptr(), size, cudaMemcpyDeviceToHost));
    return hs_.ptr();
  }
  void* InBuffer(const Ctx& c) { return c.my_loc == Loc::kHost ? c.rbuf.ptr() : hr_.ptr(); }
  void StageIn(const Ctx& c, size_t size) {
    if (c.my_loc == Loc::kDevice && size > 0)
      SWEEP_CUDA(cudaMemcpy(c.rbuf.ptr(), hr_.ptr(), size, cudaMemcpyHostToDevice));
  }
  void Send(const Ctx& c, int n, size_t size) {
    SWEEP_API(MPIGPU_Send(StageOut(c, size), MPIGPU_BUF_HOST, n, MPIGPU_BYTE, c.peer, kTagData,
                          MPIGPU_COMM_WORLD));
  }
  void Recv(const Ctx& c, int n, size_t size) {
    SWEEP_API(MPIGPU_Recv(InBuffer(c), MPIGPU_BUF_HOST, n, MPIGPU_BYTE, c.peer, kTagData,
                          MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
    StageIn(c, size);
  }

  PinnedBuffer hs_, hr_;
};

// Rank 0's name for each rank's device (the peer sends its own).
void ExchangeNames(const RankSetup& s, std::string names[2]) {
  char mine[kNameBytes] = {}, theirs[kNameBytes] = {};
  std::snprintf(mine, sizeof mine, "%s", DeviceName(s.device).c_str());
  const int peer = 1 - s.rank;
  SWEEP_API(MPIGPU_Sendrecv(mine, MPIGPU_BUF_HOST, static_cast<int>(kNameBytes), MPIGPU_BYTE,
                            peer, kTagSetup, theirs, MPIGPU_BUF_HOST, static_cast<int>(kNameBytes),
                            MPIGPU_BYTE, peer, kTagSetup, MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
  theirs[kNameBytes - 1] = '\0';
  names[s.rank] = mine;
  names[peer] = theirs;
}

}  // namespace

Status RunSweep(const Options& o, const RankSetup& setup, Report* report) {
  const int rank = setup.rank;
  const std::vector<size_t> sizes = MessageSizes(o.min_size, o.max_size);
  std::string names[2];
  ExchangeNames(setup, names);
  Progress progress(rank == 0 && isatty(STDERR_FILENO) && !o.quiet);
  NcclPeer nccl;
  const int total_steps = static_cast<int>(o.pairs.size() * o.tests.size() * sizes.size());
  int step = 0;

  for (const Pair& pair : o.pairs) {
    Ctx c;
    c.o = &o;
    c.setup = &setup;
    c.rank = rank;
    c.peer = 1 - rank;
    c.pair = pair;
    c.my_loc = rank == 0 ? pair.src : pair.dst;
    if (pair.has_device() && setup.device_count == 0)
      return Status(Err::kNoGpu, "buffer location D needs a GPU, but no CUDA device is visible");
    c.sbuf.Alloc(c.my_loc, o.max_size, o.pinned_host);
    c.rbuf.Alloc(c.my_loc, o.max_size, o.pinned_host);
    if (o.check) {
      const size_t check_bytes =
          std::min(o.max_size * static_cast<size_t>(o.window), std::max(kCheckBytes, o.max_size));
      c.check_s.Alloc(c.my_loc, check_bytes, o.pinned_host);
      c.check_r.Alloc(c.my_loc, check_bytes, o.pinned_host);
    }
    StagedPeer staged;
    const bool run_staged = o.peers && pair.has_device();
    if (run_staged) staged.Setup(c, o.max_size);
    const bool dd = pair.src == Loc::kDevice && pair.dst == Loc::kDevice;
    const bool run_nccl = o.peers && dd && nccl.Setup(c);

    // The limit copier (rank 0 only), set up after the first mpigpu series so that its peer
    // access and allocations cannot change what mpigpu met; a failure makes the column n/a.
    LimitCopier limit;
    Status limit_status;
    bool limit_ready = false;

    for (Test test : o.tests) {
      c.test = test;
      Table t;
      t.test = test;
      t.pair = pair;
      const char* host = o.pinned_host ? "pinned host" : "host";
      t.src_name = pair.src == Loc::kDevice ? names[0] : host;
      t.dst_name = pair.dst == Loc::kDevice ? names[1] : host;
      t.sizes = sizes;
      Series mp{"mpigpu", kKindMpigpu, {}, "MPIGPU_LMT=" + setup.lmt};
      for (size_t i = 0; i < sizes.size(); ++i) {
        ++step;
        progress.Show("mpigpu-sweep: " + std::string(TestName(test)) + " " + PairName(pair) +
                      " " + std::to_string(sizes[i]) + " B (" + std::to_string(step) + "/" +
                      std::to_string(total_steps) + ")");
        mp.values.push_back(MeasureMpigpu(c, i, sizes[i]));
      }
      t.series.push_back(std::move(mp));

      if (o.limits) {
        SWEEP_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
        Series lim{"limit", kKindLimit, {}, ""};
        if (rank == 0) {
          if (!limit_ready) {
            limit_status = limit.Init(pair, o.max_size, setup.device, setup.peer_device);
            limit_ready = true;
          }
          Status st = limit_status;
          for (size_t i = 0; i < sizes.size(); ++i) {
            double v = kNaN;
            if (st.ok()) {
              progress.Show("mpigpu-sweep: " + std::string(TestName(test)) + " " +
                            PairName(pair) + " limit " + std::to_string(sizes[i]) + " B");
              st = limit.Measure(test, sizes[i], Iterations(o, test, sizes[i]),
                                 Warmup(o, test, sizes[i]), o.window, &v);
              if (!st.ok()) v = kNaN;
            }
            lim.values.push_back(v);
          }
          lim.note = st.ok() ? limit.what() +
                                   (test == Test::kLatency ? ", one copy issued and waited for"
                                    : test == Test::kBw    ? ", a window of copies then one wait"
                                                           : ", windows both ways at once")
                             : "n/a: " + st.message();
        }
        SWEEP_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
        t.series.push_back(std::move(lim));
      }

      if (o.peers && dd) {
        Series s{"nccl", kKindPeer, {}, ""};
        if (run_nccl) {
          for (size_t sz : sizes) s.values.push_back(nccl.Measure(c, sz));
          s.note = "ncclSend/ncclRecv (libnccl.so.2, NCCL_NVLS_ENABLE=0 unless set)";
        } else {
          s.values.assign(sizes.size(), kNaN);
          s.note = "n/a: " + nccl.why();
        }
        t.series.push_back(std::move(s));
      }
      if (run_staged) {
        Series s{"staged", kKindPeer, {}, ""};
        for (size_t sz : sizes) s.values.push_back(staged.Measure(c, sz));
        s.note = "manual staging: cudaMemcpy D2H to pinned host, MPIGPU_Send/Recv, cudaMemcpy H2D";
        t.series.push_back(std::move(s));
      }
      if (rank == 0) report->tables.push_back(std::move(t));
    }
  }
  progress.Clear();
  if (rank == 0 && o.peers) {
    bool any_host_only = false;
    for (const Pair& p : o.pairs) any_host_only |= !p.has_device();
    if (any_host_only)
      report->AddNote("peers: NCCL runs D->D only and manual staging needs a device side; host "
                      "pairs have no peer column");
  }
  if (rank == 1) *report = Report();
  return Status::Ok();
}

}  // namespace sweep
}  // namespace mpigpu
