// MPIGPU_Type_* queries (sizes and extents, envelope and contents, names, match_size),
// MPIGPU_Get_elements, and MPIGPU_Pack/Unpack/Pack_size over the packer (host or device).
#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

#include "memcopy/memloc.h"
#include "mpigpu_api/buftype.h"
#include "mpigpu_api/datatype.h"
#include "mpigpu_api/datatype_internal.h"
#include "mpigpu_api/errors.h"
#include "pipeline/pack.h"

namespace {

int TypeErr(int code, const char* fn, const std::string& what) {
  return mpigpu::SetLastError(code, std::string(fn) + ": " + what);
}

// A derived type's definition (null and the error for predefined or bad handles).
std::shared_ptr<const mpigpu::TypeInfo> Derived(const char* fn, MPIGPU_Datatype type, int* rc) {
  auto info = mpigpu::SharedType(type, rc);
  if (info && info->predefined) {
    *rc = TypeErr(MPIGPU_ERR_TYPE, fn, std::string(mpigpu::TypeName(type)) +
                                       " is predefined: it has no contents");
    return nullptr;
  }
  return info;
}

}  // namespace

extern "C" int MPIGPU_Type_get_envelope(MPIGPU_Datatype datatype, int* num_integers,
                                        int* num_addresses, int* num_datatypes, int* combiner) {
  const char* fn = "MPIGPU_Type_get_envelope";
  if (!num_integers || !num_addresses || !num_datatypes || !combiner)
    return TypeErr(MPIGPU_ERR_ARG, fn, "null output");
  int rc;
  auto info = mpigpu::SharedType(datatype, &rc);
  if (!info) return rc;
  if (info->predefined) {
    *num_integers = *num_addresses = *num_datatypes = 0;
    *combiner = MPIGPU_COMBINER_NAMED;
    return MPIGPU_SUCCESS;
  }
  const mpigpu::TypeTree& t = *info->tree;
  *num_integers = static_cast<int>(t.ints.size());
  *num_addresses = static_cast<int>(t.aints.size());
  *num_datatypes = static_cast<int>(t.types.size());
  *combiner = t.combiner;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Type_get_contents(MPIGPU_Datatype datatype, int max_integers,
                                        int max_addresses, int max_datatypes, int integers[],
                                        MPIGPU_Aint addresses[], MPIGPU_Datatype datatypes[]) {
  const char* fn = "MPIGPU_Type_get_contents";
  int rc;
  auto info = Derived(fn, datatype, &rc);
  if (!info) return rc;
  const mpigpu::TypeTree& t = *info->tree;
  if (max_integers < static_cast<int>(t.ints.size()) ||
      max_addresses < static_cast<int>(t.aints.size()) ||
      max_datatypes < static_cast<int>(t.types.size()))
    return TypeErr(MPIGPU_ERR_ARG, fn, "arrays shorter than get_envelope's counts");
  if ((!t.ints.empty() && !integers) || (!t.aints.empty() && !addresses) ||
      (!t.types.empty() && !datatypes))
    return TypeErr(MPIGPU_ERR_ARG, fn, "null array");
  std::copy(t.ints.begin(), t.ints.end(), integers);
  std::copy(t.aints.begin(), t.aints.end(), addresses);
  // Derived types come back as new handles (MPI: the caller frees them) to the same entries.
  for (size_t i = 0; i < t.types.size(); ++i) {
    if (t.types[i]->predefined) {
      datatypes[i] = t.type_handles[i];
      continue;
    }
    MPIGPU_Datatype h;
    if (int r = mpigpu::RegisterType(t.types[i], &h); r != MPIGPU_SUCCESS) {
      while (i-- > 0)
        if (!t.types[i]->predefined) (void)MPIGPU_Type_free(&datatypes[i]);
      return r;
    }
    (void)MPIGPU_Type_commit(&h);  // they were usable as the caller built them
    datatypes[i] = h;
  }
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Type_set_name(MPIGPU_Datatype datatype, const char* type_name) {
  if (type_name == nullptr) return TypeErr(MPIGPU_ERR_ARG, "MPIGPU_Type_set_name", "null name");
  std::string name(type_name, strnlen(type_name, MPIGPU_MAX_OBJECT_NAME - 1));
  return mpigpu::SetTypeName(datatype, name);
}

extern "C" int MPIGPU_Type_get_name(MPIGPU_Datatype datatype, char* type_name, int* resultlen) {
  if (type_name == nullptr || resultlen == nullptr)
    return TypeErr(MPIGPU_ERR_ARG, "MPIGPU_Type_get_name", "null output");
  std::string name;
  if (int rc = mpigpu::GetTypeName(datatype, &name); rc != MPIGPU_SUCCESS) return rc;
  std::memcpy(type_name, name.c_str(), name.size() + 1);
  *resultlen = static_cast<int>(name.size());
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Type_match_size(int typeclass, int size, MPIGPU_Datatype* datatype) {
  const char* fn = "MPIGPU_Type_match_size";
  if (datatype == nullptr) return TypeErr(MPIGPU_ERR_ARG, fn, "null output");
  static const MPIGPU_Datatype kReal[] = {MPIGPU_FLOAT, MPIGPU_DOUBLE, MPIGPU_LONG_DOUBLE};
  static const MPIGPU_Datatype kInt[] = {MPIGPU_SIGNED_CHAR, MPIGPU_SHORT, MPIGPU_INT,
                                         MPIGPU_LONG, MPIGPU_LONG_LONG};
  static const MPIGPU_Datatype kComplex[] = {MPIGPU_C_FLOAT_COMPLEX, MPIGPU_C_DOUBLE_COMPLEX,
                                             MPIGPU_C_LONG_DOUBLE_COMPLEX};
  const MPIGPU_Datatype* begin;
  size_t n;
  switch (typeclass) {
    case MPIGPU_TYPECLASS_REAL: begin = kReal; n = 3; break;
    case MPIGPU_TYPECLASS_INTEGER: begin = kInt; n = 5; break;
    case MPIGPU_TYPECLASS_COMPLEX: begin = kComplex; n = 3; break;
    default: return TypeErr(MPIGPU_ERR_ARG, fn, "bad typeclass " + std::to_string(typeclass));
  }
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int>(mpigpu::PredefinedTypeSize(begin[i])) == size) {
      *datatype = begin[i];
      return MPIGPU_SUCCESS;
    }
  }
  return TypeErr(MPIGPU_ERR_ARG, fn, "no type of that class has size " + std::to_string(size));
}

extern "C" int MPIGPU_Get_elements_x(const MPIGPU_Status* status, MPIGPU_Datatype datatype,
                                     MPIGPU_Count* count) {
  if (status == nullptr || count == nullptr)
    return TypeErr(MPIGPU_ERR_ARG, "MPIGPU_Get_elements", "null status or count");
  mpigpu::TypeInfo info;
  if (int rc = mpigpu::LookupType(datatype, &info); rc != MPIGPU_SUCCESS) return rc;
  const long long n = mpigpu::CountBasicElements(info, status->count_bytes);
  *count = n < 0 ? MPIGPU_UNDEFINED : n;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Get_elements(const MPIGPU_Status* status, MPIGPU_Datatype datatype,
                                   int* count) {
  MPIGPU_Count n = 0;
  if (count == nullptr) return TypeErr(MPIGPU_ERR_ARG, "MPIGPU_Get_elements", "null count");
  if (int rc = MPIGPU_Get_elements_x(status, datatype, &n); rc != MPIGPU_SUCCESS) return rc;
  *count = n > INT_MAX ? MPIGPU_UNDEFINED : static_cast<int>(n);
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Get_address(const void* location, MPIGPU_Aint* address) {
  if (address == nullptr) return TypeErr(MPIGPU_ERR_ARG, "MPIGPU_Get_address", "null address");
  *address = reinterpret_cast<MPIGPU_Aint>(location);
  return MPIGPU_SUCCESS;
}

// ---- Pack / Unpack ----

namespace {

// The packer between `count` elements of `type` at typed (typed_tag) and `bytes` bytes at
// plain + *position (plain_tag, `size` bytes long); advances *position.
int PackCall(const char* fn, bool pack, const void* typed, MPIGPU_Buftype typed_tag, int count,
             MPIGPU_Datatype type, const void* plain, MPIGPU_Buftype plain_tag, int size,
             int* position, MPIGPU_Comm comm) {
  if (position == nullptr) return TypeErr(MPIGPU_ERR_ARG, fn, "null position");
  if (comm == MPIGPU_COMM_NULL) return TypeErr(MPIGPU_ERR_COMM, fn, "comm is MPIGPU_COMM_NULL");
  if (size < 0) return TypeErr(MPIGPU_ERR_ARG, fn, "negative buffer size");
  if (*position < 0 || *position > size)
    return TypeErr(MPIGPU_ERR_ARG, fn, "position " + std::to_string(*position) +
                                       " outside the " + std::to_string(size) + "-byte buffer");
  mpigpu::TypeDesc desc;
  if (int rc = mpigpu::DescribeForComm(type, count, &desc); rc != MPIGPU_SUCCESS) return rc;
  if (desc.total_bytes > static_cast<size_t>(size - *position))
    return TypeErr(MPIGPU_ERR_TRUNCATE, fn,
               std::to_string(desc.total_bytes) + " bytes do not fit in the " +
                   std::to_string(size - *position) + " left after position " +
                   std::to_string(*position));
  if (desc.total_bytes == 0) return MPIGPU_SUCCESS;
  if (typed == nullptr && desc.true_lb < 4096)  // (MPI_BOTTOM: absolute addresses past page 0)
    return TypeErr(MPIGPU_ERR_BUFFER, fn, "null typed buffer");
  if (plain == nullptr) return TypeErr(MPIGPU_ERR_BUFFER, fn, "null packed buffer");
  mpigpu::MemLoc typed_loc, plain_loc;
  if (int rc = mpigpu::ResolveBuftype(typed_tag, &typed_loc); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = mpigpu::ResolveBuftype(plain_tag, &plain_loc); rc != MPIGPU_SUCCESS) return rc;
  char* p = const_cast<char*>(static_cast<const char*>(plain)) + *position;
  const mpigpu::Status st =
      mpigpu::PackPieces(pack ? mpigpu::PackDir::kPack : mpigpu::PackDir::kUnpack, desc.shape(),
                         const_cast<void*>(typed), typed_loc, 0, desc.total_bytes, p, plain_loc);
  if (!st.ok()) {
    return typed_loc.is_host() && plain_loc.is_host() ? mpigpu::PackerCode(st)
                                                      : mpigpu::ReturnCode(st, MPIGPU_ERR_BUFFER);
  }
  *position += static_cast<int>(desc.total_bytes);
  return MPIGPU_SUCCESS;
}

}  // namespace

extern "C" int MPIGPU_Pack(const void* inbuf, MPIGPU_Buftype inbuftype, int incount,
                           MPIGPU_Datatype datatype, void* outbuf, MPIGPU_Buftype outbuftype,
                           int outsize, int* position, MPIGPU_Comm comm) {
  return PackCall("MPIGPU_Pack", true, inbuf, inbuftype, incount, datatype, outbuf, outbuftype,
                  outsize, position, comm);
}

extern "C" int MPIGPU_Unpack(const void* inbuf, MPIGPU_Buftype inbuftype, int insize,
                             int* position, void* outbuf, MPIGPU_Buftype outbuftype, int outcount,
                             MPIGPU_Datatype datatype, MPIGPU_Comm comm) {
  return PackCall("MPIGPU_Unpack", false, outbuf, outbuftype, outcount, datatype, inbuf,
                  inbuftype, insize, position, comm);
}

extern "C" int MPIGPU_Pack_size(int incount, MPIGPU_Datatype datatype, MPIGPU_Comm comm,
                                int* size) {
  const char* fn = "MPIGPU_Pack_size";
  if (size == nullptr) return TypeErr(MPIGPU_ERR_ARG, fn, "null size");
  if (comm == MPIGPU_COMM_NULL) return TypeErr(MPIGPU_ERR_COMM, fn, "comm is MPIGPU_COMM_NULL");
  if (incount < 0) return TypeErr(MPIGPU_ERR_COUNT, fn, "negative count");
  mpigpu::TypeInfo info;
  if (int rc = mpigpu::LookupType(datatype, &info); rc != MPIGPU_SUCCESS) return rc;
  size_t bytes;
  if (__builtin_mul_overflow(static_cast<size_t>(incount), info.size, &bytes) ||
      bytes > static_cast<size_t>(INT_MAX))
    return TypeErr(MPIGPU_ERR_COUNT, fn, "the packed size exceeds INT_MAX");
  *size = static_cast<int>(bytes);
  return MPIGPU_SUCCESS;
}

// ---- external32 (MPI 13.5.2): big-endian, fixed sizes ----

namespace {

// The external32 size of a predefined type's basic element (a pair's members are separate
// elements): integers and floats by MPI's table (LONG 4, WCHAR 2, AINT/OFFSET/COUNT 8, long
// double 16).
size_t ExternalSize(MPIGPU_Datatype t) {
  switch (t) {
    case MPIGPU_WCHAR: return 2;
    case MPIGPU_LONG:
    case MPIGPU_UNSIGNED_LONG: return 4;
    case MPIGPU_AINT:
    case MPIGPU_OFFSET:
    case MPIGPU_COUNT: return 8;
    default: return mpigpu::PredefinedTypeSize(t);
  }
}

// Calls fn(basic type, offset) for every basic element of one element at `base`, in type-map
// order (a pair's value, then its index).
template <class Fn>
void ForEachBasic(const mpigpu::TypeInfo& t, ptrdiff_t base, Fn& fn) {
  if (t.predefined) {
    mpigpu::PairLayout pair;
    if (mpigpu::PredefinedPairLayout(t.basic_type, &pair)) {
      fn(pair.value_type, base);
      fn(pair.index_type, base + static_cast<ptrdiff_t>(pair.index_offset));
    } else {
      fn(t.basic_type, base);
    }
    return;
  }
  t.tree->ForEachBlock([&](ptrdiff_t disp, size_t count, const mpigpu::TypeInfo& c) {
    for (size_t j = 0; j < count; ++j)
      ForEachBasic(c, base + disp + static_cast<ptrdiff_t>(j) * c.extent, fn);
    return true;
  });
}

// One basic element between native memory and external32 bytes (`ext` bytes, big-endian).
// Integers are resized (sign- or zero-extended, or cut to the external width); floating point
// and complex parts are byte-reversed (long double's 16 bytes as they are: not converted to
// IEEE quad precision).
void Convert(MPIGPU_Datatype t, unsigned char* native, unsigned char* ext, bool to_ext) {
  const mpigpu::TypeKind kind = mpigpu::PredefinedTypeKind(t);
  const size_t n = mpigpu::PredefinedTypeSize(t), e = ExternalSize(t);
  if ((kind == mpigpu::TypeKind::kSignedInt || kind == mpigpu::TypeKind::kUnsignedInt ||
       (kind == mpigpu::TypeKind::kChar && n > 1) ||
       (kind == mpigpu::TypeKind::kLogical && n > 1)) &&
      n <= 8 && e <= 8) {
    const bool is_signed = kind == mpigpu::TypeKind::kSignedInt;
    if (to_ext) {
      uint64_t v = 0;
      std::memcpy(&v, native, n);  // little-endian host
      if (is_signed && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);
      for (size_t i = 0; i < e; ++i) ext[e - 1 - i] = static_cast<unsigned char>(v >> (8 * i));
    } else {
      uint64_t v = 0;
      for (size_t i = 0; i < e; ++i) v |= static_cast<uint64_t>(ext[e - 1 - i]) << (8 * i);
      if (is_signed && e < 8 && (v >> (8 * e - 1)) & 1) v |= ~uint64_t{0} << (8 * e);
      std::memcpy(native, &v, n);
    }
    return;
  }
  // Floating point (complex: each part), bytes, chars, bools: reversed per part.
  const size_t part = kind == mpigpu::TypeKind::kComplex ? n / 2 : n;
  for (size_t p = 0; p < n; p += part)
    for (size_t i = 0; i < part; ++i) {
      if (to_ext) ext[p + part - 1 - i] = native[p + i];
      else native[p + i] = ext[p + part - 1 - i];
    }
}

int External(const char* fn, bool pack, const char* datarep, const void* typed,
             MPIGPU_Buftype typed_tag, int count, MPIGPU_Datatype type, const void* ext,
             MPIGPU_Buftype ext_tag, MPIGPU_Aint size, MPIGPU_Aint* position) {
  if (datarep == nullptr || std::strcmp(datarep, "external32") != 0)
    return TypeErr(MPIGPU_ERR_ARG, fn, "datarep must be \"external32\"");
  if (typed_tag != MPIGPU_BUF_HOST || ext_tag != MPIGPU_BUF_HOST)
    return TypeErr(MPIGPU_ERR_BUFFER, fn, "external32 takes host buffers only");
  if (position == nullptr || *position < 0 || *position > size)
    return TypeErr(MPIGPU_ERR_ARG, fn, "bad position");
  if (count < 0) return TypeErr(MPIGPU_ERR_COUNT, fn, "negative count");
  int rc;
  auto info = mpigpu::SharedType(type, &rc);
  if (!info) return rc;
  size_t need = 0;
  auto add = [&](MPIGPU_Datatype t, ptrdiff_t) { need += ExternalSize(t); };
  ForEachBasic(*info, 0, add);
  need *= static_cast<size_t>(count);
  if (need > static_cast<size_t>(size - *position))
    return TypeErr(MPIGPU_ERR_TRUNCATE, fn, "the external32 data do not fit");
  if (need > 0 && (typed == nullptr || ext == nullptr))
    return TypeErr(MPIGPU_ERR_BUFFER, fn, "null buffer");
  unsigned char* out = const_cast<unsigned char*>(static_cast<const unsigned char*>(ext)) + *position;
  unsigned char* base = const_cast<unsigned char*>(static_cast<const unsigned char*>(typed));
  for (int k = 0; k < count; ++k) {
    auto conv = [&](MPIGPU_Datatype t, ptrdiff_t off) {
      Convert(t, base + k * info->extent + off, out, pack);
      out += ExternalSize(t);
    };
    ForEachBasic(*info, 0, conv);
  }
  *position += static_cast<MPIGPU_Aint>(need);
  return MPIGPU_SUCCESS;
}

}  // namespace

extern "C" int MPIGPU_Pack_external(const char* datarep, const void* inbuf,
                                    MPIGPU_Buftype inbuftype, int incount,
                                    MPIGPU_Datatype datatype, void* outbuf,
                                    MPIGPU_Buftype outbuftype, MPIGPU_Aint outsize,
                                    MPIGPU_Aint* position) {
  return External("MPIGPU_Pack_external", true, datarep, inbuf, inbuftype, incount, datatype,
                  outbuf, outbuftype, outsize, position);
}

extern "C" int MPIGPU_Unpack_external(const char* datarep, const void* inbuf,
                                      MPIGPU_Buftype inbuftype, MPIGPU_Aint insize,
                                      MPIGPU_Aint* position, void* outbuf,
                                      MPIGPU_Buftype outbuftype, int outcount,
                                      MPIGPU_Datatype datatype) {
  return External("MPIGPU_Unpack_external", false, datarep, outbuf, outbuftype, outcount,
                  datatype, inbuf, inbuftype, insize, position);
}

extern "C" int MPIGPU_Pack_external_size(const char* datarep, int incount,
                                         MPIGPU_Datatype datatype, MPIGPU_Aint* size) {
  const char* fn = "MPIGPU_Pack_external_size";
  if (datarep == nullptr || std::strcmp(datarep, "external32") != 0)
    return TypeErr(MPIGPU_ERR_ARG, fn, "datarep must be \"external32\"");
  if (size == nullptr) return TypeErr(MPIGPU_ERR_ARG, fn, "null size");
  if (incount < 0) return TypeErr(MPIGPU_ERR_COUNT, fn, "negative count");
  int rc;
  auto info = mpigpu::SharedType(datatype, &rc);
  if (!info) return rc;
  size_t one = 0;
  auto add = [&](MPIGPU_Datatype t, ptrdiff_t) { one += ExternalSize(t); };
  ForEachBasic(*info, 0, add);
  *size = static_cast<MPIGPU_Aint>(one * static_cast<size_t>(incount));
  return MPIGPU_SUCCESS;
}

// ---- sizes and extents ----

namespace {

// *info for a query call `fn` with one output pointer `out`.
template <class T>
int Query(const char* fn, MPIGPU_Datatype datatype, const T* out, mpigpu::TypeInfo* info) {
  if (out == nullptr) return mpigpu::SetLastError(MPIGPU_ERR_ARG, std::string(fn) + ": null output");
  return mpigpu::LookupType(datatype, info);
}

// The _x form of an extent query `get` (named `fn`): the same answer as MPIGPU_Count.
int ExtentAsCount(const char* fn, int (*get)(MPIGPU_Datatype, MPIGPU_Aint*, MPIGPU_Aint*),
                  MPIGPU_Datatype datatype, MPIGPU_Count* lb, MPIGPU_Count* extent) {
  MPIGPU_Aint l = 0, e = 0;
  if (lb == nullptr || extent == nullptr)
    return mpigpu::SetLastError(MPIGPU_ERR_ARG, std::string(fn) + ": null output");
  if (int rc = get(datatype, &l, &e); rc != MPIGPU_SUCCESS) return rc;
  *lb = l;
  *extent = e;
  return MPIGPU_SUCCESS;
}

}  // namespace

extern "C" int MPIGPU_Type_size(MPIGPU_Datatype datatype, int* size) {
  mpigpu::TypeInfo info;
  if (int rc = Query("MPIGPU_Type_size", datatype, size, &info); rc != MPIGPU_SUCCESS) return rc;
  *size = info.size > static_cast<size_t>(INT_MAX) ? MPIGPU_UNDEFINED
                                                   : static_cast<int>(info.size);
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Type_size_x(MPIGPU_Datatype datatype, MPIGPU_Count* size) {
  mpigpu::TypeInfo info;
  if (int rc = Query("MPIGPU_Type_size_x", datatype, size, &info); rc != MPIGPU_SUCCESS)
    return rc;
  *size = static_cast<MPIGPU_Count>(info.size);
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Type_get_extent(MPIGPU_Datatype datatype, MPIGPU_Aint* lb,
                                      MPIGPU_Aint* extent) {
  mpigpu::TypeInfo info;
  if (lb == nullptr) extent = nullptr;
  if (int rc = Query("MPIGPU_Type_get_extent", datatype, extent, &info); rc != MPIGPU_SUCCESS)
    return rc;
  *lb = info.lb;
  *extent = info.extent;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Type_get_true_extent(MPIGPU_Datatype datatype, MPIGPU_Aint* true_lb,
                                           MPIGPU_Aint* true_extent) {
  mpigpu::TypeInfo info;
  if (true_lb == nullptr) true_extent = nullptr;
  if (int rc = Query("MPIGPU_Type_get_true_extent", datatype, true_extent, &info);
      rc != MPIGPU_SUCCESS)
    return rc;
  *true_lb = info.true_lb;
  *true_extent = info.true_extent;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Type_get_extent_x(MPIGPU_Datatype datatype, MPIGPU_Count* lb,
                                        MPIGPU_Count* extent) {
  return ExtentAsCount("MPIGPU_Type_get_extent_x", MPIGPU_Type_get_extent, datatype, lb, extent);
}

extern "C" int MPIGPU_Type_get_true_extent_x(MPIGPU_Datatype datatype, MPIGPU_Count* lb,
                                             MPIGPU_Count* extent) {
  return ExtentAsCount("MPIGPU_Type_get_true_extent_x", MPIGPU_Type_get_true_extent, datatype,
                       lb, extent);
}
