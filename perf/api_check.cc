#include "perf/api_check.h"

namespace mpigpu::perf {

std::string ApiErrorString(int rc) {
  char text[MPIGPU_MAX_ERROR_STRING] = "";
  int len = 0;
  MPIGPU_Error_string(rc, text, &len);
  return text;
}

Status ApiFailure(int rc, const char* call) {
  return Status(Err::kInternal, std::string(call) + ": " + ApiErrorString(rc));
}

}  // namespace mpigpu::perf
