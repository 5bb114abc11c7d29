// Probe: what cudaMemcpy does when a pageable host range starts inside a cudaHostRegister'ed range
// and extends past it (the pin cache keeps registrations of freed-and-reused heap memory).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
static void Try(const char* what, void* d, void* h, size_t n) {
  cudaError_t e = cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);
  cudaError_t e2 = cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost);
  std::printf("%-44s H2D %-28s D2H %s\n", what, cudaGetErrorName(e), cudaGetErrorName(e2));
  cudaGetLastError();
}
int main() {
  const size_t page = 4096, n = 1 << 20;
  char* h = static_cast<char*>(aligned_alloc(page, 4 * n));
  std::memset(h, 1, 4 * n);
  void* d = nullptr;
  if (cudaMalloc(&d, 4 * n) != cudaSuccess) { std::printf("no GPU\n"); return 1; }
  if (cudaHostRegister(h + n, n, cudaHostRegisterPortable) != cudaSuccess) { std::printf("register failed\n"); return 1; }
  Try("inside the registration", d, h + n, n);
  Try("starts inside, ends past it", d, h + n + page, n);
  Try("starts before, ends inside", d, h + n - page, n);
  Try("covers it and more", d, h, 3 * n);
  Try("unregistered only", d, h + 3 * n, n / 2);
  cudaHostRegister(h + 2 * n, n, cudaHostRegisterPortable);
  Try("two adjacent registrations, spanning both", d, h + n + page, n);
  return 0;
}
