#include "distributed/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <system_error>
#include <unordered_set>

#include "absl/strings/str_cat.h"

namespace dflow::json {

namespace {

const std::string& EmptyString() {
  static const std::string* s = new std::string();
  return *s;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out += "\"";
  return out;
}

std::string NumberText(double d) {
  if (d == std::floor(d) && std::fabs(d) < 9007199254740992.0) {
    return absl::StrCat(static_cast<int64_t>(d));
  }
  char buf[32];
  for (int precision : {15, 16, 17}) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return buf;
}

class Parser {
 public:
  Parser(absl::string_view text, const ParseOptions& options) : text_(text), options_(options) {}

  StatusOr<Value> ParseDocument() {
    if (text_.size() > options_.max_bytes) {
      return errors::InvalidArgument("JSON: input of ", text_.size(), " bytes exceeds the limit of ",
                                     options_.max_bytes, " bytes at byte 0");
    }
    SkipSpace();
    Value v;
    RETURN_IF_ERROR(ParseValue(0, &v));
    SkipSpace();
    if (pos_ != text_.size()) return Error(absl::StrCat("unexpected ", Describe(), " after the value"));
    return v;
  }

 private:
  Status Error(absl::string_view what) const { return ErrorAt(what, pos_); }
  static Status ErrorAt(absl::string_view what, size_t offset) {
    return errors::InvalidArgument("JSON: ", what, " at byte ", offset);
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }

  // What is at the current position, for error messages.
  std::string Describe() const {
    if (AtEnd()) return "end of input";
    unsigned char c = static_cast<unsigned char>(Peek());
    if (c >= 0x21 && c < 0x7F) return absl::StrCat("character '", std::string(1, static_cast<char>(c)), "'");
    char buf[16];
    std::snprintf(buf, sizeof(buf), "byte 0x%02x", c);
    return buf;
  }

  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')) ++pos_;
  }

  Status ParseValue(int depth, Value* out) {
    if (++values_ > options_.max_values) {
      return Error(absl::StrCat("more than ", options_.max_values, " values"));
    }
    if (AtEnd()) return Error("unexpected end of input, expected a value");
    char c = Peek();
    switch (c) {
      case '{': return ParseObject(depth + 1, out);
      case '[': return ParseArray(depth + 1, out);
      case '"': {
        std::string s;
        RETURN_IF_ERROR(ParseString(&s));
        *out = Value::String(std::move(s));
        return absl::OkStatus();
      }
      case 't': return ParseLiteral("true", Value::Bool(true), out);
      case 'f': return ParseLiteral("false", Value::Bool(false), out);
      case 'n': return ParseLiteral("null", Value::Null(), out);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(out);
        return Error(absl::StrCat("unexpected ", Describe(), ", expected a value"));
    }
  }

  Status ParseLiteral(absl::string_view word, Value v, Value* out) {
    if (text_.substr(pos_, word.size()) != word) {
      return Error(absl::StrCat("invalid literal, expected '", word, "'"));
    }
    pos_ += word.size();
    *out = std::move(v);
    return absl::OkStatus();
  }

  Status CheckDepth(int depth) const {
    if (depth > options_.max_depth) {
      return Error(absl::StrCat("arrays and objects nested deeper than ", options_.max_depth));
    }
    return absl::OkStatus();
  }

  Status ParseArray(int depth, Value* out) {
    RETURN_IF_ERROR(CheckDepth(depth));
    ++pos_;  // '['
    std::vector<Value> items;
    SkipSpace();
    if (!AtEnd() && Peek() == ']') {
      ++pos_;
      *out = Value::Array(std::move(items));
      return absl::OkStatus();
    }
    while (true) {
      SkipSpace();
      Value item;
      RETURN_IF_ERROR(ParseValue(depth, &item));
      items.push_back(std::move(item));
      SkipSpace();
      if (AtEnd()) return Error("unexpected end of input in an array, expected ',' or ']'");
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == ']') {
        ++pos_;
        break;
      }
      return Error(absl::StrCat("unexpected ", Describe(), " in an array, expected ',' or ']'"));
    }
    *out = Value::Array(std::move(items));
    return absl::OkStatus();
  }

  Status ParseObject(int depth, Value* out) {
    RETURN_IF_ERROR(CheckDepth(depth));
    ++pos_;  // '{'
    std::vector<std::pair<std::string, Value>> members;
    std::unordered_set<std::string> keys;
    SkipSpace();
    if (!AtEnd() && Peek() == '}') {
      ++pos_;
      *out = Value::Object(std::move(members));
      return absl::OkStatus();
    }
    while (true) {
      SkipSpace();
      if (AtEnd()) return Error("unexpected end of input in an object, expected a key");
      if (Peek() != '"') return Error(absl::StrCat("unexpected ", Describe(), " in an object, expected a key"));
      size_t key_offset = pos_;
      std::string key;
      RETURN_IF_ERROR(ParseString(&key));
      if (!keys.insert(key).second) return ErrorAt(absl::StrCat("duplicate key ", Quote(key.substr(0, 64))), key_offset);
      SkipSpace();
      if (AtEnd()) return Error("unexpected end of input in an object, expected ':'");
      if (Peek() != ':') return Error(absl::StrCat("unexpected ", Describe(), " after a key, expected ':'"));
      ++pos_;
      SkipSpace();
      Value v;
      RETURN_IF_ERROR(ParseValue(depth, &v));
      members.emplace_back(std::move(key), std::move(v));
      SkipSpace();
      if (AtEnd()) return Error("unexpected end of input in an object, expected ',' or '}'");
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == '}') {
        ++pos_;
        break;
      }
      return Error(absl::StrCat("unexpected ", Describe(), " in an object, expected ',' or '}'"));
    }
    *out = Value::Object(std::move(members));
    return absl::OkStatus();
  }

  // Four hex digits at pos_ (after "\u").
  Status ParseHex4(uint32_t* cp) {
    if (text_.size() - pos_ < 4) {
      pos_ = text_.size();
      return Error("unexpected end of input in a \\u escape");
    }
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_ + i];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else return ErrorAt("invalid hex digit in a \\u escape", pos_ + i);
    }
    pos_ += 4;
    *cp = v;
    return absl::OkStatus();
  }

  // One UTF-8 sequence starting at pos_ (first byte >= 0x80), copied to *out.
  Status CopyUtf8(std::string* out) {
    const unsigned char b0 = static_cast<unsigned char>(text_[pos_]);
    int len;
    uint32_t min;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      len = 2;
      min = 0x80;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      len = 3;
      min = 0x800;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      len = 4;
      min = 0x10000;
    } else {
      return Error("invalid UTF-8 in a string");
    }
    if (text_.size() - pos_ < static_cast<size_t>(len)) return Error("truncated UTF-8 sequence in a string");
    uint32_t cp = b0 & (0x7F >> len);
    for (int i = 1; i < len; ++i) {
      unsigned char b = static_cast<unsigned char>(text_[pos_ + i]);
      if ((b & 0xC0) != 0x80) return Error("invalid UTF-8 in a string");
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return Error("invalid UTF-8 in a string");
    }
    out->append(text_.data() + pos_, len);
    pos_ += len;
    return absl::OkStatus();
  }

  Status ParseString(std::string* out) {
    const size_t start = pos_;
    ++pos_;  // opening quote
    while (true) {
      if (AtEnd()) return ErrorAt("unterminated string", start);
      unsigned char c = static_cast<unsigned char>(Peek());
      if (c == '"') {
        ++pos_;
        return absl::OkStatus();
      }
      if (c < 0x20) return Error("unescaped control character in a string");
      if (c >= 0x80) {
        RETURN_IF_ERROR(CopyUtf8(out));
        continue;
      }
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      const size_t escape_at = pos_;
      ++pos_;
      if (AtEnd()) return ErrorAt("unterminated escape in a string", escape_at);
      char e = Peek();
      ++pos_;
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp = 0;
          RETURN_IF_ERROR(ParseHex4(&cp));
          if (cp >= 0xDC00 && cp <= 0xDFFF) return ErrorAt("lone low surrogate in a \\u escape", escape_at);
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") {
              return ErrorAt("high surrogate not followed by a low surrogate", escape_at);
            }
            pos_ += 2;
            uint32_t low = 0;
            RETURN_IF_ERROR(ParseHex4(&low));
            if (low < 0xDC00 || low > 0xDFFF) {
              return ErrorAt("high surrogate not followed by a low surrogate", escape_at);
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          return ErrorAt("invalid escape in a string", escape_at);
      }
    }
  }

  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  Status ParseNumber(Value* out) {
    const size_t start = pos_;
    bool negative = false;
    if (Peek() == '-') {
      negative = true;
      ++pos_;
    }
    if (AtEnd() || !IsDigit(Peek())) return Error("invalid number: expected a digit");
    // Decimal magnitude of the first significant digit, to tell overflow from underflow.
    int64_t magnitude = 0;
    bool seen_significant = false;
    if (Peek() == '0') {
      ++pos_;
      if (!AtEnd() && IsDigit(Peek())) return Error("invalid number: leading zero");
    } else {
      while (!AtEnd() && IsDigit(Peek())) {
        if (seen_significant) ++magnitude;
        seen_significant = true;
        ++pos_;
      }
    }
    if (!AtEnd() && Peek() == '.') {
      ++pos_;
      if (AtEnd() || !IsDigit(Peek())) return Error("invalid number: expected a digit after '.'");
      int64_t position = 0;
      while (!AtEnd() && IsDigit(Peek())) {
        --position;
        if (!seen_significant && Peek() != '0') {
          seen_significant = true;
          magnitude = position;
        }
        ++pos_;
      }
    }
    if (!AtEnd() && (Peek() == 'e' || Peek() == 'E')) {
      ++pos_;
      bool exp_negative = false;
      if (!AtEnd() && (Peek() == '+' || Peek() == '-')) {
        exp_negative = Peek() == '-';
        ++pos_;
      }
      if (AtEnd() || !IsDigit(Peek())) return Error("invalid number: expected a digit in the exponent");
      int64_t exponent = 0;
      while (!AtEnd() && IsDigit(Peek())) {
        if (exponent < 1000000000) exponent = exponent * 10 + (Peek() - '0');  // saturates
        ++pos_;
      }
      magnitude += exp_negative ? -exponent : exponent;
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    double d = 0;
    auto [ptr, ec] = std::from_chars(first, last, d);
    if (ec == std::errc::result_out_of_range) {
      if (seen_significant && magnitude > 0) {
        return ErrorAt(absl::StrCat("number ", absl::string_view(first, std::min<size_t>(last - first, 40)),
                                    (last - first > 40 ? "..." : ""), " is too large for a double"),
                       start);
      }
      d = negative ? -0.0 : 0.0;  // underflow: the nearest double is zero
    } else if (ec != std::errc() || ptr != last) {
      return ErrorAt("invalid number", start);
    }
    if (!std::isfinite(d)) return ErrorAt("number is too large for a double", start);
    *out = Value::Number(d);
    return absl::OkStatus();
  }

  absl::string_view text_;
  const ParseOptions& options_;
  size_t pos_ = 0;
  size_t values_ = 0;
};

}  // namespace

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.bool_ = b;
  return v;
}

Value Value::Number(double d) {
  Value v;
  v.kind_ = Kind::kNumber;
  v.number_ = d;
  return v;
}

Value Value::String(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  v.string_ = std::move(s);
  return v;
}

Value Value::Array(std::vector<Value> items) {
  Value v;
  v.kind_ = Kind::kArray;
  v.items_ = std::move(items);
  return v;
}

Value Value::Object(std::vector<std::pair<std::string, Value>> members) {
  Value v;
  v.kind_ = Kind::kObject;
  v.members_ = std::move(members);
  return v;
}

const std::string& Value::string_value() const { return kind_ == Kind::kString ? string_ : EmptyString(); }

const std::vector<Value>& Value::array_items() const {
  static const std::vector<Value>* empty = new std::vector<Value>();
  return kind_ == Kind::kArray ? items_ : *empty;
}

const std::vector<std::pair<std::string, Value>>& Value::object_members() const {
  static const std::vector<std::pair<std::string, Value>>* empty = new std::vector<std::pair<std::string, Value>>();
  return kind_ == Kind::kObject ? members_ : *empty;
}

const Value* Value::Find(absl::string_view key) const {
  if (kind_ != Kind::kObject) return nullptr;
  for (const auto& m : members_) {
    if (m.first == key) return &m.second;
  }
  return nullptr;
}

StatusOr<int> Value::AsInt(absl::string_view what, int min, int max) const {
  if (kind_ != Kind::kNumber) {
    return errors::InvalidArgument(what, " must be an integer, got ", KindName(kind_), " ", ToString());
  }
  if (number_ != std::floor(number_)) {
    return errors::InvalidArgument(what, " must be an integer, got ", ToString());
  }
  if (number_ < min || number_ > max) {
    return errors::InvalidArgument(what, " must be in [", min, ", ", max, "], got ", ToString());
  }
  return static_cast<int>(number_);
}

const char* Value::KindName(Kind kind) {
  switch (kind) {
    case Kind::kNull: return "null";
    case Kind::kBool: return "bool";
    case Kind::kNumber: return "number";
    case Kind::kString: return "string";
    case Kind::kArray: return "array";
    case Kind::kObject: return "object";
  }
  return "?";
}

std::string Value::ToString() const {
  switch (kind_) {
    case Kind::kNull: return "null";
    case Kind::kBool: return bool_ ? "true" : "false";
    case Kind::kNumber: return NumberText(number_);
    case Kind::kString: return Quote(string_);
    case Kind::kArray: {
      std::string s = "[";
      for (size_t i = 0; i < items_.size(); ++i) absl::StrAppend(&s, i ? "," : "", items_[i].ToString());
      return s + "]";
    }
    case Kind::kObject: {
      std::string s = "{";
      for (size_t i = 0; i < members_.size(); ++i) {
        absl::StrAppend(&s, i ? "," : "", Quote(members_[i].first), ":", members_[i].second.ToString());
      }
      return s + "}";
    }
  }
  return "";
}

StatusOr<Value> Parse(absl::string_view text, const ParseOptions& options) {
  Parser parser(text, options);
  return parser.ParseDocument();
}

}  // namespace dflow::json
