#include "mpigpu_api/datatype.h"

#include <climits>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <type_traits>

#include "mpigpu_api/errors.h"
#include "pipeline/pack.h"

namespace mpigpu {
namespace {

// ---- predefined types (from the X-macro list, so handles, names and sizes cannot drift) ----

#define MPIGPU_TYPE_HANDLE(handle, ctype) handle,
constexpr MPIGPU_Datatype kPredefinedHandle[] = {
    MPIGPU_FOR_EACH_PREDEFINED_TYPE(MPIGPU_TYPE_HANDLE)};
#undef MPIGPU_TYPE_HANDLE
#define MPIGPU_TYPE_NAME(handle, ctype) #handle,
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

// One element's pieces: the dense run of a plain type, a pair's members (merged when the index
// follows the value without a hole).
std::vector<TypePiece> PredefinedPieces(MPIGPU_Datatype type) {
  const PairLayout& pair = kPredefinedPair[type];
  const size_t size = kPredefinedTypeSize[type];
  if (kPredefinedKind[type] != TypeKind::kPair || pair.index_offset == pair.packed_index_offset)
    return {TypePiece{0, size, size, 1}};
  const size_t vsize = pair.packed_index_offset, isize = size - vsize;
  return {TypePiece{0, vsize, vsize, 1},
          TypePiece{pair.index_offset, isize, isize, 1}};
}

const TypeInfo& PredefinedInfo(MPIGPU_Datatype type) {
  static const std::vector<TypeInfo>* table = [] {
    auto* t = new std::vector<TypeInfo>(MPIGPU_NUM_PREDEFINED_TYPES);
    for (int i = 0; i < MPIGPU_NUM_PREDEFINED_TYPES; ++i) {
      TypeInfo& info = (*t)[i];
      info.predefined = true;
      info.committed = true;
      info.size = kPredefinedTypeSize[i];
      info.extent = kPredefinedTypeExtent[i];
      info.basic_type = i;
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

// ---- pieces ----

// *out = merged pieces of ncopies copies of `pieces` placed `extent` apart. Fails (ARG) if the
// result, or the work to build it, passes kMaxTypePieces.
int Replicate(const char* fn, const std::vector<TypePiece>& pieces, size_t extent,
              size_t ncopies, std::vector<TypePiece>* out) {
  if (ReplicatePieces(pieces, extent, ncopies, kMaxTypePieces, out)) return MPIGPU_SUCCESS;
  return SetLastError(MPIGPU_ERR_ARG, std::string(fn) + ": type too complex (more than " +
                                          std::to_string(kMaxTypePieces) + " regular pieces)");
}

// ---- registry of derived types ----

class Registry {
 public:
  int Lookup(MPIGPU_Datatype type, TypeInfo* out) {
    std::lock_guard<std::mutex> lock(mu_);
    const Slot* slot = Find(type);
    if (slot == nullptr) return BadHandle(type);
    *out = slot->info;
    return MPIGPU_SUCCESS;
  }

  int Add(TypeInfo info, MPIGPU_Datatype* out) {
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
    slots_[index].in_use = true;
    slots_[index].info = std::move(info);
    *out = static_cast<MPIGPU_Datatype>(index + MPIGPU_NUM_PREDEFINED_TYPES);
    return MPIGPU_SUCCESS;
  }

  int Commit(MPIGPU_Datatype type) {
    std::lock_guard<std::mutex> lock(mu_);
    Slot* slot = Find(type);
    if (slot == nullptr) return BadHandle(type);
    slot->info.committed = true;
    return MPIGPU_SUCCESS;
  }

  int Free(MPIGPU_Datatype type) {
    std::lock_guard<std::mutex> lock(mu_);
    Slot* slot = Find(type);
    if (slot == nullptr) return BadHandle(type);
    slot->in_use = false;
    slot->info = TypeInfo();  // drops this type's pieces (types built from it keep their own)
    free_.push_back(static_cast<size_t>(type - MPIGPU_NUM_PREDEFINED_TYPES));
    return MPIGPU_SUCCESS;
  }

 private:
  struct Slot {
    bool in_use = false;
    TypeInfo info;
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
};

// Never destroyed, so type calls from static destructors or atexit handlers still work.
Registry& GetRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

bool MulFits(size_t a, size_t b, size_t* out) {
  return !__builtin_mul_overflow(a, b, out) && *out <= static_cast<size_t>(PTRDIFF_MAX);
}

// Type_vector, and Type_contiguous as vector(count, 1, 1).
int MakeVector(const char* fn, int count, int blocklength, int stride, MPIGPU_Datatype oldtype,
               MPIGPU_Datatype* newtype) {
  const std::string where = fn;
  if (newtype == nullptr) return SetLastError(MPIGPU_ERR_ARG, where + ": newtype is null");
  if (count < 0) {
    return SetLastError(MPIGPU_ERR_COUNT,
                        where + ": count " + std::to_string(count) + " is negative");
  }
  if (blocklength < 0) {
    return SetLastError(MPIGPU_ERR_COUNT, where + ": blocklength " +
                                              std::to_string(blocklength) + " is negative");
  }
  if (stride < 0) {
    return SetLastError(MPIGPU_ERR_ARG, where + ": stride " + std::to_string(stride) +
                                            " is negative (not supported)");
  }
  if (count > 1 && stride < blocklength) {
    return SetLastError(MPIGPU_ERR_ARG, where + ": stride " + std::to_string(stride) +
                                            " < blocklength " + std::to_string(blocklength) +
                                            ": blocks would overlap (not supported)");
  }
  TypeInfo old;
  if (int rc = LookupType(oldtype, &old); rc != MPIGPU_SUCCESS) return rc;

  const size_t n = static_cast<size_t>(count);
  const size_t bl = static_cast<size_t>(blocklength);
  const size_t st = static_cast<size_t>(stride);
  TypeInfo info;
  info.basic_type = old.basic_type;
  size_t elems = 0;
  size_t span = 0;
  if (!MulFits(n, bl, &elems) || !MulFits(elems, old.size, &info.size) ||
      !MulFits((n == 0 ? 0 : (n - 1) * st) + bl, old.extent, &span)) {
    return SetLastError(MPIGPU_ERR_ARG, where + ": type too large (count " +
                                            std::to_string(count) + ", blocklength " +
                                            std::to_string(blocklength) + ", stride " +
                                            std::to_string(stride) + ")");
  }
  // A type without data has extent 0 (its type map is empty).
  info.extent = info.size == 0 ? 0 : span;
  std::vector<TypePiece> pieces;
  if (info.size > 0) {
    std::vector<TypePiece> block;
    if (int rc = Replicate(fn, *old.pieces, old.extent, bl, &block); rc != MPIGPU_SUCCESS) {
      return rc;
    }
    // With one block the stride is never used (and st * extent might not fit).
    const size_t block_stride = n > 1 ? st * old.extent : 0;
    if (int rc = Replicate(fn, block, block_stride, n, &pieces); rc != MPIGPU_SUCCESS) return rc;
  }
  info.pieces = std::make_shared<const std::vector<TypePiece>>(std::move(pieces));
  return GetRegistry().Add(std::move(info), newtype);
}

}  // namespace

const char* TypeName(MPIGPU_Datatype type) {
  return IsPredefinedType(type) ? kPredefinedName[type] : "derived";
}

int LookupType(MPIGPU_Datatype type, TypeInfo* out) {
  if (out == nullptr) return SetLastError(MPIGPU_ERR_ARG, "LookupType: null out");
  if (IsPredefinedType(type)) {
    *out = PredefinedInfo(type);  // immutable table: no lock
    return MPIGPU_SUCCESS;
  }
  return GetRegistry().Lookup(type, out);
}

int DescribeAnyForComm(MPIGPU_Datatype type, int count, TypeDesc* out) {
  if (out == nullptr) return SetLastError(MPIGPU_ERR_ARG, "DescribeForComm: null out");
  if (count < 0) {
    return SetLastError(MPIGPU_ERR_COUNT, "count " + std::to_string(count) + " is negative");
  }
  // A predefined type is read in place from its immutable table (no copy).
  TypeInfo derived;
  if (!IsPredefinedType(type))
    if (int rc = GetRegistry().Lookup(type, &derived); rc != MPIGPU_SUCCESS) return rc;
  const TypeInfo& info = IsPredefinedType(type) ? PredefinedInfo(type) : derived;
  if (!info.committed) {
    return SetLastError(MPIGPU_ERR_TYPE, TypeLabel(type) +
                                             " is not committed (call MPIGPU_Type_commit)");
  }
  const size_t n = static_cast<size_t>(count);
  size_t span = 0;
  TypeDesc d;
  if (!MulFits(n, info.size, &d.total_bytes) || !MulFits(n, info.extent, &span)) {
    return SetLastError(MPIGPU_ERR_COUNT, "count " + std::to_string(count) + " of " +
                                              TypeLabel(type) + " is too large");
  }
  d.type = type;
  d.basic_type = info.basic_type;
  d.count = n;
  d.size = info.size;
  d.extent = info.extent;
  d.base_size = PredefinedTypeSize(info.basic_type);
  // Pieces never overlap and lie within the extent: size == extent means they tile it.
  d.contiguous = info.size == info.extent;
  if (!d.contiguous) d.type_pieces = info.pieces;
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

int Pack(const TypeDesc& desc, const void* buf, size_t packed_offset, size_t bytes,
         void* packed) {
  return PackerCode(PackPieces(PackDir::kPack, desc.shape(), const_cast<void*>(buf),
                               MemLoc::Host(), packed_offset, bytes, packed, MemLoc::Host()));
}

int Unpack(const TypeDesc& desc, const void* packed, size_t packed_offset, size_t bytes,
           void* buf) {
  return PackerCode(PackPieces(PackDir::kUnpack, desc.shape(), buf, MemLoc::Host(),
                               packed_offset, bytes, const_cast<void*>(packed), MemLoc::Host()));
}

}  // namespace mpigpu

// ---- C API ----

extern "C" int MPIGPU_Type_contiguous(int count, MPIGPU_Datatype oldtype,
                                      MPIGPU_Datatype* newtype) {
  return mpigpu::MakeVector("MPIGPU_Type_contiguous", count, 1, 1, oldtype, newtype);
}

extern "C" int MPIGPU_Type_vector(int count, int blocklength, int stride,
                                  MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype) {
  return mpigpu::MakeVector("MPIGPU_Type_vector", count, blocklength, stride, oldtype, newtype);
}

extern "C" int MPIGPU_Type_commit(MPIGPU_Datatype* datatype) {
  if (datatype == nullptr) {
    return mpigpu::SetLastError(MPIGPU_ERR_ARG, "MPIGPU_Type_commit: datatype is null");
  }
  if (mpigpu::IsPredefinedType(*datatype)) return MPIGPU_SUCCESS;
  return mpigpu::GetRegistry().Commit(*datatype);
}

extern "C" int MPIGPU_Type_free(MPIGPU_Datatype* datatype) {
  if (datatype == nullptr) {
    return mpigpu::SetLastError(MPIGPU_ERR_ARG, "MPIGPU_Type_free: datatype is null");
  }
  if (mpigpu::IsPredefinedType(*datatype)) {
    return mpigpu::SetLastError(MPIGPU_ERR_TYPE, std::string("cannot free predefined type ") +
                                                     mpigpu::TypeName(*datatype));
  }
  if (int rc = mpigpu::GetRegistry().Free(*datatype); rc != MPIGPU_SUCCESS) return rc;
  *datatype = MPIGPU_DATATYPE_NULL;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Type_size(MPIGPU_Datatype datatype, int* size) {
  if (size == nullptr) {
    return mpigpu::SetLastError(MPIGPU_ERR_ARG, "MPIGPU_Type_size: size is null");
  }
  mpigpu::TypeInfo info;
  if (int rc = mpigpu::LookupType(datatype, &info); rc != MPIGPU_SUCCESS) return rc;
  *size = info.size > static_cast<size_t>(INT_MAX) ? MPIGPU_UNDEFINED
                                                   : static_cast<int>(info.size);
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Type_get_extent(MPIGPU_Datatype datatype, MPIGPU_Aint* lb,
                                      MPIGPU_Aint* extent) {
  if (lb == nullptr || extent == nullptr) {
    return mpigpu::SetLastError(MPIGPU_ERR_ARG, "MPIGPU_Type_get_extent: null lb or extent");
  }
  mpigpu::TypeInfo info;
  if (int rc = mpigpu::LookupType(datatype, &info); rc != MPIGPU_SUCCESS) return rc;
  *lb = 0;
  *extent = static_cast<MPIGPU_Aint>(info.extent);
  return MPIGPU_SUCCESS;
}
