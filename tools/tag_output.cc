#include "tools/tag_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "memcopy/clock.h"

namespace mpigpu {
namespace launcher {
namespace {

// Every byte, retrying short writes; a closed or failing output drops the rest (there is nobody
// to tell), but never blocks the job for ever on EAGAIN.
void WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

void LineTagger::Emit(const char* data, size_t n) {
  std::string line;
  line.reserve(prefix_.size() + n + 1);
  line.append(prefix_).append(data, n).push_back('\n');
  WriteAll(out_fd_, line.data(), line.size());
}

void LineTagger::Feed(const char* data, size_t n) {
  const char* end = data + n;
  while (data < end) {
    const char* nl = static_cast<const char*>(memchr(data, '\n', static_cast<size_t>(end - data)));
    partial_.append(data, static_cast<size_t>((nl != nullptr ? nl : end) - data));
    // Whole pieces of a long line go out as they fill (the line's end follows as its own piece).
    size_t at = 0;
    for (; partial_.size() - at > kMaxLine || (nl == nullptr && partial_.size() - at == kMaxLine);
         at += kMaxLine)
      Emit(partial_.data() + at, kMaxLine);
    if (at > 0) {
      partial_.erase(0, at);
      cut_ = true;
    }
    if (nl == nullptr) return;
    if (!partial_.empty() || !cut_) Emit(partial_.data(), partial_.size());
    partial_.clear();
    cut_ = false;
    data = nl + 1;
  }
}

void LineTagger::Finish() {
  if (!partial_.empty()) Emit(partial_.data(), partial_.size());
  partial_.clear();
  cut_ = false;
}

TaggedOutput::~TaggedOutput() {
  for (Stream& s : streams_)
    if (s.fd >= 0) close(s.fd);
}

bool TaggedOutput::Add(int rank, int* out, int* err) {
  int o[2], e[2];
  if (pipe2(o, O_CLOEXEC) != 0) return false;
  if (pipe2(e, O_CLOEXEC) != 0) {
    close(o[0]);
    close(o[1]);
    return false;
  }
  // The launcher's ends never block it: it reads what is there when poll says so.
  fcntl(o[0], F_SETFL, O_NONBLOCK);
  fcntl(e[0], F_SETFL, O_NONBLOCK);
  const std::string r = std::to_string(rank);
  streams_.push_back(Stream{o[0], LineTagger("[" + r + "]<stdout>:", STDOUT_FILENO)});
  streams_.push_back(Stream{e[0], LineTagger("[" + r + "]<stderr>:", STDERR_FILENO)});
  *out = o[1];
  *err = e[1];
  return true;
}

void TaggedOutput::Started(int out, int err) {
  if (out >= 0) close(out);
  if (err >= 0) close(err);
}

void TaggedOutput::AppendPollFds(std::vector<pollfd>* fds) const {
  for (const Stream& s : streams_)
    if (s.fd >= 0) fds->push_back({s.fd, POLLIN, 0});
}

bool TaggedOutput::ReadSome(Stream& s) {
  char buf[16384];
  for (int rounds = 0; rounds < 16; ++rounds) {  // bounded: other ranks get their turn
    const ssize_t k = read(s.fd, buf, sizeof buf);
    if (k > 0) {
      s.tagger.Feed(buf, static_cast<size_t>(k));
      continue;
    }
    if (k < 0 && (errno == EINTR)) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    s.tagger.Finish();  // EOF (or an error: nothing more will come)
    close(s.fd);
    s.fd = -1;
    return false;
  }
  return true;
}

void TaggedOutput::Serve() {
  std::vector<pollfd> fds;
  std::vector<Stream*> which;
  for (Stream& s : streams_)
    if (s.fd >= 0) {
      fds.push_back({s.fd, POLLIN, 0});
      which.push_back(&s);
    }
  if (fds.empty() || poll(fds.data(), fds.size(), 0) <= 0) return;
  for (size_t i = 0; i < fds.size(); ++i)
    if (fds[i].revents != 0) ReadSome(*which[i]);
}

void TaggedOutput::Drain(double seconds) {
  const double deadline = MonotonicSeconds() + seconds;
  for (;;) {
    std::vector<pollfd> fds;
    AppendPollFds(&fds);
    const double left = deadline - MonotonicSeconds();
    if (fds.empty() || left <= 0) break;
    if (poll(fds.data(), fds.size(), static_cast<int>(left * 1000) + 1) > 0) Serve();
  }
  for (Stream& s : streams_) {  // what a pipe still held back when time ran out
    if (s.fd < 0) continue;
    s.tagger.Finish();
    close(s.fd);
    s.fd = -1;
  }
}

}  // namespace launcher
}  // namespace mpigpu
