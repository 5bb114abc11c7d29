// mpigpu-info: what mpigpu sees on this node and how it is configured.
//   mpigpu-info            configuration (every MPIGPU_* variable: value, default, meaning),
//                          GPUs with their NUMA node, the peer-access matrix, /dev/shm space,
//                          the netmods found (tcp's interfaces, ibverbs' RDMA devices)
//   mpigpu-info --config   the configuration only
//   mpigpu-info --config --markdown
//                          every setting's name, default, allowed values and meaning as the
//                          Markdown page docs/configuration.md (not the environment's values)
// Each variable shows its allowed values; one MPIGPU_Init would refuse is flagged with '!' and
// its reason, and the exit status is then 1.
#include <cuda_runtime_api.h>
#include <sys/statvfs.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "internode/pmix/pmix_lib.h"
#include "internode/netmods_found.h"
#include "memcopy/params.h"
#include "memcopy/memcopy.h"
#include "memcopy/mps.h"
#include "ringbuf/numa.h"
#include "tools/config_markdown.h"
#include "transport/backends.h"
#include "transport/transport_config.h"

extern char** environ;

namespace {

// Prints every variable; returns false when MPIGPU_Init would refuse the configuration.
bool PrintConfig() {
  std::printf("Configuration (environment variables; * = set in the environment, ! = refused)\n");
  mpigpu::Status verdict;
  for (const mpigpu::ConfigEntry& e : mpigpu::DescribeConfig(&verdict)) {
    std::printf("  %c %-29s = %-14s (default %s; allowed %s)\n      %s\n",
                !e.error.empty() ? '!' : e.from_env ? '*' : ' ', e.name.c_str(), e.value.c_str(),
                e.default_value.c_str(), e.range.c_str(), e.help.c_str());
    if (!e.error.empty()) std::printf("      REFUSED: %s\n", e.error.c_str());
  }
  for (const std::string& name : mpigpu::UnknownConfigNames(environ))
    std::printf("  ! %s is set but no part of mpigpu reads it (a typo?)\n", name.c_str());
  mpigpu::TransportConfig c;
  (void)mpigpu::TransportParams().Parse([](const char* n) { return std::getenv(n); }, &c);
  std::printf("\nOne LMT ring (per pair, made at its first large message): %.1f MiB\n",
              static_cast<double>(mpigpu::LmtRingBytes(c)) / (1u << 20));
  if (!verdict.ok())
    std::printf("\n! MPIGPU_Init refuses this configuration: %s\n", verdict.message().c_str());
  return verdict.ok();
}

// MPS as each GPU's contexts would see it, and what ranks sharing that GPU would do.
void PrintMps(int ngpus) {
  if (ngpus == 0) return;
  const mpigpu::TransportConfig& c = mpigpu::GetTransportConfig();
  const char* setting = c.gpu_copier_shared == mpigpu::SharedGpuMode::kAuto ? "auto"
                        : c.gpu_copier_shared == mpigpu::SharedGpuMode::kOn ? "1"
                                                                             : "0";
  std::printf("\nMPS (ranks sharing a GPU; MPIGPU_GPU_COPIER_SHARED=%s)\n", setting);
  for (int d = 0; d < ngpus; ++d) {
    const mpigpu::MpsState mps = mpigpu::MpsOfDevice(d);
    const bool keep = mpigpu::KeepSharedGpuPath(c.gpu_copier_shared, mps.active);
    std::printf("  cuda:%d  MPS %s: %s\n          -> ranks sharing it: %s\n", d,
                mps.active ? "yes" : "no", mps.how.c_str(),
                keep ? "resident copy kernel and CUDA IPC single copy at every size"
                     : ("copy kernel off, CUDA IPC from " +
                        std::to_string(c.shared_gpu_ipc_min) + " bytes (staging below)")
                           .c_str());
  }
}

void PrintNode() {
  struct statvfs vfs{};
  if (statvfs("/dev/shm", &vfs) == 0)
    std::printf("\nShared memory: /dev/shm has %.1f GiB free of %.1f GiB\n",
                static_cast<double>(vfs.f_bavail) * vfs.f_frsize / (1u << 30),
                static_cast<double>(vfs.f_blocks) * vfs.f_frsize / (1u << 30));
  // Only ranks a PMIx launcher starts load libpmix; found or not, nothing else needs it.
  std::printf("\nPMIx (ranks started by mpirun, srun --mpi=pmix, prterun): libpmix %s\n",
              mpigpu::internode::DescribePmixLibrary().c_str());
  const int n = mpigpu::CudaDeviceCount();
  std::printf("\nGPUs: %d%s\n", n, n == 0 ? " (no CUDA device or driver: host buffers only)" : "");
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, d);
    char bus[32] = "?";
    cudaDeviceGetPCIBusId(bus, sizeof bus, d);
    std::printf("  cuda:%d  %s  sm_%d%d  %.0f GiB  pci %s  numa %d\n", d, p.name, p.major, p.minor,
                static_cast<double>(p.totalGlobalMem) / (1u << 30), bus, mpigpu::NumaNodeOfGpu(d));
  }
  PrintMps(n);
  if (n > 1) {
    std::printf("\nPeer access (row can read/write column's memory directly)\n      ");
    for (int j = 0; j < n; ++j) std::printf(" cuda:%-2d", j);
    std::printf("\n");
    for (int i = 0; i < n; ++i) {
      std::printf("cuda:%-2d", i);
      for (int j = 0; j < n; ++j) {
        int can = 0;
        if (i != j) cudaDeviceCanAccessPeer(&can, i, j);
        std::printf(" %-7s", i == j ? "-" : can ? "yes" : "no");
      }
      std::printf("\n");
    }
  }
}

}  // namespace

// The back-ends this build has, with their capabilities (transport/core/backend.h's caps).
void PrintBackends() {
  std::printf("\nBack-ends (channels carry small messages; large ones go by the first of a "
              "peer's list that takes them)\n");
  for (const std::string& l : mpigpu::transport::DescribeBackends()) std::printf("  %s\n", l.c_str());
}

int main(int argc, char** argv) {
  bool config_only = false;
  bool markdown = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--config")) {
      config_only = true;
    } else if (!std::strcmp(argv[i], "--markdown")) {
      markdown = true;
    } else if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
      std::printf("usage: mpigpu-info [--config [--markdown]]\n"
                  "Prints every MPIGPU_* variable with its value, default, allowed range and "
                  "meaning\n(--config: only that), then the node's GPUs, /dev/shm and the "
                  "netmods found\n(tcp: interfaces, MPIGPU_NET_IF's address; ibverbs: RDMA "
                  "devices). Exit status 1 when\nMPIGPU_Init would refuse the configuration (the "
                  "refused variables are marked '!').\n"
                  "--config --markdown: every setting (name, default, allowed values, meaning) as "
                  "the page\ndocs/configuration.md, whatever the environment holds.\n");
      return 0;
    } else {
      std::fprintf(stderr, "mpigpu-info: unknown argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  if (markdown) {
    if (!config_only) {
      std::fprintf(stderr, "mpigpu-info: --markdown goes with --config\n");
      return 2;
    }
    std::fputs(mpigpu::ConfigMarkdown().c_str(), stdout);
    return 0;
  }
  std::printf("mpigpu 0.1.0\n\n");
  const bool config_ok = PrintConfig();
  if (!config_only) {
    PrintNode();
    PrintBackends();
    std::fputs(mpigpu::FormatNetmods(mpigpu::FindNetmods()).c_str(), stdout);
  }
  return config_ok ? 0 : 1;
}
