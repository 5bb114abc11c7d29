#include "transport/messenger_factory.h"

#include "transport/engine.h"

namespace mpigpu::transport {

Status CreateMessenger(const JobInfo& job, std::unique_ptr<Messenger>* out) {
  std::unique_ptr<Engine> e;
  MPIGPU_RETURN_IF_ERROR(Engine::Create(job, &e));
  *out = std::move(e);
  return Status::Ok();
}

}  // namespace mpigpu::transport
