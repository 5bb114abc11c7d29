// MPIGPU_COLL_CHECK: the ranks of a collective compare what each will send with what each will
// receive before any data moves (coll_check.h).
#include "mpigpu_api/coll_check.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "mpigpu_api/api_config.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/coll_sched.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

// Above every fixed tag of the collectives (kTagBarrier + a round), below the stride of a
// nonblocking collective's tag block.
constexpr int kTagCheck = 0x1f0;
constexpr int kTagVerdict = 0x1f1;

// What rank r sends rank p (or, on p, expects from r), in a collective's schedule.
enum SigField { kMsgs, kBytes, kSizeHash, kTypeHash, kPacked, kSigFields };
// A rank's verdict, shared with every rank.
enum VerdictField { kCode, kSender, kReceiver, kSentMsgs, kSentBytes, kWantMsgs, kWantBytes,
                    kVerdictFields };
enum Code : int64_t { kAgree = 0, kDisagree = 1 };

constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ull;
uint64_t Mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

void StartSig(uint64_t* f) {
  std::memset(f, 0, kSigFields * sizeof(uint64_t));
  f[kSizeHash] = f[kTypeHash] = kFnvBasis;
}

void AddMessage(uint64_t* f, const TypedBuf& b) {
  const uint64_t bytes = b.desc.total_bytes;
  ++f[kMsgs];
  f[kBytes] += bytes;
  f[kSizeHash] = Mix(f[kSizeHash], bytes);
  // MPI_PACKED matches any type signature; an empty message has none; bytes are what the
  // collectives stage data as (IN_PLACE, reductions), whatever the user's type.
  if (b.desc.basic_type == MPIGPU_PACKED || b.desc.basic_type == MPIGPU_BYTE) f[kPacked] = 1;
  else if (bytes > 0) f[kTypeHash] = Mix(f[kTypeHash], static_cast<uint64_t>(b.desc.basic_type));
}

bool SameSig(const uint64_t* sent, const uint64_t* want) {
  return sent[kMsgs] == want[kMsgs] && sent[kBytes] == want[kBytes] &&
         sent[kSizeHash] == want[kSizeHash] &&
         (sent[kPacked] || want[kPacked] || sent[kTypeHash] == want[kTypeHash]);
}

// The error every rank reports for the first verdict that is not kAgree.
int VerdictError(const int64_t* v) {
  const std::string head = "collective arguments disagree (MPIGPU_COLL_CHECK): ";
  std::string what = "rank " + std::to_string(v[kSender]) + " sends rank " +
                     std::to_string(v[kReceiver]) + " " + std::to_string(v[kSentBytes]) +
                     " bytes in " + std::to_string(v[kSentMsgs]) + " message(s), which expects " +
                     std::to_string(v[kWantBytes]) + " bytes in " +
                     std::to_string(v[kWantMsgs]);
  if (v[kSentBytes] == v[kWantBytes] && v[kSentMsgs] == v[kWantMsgs])
    what += ", of other sizes or types";
  return SetLastError(MPIGPU_ERR_OTHER, head + what);
}

// The check's two rounds, added to `s` (intra, 2+ ranks). sent/want: n signatures each. Stops
// `run`, the schedule that will run them, with the agreed error where any verdict is not kAgree.
void AddCheckRounds(CollSched& s, CollSched* run, uint64_t* sent, uint64_t* want) {
  const int n = s.size(), me = s.rank();
  auto* told = reinterpret_cast<uint64_t*>(s.Buffer(n * kSigFields * sizeof(uint64_t)));
  auto* verdicts = reinterpret_cast<int64_t*>(s.Buffer(n * kVerdictFields * sizeof(int64_t)));
  constexpr size_t kSigBytes = kSigFields * sizeof(uint64_t);
  constexpr size_t kVerdictBytes = kVerdictFields * sizeof(int64_t);
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    s.Recv(HostBytes(told + p * kSigFields, kSigBytes), p, kTagCheck);
    s.Send(HostBytes(sent + p * kSigFields, kSigBytes), p, kTagCheck);
  }
  std::memcpy(told + me * kSigFields, sent + me * kSigFields, kSigBytes);
  int64_t* mine = verdicts + me * kVerdictFields;
  s.Then([=] {
    for (int p = 0; p < n; ++p) {
      const uint64_t* t = told + p * kSigFields;
      const uint64_t* w = want + p * kSigFields;
      if (!SameSig(t, w)) {
        const int64_t v[kVerdictFields] = {kDisagree,
                                           p,
                                           me,
                                           static_cast<int64_t>(t[kMsgs]),
                                           static_cast<int64_t>(t[kBytes]),
                                           static_cast<int64_t>(w[kMsgs]),
                                           static_cast<int64_t>(w[kBytes])};
        std::memcpy(mine, v, sizeof v);
        return MPIGPU_SUCCESS;
      }
    }
    return MPIGPU_SUCCESS;
  });
  s.NextRound();
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    s.Recv(HostBytes(verdicts + p * kVerdictFields, kVerdictBytes), p, kTagVerdict);
    s.Send(HostBytes(mine, kVerdictBytes), p, kTagVerdict);
  }
  s.Then([=] {  // `run` owns this step, so outlives it
    for (int p = 0; p < n; ++p)
      if (verdicts[p * kVerdictFields + kCode] != kAgree)
        return run->Stop(VerdictError(verdicts + p * kVerdictFields));
    return MPIGPU_SUCCESS;
  });
  s.NextRound();
}

bool Checked(const CollSched& s) { return !s.coll_comm()->inter && s.size() > 1; }

}  // namespace

bool CollCheckOn() { return GetApiConfig().coll_check; }

void AddCollCheck(CollSched& s) {
  if (!Checked(s)) return;
  const int n = s.size();
  CollSched front(s.coll_comm(), s.tag_base());
  auto* sent = reinterpret_cast<uint64_t*>(front.Buffer(n * kSigFields * sizeof(uint64_t)));
  auto* want = reinterpret_cast<uint64_t*>(front.Buffer(n * kSigFields * sizeof(uint64_t)));
  for (int p = 0; p < n; ++p) {
    StartSig(sent + p * kSigFields);
    StartSig(want + p * kSigFields);
  }
  s.ForEachXfer([&](bool recv, bool local, const TypedBuf& b, int peer) {
    if (local || peer < 0 || peer >= n) return;  // PROC_NULL moves nothing
    AddMessage((recv ? want : sent) + peer * kSigFields, b);
  });
  AddCheckRounds(front, &s, sent, want);
  s.PrependRounds(front);
}

}  // namespace mpigpu::api
