#include "ringbuf/segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/permissions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "memcopy/log.h"
#include "memcopy/process.h"
#include "ringbuf/numa.h"
#include "ringbuf/populate.h"

namespace mpigpu {
namespace bip = boost::interprocess;

namespace {

constexpr const char* kShmDir = "/dev/shm";
// A segment that was never published is someone's Create in progress for at most this long.
constexpr time_t kUnpublishedGraceSec = 60;
// The settings that size the segments (cells: job segment; LMT: ring segments).
constexpr const char* kSizeKnobs = "MPIGPU_CELLS_PER_RANK / MPIGPU_CELL_SIZE / MPIGPU_LMT_UNITS";

size_t RoundUpPage(size_t n) { return (n + 4095) & ~size_t{4095}; }

std::string MiB(unsigned long long bytes) {
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}

Status CheckName(const std::string& name) {
  if (name.empty() || name.size() > ShmSegment::kMaxNameLength) {
    return Status(Err::kInvalidArg, "shared memory name '" + name + "' must have 1 to " +
                                        std::to_string(ShmSegment::kMaxNameLength) + " characters");
  }
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) {
      return Status(Err::kInvalidArg, "shared memory name '" + name +
                                          "' may hold only letters, digits, '-', '_' and '.'");
    }
  }
  if (name == "." || name == "..") {
    return Status(Err::kInvalidArg, "shared memory name '" + name + "' is not a file name");
  }
  return Status::Ok();
}

Status FromBoost(const std::string& what, const bip::interprocess_exception& e) {
  int err = e.get_native_error();
  return err != 0 ? SysError(what.c_str(), err) : Status(Err::kSystem, what + ": " + e.what());
}

// Free bytes of /dev/shm for an unprivileged process; false when statvfs fails.
bool ShmFreeBytes(unsigned long long* free_bytes) {
  struct statvfs vfs;
  if (statvfs(kShmDir, &vfs) != 0) return false;
  *free_bytes = static_cast<unsigned long long>(vfs.f_bavail) * vfs.f_frsize;
  return true;
}

std::string ShmPrefix() { return "mpigpu-" + std::to_string(getuid()) + "-"; }

}  // namespace

std::string SegmentName(const std::string& jobid) { return ShmPrefix() + jobid; }

std::string RingSegmentName(const std::string& jobid, int src, int dst, uint64_t token) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(token));
  return SegmentName(jobid) + "-ring-" + std::to_string(src) + "-" + std::to_string(dst) + "-" +
         hex;
}

Status RandomToken(uint64_t* token) {
  ssize_t n;
  do n = getrandom(token, sizeof *token, 0);
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof *token)) return SysError("getrandom");
  return Status::Ok();
}

Status RandomJobId(std::string* jobid) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SysError("open(/dev/urandom)");
  uint64_t v = 0;
  ssize_t n = read(fd, &v, sizeof v);
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(sizeof v)) {
    return n < 0 ? SysError("read(/dev/urandom)", err)
                 : Status(Err::kSystem, "read(/dev/urandom): short read");
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  *jobid = text;
  return Status::Ok();
}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  region_.swap(other.region_);
  std::swap(header_, other.header_);
  std::swap(name_, other.name_);
  std::swap(file_registered_, other.file_registered_);
  return *this;
}

ShmSegment::~ShmSegment() {
  if (file_registered_) UnregisterPopulateFile(region_.get_address());
}

void ShmSegment::RegisterFileForPopulate(int fd) {
  if (!PopulateFallsBack() || region_.get_address() == nullptr) return;
  const int mine = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (mine < 0) return;  // PopulateForWrite then only touches the pages
  RegisterPopulateFile(region_.get_address(), region_.get_size(), mine);
  file_registered_ = true;
}

Status ShmSegment::Create(const std::string& name, size_t payload_bytes, int nranks,
                          ShmSegment* out, int numa_node, size_t sparse_tail) {
  MPIGPU_RETURN_IF_ERROR(CheckName(name));
  if (out == nullptr) return Status(Err::kInvalidArg, "ShmSegment::Create: null output");
  if (payload_bytes == 0 || payload_bytes > kMaxPayloadBytes) {
    return Status(Err::kInvalidArg, "segment " + name + ": payload of " +
                                        std::to_string(payload_bytes) +
                                        " bytes (must be 1 .. 2^44)");
  }
  if (nranks < 1 || nranks > kMaxRanks) {
    return Status(Err::kInvalidArg, "segment " + name + ": nranks " + std::to_string(nranks) +
                                        " (must be 1 .. " + std::to_string(kMaxRanks) + ")");
  }
  if (sparse_tail > payload_bytes)
    return Status(Err::kInvalidArg, "segment " + name + ": sparse tail larger than the payload");
  const size_t total = kHeaderBytes + RoundUpPage(payload_bytes);
  // The pages allocated now; a sparse tail starts inside the last of them at the latest.
  const size_t dense = kHeaderBytes + RoundUpPage(payload_bytes - sparse_tail);

  // A clear message now instead of a failure deep in the allocation.
  unsigned long long free_bytes = 0;
  if (ShmFreeBytes(&free_bytes) && dense > free_bytes) {
    return Status(Err::kNoMemory, std::string("shared memory ") + kShmDir + " has " +
                                      MiB(free_bytes) + " free, segment " + name + " needs " +
                                      MiB(dense) + "; free space or lower " + kSizeKnobs);
  }

  bip::shared_memory_object shm;
  try {
    bip::shared_memory_object created(bip::create_only, name.c_str(), bip::read_write,
                                      bip::permissions(0600));
    shm.swap(created);
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::already_exists_error) {
      struct stat other;
      const std::string path = std::string(kShmDir) + "/" + name;
      if (stat(path.c_str(), &other) == 0 && other.st_uid != geteuid())
        return Status(Err::kSystem, "shared memory segment " + name + " already exists and belongs to " +
                                        OwnerName(other.st_uid) +
                                        ": another user made it; it is not ours to use or remove");
      return Status(Err::kInvalidArg,
                    "shared memory segment " + name +
                        " already exists (a job with the same id is running, or a crashed job "
                        "left it: RemoveStaleSegments / the launcher cleans those)");
    }
    return FromBoost("shm_open(" + name + ")", e);
  }

  // From here on, any failure removes the name again.
  auto fail = [&name](Status st) {
    bip::shared_memory_object::remove(name.c_str());
    return st;
  };
  ShmSegment seg;
  try {
    shm.truncate(static_cast<bip::offset_t>(total));
    bip::mapped_region region(shm, bip::read_write, 0, total);
    seg.region_.swap(region);
    if (sparse_tail > 0) seg.RegisterFileForPopulate(shm.get_mapping_handle().handle);
  } catch (const bip::interprocess_exception& e) {
    return fail(FromBoost("ftruncate/mmap(" + name + ")", e));
  }
  void* base = seg.region_.get_address();
  // The policy must be set before the pages exist: posix_fallocate then allocates on the node.
  Status st = BindToNumaNode(base, total, numa_node);
  if (!st.ok()) return fail(st);
  // ftruncate only sets the size: without this, the first touch of a page past what tmpfs has
  // room for would be a SIGBUS in whichever process touched it.
  int err = posix_fallocate(shm.get_mapping_handle().handle, 0, static_cast<off_t>(dense));
  if (err == ENOSPC || err == ENOMEM) {
    return fail(Status(Err::kNoMemory, std::string("shared memory ") + kShmDir +
                                           " ran out of space allocating " + MiB(dense) +
                                           " for segment " + name +
                                           "; free space or lower " + kSizeKnobs));
  }
  if (err != 0) return fail(SysError(("posix_fallocate(" + name + ")").c_str(), err));

  auto* h = static_cast<SegmentHeader*>(base);  // fresh pages are zero: magic is 0
  h->header_bytes = kHeaderBytes;
  h->payload_bytes = payload_bytes;
  h->nranks = nranks;
  h->creator_pid = static_cast<int32_t>(getpid());
  h->attached.store(1, std::memory_order_relaxed);  // published by the release below
  PublishHeader(h, kKind);  // pairs with Attach's acquire load (HeaderPublished)
  seg.header_ = h;
  seg.name_ = name;
  *out = std::move(seg);
  return Status::Ok();
}

Status ShmSegment::Attach(const std::string& name, ShmSegment* out, int timeout_ms,
                          const std::function<bool()>& creator_alive) {
  MPIGPU_RETURN_IF_ERROR(CheckName(name));
  if (out == nullptr) return Status(Err::kInvalidArg, "ShmSegment::Attach: null output");
  if (timeout_ms < 0) {
    return Status(Err::kInvalidArg, "ShmSegment::Attach: timeout_ms " + std::to_string(timeout_ms));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const char* waiting_for = "to exist";
  ShmSegment seg;
  for (;;) {
    if (!seg.region_.get_address()) {
      // Map it once it exists and the creator has sized it.
      try {
        bip::shared_memory_object shm(bip::open_only, name.c_str(), bip::read_write);
        // Only our own, private objects: one that another user made (or may open) could hold
        // anything, and our writes would reach them.
        struct stat st;
        if (fstat(shm.get_mapping_handle().handle, &st) != 0) return SysError("fstat(shm)");
        if (st.st_uid != geteuid() || (st.st_mode & 077) != 0)
        {
          char mode[8];
          std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
          return Status(Err::kSystem, "shared memory segment " + name + " belongs to " +
                                          OwnerName(st.st_uid) + " with mode " + mode +
                                          ": not this job's own; refused");
        }
        bip::offset_t size = 0;
        if (shm.get_size(size) && size >= static_cast<bip::offset_t>(kHeaderBytes)) {
          bip::mapped_region region(shm, bip::read_write);
          seg.region_.swap(region);
          seg.RegisterFileForPopulate(shm.get_mapping_handle().handle);
        } else {
          waiting_for = "to be sized";
        }
      } catch (const bip::interprocess_exception& e) {
        if (e.get_error_code() != bip::not_found_error) {
          return FromBoost("shm_open(" + name + ")", e);
        }
      }
    }
    if (seg.region_.get_address()) {
      auto* h = static_cast<SegmentHeader*>(seg.region_.get_address());
      if (HeaderPublished(h, kKind)) break;  // pairs with Create's PublishHeader
      waiting_for = "to be published";
    }
    if (creator_alive && !creator_alive())
      return Status(Err::kPeerFailed, "the process that creates shared memory segment " + name +
                                          " died before it was ready");
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status(Err::kTimeout, "shared memory segment " + name + " did not come " +
                                       waiting_for + " within " + std::to_string(timeout_ms) +
                                       " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  auto* h = static_cast<SegmentHeader*>(seg.region_.get_address());
  MPIGPU_RETURN_IF_ERROR(CheckHeader(h, kKind, name));
  // The payload bound keeps header + payload from overflowing; the object (mapped) must hold both.
  const bool consistent = h->header_bytes == kHeaderBytes && h->payload_bytes != 0 &&
                          h->payload_bytes <= kMaxPayloadBytes && h->nranks >= 1 &&
                          h->nranks <= kMaxRanks;
  MPIGPU_RETURN_IF_ERROR(CheckHeaderSizes(
      kKind, name, consistent,
      "header " + std::to_string(h->header_bytes) + " bytes, payload " +
          std::to_string(h->payload_bytes) + " bytes, nranks " + std::to_string(h->nranks),
      consistent ? kHeaderBytes + h->payload_bytes : 0, seg.region_.get_size()));
  int before = h->attached.fetch_add(1, std::memory_order_acq_rel);
  if (before >= h->nranks) {
    h->attached.fetch_sub(1, std::memory_order_acq_rel);
    return Status(Err::kInvalidArg, "segment " + name + ": all " + std::to_string(h->nranks) +
                                        " processes have attached already");
  }
  seg.header_ = h;
  seg.name_ = name;
  *out = std::move(seg);
  return Status::Ok();
}

bool ShmSegment::AllAttached() const {
  return header_->attached.load(std::memory_order_acquire) >= header_->nranks;
}

Status ShmSegment::Unlink() {
  if (!valid()) return Status(Err::kInvalidArg, "ShmSegment::Unlink on an empty segment");
  return Remove(name_);
}

Status ShmSegment::Remove(const std::string& name) {
  MPIGPU_RETURN_IF_ERROR(CheckName(name));
  errno = 0;
  if (bip::shared_memory_object::remove(name.c_str())) return Status::Ok();
  int err = errno;
  if (err == ENOENT) {
    return Status(Err::kInvalidArg, "no shared memory segment named " + name);
  }
  return SysError(("shm_unlink(" + name + ")").c_str(), err);
}

std::vector<std::string> FindStaleSegments() {
  std::vector<std::string> stale;
  const std::string prefix = ShmPrefix();
  DIR* dir = opendir(kShmDir);
  if (dir == nullptr) return stale;
  const time_t now = time(nullptr);
  while (struct dirent* ent = readdir(dir)) {
    const std::string name = ent->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    int fd = openat(dirfd(dir), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    unsigned char raw[sizeof(SegmentHeader)] = {};
    bool ours = fstat(fd, &st) == 0 && st.st_uid == getuid();
    ssize_t n = ours ? pread(fd, raw, sizeof raw, 0) : -1;
    close(fd);
    if (!ours) continue;

    uint64_t magic = 0;
    int32_t pid = 0;
    if (n == static_cast<ssize_t>(sizeof raw)) {
      std::memcpy(&magic, raw + offsetof(SegmentHeader, magic), sizeof magic);
      std::memcpy(&pid, raw + offsetof(SegmentHeader, creator_pid), sizeof pid);
    }
    bool dead;
    if (magic == ShmSegment::kMagic) {
      dead = !ProcessAlive(pid);  // a zombie creator counts as dead; another user's pid does not
    } else {
      dead = now - st.st_mtime > kUnpublishedGraceSec;
    }
    if (dead) stale.push_back(name);
  }
  closedir(dir);
  return stale;
}

Status RemoveStaleSegments() {
  Status first;
  for (const std::string& name : FindStaleSegments()) {
    Status st = ShmSegment::Remove(name);
    if (st.ok()) {
      MPIGPU_INFO("removed stale shared memory segment %s", name.c_str());
    } else if (st.code() != Err::kInvalidArg) {  // gone already: someone else cleaned it
      first.KeepFirst(st);
    }
  }
  return first;
}

}  // namespace mpigpu
