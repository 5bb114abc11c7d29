// The datatype registry: the predefined types' table (from the X-macro list), the handles of
// derived types (names, commit, free), lookups, a typed buffer's description for communication
// (DescribeAnyForComm) and its host pack/unpack. Computing a type from its definition:
// datatype_tree.cc.
#include "mpigpu_api/datatype.h"

#include <climits>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "mpigpu_api/datatype_internal.h"
#include "mpigpu_api/errors.h"
#include "pipeline/pack.h"

namespace mpigpu {
namespace {

// ---- predefined types (from the X-macro list, so handles, names and sizes cannot drift) ----

#define MPIGPU_TYPE_HANDLE(handle, ctype) handle,
constexpr MPIGPU_Datatype kPredefinedHandle[] = {
    MPIGPU_FOR_EACH_PREDEFINED_TYPE(MPIGPU_TYPE_HANDLE)};
#undef MPIGPU_TYPE_HANDLE
// Synonyms share a handle; MPI names them C_COMPLEX (= C_FLOAT_COMPLEX) and LONG_LONG_INT
// (= LONG_LONG).
constexpr const char* NameOf(MPIGPU_Datatype handle, const char* name) {
  return handle == MPIGPU_C_FLOAT_COMPLEX ? "MPIGPU_C_COMPLEX"
         : handle == MPIGPU_LONG_LONG     ? "MPIGPU_LONG_LONG_INT"
                                          : name;
}
#define MPIGPU_TYPE_NAME(handle, ctype) NameOf(handle, #handle),
constexpr const char* kPredefinedName[] = {MPIGPU_FOR_EACH_PREDEFINED_TYPE(MPIGPU_TYPE_NAME)};
#undef MPIGPU_TYPE_NAME

constexpr bool HandlesAreIndices() {
  for (int i = 0; i < MPIGPU_NUM_PREDEFINED_TYPES; ++i) {
    if (kPredefinedHandle[i] != i) return false;
  }
  return true;
}
static_assert(sizeof(kPredefinedHandle) / sizeof(kPredefinedHandle[0]) ==
                  MPIGPU_NUM_PREDEFINED_TYPES,
              "MPIGPU_FOR_EACH_PREDEFINED_TYPE must list every predefined type");
static_assert(HandlesAreIndices(), "predefined type handles must be 0, 1, 2, ... in list order");

template <class T>
struct KindOfC {
  static constexpr TypeKind kKind =
      std::is_same<T, bool>::value              ? TypeKind::kLogical
      : std::is_floating_point<T>::value        ? TypeKind::kFloat
      : std::is_integral<T>::value && std::is_signed<T>::value ? TypeKind::kSignedInt
      : std::is_integral<T>::value              ? TypeKind::kUnsignedInt
                                                : TypeKind::kByte;
};
template <class T>
struct KindOfC<std::complex<T>> {
  static constexpr TypeKind kKind = TypeKind::kComplex;
};
template <class V, class I>
struct KindOfC<ValueIndex<V, I>> {
  static constexpr TypeKind kKind = TypeKind::kPair;
};

// Kinds by C type, then the types whose C type does not say what they hold.
constexpr TypeKind KindOf(MPIGPU_Datatype type, TypeKind by_ctype) {
  switch (type) {
    case MPIGPU_BYTE:
    case MPIGPU_PACKED: return TypeKind::kByte;
    case MPIGPU_CHAR:
    case MPIGPU_WCHAR:
    case MPIGPU_CHARACTER: return TypeKind::kChar;
    case MPIGPU_LOGICAL: return TypeKind::kLogical;
    default: return by_ctype;
  }
}
#define MPIGPU_TYPE_KIND(handle, ctype) KindOf(handle, KindOfC<ctype>::kKind),
constexpr TypeKind kPredefinedKind[] = {MPIGPU_FOR_EACH_PREDEFINED_TYPE(MPIGPU_TYPE_KIND)};
#undef MPIGPU_TYPE_KIND

// The predefined type of a pair's member C type.
template <class T>
constexpr MPIGPU_Datatype MemberType() {
  return std::is_same<T, float>::value         ? MPIGPU_FLOAT
         : std::is_same<T, double>::value      ? MPIGPU_DOUBLE
         : std::is_same<T, long>::value        ? MPIGPU_LONG
         : std::is_same<T, short>::value       ? MPIGPU_SHORT
         : std::is_same<T, long double>::value ? MPIGPU_LONG_DOUBLE
         : std::is_same<T, int>::value         ? MPIGPU_INT
                                               : MPIGPU_DATATYPE_NULL;
}
template <class T>
struct PairOfC {
  static constexpr PairLayout Get() { return PairLayout{}; }
};
template <class V, class I>
struct PairOfC<ValueIndex<V, I>> {
  static constexpr PairLayout Get() {
    using P = ValueIndex<V, I>;
    return PairLayout{MemberType<V>(), MemberType<I>(), offsetof(P, index), sizeof(V)};
  }
};
#define MPIGPU_TYPE_PAIR(handle, ctype) PairOfC<ctype>::Get(),
const PairLayout kPredefinedPair[] = {MPIGPU_FOR_EACH_PREDEFINED_TYPE(MPIGPU_TYPE_PAIR)};
#undef MPIGPU_TYPE_PAIR

#define MPIGPU_TYPE_ALIGN(handle, ctype) alignof(ctype),
constexpr size_t kPredefinedAlign[] = {MPIGPU_FOR_EACH_PREDEFINED_TYPE(MPIGPU_TYPE_ALIGN)};
#undef MPIGPU_TYPE_ALIGN

// One element's pieces: the dense run of a plain type, a pair's members (merged when the index
// follows the value without a hole).
std::vector<TypePiece> PredefinedPieces(MPIGPU_Datatype type) {
  const PairLayout& pair = kPredefinedPair[type];
  const size_t size = kPredefinedTypeSize[type];
  if (kPredefinedKind[type] != TypeKind::kPair || pair.index_offset == pair.packed_index_offset)
    return {TypePiece{0, size, size, 1}};
  const size_t vsize = pair.packed_index_offset, isize = size - vsize;
  return {TypePiece{0, vsize, vsize, 1},
          TypePiece{static_cast<ptrdiff_t>(pair.index_offset), isize, isize, 1}};
}

const TypeInfo& PredefinedInfo(MPIGPU_Datatype type) {
  static const std::vector<TypeInfo>* table = [] {
    auto* t = new std::vector<TypeInfo>(MPIGPU_NUM_PREDEFINED_TYPES);
    for (int i = 0; i < MPIGPU_NUM_PREDEFINED_TYPES; ++i) {
      TypeInfo& info = (*t)[i];
      info.predefined = true;
      info.committed = true;
      info.size = kPredefinedTypeSize[i];
      info.extent = static_cast<ptrdiff_t>(kPredefinedTypeExtent[i]);
      info.basic_type = i;
      info.align = kPredefinedAlign[i];
      const PairLayout& pair = kPredefinedPair[i];
      const bool is_pair = kPredefinedKind[i] == TypeKind::kPair;
      info.true_extent = static_cast<ptrdiff_t>(
          is_pair ? pair.index_offset + (info.size - pair.packed_index_offset) : info.size);
      info.num_elements = is_pair ? 2 : 1;
      // The table lives for the whole run: its piece lists are shared without an owner, so
      // copying a predefined type's entry (LookupType) costs no atomic reference count.
      const auto* pieces = new std::vector<TypePiece>(PredefinedPieces(i));
      info.pieces = std::shared_ptr<const std::vector<TypePiece>>(
          std::shared_ptr<const std::vector<TypePiece>>(), pieces);
    }
    return t;
  }();
  return (*table)[type];
}


std::string TypeLabel(MPIGPU_Datatype type) {
  return IsPredefinedType(type) ? kPredefinedName[type] : "datatype " + std::to_string(type);
}

// ---- registry of derived types ----

class Registry {
 public:
  std::shared_ptr<const TypeInfo> Get(MPIGPU_Datatype type, bool* committed, int* rc) {
    std::lock_guard<std::mutex> lock(mu_);
    const Slot* slot = Find(type);
    if (slot == nullptr) {
      *rc = BadHandle(type);
      return nullptr;
    }
    if (committed) *committed = slot->committed;
    *rc = MPIGPU_SUCCESS;
    return slot->info;
  }

  int Add(std::shared_ptr<const TypeInfo> info, MPIGPU_Datatype* out) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      if (slots_.size() >= static_cast<size_t>(INT_MAX - MPIGPU_NUM_PREDEFINED_TYPES)) {
        return SetLastError(MPIGPU_ERR_INTERN, "datatype handles exhausted");
      }
      index = slots_.size();
      slots_.emplace_back();
    }
    Slot& slot = slots_[index];
    slot.in_use = true;
    slot.committed = false;
    slot.name.clear();
    slot.info = std::move(info);
    *out = static_cast<MPIGPU_Datatype>(index + MPIGPU_NUM_PREDEFINED_TYPES);
    return MPIGPU_SUCCESS;
  }

  int Commit(MPIGPU_Datatype type) {
    std::lock_guard<std::mutex> lock(mu_);
    Slot* slot = Find(type);
    if (slot == nullptr) return BadHandle(type);
    slot->committed = true;
    return MPIGPU_SUCCESS;
  }

  int Free(MPIGPU_Datatype type) {
    std::lock_guard<std::mutex> lock(mu_);
    Slot* slot = Find(type);
    if (slot == nullptr) return BadHandle(type);
    slot->in_use = false;
    slot->info.reset();  // types built from it, and pending operations, hold their own reference
    slot->name.clear();
    free_.push_back(static_cast<size_t>(type - MPIGPU_NUM_PREDEFINED_TYPES));
    return MPIGPU_SUCCESS;
  }

  // Names of derived types live in their slots; predefined ones may be renamed too.
  int SetName(MPIGPU_Datatype type, const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    if (IsPredefinedType(type)) {
      predefined_names_[type] = name;
      return MPIGPU_SUCCESS;
    }
    Slot* slot = Find(type);
    if (slot == nullptr) return BadHandle(type);
    slot->name = name;
    return MPIGPU_SUCCESS;
  }
  int GetName(MPIGPU_Datatype type, std::string* name) {
    std::lock_guard<std::mutex> lock(mu_);
    if (IsPredefinedType(type)) {
      auto it = predefined_names_.find(type);
      *name = it != predefined_names_.end() ? it->second : kPredefinedName[type];
      return MPIGPU_SUCCESS;
    }
    Slot* slot = Find(type);
    if (slot == nullptr) return BadHandle(type);
    *name = slot->name;
    return MPIGPU_SUCCESS;
  }

 private:
  struct Slot {
    bool in_use = false;
    bool committed = false;
    std::string name;
    std::shared_ptr<const TypeInfo> info;
  };

  // Caller holds mu_. Null for anything but a live derived type.
  Slot* Find(MPIGPU_Datatype type) {
    if (type < MPIGPU_NUM_PREDEFINED_TYPES) return nullptr;
    const size_t index = static_cast<size_t>(type - MPIGPU_NUM_PREDEFINED_TYPES);
    if (index >= slots_.size() || !slots_[index].in_use) return nullptr;
    return &slots_[index];
  }

  int BadHandle(MPIGPU_Datatype type) {
    if (type == MPIGPU_DATATYPE_NULL) {
      return SetLastError(MPIGPU_ERR_TYPE, "datatype is MPIGPU_DATATYPE_NULL");
    }
    const bool freed = type >= MPIGPU_NUM_PREDEFINED_TYPES &&
                       static_cast<size_t>(type - MPIGPU_NUM_PREDEFINED_TYPES) < slots_.size();
    return SetLastError(MPIGPU_ERR_TYPE, "datatype " + std::to_string(type) +
                                             (freed ? " was freed" : " is not a valid handle"));
  }

  std::mutex mu_;
  std::deque<Slot> slots_;  // slot i is handle MPIGPU_NUM_PREDEFINED_TYPES + i
  std::vector<size_t> free_;
  std::map<MPIGPU_Datatype, std::string> predefined_names_;
};

// Never destroyed, so type calls from static destructors or atexit handlers still work.
Registry& GetRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

// The shared entry of a predefined type (never freed: no owner).
std::shared_ptr<const TypeInfo> SharedPredefined(MPIGPU_Datatype type) {
  return std::shared_ptr<const TypeInfo>(std::shared_ptr<const TypeInfo>(),
                                         &PredefinedInfo(type));
}

}  // namespace

int RegisterType(std::shared_ptr<const TypeInfo> info, MPIGPU_Datatype* out) {
  return GetRegistry().Add(std::move(info), out);
}
int CommitRegistered(MPIGPU_Datatype type) { return GetRegistry().Commit(type); }
int FreeRegistered(MPIGPU_Datatype type) { return GetRegistry().Free(type); }

int SetTypeName(MPIGPU_Datatype type, const std::string& name) {
  return GetRegistry().SetName(type, name);
}
int GetTypeName(MPIGPU_Datatype type, std::string* name) {
  return GetRegistry().GetName(type, name);
}

std::shared_ptr<const TypeInfo> SharedType(MPIGPU_Datatype type, int* rc) {
  if (IsPredefinedType(type)) {
    *rc = MPIGPU_SUCCESS;
    return SharedPredefined(type);
  }
  return GetRegistry().Get(type, nullptr, rc);
}

const char* TypeName(MPIGPU_Datatype type) {
  return IsPredefinedType(type) ? kPredefinedName[type] : "derived";
}

int LookupType(MPIGPU_Datatype type, TypeInfo* out) {
  if (out == nullptr) return SetLastError(MPIGPU_ERR_ARG, "LookupType: null out");
  if (IsPredefinedType(type)) {
    *out = PredefinedInfo(type);  // immutable table: no lock
    return MPIGPU_SUCCESS;
  }
  int rc;
  bool committed = false;
  auto info = GetRegistry().Get(type, &committed, &rc);
  if (!info) return rc;
  *out = *info;
  out->committed = committed;
  return MPIGPU_SUCCESS;
}

int DescribeAnyForComm(MPIGPU_Datatype type, int count, TypeDesc* out) {
  if (out == nullptr) return SetLastError(MPIGPU_ERR_ARG, "DescribeForComm: null out");
  if (count < 0) {
    return SetLastError(MPIGPU_ERR_COUNT, "count " + std::to_string(count) + " is negative");
  }
  // A predefined type is read in place from its immutable table (no copy).
  std::shared_ptr<const TypeInfo> derived;
  if (!IsPredefinedType(type)) {
    int rc;
    bool committed = false;
    derived = GetRegistry().Get(type, &committed, &rc);
    if (!derived) return rc;
    if (!committed) {
      return SetLastError(MPIGPU_ERR_TYPE, TypeLabel(type) +
                                               " is not committed (call MPIGPU_Type_commit)");
    }
  }
  const TypeInfo& info = IsPredefinedType(type) ? PredefinedInfo(type) : *derived;
  const size_t n = static_cast<size_t>(count);
  // Elements of a negative extent would run backwards: one element (or none) only.
  if (info.extent < 0 && n > 1) {
    return SetLastError(MPIGPU_ERR_TYPE, TypeLabel(type) + " has a negative extent (" +
                                             std::to_string(info.extent) +
                                             "): only count 0 or 1 can be communicated");
  }
  const size_t extent = info.extent < 0 ? 0 : static_cast<size_t>(info.extent);
  size_t span = 0;
  TypeDesc d;
  if (!MulFits(n, info.size, &d.total_bytes) || !MulFits(n, extent, &span)) {
    return SetLastError(MPIGPU_ERR_COUNT, "count " + std::to_string(count) + " of " +
                                              TypeLabel(type) + " is too large");
  }
  d.type = type;
  d.basic_type = info.basic_type;
  d.count = n;
  d.size = info.size;
  d.extent = extent;
  d.base_size = info.basic_type == MPIGPU_DATATYPE_NULL ? 1 : PredefinedTypeSize(info.basic_type);
  // Contiguous: one element is one dense run at the pointer, and elements follow each other.
  const bool dense = info.pieces && info.pieces->size() == 1 && (*info.pieces)[0].offset == 0 &&
                     (*info.pieces)[0].nblocks == 1;
  d.true_lb = info.true_lb;
  d.contiguous = d.total_bytes == 0 || (dense && (n <= 1 || extent == info.size));
  if (!d.contiguous) {
    d.type_pieces = info.pieces;
    if (!info.pieces) d.source = info.tree;
  }
  *out = std::move(d);
  return MPIGPU_SUCCESS;
}

TypeKind PredefinedTypeKind(MPIGPU_Datatype type) {
  return IsPredefinedType(type) ? kPredefinedKind[type] : TypeKind::kByte;
}

bool PredefinedPairLayout(MPIGPU_Datatype type, PairLayout* out) {
  if (!IsPredefinedType(type) || kPredefinedKind[type] != TypeKind::kPair) return false;
  *out = kPredefinedPair[type];
  return true;
}

int PackerCode(const Status& st) {
  return st.ok() ? MPIGPU_SUCCESS : SetLastError(MPIGPU_ERR_ARG, st.message());
}

std::vector<TypePiece> FlattenPieces(const TypeDesc& desc) {
  std::vector<TypePiece> out;
  (void)ForEachPiece(desc, [&](const TypePiece& p, size_t) {
    out.push_back(p);
    return true;
  });
  return out;
}

namespace {
// The packer takes a null typed buffer as MPI_BOTTOM; one whose type does not lie at absolute
// addresses (past page 0, as ResolveTypedBuf's rule) is an error here.
int NullTyped(const TypeDesc& desc, const void* buf, size_t bytes, const char* what) {
  if (buf != nullptr || bytes == 0 || desc.true_lb >= 4096) return MPIGPU_SUCCESS;
  return SetLastError(MPIGPU_ERR_ARG, std::string(what) + ": null buffer");
}
}  // namespace

int Pack(const TypeDesc& desc, const void* buf, size_t packed_offset, size_t bytes,
         void* packed) {
  if (int rc = NullTyped(desc, buf, bytes, "Pack"); rc != MPIGPU_SUCCESS) return rc;
  return PackerCode(PackPieces(PackDir::kPack, desc.shape(), const_cast<void*>(buf),
                               MemLoc::Host(), packed_offset, bytes, packed, MemLoc::Host()));
}

int Unpack(const TypeDesc& desc, const void* packed, size_t packed_offset, size_t bytes,
           void* buf) {
  if (int rc = NullTyped(desc, buf, bytes, "Unpack"); rc != MPIGPU_SUCCESS) return rc;
  return PackerCode(PackPieces(PackDir::kUnpack, desc.shape(), buf, MemLoc::Host(),
                               packed_offset, bytes, const_cast<void*>(packed), MemLoc::Host()));
}

}  // namespace mpigpu
