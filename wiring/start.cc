#include "wiring/start.h"

#include "wiring/backends.h"
#include "wiring/job_source.h"

namespace mpigpu::wiring {
namespace {

class BuildParts final : public transport::Assembly {
 public:
  Status MakeBackends(const TransportConfig& c, const transport::JobInfo& job,
                      transport::BackendSet* out) const override {
    return wiring::MakeBackends(c, job, out);
  }
  Status MakeBootstrap(const transport::JobInfo& job,
                       std::shared_ptr<transport::Bootstrap>* out) const override {
    return BootstrapFor(job, out);
  }
};

}  // namespace

const transport::Assembly& Parts() {
  static const BuildParts parts;
  return parts;
}

Status StartEngine(const transport::JobInfo& job, std::unique_ptr<transport::Engine>* out) {
  return transport::Engine::Create(job, Parts(), out);
}

Status CreateMessenger(const transport::JobInfo& job,
                       std::unique_ptr<transport::Messenger>* out) {
  std::unique_ptr<transport::Engine> e;
  MPIGPU_RETURN_IF_ERROR(StartEngine(job, &e));
  *out = std::move(e);
  return Status::Ok();
}

}  // namespace mpigpu::wiring
