// Reductions of device buffers combined on the GPU (mpigpu_api/coll_device.h, devcoll kernels):
// every predefined op on every predefined type MPI defines it for, through MPIGPU_Reduce_local
// on device buffers, byte-exact against the same call on host buffers (the host reductions,
// checked independently in api_ops_test), at sizes 1, odd, and around the kernels' block size;
// the kernels on unaligned buffers; and Allreduce, Reduce, Reduce_scatter_block, Scan and
// Exscan on 1-4 ranks with device buffers (one GPU each where there are enough, else shared),
// against the host path of the same call, with some ranks on host buffers and others on device
// buffers in one collective, and the long double types, which are staged through the host.
// Ranks skip without a CUDA device. Values are small integers, so floating-point results are
// exact whatever order the ranks combine in.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "devcoll/device_reduce.h"
#include "memcopy/memcopy.h"
#include "mpigpu_api/datatype.h"
#include "mpigpu_api/mpigpu.h"
#include "mpigpu_api/ops.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

#define CUDA_OK(call) RANK_CHECK((call) == cudaSuccess)

// Element i of rank `seed`'s data, a small integer (-8..8) in the type's own form.
int Small(size_t i, int seed) { return static_cast<int>((i * 7 + seed * 13 + i / 5) % 17) - 8; }
template <class T>
void FillOne(T* p, int v) {
  if constexpr (std::is_same<T, bool>::value) *p = (v & 1) != 0;
  else *p = static_cast<T>(v);
}
template <class F>
void FillOne(std::complex<F>* p, int v) {
  *p = std::complex<F>(static_cast<F>(v), static_cast<F>(v % 3));
}
template <class V, class I>
void FillOne(ValueIndex<V, I>* p, int v) {
  p->value = static_cast<V>(v % 4);  // ties are frequent: the index rule is exercised
  p->index = static_cast<I>(v + 8);
}

// `count` elements of C type T in their memory layout (extent apart), zero padding.
template <class T>
std::vector<unsigned char> Fill(size_t count, int seed) {
  std::vector<unsigned char> out(count * sizeof(T), 0);
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memset(static_cast<void*>(&v), 0, sizeof v);
    FillOne(&v, Small(i, seed));
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof v);
  }
  return out;
}

struct TypeCase {
  MPIGPU_Datatype type;
  const char* name;
  std::vector<unsigned char> (*fill)(size_t, int);
  bool long_double;  // padding bytes: compared by the data bytes only
};

template <class T>
constexpr bool IsLongDouble() {
  return std::is_same<T, long double>::value || std::is_same<T, std::complex<long double>>::value ||
         std::is_same<T, LongDoubleInt>::value;
}

std::vector<TypeCase> AllTypes() {
  std::vector<TypeCase> v;
#define MPIGPU_TEST_TYPE(handle, ctype) \
  v.push_back({handle, #handle, &Fill<ctype>, IsLongDouble<ctype>()});
  MPIGPU_FOR_EACH_PREDEFINED_TYPE(MPIGPU_TEST_TYPE)
#undef MPIGPU_TEST_TYPE
  return v;
}

const MPIGPU_Op kOps[] = {MPIGPU_SUM,  MPIGPU_PROD, MPIGPU_MIN,  MPIGPU_MAX,
                          MPIGPU_LAND, MPIGPU_LOR,  MPIGPU_LXOR, MPIGPU_BAND,
                          MPIGPU_BOR,  MPIGPU_BXOR, MPIGPU_MINLOC, MPIGPU_MAXLOC};

// Equal data: long double types compare their 10 value bytes per 16 (x87), the rest whole.
bool SameData(const TypeCase& t, const std::vector<unsigned char>& a,
              const std::vector<unsigned char>& b) {
  if (a.size() != b.size()) return false;
  if (!t.long_double) return a == b;
  for (size_t i = 0; i < a.size(); ++i)
    if (i % 16 < 10 && a[i] != b[i]) return false;
  return true;
}

void* DeviceCopy(const std::vector<unsigned char>& h) {
  void* d = nullptr;
  CUDA_OK(cudaMalloc(&d, h.size() ? h.size() : 1));
  CUDA_OK(cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice));
  return d;
}
std::vector<unsigned char> HostCopy(const void* d, size_t bytes) {
  std::vector<unsigned char> h(bytes);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  return h;
}

int SkipOr(const std::function<void(int)>& body) {
  if (CudaDeviceCount() == 0) return kRankSkip;
  return RunApiRank(body);
}

TEST(CollDeviceReduceTest, EveryOpOnEveryTypeMatchesTheHost) {
  const std::string r = RunJob(
      1,
      [](int) {
        return SkipOr([](int) {
          API_OK(MPIGPU_Comm_set_errhandler(MPIGPU_COMM_WORLD, MPIGPU_ERRORS_RETURN));
          int cases = 0;
          for (const TypeCase& t : AllTypes()) {
            for (MPIGPU_Op op : kOps) {
              if (CheckOpForType(op, t.type) != MPIGPU_SUCCESS) continue;
              for (int count : {1, 7, 255, 256, 257, 1001, 65537}) {
                const std::vector<unsigned char> a = t.fill(count, 1), b = t.fill(count, 2);
                std::vector<unsigned char> want = a;
                API_OK(MPIGPU_Reduce_local(b.data(), MPIGPU_BUF_HOST, want.data(), MPIGPU_BUF_HOST,
                                           count, t.type, op));
                void* da = DeviceCopy(a);
                void* db = DeviceCopy(b);
                API_OK(MPIGPU_Reduce_local(db, MPIGPU_BUF_GPU, da, MPIGPU_BUF_GPU, count, t.type,
                                           op));
                if (!SameData(t, HostCopy(da, a.size()), want) || HostCopy(db, b.size()) != b) {
                  std::fprintf(stderr, "%s on %s, count %d: device result differs\n",
                               OpName(op), t.name, count);
                  _exit(1);
                }
                CUDA_OK(cudaFree(da));
                CUDA_OK(cudaFree(db));
                ++cases;
              }
            }
          }
          RANK_CHECK(cases > 7 * 150);  // every class reached (not a table that shrank to none)
        });
      },
      600);
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// The kernels read and write unaligned buffers byte-wise (a packed stream may start anywhere).
TEST(CollDeviceReduceTest, KernelsOnUnalignedBuffers) {
  const std::string r = RunJob(1, [](int) {
    if (CudaDeviceCount() == 0) return kRankSkip;
    const size_t n = 1001;
    const std::vector<unsigned char> a = Fill<int>(n, 3), b = Fill<int>(n, 4);
    std::vector<unsigned char> want = a;
    RANK_CHECK(ApplyOp(MPIGPU_SUM, MPIGPU_INT, want.data(), b.data(), n) == MPIGPU_SUCCESS);
    unsigned char *da = nullptr, *db = nullptr;
    CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&da), a.size() + 1));
    CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&db), b.size() + 3));
    CUDA_OK(cudaMemcpy(da + 1, a.data(), a.size(), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(db + 3, b.data(), b.size(), cudaMemcpyHostToDevice));
    RANK_CHECK(devcoll::ReduceOnDevice(devcoll::Op::kSum, devcoll::Elem::kI32, da + 1, db + 3, n,
                                       nullptr)
                   .ok());
    RANK_CHECK(HostCopy(da + 1, a.size()) == want);
    // An op the element does not take is refused, not launched.
    RANK_CHECK(devcoll::ReduceOnDevice(devcoll::Op::kBand, devcoll::Elem::kF32, da, db, 1, nullptr)
                   .code() == Err::kInvalidArg);
    CUDA_OK(cudaFree(da));
    CUDA_OK(cudaFree(db));
    return 0;
  });
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// One rank's side of a reduction collective: buffers on the device (or on the host where
// `host` says), the result read back.
struct Side {
  bool host;
  void* send = nullptr;
  void* recv = nullptr;
  size_t recv_bytes = 0;
  Side(bool on_host, const std::vector<unsigned char>& s, size_t rbytes)
      : host(on_host), recv_bytes(rbytes) {
    if (host) {
      send = std::malloc(s.size() ? s.size() : 1);
      std::memcpy(send, s.data(), s.size());
      recv = std::calloc(rbytes ? rbytes : 1, 1);
    } else {
      send = DeviceCopy(s);
      recv = DeviceCopy(std::vector<unsigned char>(rbytes, 0));
    }
  }
  ~Side() {
    if (host) {
      std::free(send);
      std::free(recv);
    } else {
      CUDA_OK(cudaFree(send));
      CUDA_OK(cudaFree(recv));
    }
  }
  MPIGPU_Buftype bt() const { return host ? MPIGPU_BUF_HOST : MPIGPU_BUF_GPU; }
  std::vector<unsigned char> Result() const {
    if (!host) return HostCopy(recv, recv_bytes);
    const auto* p = static_cast<const unsigned char*>(recv);
    return std::vector<unsigned char>(p, p + recv_bytes);
  }
};

enum class Coll { kAllreduce, kReduce, kReduceScatterBlock, kScan, kExscan };
const char* CollName(Coll c) {
  static const char* const kNames[] = {"Allreduce", "Reduce", "Reduce_scatter_block", "Scan",
                                       "Exscan"};
  return kNames[static_cast<int>(c)];
}

// Runs collective c on `count` elements (Reduce_scatter_block: `count` per rank) with buffers
// on the host or the device; this rank's result bytes.
std::vector<unsigned char> RunReduction(Coll c, const TypeCase& t, MPIGPU_Op op, int count,
                                        bool host, int rank, int n) {
  const size_t ext = t.fill(1, 0).size();
  const int in_count = c == Coll::kReduceScatterBlock ? count * n : count;
  Side side(host, t.fill(in_count, rank + 1), static_cast<size_t>(count) * ext);
  const MPIGPU_Buftype bt = side.bt();
  switch (c) {
    case Coll::kAllreduce:
      API_OK(MPIGPU_Allreduce(side.send, bt, side.recv, bt, count, t.type, op, MPIGPU_COMM_WORLD));
      break;
    case Coll::kReduce:
      API_OK(MPIGPU_Reduce(side.send, bt, side.recv, bt, count, t.type, op, n - 1,
                           MPIGPU_COMM_WORLD));
      if (rank != n - 1) return {};
      break;
    case Coll::kReduceScatterBlock:
      API_OK(MPIGPU_Reduce_scatter_block(side.send, bt, side.recv, bt, count, t.type, op,
                                         MPIGPU_COMM_WORLD));
      break;
    case Coll::kScan:
      API_OK(MPIGPU_Scan(side.send, bt, side.recv, bt, count, t.type, op, MPIGPU_COMM_WORLD));
      break;
    case Coll::kExscan:
      API_OK(MPIGPU_Exscan(side.send, bt, side.recv, bt, count, t.type, op, MPIGPU_COMM_WORLD));
      if (rank == 0) return {};  // undefined there
      break;
  }
  return side.Result();
}

TypeCase Find(MPIGPU_Datatype type) {
  for (const TypeCase& t : AllTypes())
    if (t.type == type) return t;
  return TypeCase{};
}

// Every rank: each reduction on device buffers equals the same reduction on host buffers; then
// the same with even ranks on the device and odd ranks on the host.
void CheckCollectives(int rank, int n) {
  const int ndev = CudaDeviceCount();
  CUDA_OK(cudaSetDevice(rank % ndev));
  struct Case {
    MPIGPU_Datatype type;
    MPIGPU_Op op;
  };
  const Case cases[] = {{MPIGPU_INT, MPIGPU_SUM},          {MPIGPU_FLOAT, MPIGPU_SUM},
                        {MPIGPU_DOUBLE, MPIGPU_MAX},       {MPIGPU_UINT8_T, MPIGPU_BXOR},
                        {MPIGPU_INT64_T, MPIGPU_PROD},     {MPIGPU_C_BOOL, MPIGPU_LOR},
                        {MPIGPU_C_FLOAT_COMPLEX, MPIGPU_PROD}, {MPIGPU_DOUBLE_INT, MPIGPU_MINLOC},
                        {MPIGPU_SHORT_INT, MPIGPU_MAXLOC}, {MPIGPU_LONG_DOUBLE, MPIGPU_SUM}};
  for (const Case& k : cases) {
    const TypeCase t = Find(k.type);
    for (Coll c : {Coll::kAllreduce, Coll::kReduce, Coll::kReduceScatterBlock, Coll::kScan,
                   Coll::kExscan}) {
      for (int count : {1, 7, 257, 20011, 1 << 18}) {
        const std::vector<unsigned char> want = RunReduction(c, t, k.op, count, true, rank, n);
        const std::vector<unsigned char> got = RunReduction(c, t, k.op, count, false, rank, n);
        const std::vector<unsigned char> mixed =
            RunReduction(c, t, k.op, count, rank % 2 == 1, rank, n);
        if (!SameData(t, got, want) || !SameData(t, mixed, want)) {
          std::fprintf(stderr, "rank %d of %d: %s %s on %s, count %d: %s differs from the host\n",
                       rank, n, CollName(c), OpName(k.op), t.name, count,
                       SameData(t, got, want) ? "mixed host/device" : "device");
          _exit(1);
        }
      }
    }
  }
}

TEST(CollDeviceReduceTest, ReductionCollectivesOnDeviceBuffers) {
  for (int n : {1, 2, 3, 4}) {
    const std::string r = RunJob(
        n, [n](int) { return SkipOr([n](int rank) { CheckCollectives(rank, n); }); }, 600);
    if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
    EXPECT_EQ(r, "") << n << " ranks";
  }
}

}  // namespace
}  // namespace mpigpu::testing
