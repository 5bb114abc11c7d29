// The public API's completion calls: Wait/Waitall/Waitany, Test/Testall, Probe/Iprobe,
// Get_count and Request_free. Their errors go to the handler of the request's communicator.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <unordered_set>

#include "mpigpu_api/api_entry.h"
#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

// The objects behind an array of handles, resolved once by CheckRequests (null for null
// handles); held on the stack for the usual small arrays.
class RequestObjects {
 public:
  explicit RequestObjects(int count) {
    if (count > kInline) heap_.resize(count);
  }
  ApiRequest** get() { return heap_.empty() ? inline_ : heap_.data(); }

 private:
  static constexpr int kInline = 16;
  ApiRequest* inline_[kInline];
  std::vector<ApiRequest*> heap_;
};

// Validates count requests (null ones allowed, none twice) and resolves them into objs[i]. A
// bad one fails the whole call before anything is completed or freed; the detail names its
// index.
int CheckRequests(int count, MPIGPU_Request requests[], ApiRequest** objs) {
  if (count < 0)
    return SetLastError(MPIGPU_ERR_COUNT, "count " + std::to_string(count) + " is negative");
  if (count > 0 && requests == nullptr)
    return SetLastError(MPIGPU_ERR_ARG, "null request array");
  // Small arrays (a halo exchange waits for 4 to 16) are searched for duplicates in place: a
  // set would cost an allocation per call.
  constexpr int kScanLimit = 16;
  std::unordered_set<MPIGPU_Request> seen;
  for (int i = 0; i < count; ++i) {
    objs[i] = nullptr;
    if (requests[i] == MPIGPU_REQUEST_NULL) continue;
    if ((objs[i] = LookupRequest(requests[i])) == nullptr) {
      const int rc = RequestError(requests[i]);
      return SetLastError(rc, "request " + std::to_string(i) + " of the array: " +
                                  LastErrorDetail(rc));
    }
    const bool twice = count <= kScanLimit
                           ? std::find(requests, requests + i, requests[i]) != requests + i
                           : !seen.insert(requests[i]).second;
    if (twice)
      return SetLastError(MPIGPU_ERR_REQUEST,
                          "request " + std::to_string(i) + " appears twice in the array");
  }
  return MPIGPU_SUCCESS;
}

}  // namespace
}  // namespace mpigpu::api

namespace {

int DoWait(Lock& lk, MPIGPU_Request* request, MPIGPU_Status* status, MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (request == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null request pointer");
  if (*request == MPIGPU_REQUEST_NULL) {
    mpigpu::api::EmptyStatus(status, MPIGPU_ANY_SOURCE);
    return MPIGPU_SUCCESS;
  }
  const MPIGPU_Request handle = *request;
  ApiRequest* r = mpigpu::api::CheckedRequest(handle);
  if (r == nullptr) return MPIGPU_ERR_REQUEST;
  *h = r->comm->errhandler;
  // Another thread may complete or free the request while the lock is dropped (a wait on a
  // copy of the handle): the wait then ends, and the handle is stale.
  const uintptr_t v = r->handle;
  if (int rc = mpigpu::api::ProgressUntil(
          lk, [r, v] { return r->handle != v || mpigpu::api::P2PDone(r); });
      rc != MPIGPU_SUCCESS)
    return rc;
  if (r->handle != v) return mpigpu::api::RequestError(handle);
  if (!r->persist) *request = MPIGPU_REQUEST_NULL;  // a persistent one stays, inactive
  return mpigpu::api::CompleteP2P(r, status);
}

// Whether `r`, the object resolved for handle `h` (null for a null handle), can complete
// without blocking. A handle gone stale while the lock was dropped (another thread completed or
// freed its request) counts as done: completing it then reports the error.
inline bool ObjectDone(const ApiRequest* r, MPIGPU_Request h) {
  return r == nullptr || r->handle != mpigpu::api::HandleValue(h) || mpigpu::api::P2PDone(r);
}

bool AllDone(int count, MPIGPU_Request requests[], ApiRequest* const* objs) {
  for (int i = 0; i < count; ++i)
    if (!ObjectDone(objs[i], requests[i])) return false;
  return true;
}

// Completes every request of the array (all done; objs from CheckRequests); the first error
// wins. statuses may be null.
int CompleteAll(int count, MPIGPU_Request requests[], ApiRequest* const* objs,
                MPIGPU_Status statuses[], MPIGPU_Errhandler* h) {
  int first = MPIGPU_SUCCESS;
  for (int i = 0; i < count; ++i) {
    MPIGPU_Status* st = statuses == MPIGPU_STATUSES_IGNORE ? nullptr : &statuses[i];
    ApiRequest* r = objs[i];
    if (r == nullptr) {
      mpigpu::api::EmptyStatus(st, MPIGPU_ANY_SOURCE);
      continue;
    }
    if (r->handle != mpigpu::api::HandleValue(requests[i])) {  // see ObjectDone
      const int rc = mpigpu::api::RequestError(requests[i]);
      if (st != nullptr) st->MPIGPU_ERROR = rc;
      if (first == MPIGPU_SUCCESS) first = rc;
      continue;
    }
    MPIGPU_Errhandler rh = r->comm->errhandler;
    if (!r->persist) requests[i] = MPIGPU_REQUEST_NULL;  // a persistent one stays, inactive
    int rc = mpigpu::api::CompleteP2P(r, st);
    if (rc != MPIGPU_SUCCESS && first == MPIGPU_SUCCESS) {
      first = rc;
      *h = rh;
    }
  }
  if (first != MPIGPU_SUCCESS)  // the detail of the first failure, not of a later one
    SetLastError(first, mpigpu::LastErrorDetail(first));
  return first;
}

int DoWaitall(Lock& lk, int count, MPIGPU_Request requests[], MPIGPU_Status statuses[],
              MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  mpigpu::api::RequestObjects objs(count);
  if (int rc = mpigpu::api::CheckRequests(count, requests, objs.get()); rc != MPIGPU_SUCCESS)
    return rc;
  if (int rc = mpigpu::api::ProgressUntil(lk, [&] { return AllDone(count, requests, objs.get()); });
      rc != MPIGPU_SUCCESS)
    return rc;
  return CompleteAll(count, requests, objs.get(), statuses, h);
}

int DoTestall(int count, MPIGPU_Request requests[], int* flag, MPIGPU_Status statuses[],
              MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (flag == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null flag");
  *flag = 0;
  mpigpu::api::RequestObjects objs(count);
  if (int rc = mpigpu::api::CheckRequests(count, requests, objs.get()); rc != MPIGPU_SUCCESS)
    return rc;
  if (!AllDone(count, requests, objs.get())) {
    if (int rc = mpigpu::api::ProgressOnce(); rc != MPIGPU_SUCCESS) return rc;
    if (!AllDone(count, requests, objs.get())) return MPIGPU_SUCCESS;
  }
  *flag = 1;
  return CompleteAll(count, requests, objs.get(), statuses, h);
}

int DoWaitany(Lock& lk, int count, MPIGPU_Request requests[], int* index, MPIGPU_Status* status,
              MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (index == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null index");
  *index = MPIGPU_UNDEFINED;
  mpigpu::api::RequestObjects objs_of(count);
  ApiRequest** objs = objs_of.get();
  if (int rc = mpigpu::api::CheckRequests(count, requests, objs); rc != MPIGPU_SUCCESS) return rc;
  // Inactive persistent requests count as null ones.
  for (int i = 0; i < count; ++i)
    if (objs[i] != nullptr && mpigpu::api::InactivePersistent(objs[i])) objs[i] = nullptr;
  bool any = false;
  for (int i = 0; i < count; ++i) any |= objs[i] != nullptr;
  if (!any) {
    mpigpu::api::EmptyStatus(status, MPIGPU_ANY_SOURCE);
    return MPIGPU_SUCCESS;
  }
  int found = -1;
  auto one_done = [&] {
    for (int i = 0; i < count; ++i)
      if (objs[i] != nullptr && ObjectDone(objs[i], requests[i])) {
        found = i;
        return true;
      }
    return false;
  };
  if (int rc = mpigpu::api::ProgressUntil(lk, one_done); rc != MPIGPU_SUCCESS) return rc;
  *index = found;
  ApiRequest* r = objs[found];
  if (r->handle != mpigpu::api::HandleValue(requests[found]))  // see ObjectDone
    return mpigpu::api::RequestError(requests[found]);
  *h = r->comm->errhandler;
  if (!r->persist) requests[found] = MPIGPU_REQUEST_NULL;
  return mpigpu::api::CompleteP2P(r, status);
}

int DoTest(MPIGPU_Request* request, int* flag, MPIGPU_Status* status, MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (request == nullptr || flag == nullptr)
    return SetLastError(MPIGPU_ERR_ARG, "null request pointer or flag");
  *flag = 0;
  if (*request == MPIGPU_REQUEST_NULL) {
    *flag = 1;
    mpigpu::api::EmptyStatus(status, MPIGPU_ANY_SOURCE);
    return MPIGPU_SUCCESS;
  }
  ApiRequest* r = mpigpu::api::CheckedRequest(*request);
  if (r == nullptr) return MPIGPU_ERR_REQUEST;
  *h = r->comm->errhandler;
  if (!mpigpu::api::P2PDone(r)) {
    if (int rc = mpigpu::api::ProgressOnce(); rc != MPIGPU_SUCCESS) return rc;
    if (!mpigpu::api::P2PDone(r)) return MPIGPU_SUCCESS;
  }
  *flag = 1;
  if (!r->persist) *request = MPIGPU_REQUEST_NULL;
  return mpigpu::api::CompleteP2P(r, status);
}

// Iprobe; with `block`, until a message is there.
int DoProbe(Lock& lk, int source, int tag, MPIGPU_Comm comm, int* flag, MPIGPU_Status* status,
            bool block) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = mpigpu::api::LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (!block && flag == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null flag");
  if (int rc = mpigpu::api::CheckPeer(*c, source, true); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = mpigpu::api::CheckTag(tag, true); rc != MPIGPU_SUCCESS) return rc;
  if (flag) *flag = 0;
  if (source == MPIGPU_PROC_NULL) {
    if (flag) *flag = 1;
    mpigpu::api::EmptyStatus(status, MPIGPU_PROC_NULL);
    return MPIGPU_SUCCESS;
  }
  const int world = mpigpu::api::EnginePeer(*c, source);
  const int etag = mpigpu::api::EngineTag(tag);
  bool found = false;
  mpigpu::transport::MsgInfo info;
  for (int round = 0;; ++round) {
    mpigpu::Status st = GetState().engine->Iprobe(world, etag, c->ctx_p2p, &found, &info);
    if (!st.ok()) return mpigpu::ReturnCode(st, MPIGPU_ERR_INTERN);
    if (found || !block) break;
    if (!mpigpu::api::PauseDropsLock(round)) continue;
    mpigpu::api::PauseUnlocked(lk, round);
    if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  }
  if (!found) return MPIGPU_SUCCESS;
  if (flag) *flag = 1;
  if (status != MPIGPU_STATUS_IGNORE) {
    mpigpu::api::EmptyStatus(status, c->from_world[info.source]);
    status->MPIGPU_TAG = info.tag;
    status->count_bytes = info.bytes;
  }
  return MPIGPU_SUCCESS;
}

int DoGetCount(const MPIGPU_Status* status, MPIGPU_Datatype datatype, int* count) {
  if (status == nullptr || count == nullptr)
    return SetLastError(MPIGPU_ERR_ARG, "null status or count");
  mpigpu::TypeInfo info;
  if (int rc = mpigpu::LookupType(datatype, &info); rc != MPIGPU_SUCCESS) return rc;
  const size_t bytes = status->count_bytes;
  if (info.size == 0) {
    *count = bytes == 0 ? 0 : MPIGPU_UNDEFINED;
  } else if (bytes % info.size != 0 || bytes / info.size > static_cast<size_t>(INT_MAX)) {
    *count = MPIGPU_UNDEFINED;
  } else {
    *count = static_cast<int>(bytes / info.size);
  }
  return MPIGPU_SUCCESS;
}

int DoRequestFree(MPIGPU_Request* request, MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (request == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null request pointer");
  ApiRequest* r = mpigpu::api::CheckedRequest(*request);
  if (r == nullptr) return MPIGPU_ERR_REQUEST;
  *h = r->comm->errhandler;
  *request = MPIGPU_REQUEST_NULL;
  if (r->persist) {  // from now on an ordinary collective request, if it is running
    const bool inactive = r->sched == nullptr;
    r->persist.reset();
    if (inactive) {
      mpigpu::api::FreeInactiveRequest(r);
      return MPIGPU_SUCCESS;
    }
  }
  if (mpigpu::api::P2PDone(r)) (void)mpigpu::api::CompleteP2P(r, nullptr);
  else mpigpu::api::Detach(r);
  return MPIGPU_SUCCESS;
}

}  // namespace

// ---- completion ----
// Errors of completion calls go to the handler of the request's communicator (WORLD's when
// the request itself is bad).

namespace {

// The handler of a completion call's errors until a request names its communicator's.
constexpr MPIGPU_Errhandler kWorldsHandler = MPIGPU_ERRHANDLER_NULL;

int FinishCompletion(const char* fn, MPIGPU_Errhandler h, int rc) {
  if (rc == MPIGPU_SUCCESS) return rc;
  return FinishWith(fn, h == kWorldsHandler ? mpigpu::api::HandlerOf(kWorld) : h, rc);
}

}  // namespace

extern "C" int MPIGPU_Wait(MPIGPU_Request* request, MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoWait(lk, request, status, &h);
  return FinishCompletion("MPIGPU_Wait", h, rc);
}

extern "C" int MPIGPU_Waitall(int count, MPIGPU_Request requests[], MPIGPU_Status statuses[]) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoWaitall(lk, count, requests, statuses, &h);
  return FinishCompletion("MPIGPU_Waitall", h, rc);
}

extern "C" int MPIGPU_Waitany(int count, MPIGPU_Request requests[], int* index,
                              MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoWaitany(lk, count, requests, index, status, &h);
  return FinishCompletion("MPIGPU_Waitany", h, rc);
}

extern "C" int MPIGPU_Test(MPIGPU_Request* request, int* flag, MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoTest(request, flag, status, &h);
  return FinishCompletion("MPIGPU_Test", h, rc);
}

extern "C" int MPIGPU_Testall(int count, MPIGPU_Request requests[], int* flag,
                              MPIGPU_Status statuses[]) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoTestall(count, requests, flag, statuses, &h);
  return FinishCompletion("MPIGPU_Testall", h, rc);
}

extern "C" int MPIGPU_Probe(int source, int tag, MPIGPU_Comm comm, MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Probe", comm, DoProbe(lk, source, tag, comm, nullptr, status, true));
}

extern "C" int MPIGPU_Iprobe(int source, int tag, MPIGPU_Comm comm, int* flag,
                             MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Iprobe", comm, DoProbe(lk, source, tag, comm, flag, status, false));
}

extern "C" int MPIGPU_Get_count(const MPIGPU_Status* status, MPIGPU_Datatype datatype,
                                int* count) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Get_count", kWorld, DoGetCount(status, datatype, count));
}

// Withdraws a receive no message has matched yet (it completes, its status cancelled), or asks
// the receiver of a send to give its message back if no receive matched it yet (the request
// completes once it answered: cancelled, or as it would have). A matched receive completes as it
// would (MPI allows a cancel to fail).
extern "C" int MPIGPU_Cancel(MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  int rc = CheckActive();
  MPIGPU_Errhandler h = kWorldsHandler;
  if (rc == MPIGPU_SUCCESS && request == nullptr) rc = SetLastError(MPIGPU_ERR_ARG, "null request pointer");
  ApiRequest* r = nullptr;
  if (rc == MPIGPU_SUCCESS && (r = mpigpu::api::CheckedRequest(*request)) == nullptr)
    rc = MPIGPU_ERR_REQUEST;
  if (rc == MPIGPU_SUCCESS) {
    h = r->comm->errhandler;
    if (r->op != nullptr && r->recv && !r->op->done()) (void)GetState().engine->CancelRecv(r->op);
    if (r->op != nullptr && !r->recv) GetState().engine->CancelSend(r->op);
  }
  return FinishCompletion("MPIGPU_Cancel", h, rc);
}

extern "C" int MPIGPU_Request_free(MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoRequestFree(request, &h);
  return FinishCompletion("MPIGPU_Request_free", h, rc);
}
