// Unit tests of the launcher's pieces: argument parser, rank environment (internal variables
// included), job id, /dev/shm sweep (another user's names), link records, wait status wording,
// binding plans.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e_util.h"
#include "tools/binding.h"
#include "ringbuf/segment.h"
#include "tools/hosts.h"
#include "tools/launcher.h"
#include "tools/remote_start.h"

namespace mpigpu {
namespace launcher {
namespace {

// An environment for -x VAR lookups.
const char* FakeEnv(const char* name) {
  static const std::map<std::string, std::string> env = {{"HOME", "/home/u"}, {"EMPTY", ""}};
  auto it = env.find(name);
  return it == env.end() ? nullptr : it->second.c_str();
}

Status Parse(const std::vector<std::string>& args, Options* out) {
  return ParseArgs(args, FakeEnv, out);
}

// The parse must fail, and its message must contain `needle`.
void ExpectBad(const std::vector<std::string>& args, const std::string& needle) {
  Options o;
  Status st = Parse(args, &o);
  std::string joined;
  for (const std::string& a : args) joined += "'" + a + "' ";
  ASSERT_FALSE(st.ok()) << joined;
  EXPECT_EQ(st.code(), Err::kInvalidArg) << joined;
  EXPECT_NE(st.message().find(needle), std::string::npos)
      << joined << "-> " << st.message() << " (wanted '" << needle << "')";
}

TEST(LauncherParse, MinimalCommand) {
  Options o;
  ASSERT_TRUE(Parse({"-n", "4", "./app"}, &o).ok());
  EXPECT_EQ(o.nranks, 4);
  EXPECT_EQ(o.bind_to, BindTo::kAuto);
  EXPECT_FALSE(o.report_bindings);
  EXPECT_EQ(o.timeout_s, 0);
  EXPECT_TRUE(o.exports.empty());
  EXPECT_EQ(o.program, std::vector<std::string>({"./app"}));
}

TEST(LauncherParse, EveryOption) {
  Options o;
  ASSERT_TRUE(Parse({"-np", "3", "--bind-to", "numa", "--report-bindings", "-x", "HOME", "-x",
                     "A=b=c", "--timeout", "2.5", "prog", "-n", "9", "--help"},
                    &o)
                  .ok());
  EXPECT_EQ(o.nranks, 3);
  EXPECT_EQ(o.bind_to, BindTo::kNuma);
  EXPECT_TRUE(o.report_bindings);
  EXPECT_DOUBLE_EQ(o.timeout_s, 2.5);
  ASSERT_EQ(o.exports.size(), 2u);
  EXPECT_EQ(o.exports[0], std::make_pair(std::string("HOME"), std::string("/home/u")));
  EXPECT_EQ(o.exports[1], std::make_pair(std::string("A"), std::string("b=c")));
  // Everything from the program on is the program's, options included.
  EXPECT_EQ(o.program, std::vector<std::string>({"prog", "-n", "9", "--help"}));
  EXPECT_FALSE(o.help);
  EXPECT_FALSE(o.tag_output);
  ASSERT_TRUE(Parse({"-n", "2", "--tag-output", "prog"}, &o).ok());
  EXPECT_TRUE(o.tag_output);
}

TEST(LauncherParse, SpellingsAndInlineValues) {
  Options o;
  ASSERT_TRUE(Parse({"--np=2", "--bind-to=core", "--timeout=7", "a"}, &o).ok());
  EXPECT_EQ(o.nranks, 2);
  EXPECT_EQ(o.bind_to, BindTo::kCore);
  EXPECT_DOUBLE_EQ(o.timeout_s, 7);
  ASSERT_TRUE(Parse({"--n", "5", "--bind-to", "none", "a"}, &o).ok());
  EXPECT_EQ(o.nranks, 5);
  EXPECT_EQ(o.bind_to, BindTo::kNone);
  ASSERT_TRUE(Parse({"-n", "1", "-n", "6", "a"}, &o).ok());  // the last one counts
  EXPECT_EQ(o.nranks, 6);
  ASSERT_TRUE(Parse({"-x", "EMPTY", "-n", "1", "a"}, &o).ok());  // set but empty is still set
  EXPECT_EQ(o.exports[0].second, "");
}

TEST(LauncherParse, DoubleDashEndsOptions) {
  Options o;
  ASSERT_TRUE(Parse({"-n", "2", "--", "-weird-name", "x"}, &o).ok());
  EXPECT_EQ(o.program, std::vector<std::string>({"-weird-name", "x"}));
}

TEST(LauncherParse, HelpAndVersionNeedNothingElse) {
  Options o;
  ASSERT_TRUE(Parse({"-h"}, &o).ok());
  EXPECT_TRUE(o.help);
  ASSERT_TRUE(Parse({"--help"}, &o).ok());
  EXPECT_TRUE(o.help);
  ASSERT_TRUE(Parse({"--version"}, &o).ok());
  EXPECT_TRUE(o.version);
  EXPECT_NE(UsageText().find("--bind-to"), std::string::npos);
  EXPECT_NE(UsageText().find("default:"), std::string::npos);
}

TEST(LauncherParse, BadRankCounts) {
  for (const char* n : {"0", "-1", "abc", "4x", "", "1.5", " 3", "4097", "99999999999"})
    ExpectBad({"-n", n, "a"}, std::string("bad -n '") + n + "'");
  ExpectBad({"-np", "0", "a"}, "bad -np '0'");
  ExpectBad({"a"}, "give -n N");
  ExpectBad({}, "give -n N");
  ExpectBad({"-n"}, "option -n needs a value");
}

TEST(LauncherParse, BadOptions) {
  ExpectBad({"-n", "2"}, "no program given");
  ExpectBad({"-n", "2", "--"}, "no program given");
  ExpectBad({"--frob", "-n", "2", "a"}, "unknown option '--frob'");
  ExpectBad({"-n", "2", "-q", "a"}, "unknown option '-q'");
  ExpectBad({"-n", "2", "--bind-to", "socket", "a"}, "bad --bind-to 'socket'");
  ExpectBad({"-n", "2", "--bind-to"}, "option --bind-to needs a value");
  ExpectBad({"-n", "2", "--report-bindings=yes", "a"}, "takes no value");
  ExpectBad({"-n", "2", "--tag-output=1", "a"}, "takes no value");
  ExpectBad({"--help=1"}, "takes no value");
  for (const char* t : {"0", "-1", "abc", "inf", "nan", "1e3", "", "0x10"})
    ExpectBad({"-n", "2", "--timeout", t, "a"}, std::string("bad --timeout '") + t + "'");
}

TEST(LauncherParse, BadExports) {
  ExpectBad({"-n", "2", "-x"}, "option -x needs a value");
  ExpectBad({"-n", "2", "-x", "NOT_SET_ANYWHERE", "a"}, "NOT_SET_ANYWHERE is not set");
  ExpectBad({"-n", "2", "-x", "=v", "a"}, "bad -x '=v'");
  ExpectBad({"-n", "2", "-x", "1A=v", "a"}, "bad -x '1A=v'");
  ExpectBad({"-n", "2", "-x", "A-B=v", "a"}, "bad -x 'A-B=v'");
  ExpectBad({"-n", "2", "-x", "MPIGPU_RANK=3", "a"}, "the launcher sets MPIGPU_RANK");
  ExpectBad({"-n", "2", "-x", "WORLD_SIZE=3", "a"}, "the launcher sets WORLD_SIZE");
}

std::map<std::string, std::string> AsMap(const std::vector<std::string>& env) {
  std::map<std::string, std::string> m;
  for (const std::string& e : env) {
    size_t eq = e.find('=');
    EXPECT_TRUE(m.emplace(e.substr(0, eq), e.substr(eq + 1)).second) << "duplicate " << e;
  }
  return m;
}

TEST(LauncherEnv, RankVariables) {
  const std::string jobid = "0123456789abcdef";
  RankInfo info{3, 8, 3, 8};
  auto env = AsMap(BuildRankEnv({}, {}, info, jobid));
  const std::map<std::string, std::string> want = {
      {"MPIGPU_RANK", "3"},          {"MPIGPU_SIZE", "8"},         {"MPIGPU_LOCAL_RANK", "3"},
      {"MPIGPU_LOCAL_SIZE", "8"},    {"MPIGPU_JOBID", jobid},      {"PMI_RANK", "3"},
      {"PMI_SIZE", "8"},             {"MPI_LOCALRANKID", "3"},     {"MPI_LOCALNRANKS", "8"},
      {"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"},
      {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"},
      {"LOCAL_RANK", "3"},           {"WORLD_SIZE", "8"}};
  EXPECT_EQ(env, want);
  for (const auto& [name, value] : want) EXPECT_TRUE(IsLauncherVariable(name)) << name;
  EXPECT_FALSE(IsLauncherVariable("CUDA_VISIBLE_DEVICES"));
}

TEST(LauncherEnv, BaseExportsAndRankVariablesLayer) {
  std::vector<std::string> base = {"PATH=/bin",           "KEEP=1",    "OVER=base",
                                   "MPIGPU_RANK=99",      "NOEQUALS",  "CUDA_VISIBLE_DEVICES=2,0",
                                   "WITH_EQ=a=b"};
  auto env = AsMap(BuildRankEnv(base, {{"OVER", "x"}, {"NEW", "y"}}, RankInfo{1, 2, 1, 2}, "ab"));
  EXPECT_EQ(env["PATH"], "/bin");
  EXPECT_EQ(env["KEEP"], "1");
  EXPECT_EQ(env["OVER"], "x");
  EXPECT_EQ(env["NEW"], "y");
  EXPECT_EQ(env["MPIGPU_RANK"], "1");  // a stale value from an outer job is replaced
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "2,0");  // passed through untouched
  EXPECT_EQ(env["WITH_EQ"], "a=b");
  EXPECT_EQ(env.count("NOEQUALS"), 1u);
  EXPECT_EQ(env["MPIGPU_JOBID"], "ab");
}

TEST(LauncherEnv, InternalVariables) {
  RankInfo info{2, 4, 2, 4};
  info.creator_pid = 1234;
  info.launcher_fd = 7;
  info.job_cpus = 3;
  auto env = AsMap(BuildRankEnv({}, {}, info, "ab"));
  EXPECT_EQ(env["MPIGPU_CREATOR_PID"], "1234");
  EXPECT_EQ(env["MPIGPU_LAUNCHER_FD"], "7");
  EXPECT_EQ(env["MPIGPU_JOB_CPUS"], "3");
  EXPECT_EQ(env.size(), 18u);
  // A remote rank's link: the launcher's link server.
  RankInfo remote{1, 2, 0, 1};
  remote.launcher_addr = "10.0.0.1:4000";
  EXPECT_EQ(AsMap(BuildRankEnv({}, {}, remote, "ab"))["MPIGPU_LAUNCHER_ADDR"], "10.0.0.1:4000");
  EXPECT_TRUE(IsLauncherVariable("MPIGPU_LAUNCHER_ADDR"));
  // Local rank 0: a placeholder the child fills in with its own pid.
  info.creator_pid = 0;
  EXPECT_EQ(AsMap(BuildRankEnv({}, {}, info, "ab"))["MPIGPU_CREATOR_PID"], kSelfPidPlaceholder);
  for (const char* name : {"MPIGPU_CREATOR_PID", "MPIGPU_LAUNCHER_FD", "MPIGPU_JOB_CPUS"}) {
    EXPECT_TRUE(IsLauncherVariable(name)) << name;
    ExpectBad({"-n", "2", "-x", std::string(name) + "=3", "a"}, std::string("the launcher sets ") + name);
  }
  // Not set (no link): an outer job's values do not leak into the rank.
  auto bare = AsMap(BuildRankEnv(
      {"MPIGPU_LAUNCHER_FD=5", "MPIGPU_CREATOR_PID=9", "MPIGPU_JOB_CPUS=8", "KEEP=1"}, {},
      RankInfo{0, 1, 0, 1}, "ab"));
  EXPECT_EQ(bare.count("MPIGPU_LAUNCHER_FD"), 0u);
  EXPECT_EQ(bare.count("MPIGPU_JOB_CPUS"), 0u);
  EXPECT_EQ(bare.count("MPIGPU_CREATOR_PID"), 0u);
  EXPECT_EQ(bare["KEEP"], "1");
}

TEST(LauncherEnv, WriteSelfPidFillsThePlaceholder) {
  for (pid_t pid : {1, 42, 12345, 4194304, 2147483647}) {
    std::string entry = std::string("MPIGPU_CREATOR_PID=") + kSelfPidPlaceholder;
    WriteSelfPid(&entry[std::strlen("MPIGPU_CREATOR_PID=")], pid);
    EXPECT_STREQ(entry.c_str(), ("MPIGPU_CREATOR_PID=" + std::to_string(pid)).c_str());
  }
}

TEST(LauncherLink, ParsesRecords) {
  char kind = 0;
  int rank = -1;
  auto parse = [&](const std::string& r, int size) {
    return ParseLinkRecord(r.data(), r.size(), size, &kind, &rank);
  };
  ASSERT_TRUE(parse("J 0\n", 1));
  EXPECT_EQ(kind, 'J');
  EXPECT_EQ(rank, 0);
  ASSERT_TRUE(parse("F 4095\n", 4096));
  EXPECT_EQ(kind, 'F');
  EXPECT_EQ(rank, 4095);
  for (const char* bad : {"", "J", "J \n", "J 1", "X 1\n", "J1\n", "J -1\n", "J 1x\n",
                          "J  1\n", "J 4\n", "J 99999999999999\n"})
    EXPECT_FALSE(parse(bad, 4)) << "'" << bad << "'";
}

TEST(LauncherJob, JobIdsAreRandomHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 16; ++i) {
    std::string id;
    ASSERT_TRUE(RandomJobId(&id).ok());
    ASSERT_EQ(id.size(), 16u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 16u);
  EXPECT_EQ(SegmentName("00ff"), "mpigpu-" + std::to_string(getuid()) + "-00ff");
}

TEST(LauncherJob, SweepRemovesOnlyTheJobsNames) {
  const std::string dir = ::mpigpu::testing::MakeTempDir("sweep");
  ASSERT_FALSE(HasFailure()) << "no scratch directory";
  const std::string prefix = "mpigpu-1000-0123456789abcdef";
  const std::vector<std::string> job = {prefix, prefix + "-ring-0-1", prefix + "-test"};
  const std::vector<std::string> others = {"mpigpu-1000-fedcba9876543210", "mpigpu-1000-0123",
                                           "other"};
  for (const auto& names : {job, others})
    for (const std::string& n : names) {
      int fd = open((dir + "/" + n).c_str(), O_CREAT | O_WRONLY, 0600);
      ASSERT_GE(fd, 0) << n;
      close(fd);
    }
  std::vector<std::string> failed;
  EXPECT_EQ(SweepShm(dir, prefix, &failed), 3);
  EXPECT_TRUE(failed.empty());
  for (const std::string& n : job) EXPECT_NE(access((dir + "/" + n).c_str(), F_OK), 0) << n;
  for (const std::string& n : others) EXPECT_EQ(access((dir + "/" + n).c_str(), F_OK), 0) << n;
  EXPECT_EQ(SweepShm(dir, "", &failed), 0);  // an empty prefix sweeps nothing
  EXPECT_EQ(SweepShm(dir + "/missing", prefix, &failed), 0);
  for (const std::string& n : others) unlink((dir + "/" + n).c_str());
  rmdir(dir.c_str());
}

// Another user made names with our job's prefix first (a shared /dev/shm): the sweep leaves them
// (even as root, who could remove them) and reports them, owner named, in one line.
TEST(LauncherJob, SweepLeavesOtherUsersNames) {
  const std::string dir = ::mpigpu::testing::MakeTempDir("sweep-foreign");
  ASSERT_FALSE(HasFailure()) << "no scratch directory";
  const std::string prefix = "mpigpu-1000-00112233aabbccdd";
  const uid_t other = geteuid() == 65534 ? 65533 : 65534;
  const std::vector<std::string> mine = {prefix, prefix + "-ring-0-1"};
  std::vector<std::string> theirs;
  for (int i = 0; i < 64; ++i) theirs.push_back(prefix + "-ring-" + std::to_string(i) + "-9");
  for (const auto& names : {mine, theirs})
    for (const std::string& n : names) {
      int fd = open((dir + "/" + n).c_str(), O_CREAT | O_WRONLY, 0600);
      ASSERT_GE(fd, 0) << n;
      close(fd);
    }
  for (const std::string& n : theirs)
    if (chown((dir + "/" + n).c_str(), other, other) != 0)
      GTEST_SKIP() << "cannot give a file to uid " << other << " (not root): "
                   << std::strerror(errno);
  std::vector<std::string> failed;
  std::vector<ForeignEntry> foreign;
  EXPECT_EQ(SweepShm(dir, prefix, &failed, &foreign), 2);
  EXPECT_TRUE(failed.empty()) << failed[0];
  for (const std::string& n : mine) EXPECT_NE(access((dir + "/" + n).c_str(), F_OK), 0) << n;
  for (const std::string& n : theirs) EXPECT_EQ(access((dir + "/" + n).c_str(), F_OK), 0) << n;
  ASSERT_EQ(foreign.size(), theirs.size());
  for (const ForeignEntry& f : foreign) EXPECT_EQ(f.uid, other) << f.name;

  const std::string line = DescribeForeignEntries(dir, foreign);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.rfind("64 names in " + dir + " with this job's prefix belong to ", 0), 0u) << line;
  EXPECT_NE(line.find("uid " + std::to_string(other)), std::string::npos) << line;
  if (struct passwd* pw = getpwuid(other)) {
    EXPECT_NE(line.find(std::string("user ") + pw->pw_name + " (uid "), std::string::npos) << line;
  }
  EXPECT_NE(line.find("left in place (" + foreign[0].name + ", "), std::string::npos) << line;
  EXPECT_LT(line.size(), 400u) << "one short line, not one per name";
  EXPECT_EQ(DescribeForeignEntries(dir, {}), "");
  // Without the out-parameters it still leaves them.
  EXPECT_EQ(SweepShm(dir, prefix), 0);
  for (const std::string& n : theirs) {
    EXPECT_EQ(access((dir + "/" + n).c_str(), F_OK), 0) << n;
    unlink((dir + "/" + n).c_str());
  }
  rmdir(dir.c_str());
}

TEST(LauncherJob, WaitStatusWording) {
  RankEnd ok = DescribeWaitStatus(0);  // exited 0
  EXPECT_FALSE(ok.failed);
  EXPECT_EQ(ok.exit_code, 0);
  RankEnd three = DescribeWaitStatus(3 << 8);
  EXPECT_TRUE(three.failed);
  EXPECT_EQ(three.exit_code, 3);
  EXPECT_EQ(three.what, "exited with status 3");
  RankEnd killed = DescribeWaitStatus(SIGKILL);
  EXPECT_TRUE(killed.failed);
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL);
  EXPECT_EQ(killed.what, "was killed by signal 9 (Killed)");
}

TEST(LauncherBinding, PlansOnePerRank) {
  BindingPlan plan;
  ASSERT_TRUE(PlanBindings(BindTo::kNone, 3, &plan).ok());
  EXPECT_EQ(plan.policy, BindTo::kNone);
  ASSERT_EQ(plan.ranks.size(), 3u);
  for (const RankBinding& b : plan.ranks) EXPECT_EQ(DescribeBinding(b), "not bound");

  const int ncpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  for (BindTo policy : {BindTo::kCore, BindTo::kNuma}) {
    ASSERT_TRUE(PlanBindings(policy, 5, &plan).ok()) << BindToName(policy);
    EXPECT_EQ(plan.policy, policy);
    ASSERT_EQ(plan.ranks.size(), 5u);
    for (const RankBinding& b : plan.ranks) {
      ASSERT_TRUE(b.bound);
      EXPECT_GT(CPU_COUNT(&b.cpus), 0);
      EXPECT_LE(CPU_COUNT(&b.cpus), ncpus);
      EXPECT_EQ(DescribeBinding(b).rfind("bound to cpus ", 0), 0u) << DescribeBinding(b);
    }
  }
  // Oversubscribed: auto binds nothing.
  ASSERT_TRUE(PlanBindings(BindTo::kAuto, ncpus * 4, &plan).ok());
  EXPECT_EQ(plan.policy, BindTo::kNone);
}

// ---- hosts (--host, --hostfile, --launch-agent) ----

TEST(LauncherHosts, HostListSlotsAndDefaultRanks) {
  Options o;
  ASSERT_TRUE(Parse({"--host", "a:2,b,c:3", "./app"}, &o).ok());
  ASSERT_EQ(o.hosts.size(), 3u);
  EXPECT_EQ(o.hosts[0].name, "a");
  EXPECT_EQ(o.hosts[0].slots, 2);
  EXPECT_EQ(o.hosts[1].slots, 1);
  EXPECT_EQ(o.nranks, 6);  // -n omitted: every slot
  EXPECT_EQ(o.launch_agent, std::vector<std::string>({"ssh"}));
  ASSERT_TRUE(Parse({"-n", "2", "-H", "a,a", "--launch-agent", " ssh  -p 22 ", "./app"}, &o).ok());
  ASSERT_EQ(o.hosts.size(), 1u);  // a repeated host adds its slots
  EXPECT_EQ(o.hosts[0].slots, 2);
  EXPECT_EQ(o.launch_agent, std::vector<std::string>({"ssh", "-p", "22"}));
}

TEST(LauncherHosts, BadHosts) {
  ExpectBad({"-n", "8", "--host", "a:2,b:2", "./app"}, "-n 8 is more than the 4 slot(s)");
  ExpectBad({"--host", "a,,b", "./app"}, "empty host name");
  ExpectBad({"--host", "", "./app"}, "empty host name");
  ExpectBad({"--host", "a:0", "./app"}, "bad slots '0'");
  ExpectBad({"--host", "a:x", "./app"}, "bad slots 'x'");
  ExpectBad({"--host", "a:", "./app"}, "bad slots ''");
  ExpectBad({"--host", "-oProxyCommand=x", "./app"}, "bad host name");
  ExpectBad({"--host", "a:4000,b:97", "./app"}, "more than 4096 slots");
  ExpectBad({"--hostfile", "/nonexistent/hosts", "./app"}, "cannot read host file");
  ExpectBad({"--launch-agent", "  ", "-n", "1", "./app"}, "bad --launch-agent");
}

TEST(LauncherHosts, Hostfile) {
  std::vector<HostSlots> hosts;
  ASSERT_TRUE(ParseHostfile("# cluster\n\nn1\nn2:4  # four\n  n3 slots=2\n", "f", 100, &hosts).ok());
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].slots, 1);
  EXPECT_EQ(hosts[1].name, "n2");
  EXPECT_EQ(hosts[1].slots, 4);
  EXPECT_EQ(hosts[2].slots, 2);
  hosts.clear();
  Status st = ParseHostfile("n1\nn2 cpus=3\n", "f", 100, &hosts);
  EXPECT_NE(st.message().find("host file f line 2"), std::string::npos) << st.message();
  hosts.clear();
  EXPECT_FALSE(ParseHostfile("n1 slots=0\n", "f", 100, &hosts).ok());
  hosts.clear();
  EXPECT_FALSE(ParseHostfile("# nothing\n", "f", 100, &hosts).ok());
  const std::string path = testing::MakeTempDir("hostfile") + "/hosts";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("x slots=2\ny\n", f);
  std::fclose(f);
  Options o;
  ASSERT_TRUE(Parse({"--hostfile", path, "./app"}, &o).ok());
  EXPECT_EQ(o.nranks, 3);
  ExpectBad({"--hostfile", path, "--host", "a", "./app"}, "not both");
}

TEST(LauncherHosts, PlacementFillsHostsInOrder) {
  auto local = [](const std::string& h) { return h == "me" || h == "127.0.0.1"; };
  Placement p = PlaceRanks({{"me", 2}, {"b", 2}, {"c", 2}}, 5, local);
  EXPECT_EQ(p.node_of, std::vector<int>({0, 0, 1, 1, 2}));
  EXPECT_EQ(p.local_rank, std::vector<int>({0, 1, 0, 1, 0}));
  EXPECT_EQ(p.local_size, std::vector<int>({2, 2, 1}));
  EXPECT_EQ(p.local_node, 0);
  // Two names of the launcher's host are one node; nodes are numbered as they get ranks.
  p = PlaceRanks({{"b", 1}, {"me", 1}, {"127.0.0.1", 1}}, 3, local);
  EXPECT_EQ(p.node_of, std::vector<int>({0, 1, 1}));
  EXPECT_EQ(p.local_rank, std::vector<int>({0, 0, 1}));
  EXPECT_EQ(p.local_node, 1);
  EXPECT_EQ(p.node_host, std::vector<std::string>({"b", "me"}));
  p = PlaceRanks({{"b", 4}, {"c", 4}}, 2, local);  // c gets none
  EXPECT_EQ(p.nodes(), 1);
  EXPECT_EQ(p.local_node, -1);
}

TEST(LauncherHosts, WhichHostIsThisOne) {
  LocalIdentity me{"node7", {"127.0.0.1", "10.0.0.5"}};
  for (const char* h : {"localhost", "node7", "127.0.0.1", "10.0.0.5"}) EXPECT_TRUE(IsLocalHost(h, me)) << h;
  for (const char* h : {"127.0.0.2", "node70", "10.0.0.50", ""}) EXPECT_FALSE(IsLocalHost(h, me)) << h;
  LocalIdentity real = ThisHost();
  EXPECT_TRUE(IsLocalHost("127.0.0.1", real));
  EXPECT_FALSE(IsLocalHost("127.0.0.2", real));
}

TEST(LauncherHosts, RemoteCommandQuotesEveryWord) {
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  const std::string cmd =
      RemoteCommand({{"A", "x y"}, {"B", "q'uote"}}, {"/bin/prog", "$HOME", "a;b"}, "/w d", true);
  // What the remote login shell runs: sh -c with the script as one quoted word.
  EXPECT_EQ(cmd.rfind("sh -c '", 0), 0u) << cmd;
  EXPECT_NE(cmd.find("IFS= read -r MPIGPU_JOB_SECRET"), std::string::npos) << cmd;
  // Run the script here with the secret on stdin: each word arrives as it was.
  const std::string dir = testing::MakeTempDir("remote-cmd");
  const std::string script = RemoteCommand(
      {{"A", "x y"}, {"B", "q'uote"}}, {"/bin/sh", "-c",
       "printf '%s|%s|%s|%s|%s' \"$A\" \"$B\" \"$MPIGPU_JOB_SECRET\" \"$0\" \"$(pwd)\" > out",
       "a;b $x"}, dir, true);
  const std::string run = "echo 0123abcd | sh -c " + ShellQuote(script);
  ASSERT_EQ(std::system(run.c_str()), 0) << run;
  EXPECT_EQ(testing::ReadFile(dir + "/out"), "x y|q'uote|0123abcd|a;b $x|" + dir);
}

TEST(LauncherHosts, RemoteRanksGetSettingsExportsAndTheirVariables) {
  RankInfo info;
  info.rank = 2;
  info.size = 4;
  info.node_map = "0*2,1*2";
  auto vars = RemoteRankVariables({"MPIGPU_EAGER_LIMIT=4K", "HOME=/h", "MPIGPU_RANK=9"},
                                  {{"X", "1"}}, info, "abc");
  std::map<std::string, std::string> m(vars.begin(), vars.end());
  EXPECT_EQ(m["MPIGPU_EAGER_LIMIT"], "4K");
  EXPECT_EQ(m.count("HOME"), 0u);
  EXPECT_EQ(m["X"], "1");
  EXPECT_EQ(m["MPIGPU_RANK"], "2");
  EXPECT_EQ(m["MPIGPU_NODE_MAP"], "0*2,1*2");
  EXPECT_EQ(m.count("MPIGPU_JOB_SECRET"), 0u);
  EXPECT_TRUE(IsLauncherVariable("MPIGPU_JOB_SECRET"));
  EXPECT_TRUE(IsLauncherVariable("MPIGPU_BOOT_ADDR"));
  EXPECT_TRUE(IsLauncherVariable("MPIGPU_NODE_MAP"));
  std::string ip;
  ASSERT_TRUE(AddressTowards("127.0.0.2", &ip).ok());
  EXPECT_EQ(ip.rfind("127.", 0), 0u) << ip;
}

}  // namespace
}  // namespace launcher
}  // namespace mpigpu
