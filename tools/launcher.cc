#include "tools/launcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

#include "memcopy/process.h"

namespace mpigpu {
namespace launcher {
namespace {

Status Bad(const std::string& msg) { return Status(Err::kInvalidArg, msg); }

bool ParseRanks(const std::string& text, int* out) {
  if (text.empty() || text.size() > 9) return false;
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > kMaxRanks) return false;
  *out = v;
  return true;
}

bool ParseSeconds(const std::string& text, double* out) {
  // strtod alone would take " 5", "inf", "nan" and hex: accept plain decimals only.
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1e9) return false;
  *out = v;
  return true;
}

bool ValidVarName(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// "-x VAR" or "-x VAR=VAL" -> (VAR, value).
Status ParseExport(const std::string& text, const std::function<const char*(const char*)>& getenv,
                   std::pair<std::string, std::string>* out) {
  size_t eq = text.find('=');
  std::string name = text.substr(0, eq);
  if (!ValidVarName(name))
    return Bad("bad -x '" + text + "': expected VAR or VAR=VALUE with VAR a variable name");
  if (IsLauncherVariable(name))
    return Bad("bad -x '" + text + "': the launcher sets " + name + " for each rank");
  if (eq != std::string::npos) {
    *out = {name, text.substr(eq + 1)};
    return Status::Ok();
  }
  const char* value = getenv(name.c_str());
  if (value == nullptr)
    return Bad("bad -x '" + name + "': " + name +
               " is not set in the launcher's environment (use -x " + name + "=VALUE)");
  *out = {name, value};
  return Status::Ok();
}

const char* const kRankVariableNames[] = {
    "MPIGPU_RANK",          "MPIGPU_SIZE",
    "MPIGPU_LOCAL_RANK",    "MPIGPU_LOCAL_SIZE",
    "MPIGPU_JOBID",         "PMI_RANK",
    "PMI_SIZE",             "MPI_LOCALRANKID",
    "MPI_LOCALNRANKS",      "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_RANK",
    "WORLD_SIZE",
};

// Set where RankInfo has them (after the names above).
const char* const kInternalVariableNames[] = {kNodeMapVar,    kBootAddrVar,   kJobSecretVar,
                                              kCreatorPidVar, kLauncherFdVar, kJobCpusVar,
                                              kLauncherAddrVar};

// "CMD ARGS" split on spaces (no quoting: an agent that needs it goes in a script).
std::vector<std::string> SplitWords(const std::string& text) {
  std::vector<std::string> words;
  size_t at = 0;
  while ((at = text.find_first_not_of(' ', at)) != std::string::npos) {
    const size_t end = text.find(' ', at);
    words.push_back(text.substr(at, end == std::string::npos ? end : end - at));
    at = end;
  }
  return words;
}

}  // namespace

const char* BindToName(BindTo b) {
  switch (b) {
    case BindTo::kAuto: return "auto";
    case BindTo::kNone: return "none";
    case BindTo::kCore: return "core";
    case BindTo::kNuma: return "numa";
  }
  return "?";
}

Status ParseArgs(const std::vector<std::string>& args,
                 const std::function<const char*(const char*)>& getenv, Options* out) {
  *out = Options();
  bool host_list = false, host_file = false;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (word.size() < 2 || word[0] != '-') break;  // the program

    // Long options also take "--name=value".
    std::string name = word;
    std::string value;
    bool inline_value = false;
    size_t eq = word.find('=');
    if (word.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      name = word.substr(0, eq);
      value = word.substr(eq + 1);
      inline_value = true;
    }
    auto flag = [&](bool* field) {
      if (inline_value) return Bad("option " + name + " takes no value");
      *field = true;
      return Status::Ok();
    };
    auto take_value = [&]() {
      if (inline_value) return Status::Ok();
      if (i + 1 >= args.size()) return Bad("option " + name + " needs a value");
      value = args[++i];
      return Status::Ok();
    };

    if (name == "-h" || name == "--help") {
      MPIGPU_RETURN_IF_ERROR(flag(&out->help));
    } else if (name == "--version") {
      MPIGPU_RETURN_IF_ERROR(flag(&out->version));
    } else if (name == "--report-bindings") {
      MPIGPU_RETURN_IF_ERROR(flag(&out->report_bindings));
    } else if (name == "--tag-output") {
      MPIGPU_RETURN_IF_ERROR(flag(&out->tag_output));
    } else if (name == "-n" || name == "-np" || name == "--n" || name == "--np") {
      MPIGPU_RETURN_IF_ERROR(take_value());
      if (!ParseRanks(value, &out->nranks))
        return Bad("bad " + name + " '" + value + "': expected a whole number of ranks from 1 to " +
                   std::to_string(kMaxRanks));
    } else if (name == "--bind-to") {
      MPIGPU_RETURN_IF_ERROR(take_value());
      if (value == "none") {
        out->bind_to = BindTo::kNone;
      } else if (value == "core") {
        out->bind_to = BindTo::kCore;
      } else if (value == "numa") {
        out->bind_to = BindTo::kNuma;
      } else {
        return Bad("bad --bind-to '" + value + "': expected none, core or numa");
      }
    } else if (name == "--mps") {
      MPIGPU_RETURN_IF_ERROR(take_value());
      if (!ParseMpsMode(value, &out->mps))
        return Bad("bad --mps '" + value + "': expected auto, on or off");
    } else if (name == "--timeout") {
      MPIGPU_RETURN_IF_ERROR(take_value());
      if (!ParseSeconds(value, &out->timeout_s))
        return Bad("bad --timeout '" + value + "': expected seconds > 0 (e.g. 30 or 0.5)");
    } else if (name == "--host" || name == "-H") {
      MPIGPU_RETURN_IF_ERROR(take_value());
      if (host_file) return Bad("give --host or --hostfile, not both");
      host_list = true;
      MPIGPU_RETURN_IF_ERROR(ParseHostList(value, kMaxRanks, &out->hosts));
    } else if (name == "--hostfile") {
      MPIGPU_RETURN_IF_ERROR(take_value());
      if (host_list) return Bad("give --host or --hostfile, not both");
      host_file = true;
      MPIGPU_RETURN_IF_ERROR(ReadHostfile(value, kMaxRanks, &out->hosts));
    } else if (name == "--launch-agent") {
      MPIGPU_RETURN_IF_ERROR(take_value());
      out->launch_agent = SplitWords(value);
      if (out->launch_agent.empty()) return Bad("bad --launch-agent '" + value + "': no command");
    } else if (name == "-x") {
      MPIGPU_RETURN_IF_ERROR(take_value());
      std::pair<std::string, std::string> var;
      MPIGPU_RETURN_IF_ERROR(ParseExport(value, getenv, &var));
      out->exports.push_back(std::move(var));
    } else {
      return Bad("unknown option '" + word + "' (mpigpurun --help lists the options)");
    }
  }
  out->program.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());

  if (out->help || out->version) return Status::Ok();
  const int slots = TotalSlots(out->hosts);
  if (!out->hosts.empty() && out->nranks == 0) out->nranks = slots;
  if (out->nranks == 0) return Bad("the number of ranks is missing: give -n N");
  if (!out->hosts.empty() && out->nranks > slots)
    return Bad("-n " + std::to_string(out->nranks) + " is more than the " + std::to_string(slots) +
               " slot(s) of the hosts given");
  if (out->program.empty()) return Bad("no program given: mpigpurun -n N prog [args]");
  return Status::Ok();
}

std::string UsageText() {
  std::string t;
  t += "usage: mpigpurun -n N [options] prog [args...]\n";
  t += "Starts N ranks of prog on this node (or on the hosts given) and waits for them.\n\n";
  t += "options:\n";
  t += "  -n, -np N               number of ranks (1 to " + std::to_string(kMaxRanks) + ")\n";
  t += "  --bind-to none|core|numa\n";
  t += "                          core: rank r on core (r mod cores);\n";
  t += "                          numa: rank r on the NUMA node nearest its GPU (local rank mod\n";
  t += "                          visible GPUs), round robin over NUMA nodes without GPUs;\n";
  t += "                          none: no binding.\n";
  t += "                          default: none when N exceeds the cores, else numa when GPUs\n";
  t += "                          are visible, else core\n";
  t += "  --report-bindings       print each rank's binding to stderr\n";
  t += "  --tag-output            prefix every line a rank writes with \"[R]<stdout>:\" or\n";
  t += "                          \"[R]<stderr>:\" (R: its rank; Open MPI's form without the job\n";
  t += "                          number), on the launcher's stdout or stderr; lines of different\n";
  t += "                          ranks never mix mid-line (lines over 64 KiB go out in pieces,\n";
  t += "                          each tagged; a last line without a newline gets one)\n";
  t += "  --mps auto|on|off       MPS (CUDA Multi-Process Service) for ranks sharing a GPU.\n";
  t += "                          auto: when two or more of this host's ranks use one GPU (rank\n";
  t += "                          -> local rank mod visible GPUs) and no MPS serves it already,\n";
  t += "                          start a job-private control daemon (nvidia-cuda-mps-control -d,\n";
  t += "                          pipe and log in /tmp/mpigpu-mps-*), give this host's ranks its\n";
  t += "                          CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY, and stop it\n";
  t += "                          when the job ends (also if a rank or mpigpurun is killed);\n";
  t += "                          where it cannot start (no nvidia-cuda-mps-control, a MIG slice,\n";
  t += "                          prohibited compute mode, the daemon fails) one line, and the job\n";
  t += "                          runs without. on: the same for every GPU in use, shared or not,\n";
  t += "                          and the job fails if it cannot start. off: never. default: auto.\n";
  t += "                          Ranks on other hosts get none.\n";
  t += "  -x VAR[=VALUE]          set VAR in every rank (-x VAR: the launcher's value)\n";
  t += "  --timeout S             end the job after S seconds (exit status 124)\n";
  t += "  -H, --host H[:SLOTS],...\n";
  t += "                          run on these hosts, SLOTS ranks each (default 1): ranks fill\n";
  t += "                          them in order, host by host; -n defaults to all the slots\n";
  t += "  --hostfile F            the hosts from file F: one a line, 'host', 'host:N' or\n";
  t += "                          'host slots=N'; '#' starts a comment\n";
  t += "  --launch-agent \"CMD ARGS\"\n";
  t += "                          how ranks start on another host: `CMD ARGS host command`\n";
  t += "                          (default: ssh); the words are split on spaces\n";
  t += "  -h, --help              this text\n";
  t += "  --version               the version\n\n";
  t += "Each rank's environment gets MPIGPU_RANK, MPIGPU_SIZE, MPIGPU_LOCAL_RANK,\n";
  t += "MPIGPU_LOCAL_SIZE, MPIGPU_JOBID and PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS,\n";
  t += "OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK/LOCAL_SIZE, LOCAL_RANK, WORLD_SIZE, and the\n";
  t += "internal MPIGPU_LAUNCHER_FD, MPIGPU_CREATOR_PID and MPIGPU_JOB_CPUS (for the mpigpu\n";
  t += "library).\n\n";
  t += "Hosts: localhost, this machine's name and its IPv4 addresses are this node, where\n";
  t += "ranks start as without --host (binding, janitor). Ranks on other hosts run under the\n";
  t += "launch agent, which counts as the rank: its exit status is the rank's, and it gets\n";
  t += "SIGTERM/SIGKILL when the job ends. They get -x's variables and the launcher's MPIGPU_*\n";
  t += "settings, start in the launcher's directory when it exists there, and are not bound.\n";
  t += "A job on more than one host also gets MPIGPU_NODE_MAP and MPIGPU_BOOT_ADDR (the\n";
  t += "launcher's boot server); every rank on another host gets MPIGPU_LAUNCHER_ADDR (its link\n";
  t += "to the launcher, over TCP) and MPIGPU_JOB_SECRET (sent on the agent's stdin, never on a\n";
  t += "command line). Through that link the launcher learns that a remote rank joined and\n";
  t += "finalized, and the rank learns that the launcher died (it then ends). A remote rank whose\n";
  t += "link closes without MPIGPU_Finalize while its agent runs on fails the job 1 s later.\n";
  t += "CUDA_VISIBLE_DEVICES is passed as is; each program picks its GPU (mpigpu: local rank\n";
  t += "mod visible devices).\n\n";
  t += "If a rank fails (non-zero exit or signal, or exit 0 after MPIGPU_Init without\n";
  t += "MPIGPU_Finalize), the job times out, or the launcher gets SIGINT/SIGTERM, the other\n";
  t += "ranks get SIGTERM, then SIGKILL 2 s later, and the job's shared memory\n";
  t += "(/dev/shm/mpigpu-<uid>-<jobid>*, only entries this user owns) is removed. After a\n";
  t += "non-zero exit the others first get 0.5 s to end by themselves (and print their own\n";
  t += "error). A failure while ranks are still being started stops the start at once.\n";
  t += "If mpigpurun itself dies (even by SIGKILL), its ranks end too and a janitor process\n";
  t += "removes the job's shared memory.\n\n";
  t += "exit status: 0 when every rank exits 0; else the first failing rank's status (128+signal\n";
  t += "for a signal; 1 for a rank that exited without MPIGPU_Finalize or a remote rank whose\n";
  t += "link closed without it), 124 on timeout,\n";
  t += "128+signal when the launcher was signalled, 2 on bad usage, 127 when prog cannot be\n";
  t += "executed.\n";
  return t;
}

std::vector<std::pair<std::string, std::string>> RankVariables(const RankInfo& info,
                                                               const std::string& jobid) {
  const std::string rank = std::to_string(info.rank);
  const std::string size = std::to_string(info.size);
  const std::string local_rank = std::to_string(info.local_rank);
  const std::string local_size = std::to_string(info.local_size);
  // Same order as kRankVariableNames.
  const std::string values[] = {rank,       size, local_rank, local_size, jobid,
                                rank,       size, local_rank, local_size, rank,
                                size,       local_rank, local_size, local_rank, size};
  static_assert(sizeof(values) / sizeof(values[0]) ==
                    sizeof(kRankVariableNames) / sizeof(kRankVariableNames[0]),
                "one value per rank variable");
  std::vector<std::pair<std::string, std::string>> vars;
  for (size_t k = 0; k < sizeof(values) / sizeof(values[0]); ++k)
    vars.emplace_back(kRankVariableNames[k], values[k]);
  if (!info.node_map.empty()) vars.emplace_back(kNodeMapVar, info.node_map);
  if (!info.boot_addr.empty()) vars.emplace_back(kBootAddrVar, info.boot_addr);
  if (!info.job_secret.empty()) vars.emplace_back(kJobSecretVar, info.job_secret);
  if (info.creator_pid == 0) {
    vars.emplace_back(kCreatorPidVar, kSelfPidPlaceholder);
  } else if (info.creator_pid > 0) {
    vars.emplace_back(kCreatorPidVar, std::to_string(info.creator_pid));
  }
  if (info.launcher_fd >= 0) vars.emplace_back(kLauncherFdVar, std::to_string(info.launcher_fd));
  if (info.job_cpus > 0) vars.emplace_back(kJobCpusVar, std::to_string(info.job_cpus));
  if (!info.launcher_addr.empty()) vars.emplace_back(kLauncherAddrVar, info.launcher_addr);
  return vars;
}

bool IsLauncherVariable(const std::string& name) {
  for (const char* n : kRankVariableNames)
    if (name == n) return true;
  for (const char* n : kInternalVariableNames)
    if (name == n) return true;
  return false;
}

void WriteSelfPid(char* value, pid_t pid) {
  char digits[16];
  int n = 0;
  unsigned long v = pid > 0 ? static_cast<unsigned long>(pid) : 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 && n < static_cast<int>(sizeof(kSelfPidPlaceholder) - 1));
  for (int i = 0; i < n; ++i) value[i] = digits[n - 1 - i];
  value[n] = '\0';
}

std::vector<std::string> BuildRankEnv(const std::vector<std::string>& base,
                                      const std::vector<std::pair<std::string, std::string>>& exports,
                                      const RankInfo& info, const std::string& jobid) {
  std::vector<std::string> env;
  std::unordered_map<std::string, size_t> index;  // name -> position in env
  auto set = [&](const std::string& name, const std::string& entry) {
    auto it = index.find(name);
    if (it != index.end()) {
      env[it->second] = entry;
    } else {
      index.emplace(name, env.size());
      env.push_back(entry);
    }
  };
  for (const std::string& entry : base) {
    std::string name = entry.substr(0, entry.find('='));
    if (!IsLauncherVariable(name)) set(name, entry);  // an outer job's: the ones set below count
  }
  for (const auto& [name, value] : exports) set(name, name + "=" + value);
  for (const auto& [name, value] : RankVariables(info, jobid)) set(name, name + "=" + value);
  return env;
}

void SetEnvVar(std::vector<std::string>* env, const std::string& name, const std::string& value) {
  const std::string prefix = name + "=";
  for (std::string& e : *env)
    if (e.compare(0, prefix.size(), prefix) == 0) {
      e = prefix + value;
      return;
    }
  env->push_back(prefix + value);
}

int SweepShm(const std::string& dir, const std::string& prefix, std::vector<std::string>* failed,
             std::vector<ForeignEntry>* foreign) {
  if (prefix.empty()) return 0;  // never sweep a whole directory
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  const uid_t me = geteuid();
  int removed = 0;
  while (struct dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) != 0) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT && failed != nullptr)  // ENOENT: its owner removed it first
        failed->push_back(std::string(e->d_name) + ": " + std::strerror(errno));
      continue;
    }
    if (st.st_uid != me) {  // someone else's: not ours to remove, even where we could (root)
      if (foreign != nullptr) foreign->push_back(ForeignEntry{e->d_name, st.st_uid});
      continue;
    }
    if (unlinkat(dirfd(d), e->d_name, 0) == 0) {
      ++removed;
    } else if (errno != ENOENT && failed != nullptr) {
      failed->push_back(std::string(e->d_name) + ": " + std::strerror(errno));
    }
  }
  closedir(d);
  return removed;
}

std::string DescribeForeignEntries(const std::string& dir, const std::vector<ForeignEntry>& foreign) {
  if (foreign.empty()) return "";
  std::map<uid_t, int> owners;
  for (const ForeignEntry& f : foreign) ++owners[f.uid];
  std::string who;
  for (const auto& [uid, count] : owners) {
    if (!who.empty()) who += ", ";
    who += OwnerName(uid);
  }
  std::string names;
  const size_t shown = std::min<size_t>(foreign.size(), 3);
  for (size_t i = 0; i < shown; ++i) names += (i ? ", " : "") + foreign[i].name;
  if (foreign.size() > shown) names += ", ...";
  const std::string n = std::to_string(foreign.size());
  return n + (foreign.size() == 1 ? " name" : " names") + " in " + dir +
         " with this job's prefix " + (foreign.size() == 1 ? "belongs" : "belong") + " to " + who +
         ", not to this user; left in place (" + names + ")";
}

bool ParseLinkRecord(const char* data, size_t len, int size, char* kind, int* rank) {
  // "K N\n": one kind letter, a space, a decimal rank, a newline.
  if (len < 4 || len > 16 || (data[0] != 'J' && data[0] != 'F') || data[1] != ' ' ||
      data[len - 1] != '\n')
    return false;
  long v = 0;
  for (size_t i = 2; i + 1 < len; ++i) {
    if (data[i] < '0' || data[i] > '9') return false;
    v = v * 10 + (data[i] - '0');
    if (v >= size) return false;
  }
  *kind = data[0];
  *rank = static_cast<int>(v);
  return true;
}

RankEnd DescribeWaitStatus(int wait_status) {
  RankEnd end;
  if (WIFEXITED(wait_status)) {
    end.exit_code = WEXITSTATUS(wait_status);
    end.failed = end.exit_code != 0;
    end.what = "exited with status " + std::to_string(end.exit_code);
  } else if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    end.failed = true;
    end.exit_code = 128 + sig;
    const char* name = strsignal(sig);
    end.what = "was killed by signal " + std::to_string(sig) + " (" +
               (name ? name : "unknown") + ")" + (WCOREDUMP(wait_status) ? ", core dumped" : "");
  } else {
    end.failed = true;
    end.exit_code = 1;
    end.what = "ended with wait status " + std::to_string(wait_status);
  }
  return end;
}

}  // namespace launcher
}  // namespace mpigpu
