// PopulateForWrite's path for kernels without MADV_POPULATE_WRITE (before 5.14), forced on this
// one: in a mount namespace of its own with a 1 MiB /dev/shm, giving memory to a sparse segment's
// tail that does not fit is kNoMemory, not a SIGBUS; a piece that fits is usable. Needs root
// (unshare, mount): skips saying why otherwise.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "ringbuf/populate.h"
#include "ringbuf/segment.h"

namespace mpigpu {
namespace {

constexpr int kSkip = 77;

std::string SegmentNameHere() {
  return "mpigpu-" + std::to_string(getuid()) + "-populate-" + std::to_string(getpid());
}

// A mount namespace of this process's own with a 1 MiB /dev/shm; false when it cannot be made.
bool TinyDevShm() {
  return unshare(CLONE_NEWNS) == 0 &&
         mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
         mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=1m") == 0;
}

// In the child: 0 when every check held, else the failed check's line.
int FillATinyDevShm() {
  if (!TinyDevShm()) return kSkip;
  ForcePopulateFallbackForTesting(true);
  if (!PopulateFallsBack()) return __LINE__;
  const size_t payload = size_t{8} << 20, sparse = payload - (size_t{64} << 10);
  ShmSegment seg;
  const std::string name = SegmentNameHere();
  Status st = ShmSegment::Create(name, payload, 1, &seg, -1, sparse);
  if (!st.ok()) return __LINE__;
  (void)seg.Unlink();
  char* tail = static_cast<char*>(seg.payload()) + (payload - sparse);
  // A piece that fits: its bytes are ours.
  st = PopulateForWrite(tail, size_t{128} << 10, "a small piece");
  if (!st.ok()) return __LINE__;
  std::memset(tail, 0x5A, size_t{128} << 10);
  // All of the tail (~8 MiB in a 1 MiB /dev/shm): an error, the process alive.
  st = PopulateForWrite(tail, sparse, "the whole tail");
  if (st.code() != Err::kNoMemory) return __LINE__;
  if (st.message().find("the whole tail") == std::string::npos) return __LINE__;
  if (tail[1000] != 0x5A) return __LINE__;
  return 0;
}

TEST(PopulateTest, AFullDevShmIsAnErrorOnTheFallbackPathNotASignal) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(FillATinyDevShm());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status)
                                    << " (SIGBUS is " << SIGBUS << ")";
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == kSkip)
    GTEST_SKIP() << "needs a mount namespace with its own /dev/shm (root: unshare, mount)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the check at line " << WEXITSTATUS(status) << " failed";
}

// The kernel's own path (where it has MADV_POPULATE_WRITE) says the same.
TEST(PopulateTest, AFullDevShmIsAnErrorWhateverThePath) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!TinyDevShm()) _exit(kSkip);
    ShmSegment seg;
    const size_t payload = size_t{8} << 20, sparse = payload - (size_t{64} << 10);
    const std::string name = SegmentNameHere();
    if (!ShmSegment::Create(name, payload, 1, &seg, -1, sparse).ok()) _exit(1);
    (void)seg.Unlink();
    char* tail = static_cast<char*>(seg.payload()) + (payload - sparse);
    _exit(PopulateForWrite(tail, sparse, "the whole tail").code() == Err::kNoMemory ? 0 : 2);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) == kSkip) GTEST_SKIP() << "needs root (unshare, mount)";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace mpigpu
