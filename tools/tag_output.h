// mpigpurun --tag-output: each rank's stdout and stderr come through pipes, and every line goes
// out on the launcher's stdout or stderr as "[R]<stdout>:line" / "[R]<stderr>:line" (Open MPI's
// --tag-output form without its job number). A line leaves in one write(2) once its newline has
// come, so lines of different ranks never mix mid-line; a line longer than kMaxLine goes out in
// pieces of kMaxLine bytes, each a line with its prefix; a last line without a newline gets one
// when its pipe closes.
//
// Single-threaded: the supervisor polls AppendPollFds with its other descriptors and calls Serve
// when any is ready; Drain reads what is left once the ranks have ended.
#pragma once

#include <poll.h>

#include <string>
#include <utility>
#include <vector>

namespace mpigpu {
namespace launcher {

// Cuts a byte stream into lines and writes each with a prefix to `out_fd`.
class LineTagger {
 public:
  LineTagger(std::string prefix, int out_fd) : prefix_(std::move(prefix)), out_fd_(out_fd) {}
  void Feed(const char* data, size_t n);
  void Finish();  // the stream ended: a partial line goes out with a newline

  static constexpr size_t kMaxLine = 64 * 1024;

 private:
  void Emit(const char* data, size_t n);  // prefix + data + '\n', one write
  std::string prefix_;
  int out_fd_;
  std::string partial_;
  bool cut_ = false;  // pieces of the current line went out already
};

class TaggedOutput {
 public:
  TaggedOutput() = default;
  TaggedOutput(const TaggedOutput&) = delete;
  TaggedOutput& operator=(const TaggedOutput&) = delete;
  ~TaggedOutput();

  // Makes rank r's two pipes; *out and *err: the write ends for the child (close on exec: the
  // child dup2s them), which the caller closes once the child started (Started).
  bool Add(int rank, int* out, int* err);
  void Started(int out, int err);  // closes the launcher's copies of the write ends

  void AppendPollFds(std::vector<pollfd>* fds) const;
  void Serve();  // reads what is ready, no wait
  // Reads until every pipe closed or `seconds` passed (a rank's orphaned child may hold a pipe).
  void Drain(double seconds);

 private:
  struct Stream {
    int fd;
    LineTagger tagger;
  };
  bool ReadSome(Stream& s);  // false: the pipe closed
  std::vector<Stream> streams_;
};

}  // namespace launcher
}  // namespace mpigpu
