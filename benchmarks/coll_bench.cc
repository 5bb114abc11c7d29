// Collective benchmark with nccl-tests' columns and OSU's flags: every size from -m MIN to MAX
// (doubling), each collective timed over -i iterations after -x warm-up ones, on device
// (-d cuda) or host (-d host) buffers; time is the slowest rank's mean per call (as
// nccl-tests), algbw = size / time, busbw = algbw x nccl-tests' factor for the collective.
// -c checks every result (values are small integers: floating-point sums are exact), #wrong
// counts the wrong elements over all ranks.
//
//   mpigpurun -n 4 bazel-bin/benchmarks/coll_bench -d cuda -m 8:256M [-c] [-i 50] [-x 5]
//       [--coll allreduce,bcast,allgather,alltoall,reduce_scatter] [-t float|double|int]
//       [--op sum|max|min|prod] [--csv FILE] [--json FILE] [--phases] [--sync-device]
//
// --sync-device: cudaDeviceSynchronize() after every call, as a program that waits for its GPU
// between collectives (PyTorch's torch.cuda.synchronize(), CuPy's Device.synchronize()).
// Sizes follow nccl-tests: Allreduce and Bcast move `size` bytes per rank; Allgather's size is
// the gathered whole (each rank sends size / n), Alltoall's and Reduce_scatter's the whole send
// buffer (size / n to or from each rank).
//
// --phases (Allgather and Alltoall): beside each size, the pieces of the collective timed
// alone with the same buffers: "self" is the call on MPIGPU_COMM_SELF (argument checks, the
// schedule's build and the local block's device copy, no message), "xchg" one ring exchange
// (MPIGPU_Sendrecv of one block with the neighbours, the collective's round), "gap" = time -
// self - (n-1) x xchg: what the collective pays beyond its pieces; "self+xchg" the two back to
// back in one timed loop (the collective's order: a local device copy, then a message), which
// shows a cost that only their meeting pays.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "perf/launch_env.h"

namespace {

enum class Coll { kAllreduce, kBcast, kAllgather, kAlltoall, kReduceScatter };
const char* const kCollNames[] = {"allreduce", "bcast", "allgather", "alltoall",
                                  "reduce_scatter"};

struct Options {
  size_t min_bytes = 8, max_bytes = size_t{64} << 20;
  int iters = 50, warmup = 5;
  bool device = true, check = false, phases = false;
  bool sync_device = false;  // --sync-device: cudaDeviceSynchronize after every call
  std::vector<Coll> colls = {Coll::kAllreduce, Coll::kBcast, Coll::kAllgather, Coll::kAlltoall,
                             Coll::kReduceScatter};
  std::string type = "float", op = "sum", csv, json;
};

bool ParseSize(const std::string& s, size_t* out) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || v < 0) return false;
  size_t mul = 1;
  const std::string suf(end);
  if (suf == "K" || suf == "k") mul = 1 << 10;
  else if (suf == "M" || suf == "m") mul = 1 << 20;
  else if (suf == "G" || suf == "g") mul = size_t{1} << 30;
  else if (!suf.empty()) return false;
  *out = static_cast<size_t>(v * mul);
  return true;
}

bool ParseColls(const std::string& list, std::vector<Coll>* out) {
  out->clear();
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string name = list.substr(at, comma - at);
    bool found = false;
    for (int c = 0; c < 5; ++c)
      if (name == kCollNames[c]) out->push_back(static_cast<Coll>(c)), found = true;
    if (!found) return false;
    at = comma + 1;
  }
  return !out->empty();
}

const char* kUsage =
    "usage: coll_bench [-d cuda|host] [-m MIN:MAX] [-i ITERS] [-x WARMUP] [-c] [-t float|double|"
    "int] [--op sum|max|min|prod] [--coll LIST] [--csv FILE] [--json FILE] [--phases]\n"
    "  [--sync-device]\n";

bool Parse(int argc, char** argv, Options* o, std::string* err) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&](std::string* v) {
      if (i + 1 >= argc) return false;
      *v = argv[++i];
      return true;
    };
    std::string v;
    if (a == "-c") {
      o->check = true;
    } else if (a == "--phases") {
      o->phases = true;
    } else if (a == "--sync-device") {
      o->sync_device = true;
    } else if (a == "-d" && next(&v)) {
      if (v != "cuda" && v != "host") return *err = "-d takes cuda or host", false;
      o->device = v == "cuda";
    } else if (a == "-m" && next(&v)) {
      const size_t colon = v.find(':');
      const std::string lo = colon == std::string::npos ? v : v.substr(0, colon);
      const std::string hi = colon == std::string::npos ? v : v.substr(colon + 1);
      if (!ParseSize(lo, &o->min_bytes) || !ParseSize(hi, &o->max_bytes) || o->min_bytes == 0 ||
          o->min_bytes > o->max_bytes)
        return *err = "-m takes MIN:MAX sizes (K, M, G suffixes), 0 < MIN <= MAX", false;
    } else if ((a == "-i" || a == "-x") && next(&v)) {
      const int n = std::atoi(v.c_str());
      if (n < (a == "-i" ? 1 : 0)) return *err = a + " takes a count", false;
      (a == "-i" ? o->iters : o->warmup) = n;
    } else if (a == "-t" && next(&v)) {
      if (v != "float" && v != "double" && v != "int") return *err = "-t: float, double or int", false;
      o->type = v;
    } else if (a == "--op" && next(&v)) {
      if (v != "sum" && v != "max" && v != "min" && v != "prod")
        return *err = "--op: sum, max, min or prod", false;
      o->op = v;
    } else if (a == "--coll" && next(&v)) {
      if (!ParseColls(v, &o->colls)) return *err = "--coll: a comma list of " + std::string(
          "allreduce, bcast, allgather, alltoall, reduce_scatter"), false;
    } else if (a == "--csv" && next(&v)) {
      o->csv = v;
    } else if (a == "--json" && next(&v)) {
      o->json = v;
    } else {
      return *err = "unknown or incomplete argument " + a, false;
    }
  }
  return true;
}

struct Row {
  std::string coll;
  size_t size = 0, count = 0;
  double us = 0, algbw = 0, busbw = 0;
  long long wrong = 0;
  double self_us = -1, xchg_us = -1, both_us = -1;  // --phases
};

// The benchmark's world: type, op, buffers on the device or the host.
class Bench {
 public:
  Bench(const Options& o, int rank, int n) : o_(o), rank_(rank), n_(n) {
    type_ = o.type == "float" ? MPIGPU_FLOAT : o.type == "double" ? MPIGPU_DOUBLE : MPIGPU_INT;
    esize_ = o.type == "double" ? 8 : 4;
    op_ = o.op == "sum" ? MPIGPU_SUM : o.op == "max" ? MPIGPU_MAX : o.op == "min" ? MPIGPU_MIN
                                                                               : MPIGPU_PROD;
    bt_ = o.device ? MPIGPU_BUF_GPU : MPIGPU_BUF_HOST;
  }
  ~Bench() {
    Free(send_);
    Free(recv_);
  }

  // Value of element i of rank r's contribution: small integers, exact in float.
  double Val(int r, size_t i) const {
    if (op_ == MPIGPU_PROD) return 1 + ((i + r) % 2);
    return static_cast<double>((i * 3 + r * 7) % 11);
  }
  double Combine(double a, double b) const {
    switch (op_) {
      case MPIGPU_SUM: return a + b;
      case MPIGPU_PROD: return a * b;
      case MPIGPU_MAX: return std::max(a, b);
      default: return std::min(a, b);
    }
  }

  bool Run(Coll c, size_t size, Row* row) {
    const size_t n = static_cast<size_t>(n_);
    size_t count = size / esize_;  // elements of the size
    if (c == Coll::kAllgather || c == Coll::kAlltoall || c == Coll::kReduceScatter)
      count = count / n * n;  // whole blocks
    if (count == 0) return false;
    const size_t block = (c == Coll::kAllgather || c == Coll::kAlltoall ||
                          c == Coll::kReduceScatter) ? count / n : count;
    const size_t send_elems = c == Coll::kAllgather ? block : count;
    const size_t recv_elems = c == Coll::kReduceScatter ? block : count;
    Reserve(std::max(send_elems, recv_elems) * esize_);
    Fill(c, send_elems);
    const double us = TimeLoop([&] { Call(c, block, count, MPIGPU_COMM_WORLD); });
    long long wrong = o_.check ? Check(c, block, recv_elems) : 0;
    if (o_.check)
      MPIGPU_Allreduce(MPIGPU_IN_PLACE, MPIGPU_BUF_HOST, &wrong, MPIGPU_BUF_HOST, 1,
                       MPIGPU_LONG_LONG, MPIGPU_SUM, MPIGPU_COMM_WORLD);
    const size_t bytes = count * esize_;
    row->coll = kCollNames[static_cast<int>(c)];
    row->size = bytes;
    row->count = count;
    row->us = us;
    row->algbw = bytes / us / 1e3;  // GB/s
    const double f = c == Coll::kAllreduce ? 2.0 * (n_ - 1) / n_
                     : c == Coll::kBcast   ? 1.0
                                           : static_cast<double>(n_ - 1) / n_;
    row->busbw = row->algbw * f;
    row->wrong = o_.check ? wrong : -1;
    if (o_.phases && (c == Coll::kAllgather || c == Coll::kAlltoall)) Phases(c, block, row);
    return true;
  }

 private:
  void* Alloc(size_t bytes) {
    void* p = nullptr;
    if (o_.device) {
      if (cudaMalloc(&p, bytes) != cudaSuccess) p = nullptr;
    } else {
      p = std::malloc(bytes);
    }
    if (p == nullptr) {
      std::fprintf(stderr, "coll_bench: cannot allocate %zu bytes\n", bytes);
      std::exit(1);
    }
    return p;
  }
  void Free(void* p) {
    if (p == nullptr) return;
    if (o_.device) cudaFree(p);
    else std::free(p);
  }
  void Reserve(size_t bytes) {
    if (bytes <= cap_) return;
    Free(send_);
    Free(recv_);
    send_ = Alloc(bytes);
    recv_ = Alloc(bytes);
    cap_ = bytes;
  }
  void Put(void* dst, const std::vector<unsigned char>& h) {
    if (o_.device) {
      cudaMemcpy(dst, h.data(), h.size(), cudaMemcpyHostToDevice);
      cudaDeviceSynchronize();
    } else {
      std::memcpy(dst, h.data(), h.size());
    }
  }
  std::vector<unsigned char> Get(const void* src, size_t bytes) {
    std::vector<unsigned char> h(bytes);
    if (o_.device) {
      cudaDeviceSynchronize();
      cudaMemcpy(h.data(), src, bytes, cudaMemcpyDeviceToHost);
    } else {
      std::memcpy(h.data(), src, bytes);
    }
    return h;
  }
  void Store(unsigned char* p, double v) const {
    if (type_ == MPIGPU_FLOAT) { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); }
    else if (type_ == MPIGPU_DOUBLE) std::memcpy(p, &v, 8);
    else { const int x = static_cast<int>(v); std::memcpy(p, &x, 4); }
  }
  double Load(const unsigned char* p) const {
    if (type_ == MPIGPU_FLOAT) { float f; std::memcpy(&f, p, 4); return f; }
    if (type_ == MPIGPU_DOUBLE) { double d; std::memcpy(&d, p, 8); return d; }
    int x; std::memcpy(&x, p, 4); return x;
  }
  // Element i of the send buffer: for Alltoall, block k's element j is Val(rank, k*n + j) so
  // every destination's block differs.
  void Fill(Coll c, size_t elems) {
    std::vector<unsigned char> h(elems * esize_);
    for (size_t i = 0; i < elems; ++i)
      Store(h.data() + i * esize_, c == Coll::kBcast && rank_ != 0 ? -1 : Val(rank_, i));
    Put(send_, h);
  }
  // Expected element i of this rank's result.
  double Want(Coll c, size_t block, size_t i) const {
    switch (c) {
      case Coll::kBcast: return Val(0, i);
      case Coll::kAllgather: return Val(static_cast<int>(i / block), i % block);
      case Coll::kAlltoall: return Val(static_cast<int>(i / block), rank_ * block + i % block);
      default: break;
    }
    const size_t at = c == Coll::kReduceScatter ? rank_ * block + i : i;
    double v = Val(0, at);
    for (int r = 1; r < n_; ++r) v = Combine(v, Val(r, at));
    return v;
  }
  long long Check(Coll c, size_t block, size_t elems) {
    const std::vector<unsigned char> h =
        Get(c == Coll::kBcast ? send_ : recv_, elems * esize_);
    long long wrong = 0;
    for (size_t i = 0; i < elems; ++i)
      if (Load(h.data() + i * esize_) != Want(c, block, i)) ++wrong;
    return wrong;
  }
  void Call(Coll c, size_t block, size_t count, MPIGPU_Comm comm) {
    const int b = static_cast<int>(block), k = static_cast<int>(count);
    int rc = MPIGPU_SUCCESS;
    switch (c) {
      case Coll::kAllreduce:
        rc = MPIGPU_Allreduce(send_, bt_, recv_, bt_, k, type_, op_, comm);
        break;
      case Coll::kBcast:
        rc = MPIGPU_Bcast(send_, bt_, k, type_, 0, comm);
        break;
      case Coll::kAllgather:
        rc = MPIGPU_Allgather(send_, bt_, b, type_, recv_, bt_, b, type_, comm);
        break;
      case Coll::kAlltoall:
        rc = MPIGPU_Alltoall(send_, bt_, b, type_, recv_, bt_, b, type_, comm);
        break;
      case Coll::kReduceScatter:
        rc = MPIGPU_Reduce_scatter_block(send_, bt_, recv_, bt_, b, type_, op_, comm);
        break;
    }
    if (rc != MPIGPU_SUCCESS) {
      std::fprintf(stderr, "coll_bench: %s failed (%d)\n", kCollNames[static_cast<int>(c)], rc);
      std::exit(1);
    }
  }
  double TimeLoop(const std::function<void()>& fn) {
    for (int i = 0; i < o_.warmup; ++i) fn();
    MPIGPU_Barrier(MPIGPU_COMM_WORLD);
    const double t0 = MPIGPU_Wtime();
    for (int i = 0; i < o_.iters; ++i) {
      fn();
      if (o_.sync_device) cudaDeviceSynchronize();  // as a program that waits for its GPU
    }
    double us = (MPIGPU_Wtime() - t0) * 1e6 / o_.iters;
    MPIGPU_Allreduce(MPIGPU_IN_PLACE, MPIGPU_BUF_HOST, &us, MPIGPU_BUF_HOST, 1, MPIGPU_DOUBLE,
                     MPIGPU_MAX, MPIGPU_COMM_WORLD);
    return us;
  }
  // See the file's comment: the collective on COMM_SELF, and one ring exchange.
  void Phases(Coll c, size_t block, Row* row) {
    const int b = static_cast<int>(block);
    row->self_us = TimeLoop([&] {
      if (c == Coll::kAllgather)
        MPIGPU_Allgather(send_, bt_, b, type_, recv_, bt_, b, type_, MPIGPU_COMM_SELF);
      else
        MPIGPU_Alltoall(send_, bt_, b, type_, recv_, bt_, b, type_, MPIGPU_COMM_SELF);
    });
    if (n_ < 2) return;
    const int right = (rank_ + 1) % n_, left = (rank_ + n_ - 1) % n_;
    const size_t off = block * esize_;
    auto xchg = [&] {
      MPIGPU_Sendrecv(send_, bt_, b, type_, right, 77, static_cast<char*>(recv_) + off, bt_, b,
                      type_, left, 77, MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE);
    };
    row->xchg_us = TimeLoop(xchg);
    row->both_us = TimeLoop([&] {
      if (c == Coll::kAllgather)
        MPIGPU_Allgather(send_, bt_, b, type_, recv_, bt_, b, type_, MPIGPU_COMM_SELF);
      else
        MPIGPU_Alltoall(send_, bt_, b, type_, recv_, bt_, b, type_, MPIGPU_COMM_SELF);
      xchg();
    });
  }

  const Options& o_;
  int rank_, n_;
  MPIGPU_Datatype type_;
  size_t esize_;
  MPIGPU_Op op_;
  MPIGPU_Buftype bt_;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  size_t cap_ = 0;
};

void Print(const Options& o, int n, const std::vector<Row>& rows) {
  std::printf("# coll_bench: %d ranks, %s buffers, type %s, op %s, %d iterations (%d warm-up)\n",
              n, o.device ? "device" : "host", o.type.c_str(), o.op.c_str(), o.iters, o.warmup);
  std::printf("%-15s %12s %12s %12s %9s %9s %8s", "coll", "size(B)", "count", "time(us)",
              "algbw", "busbw", "#wrong");
  if (o.phases)
    std::printf(" %10s %10s %10s %11s", "self(us)", "xchg(us)", "gap(us)", "self+xchg");
  std::printf("\n");
  for (const Row& r : rows) {
    std::printf("%-15s %12zu %12zu %12.2f %9.2f %9.2f %8s", r.coll.c_str(), r.size, r.count,
                r.us, r.algbw, r.busbw, r.wrong < 0 ? "N/A" : std::to_string(r.wrong).c_str());
    if (r.self_us >= 0) {
      const double gap = r.xchg_us >= 0 ? r.us - r.self_us - (n - 1) * r.xchg_us : 0;
      std::printf(" %10.2f %10.2f %10.2f %11.2f", r.self_us, r.xchg_us, gap, r.both_us);
    }
    std::printf("\n");
  }
  if (!o.csv.empty()) {
    if (FILE* f = std::fopen(o.csv.c_str(), "w")) {
      std::fprintf(f, "coll,ranks,buffers,type,op,size,count,time_us,algbw_gbs,busbw_gbs,wrong,"
                      "self_us,xchg_us,self_xchg_us\n");
      for (const Row& r : rows)
        std::fprintf(f, "%s,%d,%s,%s,%s,%zu,%zu,%.3f,%.3f,%.3f,%lld,%.3f,%.3f,%.3f\n",
                     r.coll.c_str(), n, o.device ? "cuda" : "host", o.type.c_str(), o.op.c_str(),
                     r.size, r.count, r.us, r.algbw, r.busbw, r.wrong, r.self_us, r.xchg_us,
                     r.both_us);
      std::fclose(f);
    }
  }
  if (!o.json.empty()) {
    if (FILE* f = std::fopen(o.json.c_str(), "w")) {
      std::fprintf(f, "{\"ranks\": %d, \"buffers\": \"%s\", \"type\": \"%s\", \"op\": \"%s\", "
                      "\"rows\": [",
                   n, o.device ? "cuda" : "host", o.type.c_str(), o.op.c_str());
      for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        std::fprintf(f,
                     "%s\n  {\"coll\": \"%s\", \"size\": %zu, \"count\": %zu, \"time_us\": %.3f, "
                     "\"algbw_gbs\": %.3f, \"busbw_gbs\": %.3f, \"wrong\": %lld, \"self_us\": "
                     "%.3f, \"xchg_us\": %.3f, \"self_xchg_us\": %.3f}",
                     i ? "," : "", r.coll.c_str(), r.size, r.count, r.us, r.algbw, r.busbw,
                     r.wrong, r.self_us, r.xchg_us, r.both_us);
      }
      std::fprintf(f, "\n]}\n");
      std::fclose(f);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string err;
  const mpigpu::perf::LaunchEnv env = mpigpu::perf::ReadLaunchEnv();
  if (!Parse(argc, argv, &o, &err)) {
    if (env.rank == 0) std::fprintf(stderr, "coll_bench: %s\n%s", err.c_str(), kUsage);
    return 2;
  }
  if (o.device) {
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
      if (env.rank == 0) std::fprintf(stderr, "coll_bench: -d cuda needs a CUDA device\n");
      return 2;
    }
    cudaSetDevice(env.local_rank % ndev);
  }
  if (MPIGPU_Init(&argc, &argv) != MPIGPU_SUCCESS) return 1;
  int rank = 0, n = 1;
  MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &rank);
  MPIGPU_Comm_size(MPIGPU_COMM_WORLD, &n);
  std::vector<Row> rows;
  {
    Bench b(o, rank, n);
    for (Coll c : o.colls)
      for (size_t size = o.min_bytes; size <= o.max_bytes; size *= 2) {
        Row r;
        if (b.Run(c, size, &r)) rows.push_back(r);
      }
  }
  if (rank == 0) Print(o, n, rows);
  return MPIGPU_Finalize() == MPIGPU_SUCCESS ? 0 : 1;
}
