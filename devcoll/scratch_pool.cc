#include "devcoll/scratch_pool.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "memcopy/device_scope.h"
#include "memcopy/memcopy.h"

namespace mpigpu::devcoll {
namespace {

constexpr size_t kMinClass = size_t{64} << 10;

size_t ClassOf(size_t bytes) {
  size_t c = kMinClass;
  while (c < bytes) c <<= 1;
  return c;
}

struct Pool {
  std::mutex mu;
  std::map<std::pair<int, size_t>, std::vector<void*>> free;  // (device, class) -> blocks
};
Pool& ThePool() {
  static Pool* p = new Pool();  // never destroyed: see the header
  return *p;
}

}  // namespace

ScratchBlock::~ScratchBlock() {
  Pool& p = ThePool();
  {
    std::lock_guard<std::mutex> g(p.mu);
    std::vector<void*>& v = p.free[{device_, bytes_}];
    if (v.size() < static_cast<size_t>(kKeepPerClass)) {
      v.push_back(ptr_);
      return;
    }
  }
  DeviceScope scope(device_);
  (void)cudaFree(ptr_);  // a failure here leaves nothing to do but go on
}

Status TakeScratch(int device, size_t bytes, std::shared_ptr<ScratchBlock>* out) {
  if (device < 0) return Status(Err::kInvalidArg, "device scratch: no device");
  const size_t cls = ClassOf(bytes);
  Pool& p = ThePool();
  {
    std::lock_guard<std::mutex> g(p.mu);
    std::vector<void*>& v = p.free[{device, cls}];
    if (!v.empty()) {
      *out = std::make_shared<ScratchBlock>(v.back(), device, cls);
      v.pop_back();
      return Status::Ok();
    }
  }
  DeviceScope scope(device);
  MPIGPU_RETURN_IF_ERROR(scope.status());
  void* ptr = nullptr;
  MPIGPU_CUDA_CHECK(cudaMalloc(&ptr, cls));
  *out = std::make_shared<ScratchBlock>(ptr, device, cls);
  return Status::Ok();
}

size_t KeptScratchBlocks() {
  Pool& p = ThePool();
  std::lock_guard<std::mutex> g(p.mu);
  size_t n = 0;
  for (const auto& kv : p.free) n += kv.second.size();
  return n;
}

}  // namespace mpigpu::devcoll
