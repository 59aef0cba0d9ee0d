#include "framework/attr_value.h"

#include "absl/strings/str_join.h"

namespace dflow {
namespace {

struct TypeNameVisitor {
  std::string operator()(std::monostate) const { return ""; }
  std::string operator()(const std::string&) const { return "string"; }
  std::string operator()(int64_t) const { return "int"; }
  std::string operator()(float) const { return "float"; }
  std::string operator()(bool) const { return "bool"; }
  std::string operator()(DType) const { return "type"; }
  std::string operator()(const PartialTensorShape&) const { return "shape"; }
  std::string operator()(const Tensor&) const { return "tensor"; }
  std::string operator()(const std::vector<std::string>&) const { return "list(string)"; }
  std::string operator()(const std::vector<int64_t>&) const { return "list(int)"; }
  std::string operator()(const std::vector<float>&) const { return "list(float)"; }
  std::string operator()(const std::vector<bool>&) const { return "list(bool)"; }
  std::string operator()(const std::vector<DType>&) const { return "list(type)"; }
  std::string operator()(const std::vector<PartialTensorShape>&) const { return "list(shape)"; }
  std::string operator()(const std::vector<Tensor>&) const { return "list(tensor)"; }
  std::string operator()(const NameAttrList&) const { return "func"; }
};

std::string Quote(const std::string& s) { return absl::StrCat("\"", s, "\""); }

struct DebugVisitor {
  std::string operator()(std::monostate) const { return "<empty>"; }
  std::string operator()(const std::string& s) const { return Quote(s); }
  std::string operator()(int64_t v) const { return std::to_string(v); }
  std::string operator()(float v) const { return FormatNumber(v); }
  std::string operator()(bool v) const { return v ? "true" : "false"; }
  std::string operator()(DType t) const { return DTypeString(t); }
  std::string operator()(const PartialTensorShape& s) const { return s.DebugString(); }
  std::string operator()(const Tensor& t) const { return t.DebugString(); }
  std::string operator()(const std::vector<std::string>& v) const {
    return absl::StrCat("[", absl::StrJoin(v, ", ", [](std::string* o, const std::string& s) { o->append(Quote(s)); }),
                        "]");
  }
  std::string operator()(const std::vector<int64_t>& v) const { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }
  std::string operator()(const std::vector<float>& v) const {
    return absl::StrCat("[", absl::StrJoin(v, ", ", [](std::string* o, float f) { o->append(FormatNumber(f)); }), "]");
  }
  std::string operator()(const std::vector<bool>& v) const {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::string(v[i] ? "true" : "false");
    return s + "]";
  }
  std::string operator()(const std::vector<DType>& v) const {
    return absl::StrCat("[", absl::StrJoin(v, ", ", [](std::string* o, DType t) { o->append(DTypeString(t)); }), "]");
  }
  std::string operator()(const std::vector<PartialTensorShape>& v) const {
    return absl::StrCat("[",
                        absl::StrJoin(v, ", ",
                                      [](std::string* o, const PartialTensorShape& s) { o->append(s.DebugString()); }),
                        "]");
  }
  std::string operator()(const std::vector<Tensor>& v) const {
    return absl::StrCat("[",
                        absl::StrJoin(v, ", ", [](std::string* o, const Tensor& t) { o->append(t.DebugString()); }),
                        "]");
  }
  std::string operator()(const NameAttrList& f) const { return absl::StrCat("func ", f.name); }
};

bool TensorsEqual(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == DT_STRING) {
    auto x = a.flat<std::string>(), y = b.flat<std::string>();
    return std::equal(x.begin(), x.end(), y.begin());
  }
  return a.TotalBytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0;
}

}  // namespace

std::string AttrValue::TypeName() const { return std::visit(TypeNameVisitor{}, v_); }
std::string AttrValue::DebugString() const { return std::visit(DebugVisitor{}, v_); }

bool AttrValue::operator==(const AttrValue& o) const {
  if (v_.index() != o.v_.index()) return false;
  return std::visit(
      [&](const auto& a) -> bool {
        using T = std::decay_t<decltype(a)>;
        const T& b = std::get<T>(o.v_);
        if constexpr (std::is_same_v<T, std::monostate>) {
          return true;
        } else if constexpr (std::is_same_v<T, Tensor>) {
          return TensorsEqual(a, b);
        } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
          if (a.size() != b.size()) return false;
          for (size_t i = 0; i < a.size(); ++i)
            if (!TensorsEqual(a[i], b[i])) return false;
          return true;
        } else {
          return a == b;
        }
      },
      v_);
}

}  // namespace dflow
