#include "tools/sweep_json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mpigpu {
namespace sweep {

Json Json::Bool(bool b) {
  Json j;
  j.type_ = Type::kBool;
  j.bool_ = b;
  return j;
}

Json Json::Number(double d) {
  if (!std::isfinite(d)) return Json();
  Json j;
  j.type_ = Type::kNumber;
  j.number_ = d;
  return j;
}

Json Json::String(std::string s) {
  Json j;
  j.type_ = Type::kString;
  j.string_ = std::move(s);
  return j;
}

Json Json::Array() {
  Json j;
  j.type_ = Type::kArray;
  return j;
}

Json Json::Object() {
  Json j;
  j.type_ = Type::kObject;
  return j;
}

Json& Json::Push(Json v) {
  items_.push_back(std::move(v));
  return items_.back();
}

Json& Json::Set(const std::string& key, Json v) {
  for (auto& m : members_) {
    if (m.first == key) {
      m.second = std::move(v);
      return m.second;
    }
  }
  members_.emplace_back(key, std::move(v));
  return members_.back().second;
}

const Json* Json::Find(const std::string& key) const {
  for (const auto& m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}

std::string JsonQuote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    switch (c) {
      case '"': q += "\\\""; break;
      case '\\': q += "\\\\"; break;
      case '\n': q += "\\n"; break;
      case '\r': q += "\\r"; break;
      case '\t': q += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          q += buf;
        } else {
          q += c;
        }
    }
  }
  return q + "\"";
}

std::string Json::Dump(int indent) const {
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  const std::string inner(static_cast<size_t>(indent + 1) * 2, ' ');
  switch (type_) {
    case Type::kNull: return "null";
    case Type::kBool: return bool_ ? "true" : "false";
    case Type::kNumber: {
      // The shortest of 15..17 digits that reads back as the same double: --replot must
      // reproduce the original run's table and CSV exactly.
      char buf[40];
      for (int digits = 15; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, number_);
        if (std::strtod(buf, nullptr) == number_) break;
      }
      return buf;
    }
    case Type::kString: return JsonQuote(string_);
    case Type::kArray: {
      bool flat = true;
      for (const Json& v : items_) flat &= v.type_ != Type::kArray && v.type_ != Type::kObject;
      std::string s = "[";
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) s += flat ? ", " : ",";
        if (!flat) s += "\n" + inner;
        s += items_[i].Dump(indent + 1);
      }
      if (!flat && !items_.empty()) s += "\n" + pad;
      return s + "]";
    }
    case Type::kObject: {
      std::string s = "{";
      for (size_t i = 0; i < members_.size(); ++i) {
        s += i ? ",\n" : "\n";
        s += inner + JsonQuote(members_[i].first) + ": " + members_[i].second.Dump(indent + 1);
      }
      if (!members_.empty()) s += "\n" + pad;
      return s + "}";
    }
  }
  return "null";
}

namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : t_(text) {}

  Status Parse(Json* out) {
    MPIGPU_RETURN_IF_ERROR(Value(out, 0));
    Space();
    if (pos_ != t_.size()) return Fail("trailing characters");
    return Status::Ok();
  }

 private:
  static constexpr int kMaxDepth = 64;

  Status Fail(const std::string& what) const {
    return Status(Err::kInvalidArg, "JSON: " + what + " at byte " + std::to_string(pos_));
  }
  void Space() {
    while (pos_ < t_.size() &&
           (t_[pos_] == ' ' || t_[pos_] == '\n' || t_[pos_] == '\r' || t_[pos_] == '\t'))
      ++pos_;
  }
  bool Literal(const char* word) {
    size_t n = std::char_traits<char>::length(word);
    if (t_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }

  Status Value(Json* out, int depth) {
    if (depth > kMaxDepth) return Fail("nesting too deep");
    Space();
    if (pos_ >= t_.size()) return Fail("unexpected end");
    char c = t_[pos_];
    if (c == 'n') {
      if (!Literal("null")) return Fail("bad literal");
      *out = Json();
    } else if (c == 't' || c == 'f') {
      if (Literal("true")) *out = Json::Bool(true);
      else if (Literal("false")) *out = Json::Bool(false);
      else return Fail("bad literal");
    } else if (c == '"') {
      std::string s;
      MPIGPU_RETURN_IF_ERROR(Str(&s));
      *out = Json::String(std::move(s));
    } else if (c == '[') {
      ++pos_;
      *out = Json::Array();
      Space();
      if (pos_ < t_.size() && t_[pos_] == ']') {
        ++pos_;
        return Status::Ok();
      }
      while (true) {
        Json v;
        MPIGPU_RETURN_IF_ERROR(Value(&v, depth + 1));
        out->Push(std::move(v));
        Space();
        if (pos_ < t_.size() && t_[pos_] == ',') {
          ++pos_;
        } else if (pos_ < t_.size() && t_[pos_] == ']') {
          ++pos_;
          return Status::Ok();
        } else {
          return Fail("expected , or ]");
        }
      }
    } else if (c == '{') {
      ++pos_;
      *out = Json::Object();
      Space();
      if (pos_ < t_.size() && t_[pos_] == '}') {
        ++pos_;
        return Status::Ok();
      }
      while (true) {
        Space();
        std::string key;
        if (pos_ >= t_.size() || t_[pos_] != '"') return Fail("expected a key");
        MPIGPU_RETURN_IF_ERROR(Str(&key));
        Space();
        if (pos_ >= t_.size() || t_[pos_] != ':') return Fail("expected :");
        ++pos_;
        Json v;
        MPIGPU_RETURN_IF_ERROR(Value(&v, depth + 1));
        out->Set(key, std::move(v));
        Space();
        if (pos_ < t_.size() && t_[pos_] == ',') {
          ++pos_;
        } else if (pos_ < t_.size() && t_[pos_] == '}') {
          ++pos_;
          return Status::Ok();
        } else {
          return Fail("expected , or }");
        }
      }
    } else {
      return Num(out);
    }
    return Status::Ok();
  }

  Status Num(Json* out) {
    const size_t start = pos_;
    if (pos_ < t_.size() && t_[pos_] == '-') ++pos_;
    while (pos_ < t_.size() && std::string("0123456789.eE+-").find(t_[pos_]) != std::string::npos)
      ++pos_;
    std::string text = t_.substr(start, pos_ - start);
    char* end = nullptr;
    double d = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      pos_ = start;
      return Fail("bad value");
    }
    *out = Json::Number(d);
    return Status::Ok();
  }

  // At the opening quote.
  Status Str(std::string* s) {
    ++pos_;
    while (pos_ < t_.size()) {
      char c = t_[pos_++];
      if (c == '"') return Status::Ok();
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in a string");
      if (c != '\\') {
        *s += c;
        continue;
      }
      if (pos_ >= t_.size()) break;
      char e = t_[pos_++];
      switch (e) {
        case '"': *s += '"'; break;
        case '\\': *s += '\\'; break;
        case '/': *s += '/'; break;
        case 'b': *s += '\b'; break;
        case 'f': *s += '\f'; break;
        case 'n': *s += '\n'; break;
        case 'r': *s += '\r'; break;
        case 't': *s += '\t'; break;
        case 'u': {
          if (pos_ + 4 > t_.size()) return Fail("short \\u escape");
          unsigned v = 0;
          for (int k = 0; k < 4; ++k) {
            char h = t_[pos_++];
            v <<= 4;
            if (h >= '0' && h <= '9') v |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') v |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') v |= static_cast<unsigned>(h - 'A' + 10);
            else return Fail("bad \\u escape");
          }
          // UTF-8 for the basic plane (surrogate pairs are not needed by our files).
          if (v < 0x80) {
            *s += static_cast<char>(v);
          } else if (v < 0x800) {
            *s += static_cast<char>(0xC0 | (v >> 6));
            *s += static_cast<char>(0x80 | (v & 0x3F));
          } else {
            *s += static_cast<char>(0xE0 | (v >> 12));
            *s += static_cast<char>(0x80 | ((v >> 6) & 0x3F));
            *s += static_cast<char>(0x80 | (v & 0x3F));
          }
          break;
        }
        default: return Fail("bad escape");
      }
    }
    return Fail("unterminated string");
  }

  const std::string& t_;
  size_t pos_ = 0;
};

}  // namespace

Status ParseJson(const std::string& text, Json* out) {
  *out = Json();
  return Parser(text).Parse(out);
}

}  // namespace sweep
}  // namespace mpigpu
