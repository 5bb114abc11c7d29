#include "transport/local_job.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <type_traits>

#include "memcopy/clock.h"
#include "memcopy/params.h"
#include "memcopy/process.h"

namespace mpigpu::transport {

struct alignas(64) LocalJob::RankSlot {
  enum : int32_t { kEmpty = 0, kJoined = 1, kFinalized = 2 };
  std::atomic<int32_t> pid;
  std::atomic<int32_t> state;
  std::atomic<int32_t> gpu;
  std::atomic<uint64_t> gpu_id;
  static void CheckLayout() {
    static_assert(std::is_standard_layout<RankSlot>::value, "shared layout");
    static_assert(sizeof(RankSlot) == 64, "one rank slot per cache line");
    static_assert(std::atomic<int32_t>::is_always_lock_free &&
                      std::atomic<uint64_t>::is_always_lock_free,
                  "shared between processes");
  }
};

namespace {

size_t RoundUpPage(size_t v) { return (v + 4095) / 4096 * 4096; }

// While a rank waits for the job segment: whether the rank that creates it (local rank 0) still
// lives. mpigpurun names its pid (MPIGPU_CREATOR_PID); without it, only the timeout ends the wait.
std::function<bool()> CreatorAliveCheck() {
  const int pid = LauncherInt("MPIGPU_CREATOR_PID");
  if (pid <= 0) return nullptr;
  return [pid] { return ProcessAlive(pid); };
}

}  // namespace

Status JobInfo::FromEnvironment(JobInfo* out) {
  *out = JobInfo();
  if (std::getenv("MPIGPU_RANK") == nullptr) return Status::Ok();  // one-rank job
  out->rank = LauncherInt("MPIGPU_RANK");
  out->size = LauncherInt("MPIGPU_SIZE");
  const char* jobid = std::getenv("MPIGPU_JOBID");
  out->jobid = jobid ? jobid : "";
  if (out->size < 1 || out->rank < 0 || out->rank >= out->size)
    return Status(Err::kInvalidArg, "MPIGPU_RANK/MPIGPU_SIZE are not a valid rank and size (rank " +
                                        std::to_string(out->rank) + ", size " +
                                        std::to_string(out->size) + ")");
  if (out->size > 1 && out->jobid.empty())
    return Status(Err::kInvalidArg, "MPIGPU_JOBID is not set: start multi-rank jobs with mpigpurun");
  for (char c : out->jobid)
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      return Status(Err::kInvalidArg, "MPIGPU_JOBID must be hexadecimal, got '" + out->jobid + "'");
  return Status::Ok();
}

Status LocalJob::Open(const JobInfo& job, size_t dense_bytes, size_t sparse_bytes, int timeout_ms,
                      char** payload) {
  rank_ = job.rank;
  size_ = job.size;
  jobid_ = job.jobid;
  if (jobid_.empty()) MPIGPU_RETURN_IF_ERROR(RandomJobId(&jobid_));
  table_bytes_ = RoundUpPage(sizeof(RankSlot) * static_cast<size_t>(size_));
  const size_t total = table_bytes_ + dense_bytes + sparse_bytes;
  const std::string name = SegmentName(jobid_);
  if (rank_ == 0) {
    MPIGPU_RETURN_IF_ERROR(
        ShmSegment::Create(name, total, size_, &segment_, /*numa_node=*/-1, sparse_bytes));
  } else {
    MPIGPU_RETURN_IF_ERROR(ShmSegment::Attach(name, &segment_, timeout_ms, CreatorAliveCheck()));
    if (segment_.payload_bytes() != total)
      return Status(Err::kInvalidArg, "job segment " + name + " has another size than this rank "
                                      "expects: every rank must run with the same MPIGPU_* settings");
  }
  ranks_ = static_cast<RankSlot*>(segment_.payload());  // zero-filled by the creation: kEmpty
  *payload = static_cast<char*>(segment_.payload()) + table_bytes_;
  return Status::Ok();
}

size_t LocalJob::payload_bytes() const {
  return segment_.valid() ? segment_.payload_bytes() - table_bytes_ : 0;
}

Status LocalJob::Join(int device, uint64_t gpu_id, double timeout_s) {
  RankSlot* me = slot(rank_);
  me->pid.store(getpid(), std::memory_order_relaxed);
  me->gpu.store(device, std::memory_order_relaxed);
  me->gpu_id.store(gpu_id, std::memory_order_relaxed);
  me->state.store(RankSlot::kJoined, std::memory_order_release);  // -> the waits below

  // Wait until every rank joined: then the name can go (mappings stay).
  const double deadline = MonotonicSeconds() + timeout_s;
  for (int r = 0; r < size_; ++r) {
    while (slot(r)->state.load(std::memory_order_acquire) == RankSlot::kEmpty) {
      if (MonotonicSeconds() > deadline)
        return Status(Err::kTimeout, "rank " + std::to_string(r) + " did not join the job within " +
                                         std::to_string(static_cast<long>(timeout_s)) +
                                         " s (MPIGPU_BOOTSTRAP_TIMEOUT)");
      if (!ProcessAlive(segment_.creator_pid()))
        return Status(Err::kPeerFailed, "rank 0 died during start-up");
      usleep(200);
    }
  }
  if (rank_ == 0) (void)segment_.Unlink();
  return Status::Ok();
}

void LocalJob::Abandon() {
  if (rank_ == 0 && segment_.valid()) (void)segment_.Unlink();
}

LocalJob::RankSlot* LocalJob::slot(int rank) const { return ranks_ + rank; }

pid_t LocalJob::pid(int rank) const { return slot(rank)->pid.load(std::memory_order_relaxed); }

int LocalJob::gpu(int rank) const { return slot(rank)->gpu.load(std::memory_order_relaxed); }

uint64_t LocalJob::gpu_id(int rank) const {
  return slot(rank)->gpu_id.load(std::memory_order_relaxed);
}

bool LocalJob::Alive(int rank) const { return rank == rank_ || ProcessAlive(pid(rank)); }

bool LocalJob::Finalized(int rank) const {
  return slot(rank)->state.load(std::memory_order_acquire) == RankSlot::kFinalized;
}

void LocalJob::MarkFinalized() {
  slot(rank_)->state.store(RankSlot::kFinalized, std::memory_order_release);
}

}  // namespace mpigpu::transport
