// Attributes: keys (keyvals) with copy and delete callbacks, values cached on communicators
// (CommData::attrs) and datatypes (a table here, by handle), and the predefined keys of
// MPIGPU_COMM_WORLD (TAG_UB, HOST, IO, WTIME_IS_GLOBAL, APPNUM, UNIVERSE_SIZE, LASTUSEDCODE).
//
// Callbacks are user code that may call mpigpu (even get or set attributes): each runs with the
// API's lock dropped, and the state is looked up again afterwards. A key freed by the user stays
// alive here while attributes use it (MPI's rule), so their delete callbacks still run
// (Keyval::refs).
#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/datatype.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

enum class KeyKind { kComm, kType };

struct Keyval {
  KeyKind kind = KeyKind::kComm;
  void* copy_fn = nullptr;    // MPIGPU_{Comm,Type}_copy_attr_function*; null: never copied
  void* delete_fn = nullptr;  // MPIGPU_{Comm,Type}_delete_attr_function*; null: nothing to do
  void* extra_state = nullptr;
  // References: the user's handle (until freed) and each attribute set with the key; at 0 the
  // key is gone. As in MPICH, freeing a key that is still alive again does nothing (a delete
  // callback may free the key it runs for: MPICH's keyval_double_free tests).
  int refs = 1;
  bool freed = false;
};

// Keys from this value up are the user's (below: predefined, MPIGPU_KEYVAL_*).
constexpr int kFirstUserKeyval = 16;

// Guarded by the API's lock.
struct Attrs {
  std::vector<Keyval> keyvals;  // user key k at index k - kFirstUserKeyval
  std::map<MPIGPU_Datatype, std::vector<std::pair<int, void*>>> types;  // attributes by type
};
Attrs& GetAttrs() {
  static Attrs* a = new Attrs();  // never destroyed: calls may come during exit
  return *a;
}

bool IsPredefined(int keyval) {
  return keyval >= MPIGPU_KEYVAL_TAG_UB && keyval <= MPIGPU_KEYVAL_LASTUSEDCODE;
}

// The user key `keyval` of `kind` (still referenced unless `allow_freed`), or null (detail
// recorded).
Keyval* FindKeyval(int keyval, KeyKind kind, bool allow_freed) {
  std::vector<Keyval>& ks = GetAttrs().keyvals;
  const long long i = static_cast<long long>(keyval) - kFirstUserKeyval;
  if (i < 0 || i >= static_cast<long long>(ks.size())) {
    SetLastError(MPIGPU_ERR_KEYVAL, keyval == MPIGPU_KEYVAL_INVALID
                                        ? std::string("keyval is MPIGPU_KEYVAL_INVALID")
                                        : "keyval " + std::to_string(keyval) + " is not valid");
    return nullptr;
  }
  Keyval& k = ks[i];
  if (k.kind != kind) {
    SetLastError(MPIGPU_ERR_KEYVAL, "keyval " + std::to_string(keyval) + " is a " +
                                        (k.kind == KeyKind::kComm ? "communicator" : "datatype") +
                                        " key");
    return nullptr;
  }
  if (k.refs <= 0 && !allow_freed) {
    SetLastError(MPIGPU_ERR_KEYVAL, "keyval " + std::to_string(keyval) + " was freed");
    return nullptr;
  }
  return &k;
}

// The value of a predefined key (ints that live as long as the process).
void* PredefinedValue(int keyval) {
  static int tag_ub, host, io, wtime_global, appnum, universe, lastcode;
  tag_ub = MPIGPU_TAG_UB;
  host = MPIGPU_PROC_NULL;
  io = MPIGPU_ANY_SOURCE;  // every rank can do I/O
  wtime_global = 0;
  appnum = 0;
  universe = GetState().engine ? GetState().engine->size() : 1;
  lastcode = MPIGPU_ERR_LASTCODE;
  switch (keyval) {
    case MPIGPU_KEYVAL_TAG_UB: return &tag_ub;
    case MPIGPU_KEYVAL_HOST: return &host;
    case MPIGPU_KEYVAL_IO: return &io;
    case MPIGPU_KEYVAL_WTIME_IS_GLOBAL: return &wtime_global;
    case MPIGPU_KEYVAL_APPNUM: return &appnum;
    case MPIGPU_KEYVAL_UNIVERSE_SIZE: return &universe;
    default: return &lastcode;
  }
}

int CreateKeyval(KeyKind kind, void* copy_fn, void* delete_fn, int* keyval, void* extra) {
  if (keyval == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null keyval");
  std::vector<Keyval>& ks = GetAttrs().keyvals;
  if (ks.size() >= static_cast<size_t>(INT_MAX - kFirstUserKeyval))
    return SetLastError(MPIGPU_ERR_INTERN, "out of keyvals");
  Keyval k;
  k.kind = kind;
  k.copy_fn = copy_fn;
  k.delete_fn = delete_fn;
  k.extra_state = extra;
  ks.push_back(k);
  *keyval = kFirstUserKeyval + static_cast<int>(ks.size() - 1);
  return MPIGPU_SUCCESS;
}

int FreeKeyval(KeyKind kind, int* keyval) {
  if (keyval == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null keyval");
  if (IsPredefined(*keyval))
    return SetLastError(MPIGPU_ERR_KEYVAL, "predefined keyvals cannot be freed");
  Keyval* k = FindKeyval(*keyval, kind, false);
  if (!k) return MPIGPU_ERR_KEYVAL;
  if (!k->freed) {
    k->freed = true;
    --k->refs;
  }
  *keyval = MPIGPU_KEYVAL_INVALID;
  return MPIGPU_SUCCESS;
}

// Runs key `keyval`'s delete callback on `value` of object `handle`, lock dropped.
int RunDelete(Lock& lk, KeyKind kind, int handle, int keyval, void* value) {
  const Keyval k = *FindKeyval(keyval, kind, true);  // copy: the table may grow meanwhile
  if (k.delete_fn == nullptr) return MPIGPU_SUCCESS;
  lk.unlock();
  const int rc =
      kind == KeyKind::kComm
          ? reinterpret_cast<MPIGPU_Comm_delete_attr_function*>(k.delete_fn)(handle, keyval, value,
                                                                              k.extra_state)
          : reinterpret_cast<MPIGPU_Type_delete_attr_function*>(k.delete_fn)(handle, keyval, value,
                                                                              k.extra_state);
  lk.lock();
  if (rc != MPIGPU_SUCCESS)
    return SetLastError(rc, "delete callback of keyval " + std::to_string(keyval) +
                                " returned " + std::to_string(rc));
  return MPIGPU_SUCCESS;
}

// Runs the copy callback of `keyval` on `value`; *keep = whether to store *out on the copy.
int RunCopy(Lock& lk, KeyKind kind, int handle, int keyval, void* value, void** out, bool* keep) {
  const Keyval k = *FindKeyval(keyval, kind, true);
  *keep = false;
  if (k.copy_fn == nullptr) return MPIGPU_SUCCESS;
  int flag = 0;
  lk.unlock();
  const int rc =
      kind == KeyKind::kComm
          ? reinterpret_cast<MPIGPU_Comm_copy_attr_function*>(k.copy_fn)(handle, keyval,
                                                                          k.extra_state, value,
                                                                          out, &flag)
          : reinterpret_cast<MPIGPU_Type_copy_attr_function*>(k.copy_fn)(handle, keyval,
                                                                          k.extra_state, value,
                                                                          out, &flag);
  lk.lock();
  if (rc != MPIGPU_SUCCESS)
    return SetLastError(rc, "copy callback of keyval " + std::to_string(keyval) + " returned " +
                                std::to_string(rc));
  *keep = flag != 0;
  return MPIGPU_SUCCESS;
}

// An attribute with key `keyval` was added (+1) or removed (-1).
void AddRef(int keyval, int delta) {
  GetAttrs().keyvals[keyval - kFirstUserKeyval].refs += delta;
}

using AttrList = std::vector<std::pair<int, void*>>;

// Where `keyval` sits in `list`, or list.end().
AttrList::iterator Find(AttrList& list, int keyval) {
  return std::find_if(list.begin(), list.end(),
                      [keyval](const std::pair<int, void*>& a) { return a.first == keyval; });
}

// The attribute list of `handle` (a communicator's or a datatype's), or null (detail recorded).
// Lists of communicators are re-found after each callback (the communicator may be freed).
AttrList* ListOf(KeyKind kind, int handle) {
  if (kind == KeyKind::kComm) {
    CommPtr c = LookupComm(handle);
    return c ? &c->attrs : nullptr;
  }
  TypeInfo info;
  if (LookupType(handle, &info) != MPIGPU_SUCCESS) return nullptr;
  return &GetAttrs().types[handle];
}

int SetAttr(Lock& lk, KeyKind kind, int handle, int keyval, void* value) {
  AttrList* list = ListOf(kind, handle);
  if (!list) return kind == KeyKind::kComm ? MPIGPU_ERR_COMM : MPIGPU_ERR_TYPE;
  if (IsPredefined(keyval))
    return SetLastError(MPIGPU_ERR_KEYVAL, "predefined attributes cannot be set");
  if (!FindKeyval(keyval, kind, false)) return MPIGPU_ERR_KEYVAL;
  if (auto at = Find(*list, keyval); at != list->end()) {
    // Overwriting deletes the old value first; a failing delete keeps it.
    if (int rc = RunDelete(lk, kind, handle, keyval, at->second); rc != MPIGPU_SUCCESS) return rc;
    list = ListOf(kind, handle);
    if (!list) return kind == KeyKind::kComm ? MPIGPU_ERR_COMM : MPIGPU_ERR_TYPE;
    at = Find(*list, keyval);
    if (at != list->end()) {
      at->second = value;
      return MPIGPU_SUCCESS;
    }
  }
  list->emplace_back(keyval, value);
  AddRef(keyval, 1);
  return MPIGPU_SUCCESS;
}

int GetAttr(KeyKind kind, int handle, int keyval, void* value, int* flag) {
  AttrList* list = ListOf(kind, handle);
  if (!list) return kind == KeyKind::kComm ? MPIGPU_ERR_COMM : MPIGPU_ERR_TYPE;
  if (value == nullptr || flag == nullptr)
    return SetLastError(MPIGPU_ERR_ARG, "null attribute_val or flag");
  if (kind == KeyKind::kComm && IsPredefined(keyval)) {
    *flag = 1;
    *static_cast<void**>(value) = PredefinedValue(keyval);
    return MPIGPU_SUCCESS;
  }
  // A freed key still reads its attributes (its delete callbacks may, as MPICH allows).
  if (!FindKeyval(keyval, kind, true)) return MPIGPU_ERR_KEYVAL;
  const auto at = Find(*list, keyval);
  *flag = at != list->end();
  if (*flag) *static_cast<void**>(value) = at->second;
  return MPIGPU_SUCCESS;
}

int DeleteAttr(Lock& lk, KeyKind kind, int handle, int keyval) {
  AttrList* list = ListOf(kind, handle);
  if (!list) return kind == KeyKind::kComm ? MPIGPU_ERR_COMM : MPIGPU_ERR_TYPE;
  if (IsPredefined(keyval))
    return SetLastError(MPIGPU_ERR_KEYVAL, "predefined attributes cannot be deleted");
  if (!FindKeyval(keyval, kind, true)) return MPIGPU_ERR_KEYVAL;
  auto at = Find(*list, keyval);
  if (at == list->end())
    return SetLastError(MPIGPU_ERR_KEYVAL,
                        "keyval " + std::to_string(keyval) + " has no attribute on this object");
  if (int rc = RunDelete(lk, kind, handle, keyval, at->second); rc != MPIGPU_SUCCESS) return rc;
  if ((list = ListOf(kind, handle)) != nullptr && (at = Find(*list, keyval)) != list->end()) {
    list->erase(at);
    AddRef(keyval, -1);
  }
  return MPIGPU_SUCCESS;
}

// Deletes every attribute of `list`'s object, newest first (see DeleteCommAttrs).
int DeleteAll(Lock& lk, KeyKind kind, int handle, const std::function<AttrList*()>& list_of) {
  for (AttrList* list = list_of(); list && !list->empty(); list = list_of()) {
    const auto [keyval, value] = list->back();
    if (int rc = RunDelete(lk, kind, handle, keyval, value); rc != MPIGPU_SUCCESS) return rc;
    list = list_of();
    if (!list) break;
    if (auto at = Find(*list, keyval); at != list->end()) {
      list->erase(at);
      AddRef(keyval, -1);
    }
  }
  return MPIGPU_SUCCESS;
}

// Runs the copy callbacks of `from` (in the order set) into `to`.
int CopyAll(Lock& lk, KeyKind kind, int handle, const AttrList& from, AttrList* to) {
  const AttrList snapshot = from;  // callbacks may change the original
  for (const auto& [keyval, value] : snapshot) {
    void* out = nullptr;
    bool keep = false;
    if (int rc = RunCopy(lk, kind, handle, keyval, value, &out, &keep); rc != MPIGPU_SUCCESS)
      return rc;
    if (keep) {
      to->emplace_back(keyval, out);
      AddRef(keyval, 1);
    }
  }
  return MPIGPU_SUCCESS;
}

}  // namespace

int CopyCommAttrs(Lock& lk, MPIGPU_Comm old, const CommPtr& oldc, const CommPtr& made) {
  return CopyAll(lk, KeyKind::kComm, old, oldc->attrs, &made->attrs);
}

int DeleteCommAttrs(Lock& lk, MPIGPU_Comm h, const CommPtr& c) {
  return DeleteAll(lk, KeyKind::kComm, h, [&c]() { return &c->attrs; });
}

}  // namespace mpigpu::api

using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
namespace api = mpigpu::api;
using api::KeyKind;

extern "C" int MPIGPU_Comm_null_copy_fn(MPIGPU_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Comm_dup_fn(MPIGPU_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Type_null_copy_fn(MPIGPU_Datatype, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Type_dup_fn(MPIGPU_Datatype, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Comm_create_keyval(MPIGPU_Comm_copy_attr_function* copy_fn,
                                         MPIGPU_Comm_delete_attr_function* delete_fn,
                                         int* keyval, void* extra_state) {
  Lock lk(GetState().mu);
  // NULL_COPY_FN never copies: stored as no callback.
  void* copy = copy_fn == MPIGPU_COMM_NULL_COPY_FN ? nullptr : reinterpret_cast<void*>(copy_fn);
  return Finish("MPIGPU_Comm_create_keyval", MPIGPU_COMM_NULL,
                api::CreateKeyval(KeyKind::kComm, copy, reinterpret_cast<void*>(delete_fn),
                                  keyval, extra_state));
}

extern "C" int MPIGPU_Comm_free_keyval(int* keyval) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_free_keyval", MPIGPU_COMM_NULL,
                api::FreeKeyval(KeyKind::kComm, keyval));
}

extern "C" int MPIGPU_Comm_set_attr(MPIGPU_Comm comm, int keyval, void* value) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_set_attr", comm,
                api::SetAttr(lk, KeyKind::kComm, comm, keyval, value));
}

extern "C" int MPIGPU_Comm_get_attr(MPIGPU_Comm comm, int keyval, void* value, int* flag) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_get_attr", comm,
                api::GetAttr(KeyKind::kComm, comm, keyval, value, flag));
}

extern "C" int MPIGPU_Comm_delete_attr(MPIGPU_Comm comm, int keyval) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_delete_attr", comm,
                api::DeleteAttr(lk, KeyKind::kComm, comm, keyval));
}

extern "C" int MPIGPU_Type_create_keyval(MPIGPU_Type_copy_attr_function* copy_fn,
                                         MPIGPU_Type_delete_attr_function* delete_fn,
                                         int* keyval, void* extra_state) {
  Lock lk(GetState().mu);
  void* copy = copy_fn == MPIGPU_TYPE_NULL_COPY_FN ? nullptr : reinterpret_cast<void*>(copy_fn);
  return Finish("MPIGPU_Type_create_keyval", MPIGPU_COMM_NULL,
                api::CreateKeyval(KeyKind::kType, copy, reinterpret_cast<void*>(delete_fn),
                                  keyval, extra_state));
}

extern "C" int MPIGPU_Type_free_keyval(int* keyval) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Type_free_keyval", MPIGPU_COMM_NULL,
                api::FreeKeyval(KeyKind::kType, keyval));
}

extern "C" int MPIGPU_Type_set_attr(MPIGPU_Datatype type, int keyval, void* value) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Type_set_attr", MPIGPU_COMM_NULL,
                api::SetAttr(lk, KeyKind::kType, type, keyval, value));
}

extern "C" int MPIGPU_Type_get_attr(MPIGPU_Datatype type, int keyval, void* value, int* flag) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Type_get_attr", MPIGPU_COMM_NULL,
                api::GetAttr(KeyKind::kType, type, keyval, value, flag));
}

extern "C" int MPIGPU_Type_delete_attr(MPIGPU_Datatype type, int keyval) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Type_delete_attr", MPIGPU_COMM_NULL,
                api::DeleteAttr(lk, KeyKind::kType, type, keyval));
}

extern "C" int MPIGPU_Type_copy_attrs_(MPIGPU_Datatype oldtype, MPIGPU_Datatype newtype) {
  Lock lk(GetState().mu);
  api::Attrs& a = api::GetAttrs();
  const auto at = a.types.find(oldtype);
  if (at == a.types.end() || at->second.empty()) return MPIGPU_SUCCESS;
  api::AttrList made;
  const int rc = api::CopyAll(lk, KeyKind::kType, oldtype, at->second, &made);
  if (!made.empty()) a.types[newtype] = std::move(made);
  return rc;
}

extern "C" int MPIGPU_Type_delete_attrs_(MPIGPU_Datatype datatype) {
  Lock lk(GetState().mu);
  api::Attrs& a = api::GetAttrs();
  const int rc = api::DeleteAll(lk, KeyKind::kType, datatype, [&a, datatype]() {
    const auto at = a.types.find(datatype);
    return at == a.types.end() ? nullptr : &at->second;
  });
  if (rc == MPIGPU_SUCCESS) a.types.erase(datatype);
  return rc;
}
