#include "transport/local_job.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "memcopy/clock.h"
#include "memcopy/params.h"
#include "memcopy/process.h"
#include "transport/core/job_secret.h"
#include "transport/launcher_link.h"

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

// A rank's card: len + 1 once written (0: not yet), then the bytes.
struct LocalJob::CardSlot {
  std::atomic<uint32_t> len_plus_1;
  char bytes[kCardBytes - sizeof(uint32_t)];
  static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared between processes");
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
  if (const char* map = std::getenv("MPIGPU_NODE_MAP"); map != nullptr && *map != '\0')
    MPIGPU_RETURN_IF_ERROR(ParseNodeMap(map, out->size, &out->node_of));
  return Status::Ok();
}

bool JobInfo::SpansNodes() const {
  for (int n : node_of)
    if (n != node_of[0]) return true;
  return false;
}

int JobInfo::Leader() const {
  for (int r = 0; r < size; ++r)
    if (SameNode(r)) return r;
  return rank;
}

int JobInfo::LocalRank() const {
  int n = 0;
  for (int r = 0; r < rank; ++r) n += SameNode(r);
  return n;
}

int JobInfo::LocalSize() const {
  int n = 0;
  for (int r = 0; r < size; ++r) n += SameNode(r);
  return n;
}

Status JobInfo::ParseNodeMap(const char* text, int size, std::vector<int>* out) {
  auto bad = [&](const std::string& why) {
    return Status(Err::kInvalidArg,
                  std::string("MPIGPU_NODE_MAP='") + text + "' is not valid: " + why);
  };
  out->clear();
  const char* p = text;
  int highest = -1;
  while (*p != '\0') {
    char* end = nullptr;
    const long node = std::strtol(p, &end, 10);
    if (end == p || node < 0 || node >= size) return bad("a node is not a number in [0, size)");
    long count = 1;
    p = end;
    if (*p == '*') {
      count = std::strtol(p + 1, &end, 10);
      if (end == p + 1 || count < 1 || count > size) return bad("a count is not in [1, size]");
      p = end;
    }
    if (static_cast<long>(out->size()) + count > size) return bad("more ranks than MPIGPU_SIZE");
    out->insert(out->end(), static_cast<size_t>(count), static_cast<int>(node));
    highest = std::max(highest, static_cast<int>(node));
    if (*p == ',') ++p;
    else if (*p != '\0') return bad("expected ',' or '*'");
  }
  if (static_cast<int>(out->size()) != size) return bad("fewer ranks than MPIGPU_SIZE");
  std::vector<bool> used(static_cast<size_t>(highest) + 1, false);
  for (int n : *out) used[static_cast<size_t>(n)] = true;
  for (bool u : used)
    if (!u) return bad("nodes are not numbered from 0 without gaps");
  return Status::Ok();
}

std::string JobInfo::FormatNodeMap(const std::vector<int>& node_of) {
  std::string s;
  for (size_t i = 0; i < node_of.size();) {
    size_t j = i;
    while (j < node_of.size() && node_of[j] == node_of[i]) ++j;
    s += (s.empty() ? "" : ",") + std::to_string(node_of[i]);
    if (j - i > 1) s += "*" + std::to_string(j - i);
    i = j;
  }
  return s;
}

Status LocalJob::Open(const JobInfo& job, size_t dense_bytes, size_t sparse_bytes, int timeout_ms,
                      char** payload) {
  job_ = job;
  jobid_ = job.jobid;
  if (jobid_.empty()) MPIGPU_RETURN_IF_ERROR(RandomJobId(&jobid_));
  const size_t ranks_bytes = sizeof(RankSlot) * static_cast<size_t>(job_.size);
  table_bytes_ = RoundUpPage(ranks_bytes + kCardBytes * (static_cast<size_t>(job_.size) + 1));
  const size_t total = table_bytes_ + dense_bytes + sparse_bytes;
  // One segment per node; a job on one node keeps the plain name.
  std::string name = SegmentName(jobid_);
  if (job.node() > 0) name += "-node" + std::to_string(job.node());
  if (leader()) {
    MPIGPU_RETURN_IF_ERROR(
        ShmSegment::Create(name, total, job_.size, &segment_, /*numa_node=*/-1, sparse_bytes));
  } else {
    MPIGPU_RETURN_IF_ERROR(ShmSegment::Attach(name, &segment_, timeout_ms, CreatorAliveCheck()));
    if (segment_.payload_bytes() != total)
      return Status(Err::kInvalidArg, "job segment " + name + " has another size than this rank "
                                      "expects: every rank must run with the same MPIGPU_* settings");
  }
  ranks_ = static_cast<RankSlot*>(segment_.payload());  // zero-filled by the creation: kEmpty
  cards_ = reinterpret_cast<CardSlot*>(static_cast<char*>(segment_.payload()) + ranks_bytes);
  if (leader()) {  // the job's secret, published by the leader's Join
    std::string secret;
    MPIGPU_RETURN_IF_ERROR(NewJobSecret(&secret));
    std::memcpy(cards_[job_.size].bytes, secret.data(), kJobSecretBytes);
  }
  *payload = static_cast<char*>(segment_.payload()) + table_bytes_;
  return Status::Ok();
}

size_t LocalJob::payload_bytes() const {
  return segment_.valid() ? segment_.payload_bytes() - table_bytes_ : 0;
}

Status LocalJob::Join(int device, uint64_t gpu_id, double timeout_s) {
  RankSlot* me = slot(job_.rank);
  me->pid.store(getpid(), std::memory_order_relaxed);
  me->gpu.store(device, std::memory_order_relaxed);
  me->gpu_id.store(gpu_id, std::memory_order_relaxed);
  me->state.store(RankSlot::kJoined, std::memory_order_release);  // -> the waits below

  // Wait until the node's ranks joined: then the name can go (mappings stay).
  const double deadline = MonotonicSeconds() + timeout_s;
  for (int r = 0; r < job_.size; ++r) {
    if (!job_.SameNode(r)) continue;
    while (slot(r)->state.load(std::memory_order_acquire) == RankSlot::kEmpty) {
      if (MonotonicSeconds() > deadline)
        return Status(Err::kTimeout, "rank " + std::to_string(r) + " did not join the job within " +
                                         std::to_string(static_cast<long>(timeout_s)) +
                                         " s (MPIGPU_BOOTSTRAP_TIMEOUT)");
      if (!ProcessAlive(segment_.creator_pid()))
        return Status(Err::kPeerFailed,
                      "rank " + std::to_string(job_.Leader()) + " died during start-up");
      usleep(200);
    }
  }
  secret_.assign(cards_[job_.size].bytes, kJobSecretBytes);  // the leader's Join published it
  if (leader()) (void)segment_.Unlink();
  return Status::Ok();
}

Status LocalJob::Allgather(const std::string& mine, std::vector<std::string>* all,
                           double timeout_s) {
  if (job_.SpansNodes())
    return Status(Err::kInternal, "a job that spans nodes exchanges through its boot server");
  CardSlot& me = cards_[job_.rank];
  if (mine.size() > sizeof me.bytes)
    return Status(Err::kInvalidArg, "a card of " + std::to_string(mine.size()) + " bytes");
  std::memcpy(me.bytes, mine.data(), mine.size());
  me.len_plus_1.store(static_cast<uint32_t>(mine.size() + 1), std::memory_order_release);
  all->assign(static_cast<size_t>(job_.size), std::string());
  const double deadline = MonotonicSeconds() + timeout_s;
  for (int r = 0; r < job_.size; ++r) {
    uint32_t n;
    while ((n = cards_[r].len_plus_1.load(std::memory_order_acquire)) == 0) {
      if (MonotonicSeconds() > deadline)
        return Status(Err::kTimeout, "rank " + std::to_string(r) + " did not publish its card");
      if (!Alive(r)) return Status(Err::kPeerFailed, "rank " + std::to_string(r) + " died");
      usleep(100);
    }
    (*all)[r].assign(cards_[r].bytes, std::min<size_t>(n - 1, sizeof cards_[r].bytes));
  }
  return Status::Ok();
}

void LocalJob::Abandon() {
  if (leader() && segment_.valid()) (void)segment_.Unlink();
}

bool LocalJob::LauncherGone() const { return transport::LauncherGone(); }

LocalJob::RankSlot* LocalJob::slot(int rank) const { return ranks_ + rank; }

pid_t LocalJob::pid(int rank) const { return slot(rank)->pid.load(std::memory_order_relaxed); }

int LocalJob::gpu(int rank) const { return slot(rank)->gpu.load(std::memory_order_relaxed); }

uint64_t LocalJob::gpu_id(int rank) const {
  return slot(rank)->gpu_id.load(std::memory_order_relaxed);
}

bool LocalJob::Alive(int rank) const { return rank == job_.rank || ProcessAlive(pid(rank)); }

bool LocalJob::Finalized(int rank) const {
  return slot(rank)->state.load(std::memory_order_acquire) == RankSlot::kFinalized;
}

void LocalJob::MarkFinalized() {
  slot(job_.rank)->state.store(RankSlot::kFinalized, std::memory_order_release);
}

}  // namespace mpigpu::transport
