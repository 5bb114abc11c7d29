#include "tools/sweep_json.h"

namespace mpigpu {
namespace sweep {

Status ParseJson(const std::string& text, Json* out) {
  try {
    *out = Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error; out_of_range for 1e400
    *out = Json();
    return Status(Err::kInvalidArg, std::string("JSON: ") + e.what());
  }
  return Status::Ok();
}

std::string DumpJson(const Json& j) {
  return j.dump(2, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace sweep
}  // namespace mpigpu
