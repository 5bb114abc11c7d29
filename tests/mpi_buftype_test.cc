// The MPI layer's buffer classification (mpi/mpi_buf.cc: BufType) and its request table
// (mpi/mpi_requests.cc), without MPI_Init.
// Host part (runs everywhere): every kind of host memory is MPIGPU_BUF_HOST (NULL, MPI_IN_PLACE,
// stack of the main thread and of another thread, brk heap, mmap'd malloc, a raw mmap) and
// agrees with the runtime's answer; the driver's answer maps to the right tag (ClassifyPointer);
// request handles stay valid and findable while other threads make and free requests, and the
// slots a thread freed come back to the others when it ends.
// GPU part (skips without a device, with the reason): device memory (start, interior, last
// byte) is MPIGPU_BUF_GPU_DEVICE(n); managed, pinned (cudaMallocHost) and cudaHostRegister'd
// memory is host; and the two reuse cases a cache by address would get wrong: host memory
// unmapped and device memory mapped at the very same address (cuMemAddressReserve + cuMemMap),
// and device memory freed and host memory mapped there (MAP_FIXED_NOREPLACE).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "mpi/mpi_internal.h"

namespace {

using mpigpu::mpi::BufType;
using mpigpu::mpi::BufTypeByRuntime;
using mpigpu::mpi::ClassifyPointer;

int Devices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    n = 0;
  }
  return n;
}

// BufType and the runtime agree on p, and both say `want`.
void ExpectTag(const void* p, MPIGPU_Buftype want, const char* what) {
  EXPECT_EQ(BufType(p), want) << what;
  EXPECT_EQ(BufTypeByRuntime(p), want) << what << " (runtime)";
}

TEST(MpiBufType, HostMemoryOfEveryKindIsHost) {
  EXPECT_EQ(BufType(nullptr), MPIGPU_BUF_HOST);
  EXPECT_EQ(BufType(MPI_IN_PLACE), MPIGPU_BUF_HOST);
  char stack[64];
  ExpectTag(stack, MPIGPU_BUF_HOST, "main thread's stack");
  std::vector<char> small(512);  // brk heap
  ExpectTag(small.data(), MPIGPU_BUF_HOST, "brk heap");
  ExpectTag(small.data() + 511, MPIGPU_BUF_HOST, "brk heap, last byte");
  std::vector<char> big(8 << 20);  // malloc'd by mmap
  ExpectTag(big.data(), MPIGPU_BUF_HOST, "mmap'd malloc");
  ExpectTag(big.data() + big.size() / 2, MPIGPU_BUF_HOST, "mmap'd malloc, interior");
  void* m = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  ExpectTag(m, MPIGPU_BUF_HOST, "raw mmap");
  munmap(m, 1 << 20);
  std::thread t([] {
    char s[64] = {};
    ExpectTag(s, MPIGPU_BUF_HOST, "another thread's stack");
    std::vector<char> v(1 << 20);  // a thread arena's memory
    ExpectTag(v.data(), MPIGPU_BUF_HOST, "another thread's heap");
  });
  t.join();
}

TEST(MpiBufType, DriverAnswerToTag) {
  EXPECT_EQ(ClassifyPointer(true, false, 0), MPIGPU_BUF_GPU_DEVICE(0));
  EXPECT_EQ(ClassifyPointer(true, false, 3), MPIGPU_BUF_GPU_DEVICE(3));
  EXPECT_EQ(ClassifyPointer(true, false, MPIGPU_BUF_MAX_DEVICES - 1),
            MPIGPU_BUF_GPU_DEVICE(MPIGPU_BUF_MAX_DEVICES - 1));
  EXPECT_EQ(ClassifyPointer(true, true, 0), MPIGPU_BUF_HOST) << "managed memory goes the host way";
  EXPECT_EQ(ClassifyPointer(false, false, 0), MPIGPU_BUF_HOST) << "pinned/registered host memory";
  EXPECT_EQ(ClassifyPointer(false, false, -2), MPIGPU_BUF_HOST) << "unknown to the driver";
  EXPECT_EQ(ClassifyPointer(true, false, -1), MPIGPU_BUF_HOST) << "no ordinal: not a tag";
  EXPECT_EQ(ClassifyPointer(true, false, MPIGPU_BUF_MAX_DEVICES), MPIGPU_BUF_HOST)
      << "an ordinal the tag cannot name";
}

// LookupRequest takes no lock: handles held by one thread stay findable (and the same object)
// while other threads make and free requests, growing the table by many blocks.
TEST(MpiRequestTable, LookupWhileOthersGrowAndFree) {
  using mpigpu::mpi::FreeRequest;
  using mpigpu::mpi::LookupRequest;
  using mpigpu::mpi::NewRequest;
  using mpigpu::mpi::Request;
  std::vector<MPI_Request> mine(100);
  std::vector<Request*> objs(100);
  for (int i = 0; i < 100; ++i) {
    mine[i] = NewRequest(&objs[i]);
    objs[i]->tag = i;
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> churn;
  for (int k = 0; k < 2; ++k)
    churn.emplace_back([&stop] {
      std::vector<MPI_Request> held;
      for (int round = 0; round < 200 && !stop.load(); ++round) {
        for (int i = 0; i < 300; ++i) {
          Request* r = nullptr;
          held.push_back(NewRequest(&r));
          r->tag = -1;
        }
        for (size_t i = 0; i < held.size(); i += 2) FreeRequest(held[i]);  // half go back
        std::vector<MPI_Request> kept;
        for (size_t i = 1; i < held.size(); i += 2) kept.push_back(held[i]);
        held.swap(kept);
      }
      for (MPI_Request h : held) FreeRequest(h);
    });
  int misses = 0;
  for (int pass = 0; pass < 2000; ++pass)
    for (int i = 0; i < 100; ++i)
      if (LookupRequest(mine[i]) != objs[i] || objs[i]->tag != i) ++misses;
  stop = true;
  for (std::thread& t : churn) t.join();
  EXPECT_EQ(misses, 0);
  for (int i = 0; i < 100; ++i) {
    FreeRequest(mine[i]);
    EXPECT_EQ(LookupRequest(mine[i]), nullptr) << "a freed handle is not a request";
  }
  EXPECT_EQ(LookupRequest(0), nullptr);
  EXPECT_EQ(LookupRequest(-5), nullptr);
  EXPECT_EQ(LookupRequest(1 << 30), nullptr) << "beyond every block";
  Request* r = nullptr;
  const MPI_Request h = NewRequest(&r);
  EXPECT_EQ(LookupRequest(h), r) << "a reused slot is findable again";
  EXPECT_EQ(r->tag, 0) << "and starts fresh";
  FreeRequest(h);
  FreeRequest(h);  // twice: ignored, the free list keeps one copy
  Request* a = nullptr;
  Request* b = nullptr;
  const MPI_Request ha = NewRequest(&a), hb = NewRequest(&b);
  EXPECT_NE(ha, hb);
  EXPECT_NE(a, b);
  FreeRequest(ha);
  FreeRequest(hb);
}

// Requests freed by a thread wait in its spares (no lock); when it ends they go back to the
// shared list, so other threads reuse the very same slots (the table does not grow).
TEST(MpiRequestTable, SparesOfAnEndedThreadAreReused) {
  using mpigpu::mpi::FreeRequest;
  using mpigpu::mpi::LookupRequest;
  using mpigpu::mpi::NewRequest;
  using mpigpu::mpi::Request;
  std::vector<MPI_Request> made(40);
  for (MPI_Request& h : made) {
    Request* r = nullptr;
    h = NewRequest(&r);
  }
  std::thread t([&made] {
    for (MPI_Request h : made) FreeRequest(h);  // made elsewhere, freed here
  });
  t.join();
  for (MPI_Request h : made) EXPECT_EQ(LookupRequest(h), nullptr);
  std::vector<MPI_Request> again(40);
  for (MPI_Request& h : again) {
    Request* r = nullptr;
    h = NewRequest(&r);
    EXPECT_EQ(LookupRequest(h), r);
  }
  std::sort(made.begin(), made.end());
  std::sort(again.begin(), again.end());
  EXPECT_EQ(again, made) << "the ended thread's slots came back, none new";
  for (MPI_Request h : again) FreeRequest(h);
}

// ---- GPU part ----

class MpiBufTypeGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Devices() == 0) GTEST_SKIP() << "no CUDA device: the device classification needs one";
    ASSERT_EQ(cudaGetDevice(&dev_), cudaSuccess);
  }
  int dev_ = 0;
};

TEST_F(MpiBufTypeGpu, EveryKindOfCudaMemory) {
  void *d = nullptr, *managed = nullptr, *pinned = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&managed, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, 1 << 20), cudaSuccess);
  char* dc = static_cast<char*>(d);
  ExpectTag(d, MPIGPU_BUF_GPU_DEVICE(dev_), "cudaMalloc");
  ExpectTag(dc + 12345, MPIGPU_BUF_GPU_DEVICE(dev_), "cudaMalloc, interior");
  ExpectTag(dc + (1 << 20) - 1, MPIGPU_BUF_GPU_DEVICE(dev_), "cudaMalloc, last byte");
  ExpectTag(managed, MPIGPU_BUF_HOST, "cudaMallocManaged");
  ExpectTag(pinned, MPIGPU_BUF_HOST, "cudaMallocHost");
  std::vector<char> big(4 << 20);
  ExpectTag(big.data(), MPIGPU_BUF_HOST, "malloc, before cudaHostRegister");
  ASSERT_EQ(cudaHostRegister(big.data(), big.size(), cudaHostRegisterDefault), cudaSuccess);
  ExpectTag(big.data(), MPIGPU_BUF_HOST, "cudaHostRegister'd");
  ASSERT_EQ(cudaHostUnregister(big.data()), cudaSuccess);
  ExpectTag(big.data(), MPIGPU_BUF_HOST, "after cudaHostUnregister");
  // cudaMalloc after host memory was classified: the new device memory is device.
  void* d2 = nullptr;
  ASSERT_EQ(cudaMalloc(&d2, 8 << 20), cudaSuccess);
  ExpectTag(d2, MPIGPU_BUF_GPU_DEVICE(dev_), "cudaMalloc after host lookups");
  cudaFree(d2);
  cudaFree(d);
  cudaFree(managed);
  cudaFreeHost(pinned);
}

template <typename Fn>
Fn Driver(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(p);
}

// Host memory at address A is classified, unmapped, and device memory is mapped at exactly A:
// the answer must be device (a cache by address would still say host).
TEST_F(MpiBufTypeGpu, HostUnmappedThenDeviceAtSameAddress) {
  auto reserve = Driver<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve");
  auto create = Driver<PFN_cuMemCreate_v10020>("cuMemCreate");
  auto map = Driver<PFN_cuMemMap_v10020>("cuMemMap");
  auto access = Driver<PFN_cuMemSetAccess_v10020>("cuMemSetAccess");
  auto unmap = Driver<PFN_cuMemUnmap_v10020>("cuMemUnmap");
  auto release = Driver<PFN_cuMemRelease_v10020>("cuMemRelease");
  auto unreserve = Driver<PFN_cuMemAddressFree_v10020>("cuMemAddressFree");
  auto granularity =
      Driver<PFN_cuMemGetAllocationGranularity_v10020>("cuMemGetAllocationGranularity");
  ASSERT_TRUE(reserve && create && map && access && unmap && release && unreserve && granularity);
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // the primary context, current
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev_;
  size_t gran = 0;
  ASSERT_EQ(granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
  const size_t bytes = gran;
  // A host mapping aligned to the granularity, classified, then unmapped.
  char* area = static_cast<char*>(mmap(nullptr, 2 * bytes, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(area, MAP_FAILED);
  char* a = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(area) + bytes - 1) / bytes * bytes);
  a[0] = 1;
  ExpectTag(a, MPIGPU_BUF_HOST, "host mapping at A");
  munmap(area, 2 * bytes);
  CUdeviceptr va = 0;
  ASSERT_EQ(reserve(&va, bytes, gran, reinterpret_cast<CUdeviceptr>(a), 0), CUDA_SUCCESS);
  if (va != reinterpret_cast<CUdeviceptr>(a)) {
    unreserve(va, bytes);
    GTEST_SKIP() << "the driver did not reserve at the unmapped address (hint not taken)";
  }
  CUmemGenericAllocationHandle h = 0;
  ASSERT_EQ(create(&h, bytes, &prop, 0), CUDA_SUCCESS);
  ASSERT_EQ(map(va, bytes, 0, h, 0), CUDA_SUCCESS);
  CUmemAccessDesc acc{};
  acc.location = prop.location;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  ASSERT_EQ(access(va, bytes, &acc, 1), CUDA_SUCCESS);
  ExpectTag(a, MPIGPU_BUF_GPU_DEVICE(dev_), "device memory mapped where host memory was");
  unmap(va, bytes);
  release(h);
  unreserve(va, bytes);
}

// Device memory is freed and host memory is mapped at its address: the answer must be host.
TEST_F(MpiBufTypeGpu, DeviceFreedThenHostAtSameAddress) {
  void* d = nullptr;
  const size_t bytes = 4 << 20;
  ASSERT_EQ(cudaMalloc(&d, bytes), cudaSuccess);
  ExpectTag(d, MPIGPU_BUF_GPU_DEVICE(dev_), "cudaMalloc");
  ASSERT_EQ(cudaFree(d), cudaSuccess);
  void* h = mmap(d, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                 -1, 0);
  if (h == MAP_FAILED || h != d) {
    if (h != MAP_FAILED) munmap(h, bytes);
    GTEST_SKIP() << "the freed device range stays reserved by the driver (no host mapping "
                    "possible there)";
  }
  static_cast<char*>(h)[0] = 1;
  ExpectTag(h, MPIGPU_BUF_HOST, "host memory mapped where device memory was");
  munmap(h, bytes);
}

}  // namespace
