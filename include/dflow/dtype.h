// DType: the element types of tensors, numbered as TensorFlow's DataType enum so that GraphDefs
// and checkpoints written by TensorFlow carry over. Reference types (a variable's mutable
// output) are the base type + 100, as in TensorFlow.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

namespace dflow {

enum DType : int {
  DT_INVALID = 0,
  DT_FLOAT = 1,
  DT_DOUBLE = 2,
  DT_INT32 = 3,
  DT_UINT8 = 4,
  DT_STRING = 7,
  DT_INT64 = 9,
  DT_BOOL = 10,
  DT_RESOURCE = 20,
  DT_VARIANT = 21,
  DT_FLOAT_REF = 101,
  DT_DOUBLE_REF = 102,
  DT_INT32_REF = 103,
  DT_UINT8_REF = 104,
  DT_STRING_REF = 107,
  DT_INT64_REF = 109,
  DT_BOOL_REF = 110,
  DT_RESOURCE_REF = 120,
  DT_VARIANT_REF = 121,
};

constexpr int kDTypeRefOffset = 100;

inline bool IsRefType(DType t) { return static_cast<int>(t) > kDTypeRefOffset; }
inline DType BaseType(DType t) { return IsRefType(t) ? static_cast<DType>(static_cast<int>(t) - kDTypeRefOffset) : t; }
inline DType MakeRefType(DType t) {
  return IsRefType(t) ? t : static_cast<DType>(static_cast<int>(t) + kDTypeRefOffset);
}

// True for the (non-reference) types that dflow tensors can hold.
bool IsValidDType(int v);
// Bytes per element; 0 for DT_STRING (variable-size) and invalid types.
size_t DTypeSize(DType t);
bool IsNumeric(DType t);  // float, double, int32, int64, uint8
bool IsFloating(DType t);
bool IsInteger(DType t);

// TensorFlow's names: "float", "double", "int32", "uint8", "string", "int64", "bool",
// "resource", "variant"; reference types as "float_ref".
std::string DTypeString(DType t);
// Parses a name of DTypeString (also "float32", "float64"); false if unknown.
bool DTypeFromString(absl::string_view s, DType* out);

// Maps a C++ type to its DType at compile time.
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DT_FLOAT;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DT_DOUBLE;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DT_INT32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DT_INT64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DT_UINT8;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DT_BOOL;
};
template <>
struct DTypeOf<std::string> {
  static constexpr DType value = DT_STRING;
};
struct ResourceHandle;
template <>
struct DTypeOf<ResourceHandle> {
  static constexpr DType value = DT_RESOURCE;
};
struct Variant;
template <>
struct DTypeOf<Variant> {
  static constexpr DType value = DT_VARIANT;
};

// Calls fn.template operator()<T>() with the C++ type of `t`; returns false for types outside
// the list (the caller turns that into an error naming the op and the type).
#define DFLOW_DTYPE_CASE(T) \
  case DTypeOf<T>::value: fn.template operator()<T>(); return true;

template <typename Fn>
bool VisitNumeric(DType t, Fn&& fn) {
  switch (t) {
    DFLOW_DTYPE_CASE(float)
    DFLOW_DTYPE_CASE(double)
    DFLOW_DTYPE_CASE(int32_t)
    DFLOW_DTYPE_CASE(int64_t)
    DFLOW_DTYPE_CASE(uint8_t)
    default: return false;
  }
}

template <typename Fn>
bool VisitPOD(DType t, Fn&& fn) {
  switch (t) {
    DFLOW_DTYPE_CASE(float)
    DFLOW_DTYPE_CASE(double)
    DFLOW_DTYPE_CASE(int32_t)
    DFLOW_DTYPE_CASE(int64_t)
    DFLOW_DTYPE_CASE(uint8_t)
    DFLOW_DTYPE_CASE(bool)
    default: return false;
  }
}

template <typename Fn>
bool VisitAll(DType t, Fn&& fn) {
  if (t == DT_STRING) {
    fn.template operator()<std::string>();
    return true;
  }
  return VisitPOD(t, std::forward<Fn>(fn));
}

}  // namespace dflow
