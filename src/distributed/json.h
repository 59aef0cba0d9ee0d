// A small, strict JSON parser (RFC 8259) for configuration such as TF_CONFIG.
//
//   ASSIGN_OR_RETURN(json::Value v, json::Parse(R"({"task": {"type": "worker", "index": 1}})"));
//   const json::Value* task = v.Find("task");
//
// Strict: no comments, no trailing commas, no leading zeros, no NaN/Infinity, no unescaped control
// characters in strings, no invalid UTF-8, no lone surrogates, no duplicate object keys, nothing
// after the value but whitespace. Bounded: input size, nesting depth and the number of values are
// limited (ParseOptions), the parser recurses at most max_depth deep, and numbers that do not fit
// a double are errors. Every error is InvalidArgument "JSON: <what> at byte <offset>".
//
// Values are immutable after parsing; copyable; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/status.h"

namespace dflow::json {

class Value {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  Value() = default;
  static Value Null() { return Value(); }
  static Value Bool(bool b);
  static Value Number(double d);
  static Value String(std::string s);
  static Value Array(std::vector<Value> items);
  // Keys must be distinct (Parse guarantees it); kept in document order.
  static Value Object(std::vector<std::pair<std::string, Value>> members);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_number() const { return kind_ == Kind::kNumber; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }

  // The accessors return the value of the kind asked for, or a neutral value (false, 0, empty)
  // for a value of another kind.
  bool bool_value() const { return kind_ == Kind::kBool && bool_; }
  double number_value() const { return kind_ == Kind::kNumber ? number_ : 0.0; }
  const std::string& string_value() const;
  const std::vector<Value>& array_items() const;
  const std::vector<std::pair<std::string, Value>>& object_members() const;

  // The member named `key` of an object; nullptr when absent or not an object.
  const Value* Find(absl::string_view key) const;

  // The number as an int when it is an integer in [min, max] (1.0 and 1e2 count); otherwise
  // InvalidArgument naming `what` and the value.
  StatusOr<int> AsInt(absl::string_view what, int min, int max) const;

  // "null", "true", "number", "string", "array", "object".
  static const char* KindName(Kind kind);
  // Compact JSON text of the value (strings escaped; numbers in shortest round-trip form).
  std::string ToString() const;

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  double number_ = 0.0;
  std::string string_;
  std::vector<Value> items_;
  std::vector<std::pair<std::string, Value>> members_;
};

struct ParseOptions {
  size_t max_bytes = size_t{16} << 20;  // input size
  int max_depth = 64;                    // nested arrays/objects
  size_t max_values = size_t{1} << 20;   // values of any kind in the document
};

// Parses one JSON document. InvalidArgument "JSON: <what> at byte <offset>" for malformed or
// over-limit input; never crashes, whatever the bytes.
StatusOr<Value> Parse(absl::string_view text, const ParseOptions& options = ParseOptions());

}  // namespace dflow::json
