#include "memcopy/mps.h"

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace mpigpu {

std::string MpsPipeDirectory(const std::function<const char*(const char*)>& getenv) {
  const char* dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
  return dir != nullptr && dir[0] != '\0' ? dir : kMpsDefaultPipeDir;
}

MpsPipe ProbeMpsPipe(const std::string& dir) {
  const std::string path = dir + "/control";
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return MpsPipe::kNone;
  if (S_ISFIFO(st.st_mode)) {
    // A reader exists when this open succeeds; nothing is written, and the close looks to the
    // daemon like a client that sent no command.
    int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      close(fd);
      return MpsPipe::kLive;
    }
    return errno == ENXIO ? MpsPipe::kStale : MpsPipe::kNone;
  }
  if (S_ISSOCK(st.st_mode)) {
    // The daemon's control socket (CUDA 12+ drivers make one): its type is the daemon's own,
    // so each is tried; a connection that is accepted is closed at once, unused.
    struct sockaddr_un addr = {};
    if (path.size() >= sizeof addr.sun_path) return MpsPipe::kNone;
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    for (int type : {SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM}) {
      // Non-blocking: a daemon busy elsewhere with a full accept queue must not hang its caller
      // (EAGAIN: a listener is there).
      int fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) return MpsPipe::kNone;
      const int rc = connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr);
      const int err = errno;
      close(fd);
      if (rc == 0 || err == EAGAIN || err == EINPROGRESS) return MpsPipe::kLive;
      if (err == ECONNREFUSED) return MpsPipe::kStale;
      if (err != EPROTOTYPE) return MpsPipe::kNone;
    }
  }
  return MpsPipe::kNone;
}

MpsSources SystemMpsSources() {
  MpsSources s;
  s.driver = [](int device, bool* enabled) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMpsEnabled, device) != cudaSuccess) {
      (void)cudaGetLastError();  // a driver older than the attribute: not the program's error
      return false;
    }
    *enabled = v != 0;
    return true;
  };
  s.getenv = [](const char* n) { return static_cast<const char*>(std::getenv(n)); };
  s.probe = ProbeMpsPipe;
  return s;
}

MpsState DetectMps(int device, const MpsSources& sources) {
  MpsState st;
  if (device < 0) {
    st.how = "no GPU";
    return st;
  }
  bool enabled = false;
  if (sources.driver && sources.driver(device, &enabled)) {
    st.active = enabled;
    st.how = std::string("the CUDA driver: contexts on this GPU are ") +
             (enabled ? "" : "not ") + "shared via MPS (cudaDevAttrMpsEnabled)";
    return st;
  }
  const char* set = sources.getenv ? sources.getenv("CUDA_MPS_PIPE_DIRECTORY") : nullptr;
  const std::string dir = MpsPipeDirectory(
      sources.getenv ? sources.getenv : [](const char*) -> const char* { return nullptr; });
  const std::string where = dir + "/control" +
                            (set != nullptr && set[0] != '\0' ? " (CUDA_MPS_PIPE_DIRECTORY)"
                                                              : " (the default directory)");
  const MpsPipe pipe = sources.probe ? sources.probe(dir) : MpsPipe::kNone;
  st.active = pipe == MpsPipe::kLive;
  st.how = std::string("the driver does not say (no cudaDevAttrMpsEnabled); ") +
           (pipe == MpsPipe::kLive    ? "a control daemon reads " + where
            : pipe == MpsPipe::kStale ? "no control daemon reads " + where + " (a stale pipe)"
                                      : "no control pipe at " + where);
  return st;
}

MpsState MpsOfDevice(int device) {
  static std::mutex mu;
  static std::map<int, MpsState>* known = new std::map<int, MpsState>();  // never destroyed
  std::lock_guard<std::mutex> lock(mu);
  auto it = known->find(device);
  if (it == known->end()) it = known->emplace(device, DetectMps(device, SystemMpsSources())).first;
  return it->second;
}

}  // namespace mpigpu
