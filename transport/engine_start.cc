// The engine's start: the back-ends and bootstrap its Assembly makes, their areas in the job
// segment (LocalJob), the ranks' join and the exchange of cards, each peer's path.
#include <algorithm>
#include <string>
#include <utility>

#include "memcopy/log.h"
#include "memcopy/memcopy.h"
#include "transport/engine.h"
#include "transport/launcher_link.h"

namespace mpigpu::transport {
namespace {

// A process-independent name for a CUDA device (device ordinals differ between processes with
// different CUDA_VISIBLE_DEVICES): a hash of its UUID; 0 for none.
uint64_t GpuIdentity(int device) {
  cudaDeviceProp p{};
  if (device < 0 || cudaGetDeviceProperties(&p, device) != cudaSuccess) return 0;
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : p.uuid.bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h | 1;
}

}  // namespace

Engine::~Engine() {
  for (Request* r : free_requests_) delete r;
  while (Unexpected* u = unexpected_.front()) {
    unexpected_.Remove(u);
    delete u;
  }
  backends_.reset();  // before the segment (job_) their areas live in goes
}

Status Engine::Create(const JobInfo& job, const Assembly& parts, std::unique_ptr<Engine>* out) {
  std::unique_ptr<Engine> e(new Engine());
  Status st = e->StartUp(job, parts);
  if (!st.ok()) {
    // The creator removes the job's name whatever went wrong (a peer that never came, a bad
    // setting), so a rerun with the same job id does not find it taken.
    e->job_.Abandon();
    return st;
  }
  *out = std::move(e);
  return Status::Ok();
}

Status Engine::StartUp(const JobInfo& job, const Assembly& parts) {
  config_ = &GetTransportConfig();
  MPIGPU_RETURN_IF_ERROR(ConfigStatus());  // a refused MPIGPU_* value (memcopy/params.h)
  rank_ = job.rank;
  size_ = job.size;
  SetLogRank(rank_);
  backends_ = std::make_unique<BackendSet>();
  MPIGPU_RETURN_IF_ERROR(parts.MakeBackends(*config_, job, backends_.get()));
  // A job beyond this node exchanges through the bootstrap `parts` chose (its launcher's, or
  // mpigpurun's boot server); one on one node through its segment.
  MPIGPU_RETURN_IF_ERROR(parts.MakeBootstrap(job, &net_boot_));
  boot_ = net_boot_ != nullptr ? net_boot_.get() : &job_;

  // Every channel and back-end gets its areas behind the job's rank table: the dense ones first,
  // then the sparse tail, which gets memory only where touched (SegmentPages each).
  std::vector<SegmentNeeds> needs;
  for (auto& c : backends_->channels) needs.push_back(c->Needs(*config_, size_));
  for (auto& b : backends_->lmts) needs.push_back(b->Needs(*config_, size_));
  size_t dense = 0, sparse = 0;
  for (SegmentNeeds& n : needs) {
    n.dense = SegmentPages(n.dense);
    n.sparse = SegmentPages(n.sparse);
    dense += n.dense;
    sparse += n.sparse;
  }
  char* mem = nullptr;
  MPIGPU_RETURN_IF_ERROR(job_.Open(job, dense, sparse, BootstrapTimeoutMs(*config_), &mem));
  char* d = mem;
  char* s = mem + dense;
  size_t i = 0;
  // Hands component i its areas (nullptr where it asked for none) and moves past them.
  auto areas = [&](auto attach) {
    const SegmentNeeds n = needs[i++];
    Status st = attach(n.dense ? d : nullptr, n.sparse ? s : nullptr);
    d += n.dense;
    s += n.sparse;
    return st;
  };
  for (auto& c : backends_->channels)
    MPIGPU_RETURN_IF_ERROR(areas([&](char* dn, char* sp) { return c->Attach(this, dn, sp); }));
  for (auto& b : backends_->lmts)
    MPIGPU_RETURN_IF_ERROR(areas([&](char* dn, char* sp) { return b->Attach(this, dn, sp); }));
  int device = -1;
  if (CudaDeviceCount() > 0 && cudaGetDevice(&device) != cudaSuccess) device = -1;
  MPIGPU_RETURN_IF_ERROR(job_.Join(device, GpuIdentity(device),
                                   static_cast<double>(config_->bootstrap_timeout_s)));
  MPIGPU_RETURN_IF_ERROR(ExchangeCards());
  for (auto& b : backends_->lmts) {
    b->Joined();
    by_wire_id_[b->caps().wire_id] = b.get();
  }

  chan_.resize(size_);
  lmt_path_.resize(size_);
  offerers_.resize(size_);
  eager_max_.resize(size_);
  for (auto& c : backends_->channels) channels_.push_back(c.get());
  for (int r = 0; r < size_; ++r) {
    chan_[r] = backends_->ChannelFor(r);
    lmt_path_[r] = &backends_->PathFor(r);
    offerers_[r] = {&backends_->OfferersFor(r, false), &backends_->OfferersFor(r, true)};
    eager_max_[r] = std::min(config_->eager_limit, chan_[r]->caps().max_payload);
  }
  if (config_->eager_limit > eager_max_[rank_])
    MPIGPU_INFO("MPIGPU_EAGER_LIMIT (%zu) is above the %s channel's largest message: eager "
                "messages stop at %zu", config_->eager_limit, chan_[rank_]->caps().name,
                eager_max_[rank_]);
  pending_.resize(size_);
  peer_failed_.assign(size_, false);
  ended_told_.assign(size_, 0);
  outstanding_.assign(size_, 0);
  sent_to_.assign(size_, 0);
  arrived_from_.assign(size_, 0);
  MPIGPU_INFO("joined job %s: rank %d of %d on node %d", job_.jobid().c_str(), rank_, size_,
              job_.info().node());
  LogPaths();
  LauncherLinkJoined(rank_);  // mpigpurun: this rank is in the job
  return Status::Ok();
}

// MPIGPU_DEBUG=info: which path each peer takes, one line per run of ranks that share it.
void Engine::LogPaths() const {
  if (CurrentLogLevel() < LogLevel::kInfo) return;
  auto path = [&](int r) {
    std::string p = std::string(chan_[r]->caps().name) + ", large messages by";
    for (LmtBackend* b : *lmt_path_[r]) p += std::string(" ") + b->caps().name;
    return p + ", eager <= " + std::to_string(eager_max_[r]) + " B";
  };
  for (int r = 0; r < size_;) {
    int end = r + 1;
    while (end < size_ && path(end) == path(r)) ++end;
    MPIGPU_INFO("ranks %d-%d: %s", r, end - 1, path(r).c_str());
    r = end;
  }
}

std::string Engine::Card() const {
  std::string mine;
  for (auto& c : backends_->channels) mine += c->Card();
  return mine;
}

// Channels that reach peers through addresses publish a card; then every rank's goes to them.
Status Engine::ExchangeCards() {
  const std::string mine = Card();
  if (mine.empty()) return Status::Ok();  // every rank has the same channels: none exchanges
  std::vector<std::string> cards;
  MPIGPU_RETURN_IF_ERROR(
      boot_->Allgather(mine, &cards, static_cast<double>(config_->bootstrap_timeout_s)));
  for (auto& c : backends_->channels)
    if (!c->Card().empty()) MPIGPU_RETURN_IF_ERROR(c->SetCards(cards));
  return Status::Ok();
}

}  // namespace mpigpu::transport
