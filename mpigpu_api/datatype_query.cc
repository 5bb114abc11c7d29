// MPIGPU_Type_* queries beyond sizes and extents (envelope and contents, names, match_size),
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
