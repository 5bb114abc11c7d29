// Tag matching with long queues: N messages or receives, matched in the
// reverse of their tag order, so that each match is the newest entry of its queue.
//   match_bench [queue|api|all] [N...]        (default: all 10000 20000 40000)
// queue: the matcher alone (transport/match.h): `unexpected` pushes N envelopes with tags
//   0..N-1 and removes them with receives for tags N-1..0; `posted` pushes N receives with tags
//   0..N-1 and matches messages with tags N-1..0 against them.
// api: one process through the public API, to itself: `unexpected` sends N one-byte messages
//   with tags 0..N-1 (eager: each lands in the unexpected queue) and receives them for tags
//   N-1..0; `posted` posts N receives with tags 0..N-1 (Irecv) and sends tags N-1..0, then waits
//   for all. Bytes are checked. Run it without the launcher.
// Prints one line per (mode, queue, N) with the seconds of the matching phase: wall clock, and
// this thread's CPU time (steadier on a shared machine).
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "transport/match.h"

using namespace mpigpu;

namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Wall and CPU seconds since construction, as "W s (cpu C s)".
struct Timer {
  double wall = Seconds(), cpu = CpuSeconds();
  std::string Text() const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4f s (cpu %.4f s)", Seconds() - wall, CpuSeconds() - cpu);
    return buf;
  }
};

struct Entry : MatchEntry {
  int id = 0;
};

void Fail(const char* what) {
  std::fprintf(stderr, "match_bench: %s\n", what);
  std::exit(1);
}

// n entries with tags 0..n-1 in queue Q, then taken in reverse tag order (each search walks the
// whole queue in a plain list: the quadratic case).
template <class Q>
void ReverseOrder(int n, const char* name) {
  std::vector<Entry> entries(n);
  Q q;
  for (int i = 0; i < n; ++i) {
    entries[i].key = MatchKey{0, 1, i};
    entries[i].id = i;
    q.PushBack(&entries[i]);
  }
  const Timer t;
  for (int i = n - 1; i >= 0; --i) {
    Entry* e = q.FindAndRemove(MatchKey{0, 1, i});
    if (e == nullptr || e->id != i) Fail((std::string(name) + ": wrong entry").c_str());
  }
  std::printf("%s N=%d: %s\n", name, n, t.Text().c_str());
}

void QueueUnexpected(int n) { ReverseOrder<UnexpectedQueue<Entry>>(n, "queue unexpected"); }
void QueuePosted(int n) { ReverseOrder<PostedQueue<Entry>>(n, "queue posted"); }

void Api(int rc, const char* what) {
  if (rc != MPIGPU_SUCCESS) Fail(what);
}

unsigned char ByteOf(int tag) { return static_cast<unsigned char>(tag * 7 + 3); }

void ApiUnexpected(int n) {
  const double t0 = Seconds();
  for (int i = 0; i < n; ++i) {
    unsigned char b = ByteOf(i);
    Api(MPIGPU_Send(&b, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 0, i, MPIGPU_COMM_WORLD), "send");
  }
  const double t1 = Seconds();
  const Timer t;
  for (int i = n - 1; i >= 0; --i) {
    unsigned char b = 0;
    MPIGPU_Status st;
    Api(MPIGPU_Recv(&b, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 0, i, MPIGPU_COMM_WORLD, &st), "recv");
    if (b != ByteOf(i) || st.MPIGPU_TAG != i) Fail("api unexpected: wrong message");
  }
  std::printf("api unexpected N=%d: %s, sends %.4f s\n", n, t.Text().c_str(), t1 - t0);
}

void ApiPosted(int n) {
  std::vector<unsigned char> bufs(n, 0);
  std::vector<MPIGPU_Request> reqs(n);
  const double t0 = Seconds();
  for (int i = 0; i < n; ++i)
    Api(MPIGPU_Irecv(&bufs[i], MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 0, i, MPIGPU_COMM_WORLD,
                     &reqs[i]),
        "irecv");
  const double t1 = Seconds();
  const Timer t;
  for (int i = n - 1; i >= 0; --i) {
    unsigned char b = ByteOf(i);
    Api(MPIGPU_Send(&b, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 0, i, MPIGPU_COMM_WORLD), "send");
  }
  Api(MPIGPU_Waitall(n, reqs.data(), MPIGPU_STATUSES_IGNORE), "waitall");
  const std::string took = t.Text();
  for (int i = 0; i < n; ++i)
    if (bufs[i] != ByteOf(i)) Fail("api posted: wrong bytes");
  std::printf("api posted N=%d: %s, posting %.4f s\n", n, took.c_str(), t1 - t0);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "all";
  if (mode != "queue" && mode != "api" && mode != "all") {
    std::fprintf(stderr, "usage: match_bench [queue|api|all] [N...]\n");
    return 2;
  }
  std::vector<int> sizes;
  for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {10000, 20000, 40000};
  if (mode != "api") {
    for (int n : sizes) QueueUnexpected(n);
    for (int n : sizes) QueuePosted(n);
  }
  if (mode != "queue") {
    Api(MPIGPU_Init(nullptr, nullptr), "init");
    for (int n : sizes) ApiUnexpected(n);
    for (int n : sizes) ApiPosted(n);
    Api(MPIGPU_Finalize(), "finalize");
  }
  std::fflush(stdout);
  return 0;
}
