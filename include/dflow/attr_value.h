// AttrValue: the value of one node attribute (an op's compile-time parameter), and AttrMap.
//
// The kinds match TensorFlow's attr types: "string", "int", "float", "bool", "type", "shape",
// "tensor" and the list(...) of each, and "func" (a function of the graph's library).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "dflow/status.h"
#include "dflow/tensor.h"

namespace dflow {

// A "func" attr: the name of a function in the graph's function library (TensorFlow's
// NameAttrList; dflow's functions are monomorphic, so the attr map is always empty).
struct NameAttrList {
  std::string name;
  bool operator==(const NameAttrList& o) const { return name == o.name; }
};

class AttrValue {
 public:
  using Value = std::variant<std::monostate, std::string, int64_t, float, bool, DType, PartialTensorShape, Tensor,
                             std::vector<std::string>, std::vector<int64_t>, std::vector<float>, std::vector<bool>,
                             std::vector<DType>, std::vector<PartialTensorShape>, std::vector<Tensor>, NameAttrList>;

  AttrValue() = default;
  AttrValue(std::string v) : v_(std::move(v)) {}                      // NOLINT
  AttrValue(const char* v) : v_(std::string(v)) {}                    // NOLINT
  AttrValue(int64_t v) : v_(v) {}                                     // NOLINT
  AttrValue(int v) : v_(int64_t{v}) {}                                // NOLINT
  AttrValue(float v) : v_(v) {}                                       // NOLINT
  AttrValue(bool v) : v_(v) {}                                        // NOLINT
  AttrValue(DType v) : v_(v) {}                                       // NOLINT
  AttrValue(PartialTensorShape v) : v_(std::move(v)) {}               // NOLINT
  AttrValue(const TensorShape& v) : v_(PartialTensorShape(v)) {}      // NOLINT
  AttrValue(Tensor v) : v_(std::move(v)) {}                           // NOLINT
  AttrValue(std::vector<std::string> v) : v_(std::move(v)) {}         // NOLINT
  AttrValue(std::vector<int64_t> v) : v_(std::move(v)) {}             // NOLINT
  AttrValue(std::vector<float> v) : v_(std::move(v)) {}               // NOLINT
  AttrValue(std::vector<bool> v) : v_(std::move(v)) {}                // NOLINT
  AttrValue(std::vector<DType> v) : v_(std::move(v)) {}               // NOLINT
  AttrValue(std::vector<PartialTensorShape> v) : v_(std::move(v)) {}  // NOLINT
  AttrValue(std::vector<Tensor> v) : v_(std::move(v)) {}              // NOLINT
  AttrValue(NameAttrList v) : v_(std::move(v)) {}                     // NOLINT

  const Value& value() const { return v_; }
  bool empty() const { return std::holds_alternative<std::monostate>(v_); }
  template <typename T>
  const T* get_if() const {
    return std::get_if<T>(&v_);
  }

  // The TensorFlow attr type of this value: "int", "list(type)", ... ("" when empty).
  std::string TypeName() const;
  // Human-readable value, as `dflow inspect` and error messages show it.
  std::string DebugString() const;
  bool operator==(const AttrValue& o) const;

 private:
  Value v_;
};

using AttrMap = std::map<std::string, AttrValue, std::less<>>;

// Typed lookup with errors that name the attr and the kinds involved.
template <typename T>
Status GetAttr(const AttrMap& attrs, absl::string_view name, T* out) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return errors::NotFound("No attr named '", name, "'");
  if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int>) {
    const int64_t* v = it->second.get_if<int64_t>();
    if (v == nullptr) {
      return errors::InvalidArgument("Attr '", name, "' has type ", it->second.TypeName(), ", not int");
    }
    if (*v < INT32_MIN || *v > INT32_MAX) {
      return errors::InvalidArgument("Attr '", name, "' value ", *v, " does not fit in int32");
    }
    *out = static_cast<T>(*v);
  } else {
    const T* v = it->second.get_if<T>();
    if (v == nullptr) {
      return errors::InvalidArgument("Attr '", name, "' has type ", it->second.TypeName(), ", not the requested one");
    }
    *out = *v;
  }
  return absl::OkStatus();
}

}  // namespace dflow
