// Error handlers and error strings of the MPI interface.
//
// The core stores each communicator's handler (so new communicators inherit their parent's)
// but applies only ERRORS_ARE_FATAL itself. This layer stores MPI_ERRORS_ARE_FATAL there as
// kLayerFatal and user handlers from kFirstUser up, so the core always returns its errors and
// the layer applies the handler after the core has dropped its lock: a user handler may call
// MPI again.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "mpi/mpi_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::mpi {
namespace {

constexpr int kLayerFatal = 2;  // the core's value for MPI_ERRORS_ARE_FATAL
constexpr int kFirstUser = 3;   // first user handler (MPI handle == core value)

struct Tables {
  std::mutex mu;
  std::vector<MPI_Comm_errhandler_function*> handlers;  // by handle - kFirstUser
  std::vector<int> added_class;                         // class of code LASTCODE + 1 + i
  std::vector<std::string> added_string;                // string of code LASTCODE + 1 + i
};
Tables& T() {
  static Tables* t = new Tables;  // never destroyed: handlers may run during exit
  return *t;
}

int ToCore(MPI_Errhandler h) { return h == MPI_ERRORS_ARE_FATAL ? kLayerFatal : h; }
MPI_Errhandler FromCore(int v) { return v == kLayerFatal ? MPI_ERRORS_ARE_FATAL : v; }

bool ValidHandler(MPI_Errhandler h) {
  if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN) return true;
  std::lock_guard<std::mutex> g(T().mu);
  return h >= kFirstUser && static_cast<size_t>(h - kFirstUser) < T().handlers.size();
}

[[noreturn]] void Fatal(const char* fn, MPI_Comm comm, int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (PMPI_Error_string(rc, text, &len) != MPI_SUCCESS) std::snprintf(text, sizeof text, "error %d", rc);
  int rank = -1;
  int init = 0, fin = 0;
  MPIGPU_Initialized(&init);
  MPIGPU_Finalized(&fin);
  if (init && !fin) MPIGPU_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fflush(stdout);
  std::fprintf(stderr, "mpigpu: rank %d: %s: %s (MPI_ERRORS_ARE_FATAL)\n", rank, fn, text);
  std::fflush(stderr);
  if (init && !fin) MPIGPU_Abort(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, rc);
  std::_Exit(1);
}

}  // namespace

namespace {

// The detail of rc without the name of the core's call that recorded it ("MPIGPU_Send: rank 9
// is not ...", or the name alone): the MPI caller names itself.
std::string BareDetail(int rc) {
  std::string d = mpigpu::LastErrorDetail(rc);
  if (d.rfind("MPIGPU_", 0) != 0) return d;
  const size_t end = d.find_first_of(": ");
  if (end == std::string::npos) return "";
  if (d.compare(end, 2, ": ") == 0) d.erase(0, end + 2);
  return d;
}

}  // namespace

int Fail(const char* fn, MPI_Comm comm, int rc) {
  const std::string bare = BareDetail(rc);
  // The handler lookup records errors of its own (an invalid comm): the detail is set after it.
  int v = kLayerFatal;
  if (MPIGPU_Comm_get_errhandler(comm, &v) != MPIGPU_SUCCESS &&
      MPIGPU_Comm_get_errhandler(MPI_COMM_WORLD, &v) != MPIGPU_SUCCESS)
    v = kLayerFatal;
  // Fatal names fn itself; a returned error's string names it in the detail.
  mpigpu::SetLastError(rc, FromCore(v) == MPI_ERRORS_ARE_FATAL ||
                                   bare.rfind(std::string(fn) + ": ", 0) == 0
                               ? bare
                           : bare.empty() ? std::string(fn)
                                          : std::string(fn) + ": " + bare);
  return ApplyErrhandler(fn, v, comm, comm, rc);
}

int ApplyErrhandler(const char* fn, int core_value, int object, MPI_Comm abort_comm, int rc) {
  const MPI_Errhandler h = FromCore(core_value);
  if (h == MPI_ERRORS_RETURN) return rc;
  if (h == MPI_ERRORS_ARE_FATAL) Fatal(fn, abort_comm, rc);
  MPI_Comm_errhandler_function* f = nullptr;
  {
    std::lock_guard<std::mutex> g(T().mu);
    if (h >= kFirstUser && static_cast<size_t>(h - kFirstUser) < T().handlers.size())
      f = T().handlers[h - kFirstUser];
  }
  if (f == nullptr) Fatal(fn, abort_comm, rc);
  int o = object;  // a communicator or window handle: both are ints
  int code = rc;
  f(&o, &code);
  return rc;
}

bool ValidErrhandler(MPI_Errhandler h) { return ValidHandler(h); }
int ErrhandlerToCore(MPI_Errhandler h) { return ToCore(h); }
MPI_Errhandler ErrhandlerFromCore(int v) { return FromCore(v); }

int FailWith(const char* fn, MPI_Comm comm, int rc, const char* detail) {
  // The core keeps the thread's latest detail per class; MPIGPU_Error_string shows it.
  mpigpu::SetLastError(rc, detail);
  return Fail(fn, comm, rc);
}

int Detail(int rc, const char* detail) { return mpigpu::SetLastError(rc, detail); }

int Unsupported(const char* fn, MPI_Comm comm) {
  std::string d = std::string(fn) + " is not supported by mpigpu (yet)";
  return FailWith(fn, comm, MPI_ERR_UNSUPPORTED_OPERATION, d.c_str());
}

// MPI_Init: WORLD and SELF start with MPI_ERRORS_ARE_FATAL applied by this layer.
void InitErrhandlers() {
  MPIGPU_Comm_set_errhandler(MPI_COMM_WORLD, kLayerFatal);
  MPIGPU_Comm_set_errhandler(MPI_COMM_SELF, kLayerFatal);
}

int LastUsedCode() {
  std::lock_guard<std::mutex> g(T().mu);
  return MPI_ERR_LASTCODE + static_cast<int>(T().added_class.size());
}

}  // namespace mpigpu::mpi

using mpigpu::mpi::Done;
using mpigpu::mpi::T;

extern "C" int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function,
                                           MPI_Errhandler* errhandler) {
  if (function == nullptr || errhandler == nullptr)
    return mpigpu::mpi::FailWith("MPI_Comm_create_errhandler", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "null function or errhandler pointer");
  std::lock_guard<std::mutex> g(T().mu);
  T().handlers.push_back(function);
  *errhandler = mpigpu::mpi::kFirstUser + static_cast<int>(T().handlers.size()) - 1;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Comm_create_errhandler)

extern "C" int PMPI_Errhandler_create(MPI_Handler_function* function, MPI_Errhandler* errhandler) {
  return PMPI_Comm_create_errhandler(function, errhandler);
}
MPIGPU_MPI_ALIAS(Errhandler_create)

extern "C" int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  if (!mpigpu::mpi::ValidHandler(errhandler))
    return mpigpu::mpi::FailWith("MPI_Comm_set_errhandler", comm, MPI_ERR_ARG,
                                 "not an error handler");
  return Done("MPI_Comm_set_errhandler", comm,
              MPIGPU_Comm_set_errhandler(comm, mpigpu::mpi::ToCore(errhandler)));
}
MPIGPU_MPI_ALIAS(Comm_set_errhandler)

extern "C" int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
  return PMPI_Comm_set_errhandler(comm, errhandler);
}
MPIGPU_MPI_ALIAS(Errhandler_set)

extern "C" int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  int v = 0;
  int rc = MPIGPU_Comm_get_errhandler(comm, errhandler ? &v : nullptr);
  if (rc == MPI_SUCCESS) *errhandler = mpigpu::mpi::FromCore(v);
  return Done("MPI_Comm_get_errhandler", comm, rc);
}
MPIGPU_MPI_ALIAS(Comm_get_errhandler)

extern "C" int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return PMPI_Comm_get_errhandler(comm, errhandler);
}
MPIGPU_MPI_ALIAS(Errhandler_get)

// Handlers stay usable by the communicators that have them: freeing only clears the handle.
extern "C" int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  if (errhandler == nullptr || !mpigpu::mpi::ValidHandler(*errhandler))
    return mpigpu::mpi::FailWith("MPI_Errhandler_free", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "not an error handler");
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Errhandler_free)

extern "C" int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  int size = 0;
  if (int rc = MPIGPU_Comm_size(comm, &size); rc != MPI_SUCCESS)
    return mpigpu::mpi::Fail("MPI_Comm_call_errhandler", comm, rc);
  mpigpu::mpi::Fail("MPI_Comm_call_errhandler", comm, errorcode);
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Comm_call_errhandler)

extern "C" int PMPI_Error_class(int errorcode, int* errorclass) {
  if (errorclass == nullptr)
    return mpigpu::mpi::FailWith("MPI_Error_class", MPI_COMM_WORLD, MPI_ERR_ARG, "null errorclass");
  if (errorcode > MPI_ERR_LASTCODE) {
    std::lock_guard<std::mutex> g(T().mu);
    const size_t i = static_cast<size_t>(errorcode - MPI_ERR_LASTCODE - 1);
    if (i < T().added_class.size()) {
      *errorclass = T().added_class[i];
      return MPI_SUCCESS;
    }
  }
  return Done("MPI_Error_class", MPI_COMM_WORLD, MPIGPU_Error_class(errorcode, errorclass));
}
MPIGPU_MPI_ALIAS(Error_class)

extern "C" int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  if (string == nullptr || resultlen == nullptr)
    return mpigpu::mpi::FailWith("MPI_Error_string", MPI_COMM_WORLD, MPI_ERR_ARG, "null pointer");
  if (errorcode > MPI_ERR_LASTCODE) {
    std::lock_guard<std::mutex> g(T().mu);
    const size_t i = static_cast<size_t>(errorcode - MPI_ERR_LASTCODE - 1);
    if (i < T().added_string.size()) {
      std::snprintf(string, MPI_MAX_ERROR_STRING, "%s", T().added_string[i].c_str());
      *resultlen = static_cast<int>(std::strlen(string));
      return MPI_SUCCESS;
    }
  }
  return MPIGPU_Error_string(errorcode, string, resultlen);
}
MPIGPU_MPI_ALIAS(Error_string)

extern "C" int PMPI_Add_error_class(int* errorclass) {
  if (errorclass == nullptr)
    return mpigpu::mpi::FailWith("MPI_Add_error_class", MPI_COMM_WORLD, MPI_ERR_ARG, "null pointer");
  std::lock_guard<std::mutex> g(T().mu);
  const int code = MPI_ERR_LASTCODE + 1 + static_cast<int>(T().added_class.size());
  T().added_class.push_back(code);
  T().added_string.emplace_back();
  *errorclass = code;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Add_error_class)

extern "C" int PMPI_Add_error_code(int errorclass, int* errorcode) {
  if (errorcode == nullptr)
    return mpigpu::mpi::FailWith("MPI_Add_error_code", MPI_COMM_WORLD, MPI_ERR_ARG, "null pointer");
  std::lock_guard<std::mutex> g(T().mu);
  const size_t n = T().added_class.size();
  const bool predefined = errorclass >= MPI_SUCCESS && errorclass <= MPI_ERR_LASTCODE;
  const bool added = errorclass > MPI_ERR_LASTCODE &&
                     static_cast<size_t>(errorclass - MPI_ERR_LASTCODE - 1) < n &&
                     T().added_class[errorclass - MPI_ERR_LASTCODE - 1] == errorclass;
  if (!predefined && !added) {
    mpigpu::SetLastError(MPI_ERR_ARG, "MPI_Add_error_code: not an error class");
    return MPI_ERR_ARG;
  }
  const int code = MPI_ERR_LASTCODE + 1 + static_cast<int>(n);
  T().added_class.push_back(errorclass);
  T().added_string.emplace_back();
  *errorcode = code;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Add_error_code)

extern "C" int PMPI_Add_error_string(int errorcode, const char* string) {
  if (string == nullptr)
    return mpigpu::mpi::FailWith("MPI_Add_error_string", MPI_COMM_WORLD, MPI_ERR_ARG, "null string");
  std::lock_guard<std::mutex> g(T().mu);
  const size_t i = static_cast<size_t>(errorcode - MPI_ERR_LASTCODE - 1);
  if (errorcode <= MPI_ERR_LASTCODE || i >= T().added_string.size()) {
    mpigpu::SetLastError(MPI_ERR_ARG, "MPI_Add_error_string: not an added error code");
    return MPI_ERR_ARG;
  }
  T().added_string[i] = std::string(string).substr(0, MPI_MAX_ERROR_STRING - 1);
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Add_error_string)
