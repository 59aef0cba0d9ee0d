#include "tensor/dtype.h"

namespace dflow {

bool IsValidDType(int v) {
  switch (v) {
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_INT32:
    case DT_UINT8:
    case DT_STRING:
    case DT_INT64:
    case DT_BOOL:
    case DT_RESOURCE:
    case DT_VARIANT: return true;
    default: return false;
  }
}

size_t DTypeSize(DType t) {
  switch (BaseType(t)) {
    case DT_FLOAT: return 4;
    case DT_DOUBLE: return 8;
    case DT_INT32: return 4;
    case DT_UINT8: return 1;
    case DT_INT64: return 8;
    case DT_BOOL: return 1;
    default: return 0;
  }
}

bool IsFloating(DType t) { return t == DT_FLOAT || t == DT_DOUBLE; }
bool IsInteger(DType t) { return t == DT_INT32 || t == DT_INT64 || t == DT_UINT8; }
bool IsNumeric(DType t) { return IsFloating(t) || IsInteger(t); }

std::string DTypeString(DType t) {
  // One level of reference only: a number from a proto may be any int (no recursion on it).
  if (IsRefType(t) && !IsRefType(BaseType(t))) return DTypeString(BaseType(t)) + "_ref";
  switch (t) {
    case DT_FLOAT: return "float";
    case DT_DOUBLE: return "double";
    case DT_INT32: return "int32";
    case DT_UINT8: return "uint8";
    case DT_STRING: return "string";
    case DT_INT64: return "int64";
    case DT_BOOL: return "bool";
    case DT_RESOURCE: return "resource";
    case DT_VARIANT: return "variant";
    case DT_INVALID: return "invalid";
    default: return "unknown(" + std::to_string(static_cast<int>(t)) + ")";
  }
}

bool DTypeFromString(absl::string_view s, DType* out) {
  bool ref = false;
  if (s.size() > 4 && s.substr(s.size() - 4) == "_ref") {
    ref = true;
    s.remove_suffix(4);
  }
  DType t;
  if (s == "float" || s == "float32") t = DT_FLOAT;
  else if (s == "double" || s == "float64") t = DT_DOUBLE;
  else if (s == "int32") t = DT_INT32;
  else if (s == "uint8") t = DT_UINT8;
  else if (s == "string") t = DT_STRING;
  else if (s == "int64") t = DT_INT64;
  else if (s == "bool") t = DT_BOOL;
  else if (s == "resource") t = DT_RESOURCE;
  else if (s == "variant") t = DT_VARIANT;
  else return false;
  *out = ref ? MakeRefType(t) : t;
  return true;
}

}  // namespace dflow
