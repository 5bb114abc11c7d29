#include "internode/pmix/pmix_bootstrap.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "internode/pmix/pmix_ended.h"
#include "internode/pmix/pmix_lib.h"
#include "memcopy/clock.h"
#include "memcopy/log.h"
#include "transport/core/job_secret.h"
#include "transport/transport_config.h"

namespace mpigpu::internode {
namespace {

using transport::JobInfo;

constexpr size_t kMaxCard = 4096;   // a card from PMIx larger than this is refused
constexpr long kMaxRanks = 1 << 20;
constexpr char kSecretKey[] = "mpigpu.secret";
constexpr char kAddrKey[] = "mpigpu.ifaddrs";

// Set by PMIx's progress thread when this client lost its server (the launcher's daemon here);
// read by LauncherGone and the fence's wait. One PMIx client per process, hence a global.
std::atomic<bool> g_server_lost{false};

void OnLostServer(size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t*, size_t,
                  pmix_info_t*, size_t, pmix_event_notification_cbfunc_fn_t cbfunc,
                  void* cbdata) {
  g_server_lost.store(true, std::memory_order_release);
  if (cbfunc != nullptr) cbfunc(PMIX_EVENT_NO_ACTION_TAKEN, nullptr, 0, nullptr, nullptr, cbdata);
}

// pmix_info_t rows built by hand: PMIx's macros call into the library, which is not linked.
pmix_info_t InfoBool(const char* key, bool v) {
  pmix_info_t i;
  std::memset(&i, 0, sizeof i);
  std::strncpy(i.key, key, PMIX_MAX_KEYLEN);
  i.value.type = PMIX_BOOL;
  i.value.data.flag = v;
  return i;
}

pmix_info_t InfoInt(const char* key, int v) {
  pmix_info_t i;
  std::memset(&i, 0, sizeof i);
  std::strncpy(i.key, key, PMIX_MAX_KEYLEN);
  i.value.type = PMIX_INT;
  i.value.data.integer = v;
  return i;
}

pmix_proc_t Proc(const pmix_proc_t& me, pmix_rank_t rank) {
  pmix_proc_t p;
  std::memset(&p, 0, sizeof p);
  std::memcpy(p.nspace, me.nspace, sizeof p.nspace);
  p.rank = rank;
  return p;
}

// An integer PMIx value of any width; false for other types.
bool AsInt(const pmix_value_t* v, long long* out) {
  switch (v->type) {
    case PMIX_UINT32: *out = v->data.uint32; return true;
    case PMIX_INT32: *out = v->data.int32; return true;
    case PMIX_INT: *out = v->data.integer; return true;
    case PMIX_UINT: *out = v->data.uint; return true;
    case PMIX_UINT16: *out = v->data.uint16; return true;
    case PMIX_UINT64: *out = static_cast<long long>(v->data.uint64); return true;
    case PMIX_INT64: *out = v->data.int64; return true;
    case PMIX_PROC_RANK: *out = v->data.rank; return true;
    default: return false;
  }
}

int TimeoutArg(double seconds) { return seconds < 1 ? 1 : static_cast<int>(seconds + 0.999); }

// This host's up, non-loopback IPv4 addresses with their prefix lengths ("10.0.0.1/24,...").
std::string InterfaceAddresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || i->ifa_netmask == nullptr)
      continue;
    if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
    char text[INET_ADDRSTRLEN];
    const in_addr a = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr;
    const uint32_t mask = ntohl(reinterpret_cast<sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr);
    ::inet_ntop(AF_INET, &a, text, sizeof text);
    out += (out.empty() ? "" : ",") + std::string(text) + "/" +
           std::to_string(__builtin_popcount(mask));
  }
  ::freeifaddrs(list);
  return out;
}

struct Ipv4Net {
  uint32_t addr = 0;  // host order
  int prefix = 0;
  std::string text;
  bool Contains(uint32_t other) const {
    const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
    return (addr & mask) == (other & mask);
  }
};

std::vector<Ipv4Net> ParseAddresses(const std::string& list) {
  std::vector<Ipv4Net> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t slash = item.find('/');
    Ipv4Net n;
    n.text = item.substr(0, slash);
    in_addr a{};
    if (::inet_pton(AF_INET, n.text.c_str(), &a) != 1) continue;
    n.addr = ntohl(a.s_addr);
    const long prefix =
        slash == std::string::npos ? 32 : std::strtol(item.c_str() + slash + 1, nullptr, 10);
    if (prefix < 0 || prefix > 32) continue;
    n.prefix = static_cast<int>(prefix);
    out.push_back(n);
  }
  return out;
}

// The source address of this host's route to `to` (a UDP connect sends nothing); "" if none.
std::string RouteSource(uint32_t to) {
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return "";
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(9);
  a.sin_addr.s_addr = htonl(to);
  std::string out;
  socklen_t n = sizeof a;
  char text[INET_ADDRSTRLEN];
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &n) == 0 &&
      ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text) != nullptr)
    out = text;
  ::close(s);
  return out;
}

// A non-blocking fence's completion. Heap-allocated: on a timeout it is left to PMIx, which may
// still call back (and the arrays must stay valid while PMIx holds them).
struct FenceWait {
  std::atomic<bool> done{false};
  std::atomic<int> status{PMIX_SUCCESS};
  pmix_proc_t all;
  pmix_info_t info[2];
};

void FenceDone(pmix_status_t rc, void* arg) {
  auto* w = static_cast<FenceWait*>(arg);
  w->status.store(rc, std::memory_order_relaxed);
  w->done.store(true, std::memory_order_release);  // -> the acquire in Fence's wait
}

}  // namespace

struct PmixBootstrap::Impl {
  const PmixLib* lib = nullptr;
  pmix_proc_t me;
  int size = 0;
  bool broken = false;  // an exchange timed out: PMIx may still hold a fence of ours

  // Every rank's data committed so far, collected to every rank, within timeout_s.
  Status Fence(double timeout_s) {
    auto* w = new FenceWait();
    w->all = Proc(me, PMIX_RANK_WILDCARD);
    w->info[0] = InfoBool(PMIX_COLLECT_DATA, true);
    w->info[1] = InfoInt(PMIX_TIMEOUT, TimeoutArg(timeout_s));
    pmix_status_t rc = lib->FenceNb(&w->all, 1, w->info, 2, FenceDone, w);
    if (rc != PMIX_SUCCESS) {
      delete w;
      return Status(Err::kSystem, "pmix: PMIx_Fence_nb: " + lib->Error(rc));
    }
    const double deadline = MonotonicSeconds() + timeout_s;
    while (!w->done.load(std::memory_order_acquire)) {
      if (g_server_lost.load(std::memory_order_acquire)) {
        broken = true;  // w stays with PMIx
        return Status(Err::kPeerFailed, "pmix: the launcher's PMIx server is gone");
      }
      if (MonotonicSeconds() > deadline) {
        broken = true;
        return Status(Err::kTimeout, "pmix: the job's ranks did not all reach the exchange within " +
                                         std::to_string(TimeoutArg(timeout_s)) +
                                         " s (MPIGPU_BOOTSTRAP_TIMEOUT)");
      }
      ::usleep(200);
    }
    rc = w->status.load(std::memory_order_relaxed);
    delete w;
    if (rc == PMIX_SUCCESS) return Status::Ok();
    // The server's own timeout (PMIX_TIMEOUT, the same length) may fire first: same message.
    if (rc == PMIX_ERR_TIMEOUT)
      return Status(Err::kTimeout, "pmix: the job's ranks did not all reach the exchange within " +
                                       std::to_string(TimeoutArg(timeout_s)) +
                                       " s (MPIGPU_BOOTSTRAP_TIMEOUT; the PMIx server's timeout)");
    broken = true;
    return Status(Err::kPeerFailed, "pmix: the exchange failed: " + lib->Error(rc));
  }

  Status Put(const std::string& key, const std::string& bytes) {
    pmix_value_t v;
    std::memset(&v, 0, sizeof v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = const_cast<char*>(bytes.data());  // PMIx_Put copies it
    v.data.bo.size = bytes.size();
    const pmix_status_t rc = lib->Put(PMIX_GLOBAL, key.c_str(), &v);
    if (rc != PMIX_SUCCESS) return Status(Err::kSystem, "pmix: PMIx_Put " + key + ": " + lib->Error(rc));
    return Status::Ok();
  }

  // Rank r's bytes under `key` (Put as a byte object), at most max_bytes.
  Status GetBytes(int r, const std::string& key, size_t max_bytes, double timeout_s,
                  std::string* out) {
    const pmix_proc_t p = Proc(me, static_cast<pmix_rank_t>(r));
    pmix_info_t info = InfoInt(PMIX_TIMEOUT, TimeoutArg(timeout_s));
    pmix_value_t* v = nullptr;
    const pmix_status_t rc = lib->Get(&p, key.c_str(), &info, 1, &v);
    if (rc != PMIX_SUCCESS)
      return Status(rc == PMIX_ERR_TIMEOUT ? Err::kTimeout : Err::kPeerFailed,
                    "pmix: rank " + std::to_string(r) + "'s " + key + ": " + lib->Error(rc));
    Status st;
    if (v == nullptr || v->type != PMIX_BYTE_OBJECT || v->data.bo.size > max_bytes)
      st = Status(Err::kInvalidArg, "pmix: rank " + std::to_string(r) + "'s " + key +
                                        " is not bytes of at most " + std::to_string(max_bytes));
    else
      out->assign(v->data.bo.bytes ? v->data.bo.bytes : "", v->data.bo.size);
    lib->Release(v);
    return st;
  }

  // A job-level or per-rank value the server holds locally (PMIX_OPTIONAL: no request to
  // other nodes); nullptr when it has none. The caller releases it.
  pmix_value_t* Lookup(pmix_rank_t r, const char* key) {
    const pmix_proc_t p = Proc(me, r);
    pmix_info_t info = InfoBool(PMIX_OPTIONAL, true);
    pmix_value_t* v = nullptr;
    if (lib->Get(&p, key, &info, 1, &v) != PMIX_SUCCESS) return nullptr;
    return v;
  }
};

bool PmixBootstrap::Launched() {
  const char* rank = std::getenv("PMIX_RANK");
  const char* ns = std::getenv("PMIX_NAMESPACE");
  return rank != nullptr && *rank != '\0' && ns != nullptr && *ns != '\0';
}

PmixBootstrap::PmixBootstrap(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PmixBootstrap::~PmixBootstrap() {
  // No fence in it: ranks finalize on their own, and a launcher that is gone does not block it.
  if (impl_ && impl_->lib) (void)impl_->lib->Finalize(nullptr, 0);
}

Status PmixBootstrap::Start(JobInfo* job) {
  const char* ns = std::getenv("PMIX_NAMESPACE");
  const std::string started = std::string("started by a PMIx launcher (PMIX_NAMESPACE=") +
                              (ns ? ns : "") + ")";
  const PmixLib* lib = nullptr;
  Status st = PmixLib::Load(&lib);
  if (!st.ok()) return Status(st.code(), started + ", but " + st.message());
  auto impl = std::make_unique<Impl>();
  impl->lib = lib;
  std::memset(&impl->me, 0, sizeof impl->me);
  const pmix_status_t rc = lib->Init(&impl->me, nullptr, 0);
  if (rc != PMIX_SUCCESS)
    return Status(Err::kSystem, started + ", but PMIx_Init failed: " + lib->Error(rc));
  std::shared_ptr<PmixBootstrap> b(new PmixBootstrap(std::move(impl)));
  pmix_status_t codes[] = {PMIX_ERR_LOST_CONNECTION, PMIX_ERR_LOST_CONNECTION_TO_SERVER};
  const pmix_status_t reg = lib->RegisterEventHandler(codes, 2, nullptr, 0, OnLostServer,
                                                      nullptr, nullptr);
  if (reg < 0)
    MPIGPU_WARN("pmix: no handler for a lost PMIx server (%s): a rank notices its launcher's "
                "end only through its peers", lib->Error(reg).c_str());
  MPIGPU_RETURN_IF_ERROR(b->Describe(job));
  b->ended_ = PmixEnded::Start(lib, b->impl_->me, b->impl_->size);
  job->launcher_boot = b;
  return Status::Ok();
}

Status PmixBootstrap::Describe(JobInfo* job) {
  Impl& m = *impl_;
  *job = JobInfo();
  pmix_value_t* v = m.Lookup(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
  long long size = 0;
  const bool have_size = v != nullptr && AsInt(v, &size);
  m.lib->Release(v);
  if (!have_size || size < 1 || size > kMaxRanks || m.me.rank >= static_cast<pmix_rank_t>(size))
    return Status(Err::kInvalidArg, "pmix: the server gives no valid job size (PMIX_JOB_SIZE " +
                                        std::to_string(size) + ", rank " +
                                        std::to_string(m.me.rank) + ")");
  m.size = static_cast<int>(size);
  job->rank = static_cast<int>(m.me.rank);
  job->size = m.size;
  job->jobid = JobIdOf(m.me.nspace);

  // Each rank's node label: PMIX_NODEID, else PMIX_HOSTNAME, else PMIX_LOCAL_PEERS.
  std::vector<int> labels(static_cast<size_t>(size), -1);
  bool all = true;
  for (int r = 0; r < m.size && all; ++r) {
    pmix_value_t* n = m.Lookup(static_cast<pmix_rank_t>(r), PMIX_NODEID);
    long long id = -1;
    all = n != nullptr && AsInt(n, &id) && id >= 0;
    labels[r] = static_cast<int>(id);
    m.lib->Release(n);
  }
  if (!all) {
    all = true;
    std::map<std::string, int> hosts;
    for (int r = 0; r < m.size && all; ++r) {
      pmix_value_t* h = m.Lookup(static_cast<pmix_rank_t>(r), PMIX_HOSTNAME);
      all = h != nullptr && h->type == PMIX_STRING && h->data.string != nullptr;
      if (all) labels[r] = hosts.emplace(h->data.string, static_cast<int>(hosts.size())).first->second;
      m.lib->Release(h);
    }
  }
  if (!all) {
    pmix_value_t* peers = m.Lookup(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS);
    if (peers == nullptr || peers->type != PMIX_STRING || peers->data.string == nullptr) {
      m.lib->Release(peers);
      return Status(Err::kInvalidArg, "pmix: the server says neither the ranks' nodes "
                                      "(PMIX_NODEID, PMIX_HOSTNAME) nor this node's ranks "
                                      "(PMIX_LOCAL_PEERS)");
    }
    std::set<int> local;
    std::stringstream in(peers->data.string);
    m.lib->Release(peers);
    for (std::string item; std::getline(in, item, ',');) {
      const long r = std::strtol(item.c_str(), nullptr, 10);
      if (r >= 0 && r < m.size) local.insert(static_cast<int>(r));
    }
    local.insert(job->rank);
    // This node's ranks share its lowest rank as label; every other rank is a node of its own.
    for (int r = 0; r < m.size; ++r) labels[r] = local.count(r) ? *local.begin() : r;
  }
  job->node_of = NumberNodes(labels);
  if (!job->SpansNodes()) job->node_of.clear();
  spans_nodes_ = job->SpansNodes();
  return ChooseLocalAddress(*job);
}

std::string PmixBootstrap::JobIdOf(const std::string& nspace) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : nspace) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

std::vector<int> PmixBootstrap::NumberNodes(const std::vector<int>& labels) {
  std::map<int, int> number;
  std::vector<int> out;
  out.reserve(labels.size());
  for (int l : labels) out.push_back(number.emplace(l, static_cast<int>(number.size())).first->second);
  return out;
}

// Spans nodes: every rank publishes its IPv4 addresses in one exchange; this rank listens on
// its address in a subnet that another node's rank has an address in, else on the source of
// its route to such a rank, else on its first address. One node: loopback.
Status PmixBootstrap::ChooseLocalAddress(const JobInfo& job) {
  local_address_ = "127.0.0.1";
  if (!job.SpansNodes()) return Status::Ok();
  Impl& m = *impl_;
  const std::string mine = InterfaceAddresses();
  const double timeout = static_cast<double>(GetTransportConfig().bootstrap_timeout_s);
  MPIGPU_RETURN_IF_ERROR(m.Put(kAddrKey, mine));
  const pmix_status_t rc = m.lib->Commit();
  if (rc != PMIX_SUCCESS) return Status(Err::kSystem, "pmix: PMIx_Commit: " + m.lib->Error(rc));
  MPIGPU_RETURN_IF_ERROR(m.Fence(timeout));
  std::vector<std::string> others;
  for (int r = 0; r < job.size; ++r) {
    if (job.SameNode(r)) continue;
    others.emplace_back();
    MPIGPU_RETURN_IF_ERROR(m.GetBytes(r, kAddrKey, kMaxCard, timeout, &others.back()));
  }
  const std::string a = PickAddress(mine, others, RouteSource);
  if (!a.empty()) local_address_ = a;
  return Status::Ok();
}

std::string PmixBootstrap::PickAddress(const std::string& mine_list,
                                       const std::vector<std::string>& other_lists,
                                       std::string (*route_source)(uint32_t)) {
  const std::vector<Ipv4Net> mine = ParseAddresses(mine_list);
  std::vector<Ipv4Net> remote;
  for (const std::string& list : other_lists)
    for (const Ipv4Net& n : ParseAddresses(list)) {
      // An address this host has too is a host-local bridge that every host has (docker0's
      // 172.17.0.1): it reaches nothing across hosts.
      bool own = false;
      for (const Ipv4Net& me : mine) own |= me.addr == n.addr;
      if (!own) remote.push_back(n);
    }
  for (const Ipv4Net& r : remote)
    for (const Ipv4Net& n : mine)
      if (n.Contains(r.addr)) return n.text;
  for (const Ipv4Net& r : remote) {
    const std::string src = route_source ? route_source(r.addr) : "";
    if (!src.empty() && src.rfind("127.", 0) != 0) return src;
  }
  return mine.empty() ? "" : mine.front().text;
}

Status PmixBootstrap::Allgather(const std::string& mine, std::vector<std::string>* all,
                                double timeout_s) {
  Impl& m = *impl_;
  if (m.broken) return Status(Err::kInternal, "pmix: an earlier exchange of this job failed");
  if (mine.size() > kMaxCard)
    return Status(Err::kInvalidArg, "pmix: a card of " + std::to_string(mine.size()) + " bytes");
  const bool first = calls_ == 0;
  const std::string key = "mpigpu.card." + std::to_string(calls_++);
  const double deadline = MonotonicSeconds() + timeout_s;
  auto left = [&] { return deadline - MonotonicSeconds(); };
  MPIGPU_RETURN_IF_ERROR(m.Put(key, mine));
  // The job's secret rides with rank 0's first card: only the job's ranks can Get it.
  if (first && m.me.rank == 0) {
    MPIGPU_RETURN_IF_ERROR(transport::NewJobSecret(&secret_));
    MPIGPU_RETURN_IF_ERROR(m.Put(kSecretKey, secret_));
  }
  const pmix_status_t rc = m.lib->Commit();
  if (rc != PMIX_SUCCESS) return Status(Err::kSystem, "pmix: PMIx_Commit: " + m.lib->Error(rc));
  MPIGPU_RETURN_IF_ERROR(m.Fence(left()));
  if (first && m.me.rank != 0) {
    MPIGPU_RETURN_IF_ERROR(m.GetBytes(0, kSecretKey, transport::kJobSecretBytes, left(), &secret_));
    if (secret_.size() != transport::kJobSecretBytes)
      return Status(Err::kInvalidArg, "pmix: rank 0's secret has " +
                                          std::to_string(secret_.size()) + " bytes");
  }
  all->assign(static_cast<size_t>(m.size), std::string());
  for (int r = 0; r < m.size; ++r) {
    if (r == static_cast<int>(m.me.rank)) (*all)[r] = mine;
    else MPIGPU_RETURN_IF_ERROR(m.GetBytes(r, key, kMaxCard, left(), &(*all)[r]));
  }
  return Status::Ok();
}

Status PmixBootstrap::Depart() {
  Impl& m = *impl_;
  if (!spans_nodes_ || m.broken || depart_ != nullptr) return Status::Ok();
  auto* w = new FenceWait();
  w->all = Proc(m.me, PMIX_RANK_WILDCARD);
  w->info[0] = InfoBool(PMIX_COLLECT_DATA, false);
  w->info[1] = InfoInt(
      PMIX_TIMEOUT, TimeoutArg(static_cast<double>(GetTransportConfig().bootstrap_timeout_s)));
  const pmix_status_t rc = m.lib->FenceNb(&w->all, 1, w->info, 2, FenceDone, w);
  if (rc != PMIX_SUCCESS) {
    delete w;
    return Status(Err::kSystem, "pmix: PMIx_Fence_nb at finalize: " + m.lib->Error(rc));
  }
  depart_ = w;
  return Status::Ok();
}

Status PmixBootstrap::Departed(bool* all, std::vector<int>* gone) {
  gone->clear();
  *all = true;
  auto* w = static_cast<FenceWait*>(depart_);
  if (w != nullptr) {
    if (g_server_lost.load(std::memory_order_acquire))  // w stays with PMIx
      return Status(Err::kPeerFailed, "pmix: the launcher's PMIx server is gone");
    if (!w->done.load(std::memory_order_acquire)) {  // pairs with FenceDone's release
      *all = false;
      return Status::Ok();
    }
    const pmix_status_t rc = w->status.load(std::memory_order_relaxed);
    delete w;
    depart_ = nullptr;
    impl_->broken = rc != PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS)
      return Status(rc == PMIX_ERR_TIMEOUT ? Err::kTimeout : Err::kPeerFailed,
                    "pmix: the finalize fence failed (a rank ended without finalizing?): " +
                        impl_->lib->Error(rc));
    // The fence completed: every rank reached it or ended. The launcher's last word on which
    // ended (a rank that died before the fence completed is in its table by now), asked once
    // no query of the engine's is in flight.
    asking_last_word_ = true;
    last_word_until_ = MonotonicSeconds() + kLastWordWait;
  }
  if (asking_last_word_ && last_word_ == 0) {
    last_word_ = ended_->Ask(/*now=*/true);
    if (last_word_ == 0 && ended_->Asks() && MonotonicSeconds() < last_word_until_) {
      *all = false;  // one of the engine's in flight: ask after its answer
      return Status::Ok();
    }
  }
  if (last_word_ != 0 && !ended_->Answered(last_word_) &&
      MonotonicSeconds() < last_word_until_) {
    *all = false;
    return Status::Ok();
  }
  asking_last_word_ = false;
  last_word_ = 0;
  if (!spans_nodes_) return Status::Ok();
  std::vector<transport::EndedRank> ended;
  ended_->Collect(&ended);
  for (const transport::EndedRank& e : ended) gone->push_back(e.rank);
  return Status::Ok();
}

void PmixBootstrap::Ended(bool asking, std::vector<transport::EndedRank>* ended) {
  if (asking) (void)ended_->Ask(/*now=*/false);
  ended_->Collect(ended);
}

bool PmixBootstrap::LauncherGone() const {
  return g_server_lost.load(std::memory_order_acquire);
}

}  // namespace mpigpu::internode
