// The MPI environment calls: Init..Finalize, thread levels, clocks, names and versions.
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "mpi/mpi_internal.h"

namespace mpigpu::mpi {
void InitErrhandlers();
void InitLocalCopies();
void FinalizeLocalCopies();
int DetachBufferForFinalize();
namespace {
// The thread that called MPI_Init; written once by Init, read by Is_thread_main.
std::atomic<pthread_t> g_main_thread{};
std::atomic<int> g_provided{MPI_THREAD_SINGLE};

int DoInit(int* argc, char*** argv, int required, int* provided) {
  int again = 0;
  MPIGPU_Initialized(&again);
  if (!again) InitErrhandlers();  // a second Init fails, leaving the handlers set since alone
  int rc = MPIGPU_Init(argc, argv);
  if (rc != MPI_SUCCESS) return rc;
  InitBufTypes();
  InitLocalCopies();
  g_main_thread.store(pthread_self(), std::memory_order_relaxed);
  // The core takes calls from several threads at once.
  (void)required;
  g_provided.store(MPI_THREAD_MULTIPLE, std::memory_order_relaxed);
  if (provided) *provided = MPI_THREAD_MULTIPLE;
  return MPI_SUCCESS;
}
}  // namespace
}  // namespace mpigpu::mpi

using mpigpu::mpi::Done;

extern "C" int PMPI_Init(int* argc, char*** argv) {
  return Done("MPI_Init", MPI_COMM_WORLD, mpigpu::mpi::DoInit(argc, argv, MPI_THREAD_SINGLE, nullptr));
}
MPIGPU_MPI_ALIAS(Init)

extern "C" int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  if (provided == nullptr)
    return mpigpu::mpi::FailWith("MPI_Init_thread", MPI_COMM_WORLD, MPI_ERR_ARG, "null provided");
  return Done("MPI_Init_thread", MPI_COMM_WORLD,
              mpigpu::mpi::DoInit(argc, argv, required, provided));
}
MPIGPU_MPI_ALIAS(Init_thread)

extern "C" int PMPI_Query_thread(int* provided) {
  if (provided == nullptr)
    return mpigpu::mpi::FailWith("MPI_Query_thread", MPI_COMM_WORLD, MPI_ERR_ARG, "null provided");
  *provided = mpigpu::mpi::g_provided.load(std::memory_order_relaxed);
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Query_thread)

extern "C" int PMPI_Is_thread_main(int* flag) {
  if (flag == nullptr)
    return mpigpu::mpi::FailWith("MPI_Is_thread_main", MPI_COMM_WORLD, MPI_ERR_ARG, "null flag");
  *flag = pthread_equal(pthread_self(),
                        mpigpu::mpi::g_main_thread.load(std::memory_order_relaxed)) != 0;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Is_thread_main)

extern "C" int PMPI_Initialized(int* flag) { return MPIGPU_Initialized(flag); }
MPIGPU_MPI_ALIAS(Initialized)

extern "C" int PMPI_Finalized(int* flag) { return MPIGPU_Finalized(flag); }
MPIGPU_MPI_ALIAS(Finalized)

extern "C" int PMPI_Finalize(void) {
  // Buffered sends complete before the job is left (as MPI_Buffer_detach would).
  int rc = mpigpu::mpi::DetachBufferForFinalize();
  if (rc != MPI_SUCCESS) return Done("MPI_Finalize", MPI_COMM_WORLD, rc);
  mpigpu::mpi::FinalizeLocalCopies();
  return Done("MPI_Finalize", MPI_COMM_WORLD, MPIGPU_Finalize());
}
MPIGPU_MPI_ALIAS(Finalize)

extern "C" int PMPI_Abort(MPI_Comm comm, int errorcode) {
  return Done("MPI_Abort", MPI_COMM_WORLD, MPIGPU_Abort(comm, errorcode));
}
MPIGPU_MPI_ALIAS(Abort)

extern "C" double PMPI_Wtime(void) { return MPIGPU_Wtime(); }
MPIGPU_MPI_ALIAS(Wtime)

// The resolution of MPIGPU_Wtime's clock (CLOCK_MONOTONIC).
extern "C" double PMPI_Wtick(void) {
  timespec ts{};
  if (clock_getres(CLOCK_MONOTONIC, &ts) != 0) return 1e-9;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
MPIGPU_MPI_ALIAS(Wtick)

extern "C" int PMPI_Get_processor_name(char* name, int* resultlen) {
  if (name == nullptr || resultlen == nullptr)
    return mpigpu::mpi::FailWith("MPI_Get_processor_name", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "null pointer");
  if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0) std::snprintf(name, MPI_MAX_PROCESSOR_NAME, "unknown");
  name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  *resultlen = static_cast<int>(std::strlen(name));
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Get_processor_name)

extern "C" int PMPI_Get_version(int* version, int* subversion) {
  if (version == nullptr || subversion == nullptr)
    return mpigpu::mpi::FailWith("MPI_Get_version", MPI_COMM_WORLD, MPI_ERR_ARG, "null pointer");
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Get_version)

extern "C" int PMPI_Get_library_version(char* version, int* resultlen) {
  if (version == nullptr || resultlen == nullptr)
    return mpigpu::mpi::FailWith("MPI_Get_library_version", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "null pointer");
  std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                "mpigpu (MPI %d.%d interface over the mpigpu core)", MPI_VERSION, MPI_SUBVERSION);
  *resultlen = static_cast<int>(std::strlen(version));
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Get_library_version)

// No profiling levels: a no-op, as MPI allows.
extern "C" int PMPI_Pcontrol(const int level, ...) {
  (void)level;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Pcontrol)

extern "C" int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  (void)info;
  if (size < 0)
    return mpigpu::mpi::FailWith("MPI_Alloc_mem", MPI_COMM_WORLD, MPI_ERR_ARG, "negative size");
  int rc = MPIGPU_Alloc_mem(static_cast<size_t>(size), baseptr);
  if (rc == MPIGPU_ERR_OTHER) rc = MPI_ERR_NO_MEM;
  return Done("MPI_Alloc_mem", MPI_COMM_WORLD, rc);
}
MPIGPU_MPI_ALIAS(Alloc_mem)

extern "C" int PMPI_Free_mem(void* base) {
  return Done("MPI_Free_mem", MPI_COMM_WORLD, MPIGPU_Free_mem(base));
}
MPIGPU_MPI_ALIAS(Free_mem)
