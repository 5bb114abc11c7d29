// A small JSON value with a writer and a strict parser: enough for mpigpu-sweep's result files
// (the ranks hand their results to the launcher-mode parent this way) and for reading --json
// output back in tests. Numbers are doubles; objects keep their keys' order.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "memcopy/status.h"

namespace mpigpu {
namespace sweep {

class Json {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  Json() = default;  // null
  static Json Bool(bool b);
  static Json Number(double d);  // NaN and infinities are written as null
  static Json String(std::string s);
  static Json Array();
  static Json Object();

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool as_bool() const { return bool_; }
  double as_number() const { return number_; }
  const std::string& as_string() const { return string_; }
  const std::vector<Json>& items() const { return items_; }
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }

  // Arrays: append. Objects: set (replaces an existing key).
  Json& Push(Json v);
  Json& Set(const std::string& key, Json v);
  // Objects: the member, or nullptr.
  const Json* Find(const std::string& key) const;

  // Compact JSON text (arrays of numbers stay on one line; objects and other arrays are
  // indented two spaces a level).
  std::string Dump(int indent = 0) const;

 private:
  Type type_ = Type::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

// Parses a whole JSON text. kInvalidArg with the byte offset of the first error.
Status ParseJson(const std::string& text, Json* out);

// `s` as a JSON string literal, quotes included.
std::string JsonQuote(const std::string& s);

}  // namespace sweep
}  // namespace mpigpu
