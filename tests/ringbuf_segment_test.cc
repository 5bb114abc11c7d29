// ShmSegment / JobSegment: create, attach, unlink, permissions, errors, stale cleanup.
#include "ringbuf/segment.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "memcopy/pattern.h"
#include "tests/ringbuf_test_util.h"

namespace mpigpu {
namespace {

using testing::FillPattern;
using testing::FirstMismatch;
using testing::ForkChild;
using testing::FreshSegmentName;
using testing::NameGuard;
using testing::WaitChild;

bool ShmExists(const std::string& name) {
  struct stat st;
  return stat(("/dev/shm/" + name).c_str(), &st) == 0;
}

TEST(SegmentNameTest, Format) {
  const std::string uid = std::to_string(getuid());
  EXPECT_EQ(SegmentName("abc123"), "mpigpu-" + uid + "-abc123");
  EXPECT_EQ(RingSegmentName("abc123", 2, 5, 0x0123456789abcdefull),
            "mpigpu-" + uid + "-abc123-ring-2-5-0123456789abcdef");
  // The ring's token is random: nobody outside the job can name its ring before it exists.
  uint64_t t1 = 0, t2 = 0;
  ASSERT_TRUE(RandomToken(&t1).ok());
  ASSERT_TRUE(RandomToken(&t2).ok());
  EXPECT_NE(t1, t2);
  std::string a, b;
  ASSERT_TRUE(RandomJobId(&a).ok());
  ASSERT_TRUE(RandomJobId(&b).ok());
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
}

// Another local user pre-creates a name this job will use (it watched /dev/shm): creating it
// fails naming that owner, attaching to it is refused (our writes must never reach another
// user's memory), and so is one of ours that others may open. Nothing of theirs is removed.
TEST(SegmentTest, SegmentsOfOtherUsersOrOpenToOthersAreRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a file owned by another user";
  const std::string name = FreshSegmentName("foreign");
  NameGuard guard{name};
  const std::string path = "/dev/shm/" + name;
  {
    ShmSegment made;
    ASSERT_TRUE(ShmSegment::Create(name, 4096, 2, &made).ok());
  }
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  ShmSegment seg;
  Status st = ShmSegment::Create(name, 4096, 2, &seg);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("belongs to"), std::string::npos) << st.ToString();
  EXPECT_NE(st.ToString().find("65534"), std::string::npos) << st.ToString();
  st = ShmSegment::Attach(name, &seg, 100);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("belongs to"), std::string::npos) << st.ToString();
  EXPECT_TRUE(ShmExists(name)) << "a foreign segment must not be removed";
  // Ours, but readable by others: refused too.
  ASSERT_EQ(chown(path.c_str(), geteuid(), getegid()), 0);
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  st = ShmSegment::Attach(name, &seg, 100);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("0644"), std::string::npos) << st.ToString();
}

TEST(SegmentTest, CreateAttachUnlink) {
  const std::string name = FreshSegmentName("cau");
  NameGuard guard{name};
  const size_t payload = 1 << 20;
  ShmSegment creator;
  Status st = JobSegment::Create(name, payload, 3, &creator);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(creator.valid());
  EXPECT_EQ(creator.payload_bytes(), payload);
  EXPECT_EQ(creator.creator_pid(), getpid());
  EXPECT_EQ(creator.nranks(), 3);
  EXPECT_EQ(creator.attached(), 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(creator.payload()) % 4096, 0u);
  FillPattern(creator.payload(), payload, 11);

  // A second process attaches, checks the creator's bytes and writes its own at the end.
  pid_t child = ForkChild(
      [&] {
        ShmSegment seg;
        if (!ShmSegment::Attach(name, &seg, 5000).ok()) return 1;
        if (seg.payload_bytes() != payload || seg.creator_pid() != getppid()) return 2;
        if (FirstMismatch(seg.payload(), payload / 2, 11) != -1) return 3;
        FillPattern(static_cast<char*>(seg.payload()) + payload / 2, payload / 2, 12);
        return 0;
      },
      30);
  ASSERT_EQ(WaitChild(child, 30), 0);
  EXPECT_EQ(FirstMismatch(static_cast<char*>(creator.payload()) + payload / 2, payload / 2, 12),
            -1);
  EXPECT_EQ(creator.attached(), 2);
  EXPECT_FALSE(creator.AllAttached());

  // The third attaches in this process: a second mapping of the same bytes.
  ShmSegment other;
  st = ShmSegment::Attach(name, &other, 1000);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_NE(other.payload(), creator.payload());
  EXPECT_EQ(FirstMismatch(other.payload(), payload / 2, 11), -1);
  EXPECT_TRUE(creator.AllAttached());
  EXPECT_TRUE(other.AllAttached());

  // A fourth is one too many.
  ShmSegment extra;
  st = ShmSegment::Attach(name, &extra, 100);
  EXPECT_EQ(st.code(), Err::kInvalidArg) << st.ToString();
  EXPECT_NE(st.message().find("attached already"), std::string::npos) << st.message();
  EXPECT_EQ(creator.attached(), 3);

  ASSERT_TRUE(ShmExists(name));
  st = creator.Unlink();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_FALSE(ShmExists(name));
  // Mappings outlive the name.
  EXPECT_EQ(FirstMismatch(other.payload(), payload / 2, 11), -1);
  FillPattern(creator.payload(), 4096, 13);
  EXPECT_EQ(FirstMismatch(other.payload(), 4096, 13), -1);
  EXPECT_EQ(ShmSegment::Remove(name).code(), Err::kInvalidArg);
}

TEST(SegmentTest, ModeIs0600EvenWithPermissiveUmask) {
  const std::string name = FreshSegmentName("mode");
  NameGuard guard{name};
  mode_t old = umask(0);
  ShmSegment seg;
  Status st = ShmSegment::Create(name, 4096, 1, &seg);
  umask(old);
  ASSERT_TRUE(st.ok()) << st.ToString();
  struct stat sb;
  ASSERT_EQ(stat(("/dev/shm/" + name).c_str(), &sb), 0);
  EXPECT_EQ(sb.st_mode & 0777, 0600u);
  EXPECT_EQ(sb.st_uid, getuid());
  EXPECT_GE(static_cast<size_t>(sb.st_size), ShmSegment::kHeaderBytes + 4096);
}

TEST(SegmentTest, SecondExclusiveCreateFails) {
  const std::string name = FreshSegmentName("excl");
  NameGuard guard{name};
  ShmSegment first, second;
  ASSERT_TRUE(ShmSegment::Create(name, 4096, 2, &first).ok());
  FillPattern(first.payload(), 4096, 3);
  Status st = ShmSegment::Create(name, 4096, 2, &second);
  EXPECT_EQ(st.code(), Err::kInvalidArg) << st.ToString();
  EXPECT_NE(st.message().find("already exists"), std::string::npos) << st.message();
  EXPECT_FALSE(second.valid());
  // The failed create left the first one alone.
  ASSERT_TRUE(ShmExists(name));
  EXPECT_EQ(FirstMismatch(first.payload(), 4096, 3), -1);
}

TEST(SegmentTest, BadArgumentsAreInvalidArg) {
  const std::string name = FreshSegmentName("bad");
  NameGuard guard{name};
  ShmSegment seg;
  EXPECT_EQ(ShmSegment::Create(name, 0, 2, &seg).code(), Err::kInvalidArg);
  EXPECT_EQ(ShmSegment::Create(name, ShmSegment::kMaxPayloadBytes + 1, 2, &seg).code(),
            Err::kInvalidArg);
  EXPECT_EQ(ShmSegment::Create(name, 4096, 0, &seg).code(), Err::kInvalidArg);
  EXPECT_EQ(ShmSegment::Create(name, 4096, -3, &seg).code(), Err::kInvalidArg);
  EXPECT_EQ(ShmSegment::Create(name, 4096, ShmSegment::kMaxRanks + 1, &seg).code(),
            Err::kInvalidArg);
  EXPECT_EQ(ShmSegment::Create(name, 4096, 2, nullptr).code(), Err::kInvalidArg);
  EXPECT_EQ(ShmSegment::Create("", 4096, 2, &seg).code(), Err::kInvalidArg);
  EXPECT_EQ(ShmSegment::Create("a/b", 4096, 2, &seg).code(), Err::kInvalidArg);
  EXPECT_EQ(ShmSegment::Create("..", 4096, 2, &seg).code(), Err::kInvalidArg);
  EXPECT_EQ(ShmSegment::Create(std::string(300, 'x'), 4096, 2, &seg).code(), Err::kInvalidArg);
  EXPECT_EQ(ShmSegment::Attach(name, &seg, -1).code(), Err::kInvalidArg);
  EXPECT_EQ(ShmSegment::Remove("a/b").code(), Err::kInvalidArg);
  EXPECT_FALSE(seg.valid());
  EXPECT_FALSE(ShmExists(name));  // no failed call left anything behind
  Status st = ShmSegment::Create(name, 4096, 0, &seg);
  EXPECT_NE(st.message().find("nranks 0"), std::string::npos) << st.message();
}

TEST(SegmentTest, LargerThanFreeShmIsNoMemory) {
  struct statvfs vfs;
  ASSERT_EQ(statvfs("/dev/shm", &vfs), 0);
  const size_t free_bytes = static_cast<size_t>(vfs.f_bavail) * vfs.f_frsize;
  const size_t ask = std::min(free_bytes * 10 + (size_t{1} << 30), ShmSegment::kMaxPayloadBytes);
  const std::string name = FreshSegmentName("big");
  NameGuard guard{name};
  ShmSegment seg;
  Status st = ShmSegment::Create(name, ask, 2, &seg);
  ASSERT_EQ(st.code(), Err::kNoMemory) << st.ToString();
  EXPECT_NE(st.message().find("/dev/shm has"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("MiB free"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("MPIGPU_CELLS_PER_RANK"), std::string::npos) << st.message();
  EXPECT_FALSE(ShmExists(name));
}

TEST(SegmentTest, AttachWaitsForALateCreator) {
  const std::string name = FreshSegmentName("late");
  NameGuard guard{name};
  // The child starts attaching before the segment exists.
  pid_t child = ForkChild(
      [&] {
        ShmSegment seg;
        if (!ShmSegment::Attach(name, &seg, 10000).ok()) return 1;
        return seg.creator_pid() == getppid() && seg.payload_bytes() == 8192 ? 0 : 2;
      },
      30);
  usleep(50 * 1000);
  ShmSegment seg;
  ASSERT_TRUE(ShmSegment::Create(name, 8192, 2, &seg).ok());
  EXPECT_EQ(WaitChild(child, 30), 0);
  EXPECT_EQ(seg.attached(), 2);
}

TEST(SegmentTest, AttachTimesOutWhenNothingAppears) {
  ShmSegment seg;
  Status st = ShmSegment::Attach(FreshSegmentName("never"), &seg, 30);
  EXPECT_EQ(st.code(), Err::kTimeout) << st.ToString();
  EXPECT_NE(st.message().find("did not come to exist"), std::string::npos) << st.message();
}

TEST(SegmentTest, AttachRejectsAnotherLayoutVersion) {
  const std::string name = FreshSegmentName("ver");
  NameGuard guard{name};
  ShmSegment seg;
  ASSERT_TRUE(ShmSegment::Create(name, 4096, 2, &seg).ok());
  auto* h = reinterpret_cast<SegmentHeader*>(static_cast<char*>(seg.payload()) -
                                             ShmSegment::kHeaderBytes);
  h->version = ShmSegment::kVersion + 1;
  ShmSegment other;
  Status st = ShmSegment::Attach(name, &other, 100);
  EXPECT_EQ(st.code(), Err::kInvalidArg) << st.ToString();
  EXPECT_NE(st.message().find("layout version"), std::string::npos) << st.message();
  EXPECT_EQ(seg.attached(), 1);
}

TEST(SegmentTest, StaleSegmentsAreFoundAndRemoved) {
  const std::string dead_name = FreshSegmentName("stale");
  const std::string live_name = FreshSegmentName("live");
  NameGuard g1{dead_name}, g2{live_name};
  ShmSegment live;
  ASSERT_TRUE(ShmSegment::Create(live_name, 4096, 2, &live).ok());
  // A child creates a segment and dies without removing it (as a crashed rank would).
  pid_t child = ForkChild(
      [&] {
        ShmSegment seg;
        return ShmSegment::Create(dead_name, 4096, 2, &seg).ok() ? 0 : 1;
      },
      30);
  ASSERT_EQ(WaitChild(child, 30), 0);  // reaped: its pid no longer exists
  ASSERT_TRUE(ShmExists(dead_name));

  std::vector<std::string> stale = FindStaleSegments();
  EXPECT_NE(std::find(stale.begin(), stale.end(), dead_name), stale.end());
  EXPECT_EQ(std::find(stale.begin(), stale.end(), live_name), stale.end());

  Status st = RemoveStaleSegments();
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_FALSE(ShmExists(dead_name));
  EXPECT_TRUE(ShmExists(live_name));
  stale = FindStaleSegments();
  EXPECT_EQ(std::find(stale.begin(), stale.end(), dead_name), stale.end());
}

TEST(SegmentTest, MovedFromSegmentIsEmpty) {
  const std::string name = FreshSegmentName("move");
  NameGuard guard{name};
  ShmSegment a;
  ASSERT_TRUE(ShmSegment::Create(name, 4096, 1, &a).ok());
  FillPattern(a.payload(), 4096, 5);
  ShmSegment b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): documented state
  ASSERT_TRUE(b.valid());
  EXPECT_EQ(FirstMismatch(b.payload(), 4096, 5), -1);
  EXPECT_EQ(b.name(), name);
}

}  // namespace
}  // namespace mpigpu
