#include "framework/op_def.h"

#include <algorithm>
#include <map>
#include <set>
#include <mutex>
#include <shared_mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/logging.h"
#include "framework/shape_inference.h"

namespace dflow {

std::string ArgDef::DebugString() const {
  std::string t = type != DT_INVALID ? DTypeString(type) : !type_attr.empty() ? type_attr : type_list_attr;
  if (!number_attr.empty()) t = absl::StrCat(number_attr, " * ", t);
  if (is_ref) t = absl::StrCat("Ref(", t, ")");
  return absl::StrCat(name, ": ", t);
}

std::string AttrDef::DebugString() const {
  std::string s = absl::StrCat(name, ": ");
  if (!allowed_types.empty()) {
    std::string set = absl::StrCat(
        "{", absl::StrJoin(allowed_types, ", ", [](std::string* o, DType t) { o->append(DTypeString(t)); }), "}");
    s += type == "list(type)" ? absl::StrCat("list(", set, ")") : set;
  } else {
    s += type;
  }
  if (minimum) absl::StrAppend(&s, " >= ", *minimum);
  if (default_value) absl::StrAppend(&s, " = ", default_value->DebugString());
  return s;
}

const AttrDef* OpDef::FindAttr(absl::string_view n) const {
  for (const auto& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

std::string OpDef::Signature() const {
  auto args = [](const std::vector<ArgDef>& v) {
    return absl::StrJoin(v, ", ", [](std::string* o, const ArgDef& a) { o->append(a.DebugString()); });
  };
  std::string s = absl::StrCat(name, "(", args(inputs), ") -> (", args(outputs), ")");
  if (!attrs.empty()) {
    absl::StrAppend(&s, "; ",
                    absl::StrJoin(attrs, "; ", [](std::string* o, const AttrDef& a) { o->append(a.DebugString()); }));
  }
  if (is_stateful) s += "; stateful";
  return s;
}

OpDefBuilder::OpDefBuilder(std::string name) : name_(std::move(name)) {}
OpDefBuilder& OpDefBuilder::Input(std::string spec) {
  inputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string spec) {
  outputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string spec) {
  attrs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  stateful_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeFn fn) {
  shape_fn_ = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::Doc(std::string s) {
  summary_ = std::move(s);
  return *this;
}

namespace {

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || !(absl::ascii_isalpha(s[0]) || s[0] == '_')) return false;
  for (char c : s)
    if (!(absl::ascii_isalnum(c) || c == '_')) return false;
  return true;
}

Status ParseTypeSet(absl::string_view s, std::vector<DType>* out) {
  // "{float, double}"
  if (!absl::ConsumePrefix(&s, "{") || !absl::ConsumeSuffix(&s, "}")) {
    return errors::InvalidArgument("expected {type, ...} but got '", s, "'");
  }
  for (absl::string_view part : absl::StrSplit(s, ',', absl::SkipWhitespace())) {
    DType t;
    if (!DTypeFromString(absl::StripAsciiWhitespace(part), &t)) {
      return errors::InvalidArgument("unknown type '", part, "'");
    }
    out->push_back(t);
  }
  return absl::OkStatus();
}

StatusOr<AttrValue> ParseDefault(const std::string& type, absl::string_view v) {
  v = absl::StripAsciiWhitespace(v);
  if (type == "int") {
    int64_t i;
    if (absl::SimpleAtoi(v, &i)) return AttrValue(i);
  } else if (type == "float") {
    float f;
    if (absl::SimpleAtof(v, &f)) return AttrValue(f);
  } else if (type == "bool") {
    if (v == "true") return AttrValue(true);
    if (v == "false") return AttrValue(false);
  } else if (type == "string") {
    if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
      return AttrValue(std::string(v.substr(1, v.size() - 2)));
    }
  } else if (type == "type") {
    DType t;
    if (absl::ConsumePrefix(&v, "DT_")) {
      std::string lower = absl::AsciiStrToLower(v);
      if (DTypeFromString(lower, &t)) return AttrValue(t);
    } else if (DTypeFromString(v, &t)) {
      return AttrValue(t);
    }
  } else if (type == "shape") {
    if (v == "unknown") return AttrValue(PartialTensorShape());
    if (absl::ConsumePrefix(&v, "[") && absl::ConsumeSuffix(&v, "]")) {
      std::vector<int64_t> dims;
      for (absl::string_view d : absl::StrSplit(v, ',', absl::SkipWhitespace())) {
        d = absl::StripAsciiWhitespace(d);
        int64_t n;
        if (d == "?") n = -1;
        else if (!absl::SimpleAtoi(d, &n)) return errors::InvalidArgument("bad dimension '", d, "'");
        dims.push_back(n);
      }
      ASSIGN_OR_RETURN(PartialTensorShape s, PartialTensorShape::FromDims(dims));
      return AttrValue(s);
    }
  } else if (absl::StartsWith(type, "list(")) {
    if (absl::ConsumePrefix(&v, "[") && absl::ConsumeSuffix(&v, "]")) {
      std::string elem = type.substr(5, type.size() - 6);
      std::vector<AttrValue> items;
      for (absl::string_view p : absl::StrSplit(v, ',', absl::SkipWhitespace())) {
        ASSIGN_OR_RETURN(AttrValue item, ParseDefault(elem, p));
        items.push_back(std::move(item));
      }
      if (elem == "int") {
        std::vector<int64_t> r;
        for (auto& i : items) r.push_back(*i.get_if<int64_t>());
        return AttrValue(r);
      }
      if (elem == "float") {
        std::vector<float> r;
        for (auto& i : items) r.push_back(*i.get_if<float>());
        return AttrValue(r);
      }
      if (elem == "string") {
        std::vector<std::string> r;
        for (auto& i : items) r.push_back(*i.get_if<std::string>());
        return AttrValue(r);
      }
      if (elem == "type") {
        std::vector<DType> r;
        for (auto& i : items) r.push_back(*i.get_if<DType>());
        return AttrValue(r);
      }
      if (elem == "bool") {
        std::vector<bool> r;
        for (auto& i : items) r.push_back(*i.get_if<bool>());
        return AttrValue(r);
      }
      if (elem == "shape") {
        std::vector<PartialTensorShape> r;
        for (auto& i : items) r.push_back(*i.get_if<PartialTensorShape>());
        return AttrValue(r);
      }
    }
  }
  return errors::InvalidArgument("cannot parse default '", v, "' for an attr of type ", type);
}

const std::vector<std::string>& KnownAttrTypes() {
  static const auto* v = new std::vector<std::string>{"string",      "int",          "float",      "bool",
                                                      "type",        "shape",        "tensor",     "list(string)",
                                                      "list(int)",   "list(float)",  "list(bool)", "list(type)",
                                                      "list(shape)", "list(tensor)", "func"};
  return *v;
}

Status ParseAttr(absl::string_view spec, AttrDef* a) {
  std::pair<absl::string_view, absl::string_view> nv = absl::StrSplit(spec, absl::MaxSplits(':', 1));
  a->name = std::string(absl::StripAsciiWhitespace(nv.first));
  if (!IsIdentifier(a->name)) return errors::InvalidArgument("bad attr name in '", spec, "'");
  absl::string_view rest = absl::StripAsciiWhitespace(nv.second);
  absl::string_view def;
  size_t eq = rest.find('=');
  while (eq != absl::string_view::npos && eq > 0 && rest[eq - 1] == '>') eq = rest.find('=', eq + 1);
  if (eq != absl::string_view::npos) {
    def = rest.substr(eq + 1);
    rest = absl::StripAsciiWhitespace(rest.substr(0, eq));
  }
  if (size_t ge = rest.find(">="); ge != absl::string_view::npos) {
    int64_t m;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(rest.substr(ge + 2)), &m)) {
      return errors::InvalidArgument("bad minimum in '", spec, "'");
    }
    a->minimum = m;
    rest = absl::StripAsciiWhitespace(rest.substr(0, ge));
  }
  if (absl::StartsWith(rest, "{")) {
    a->type = "type";
    RETURN_IF_ERROR(ParseTypeSet(rest, &a->allowed_types));
  } else if (absl::StartsWith(rest, "list({")) {
    a->type = "list(type)";
    RETURN_IF_ERROR(ParseTypeSet(rest.substr(5, rest.size() - 6), &a->allowed_types));
  } else {
    a->type = std::string(rest);
    bool known = false;
    for (const auto& t : KnownAttrTypes()) known |= (t == a->type);
    if (!known) return errors::InvalidArgument("unknown attr type '", rest, "' in '", spec, "'");
  }
  if (!def.empty()) {
    ASSIGN_OR_RETURN(AttrValue v, ParseDefault(a->type, def));
    a->default_value = std::move(v);
  }
  return absl::OkStatus();
}

Status ParseArg(absl::string_view spec, const std::vector<AttrDef>& attrs, ArgDef* arg) {
  std::pair<absl::string_view, absl::string_view> nv = absl::StrSplit(spec, absl::MaxSplits(':', 1));
  arg->name = std::string(absl::StripAsciiWhitespace(nv.first));
  if (!IsIdentifier(arg->name)) return errors::InvalidArgument("bad argument name in '", spec, "'");
  absl::string_view t = absl::StripAsciiWhitespace(nv.second);
  if (absl::ConsumePrefix(&t, "Ref(")) {
    if (!absl::ConsumeSuffix(&t, ")")) return errors::InvalidArgument("unclosed Ref( in '", spec, "'");
    arg->is_ref = true;
    t = absl::StripAsciiWhitespace(t);
  }
  if (size_t star = t.find('*'); star != absl::string_view::npos) {
    arg->number_attr = std::string(absl::StripAsciiWhitespace(t.substr(0, star)));
    t = absl::StripAsciiWhitespace(t.substr(star + 1));
    const AttrDef* n = nullptr;
    for (const auto& a : attrs)
      if (a.name == arg->number_attr) n = &a;
    if (n == nullptr || n->type != "int") {
      return errors::InvalidArgument("'", arg->number_attr, "' in '", spec, "' is not an int attr");
    }
  }
  DType fixed;
  if (DTypeFromString(t, &fixed)) {
    arg->type = fixed;
    return absl::OkStatus();
  }
  for (const auto& a : attrs) {
    if (a.name != t) continue;
    if (a.type == "type") {
      arg->type_attr = a.name;
      return absl::OkStatus();
    }
    if (a.type == "list(type)" && arg->number_attr.empty()) {
      arg->type_list_attr = a.name;
      return absl::OkStatus();
    }
  }
  return errors::InvalidArgument("'", t, "' in '", spec, "' is neither a type nor a type attr");
}

// Unique names, and defaults that satisfy their own attr's constraints.
Status CheckConsistent(const OpDef& def) {
  auto fail = [&](const std::string& why) { return errors::InvalidArgument("Op '", def.name, "': ", why); };
  std::set<std::string> names;
  for (const AttrDef& a : def.attrs) {
    if (!names.insert(a.name).second) return fail(absl::StrCat("attr '", a.name, "' is declared twice"));
    if (!a.default_value) continue;
    const AttrValue& v = *a.default_value;
    if (!a.allowed_types.empty()) {
      std::vector<DType> check;
      if (const DType* t = v.get_if<DType>()) check.push_back(*t);
      if (const auto* ts = v.get_if<std::vector<DType>>()) check = *ts;
      for (DType t : check) {
        if (std::find(a.allowed_types.begin(), a.allowed_types.end(), t) == a.allowed_types.end()) {
          return fail(absl::StrCat("default ", DTypeString(t), " of attr '", a.name, "' is not an allowed type"));
        }
      }
    }
    if (a.minimum && a.type == "int" && *v.get_if<int64_t>() < *a.minimum) {
      return fail(absl::StrCat("default of attr '", a.name, "' is below its minimum ", *a.minimum));
    }
  }
  std::set<std::string> args;
  for (const auto* list : {&def.inputs, &def.outputs}) {
    for (const ArgDef& a : *list) {
      if (!args.insert(a.name).second) return fail(absl::StrCat("argument '", a.name, "' is declared twice"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<OpDef> OpDefBuilder::Finalize() const {
  OpDef def;
  def.name = name_;
  def.is_stateful = stateful_;
  def.summary = summary_;
  auto fail = [&](const Status& s) { return errors::Annotate(s, absl::StrCat("Op '", name_, "': ")); };
  for (const auto& spec : attrs_) {
    AttrDef a;
    Status s = ParseAttr(spec, &a);
    if (!s.ok()) return fail(errors::Annotate(s, absl::StrCat("spec '", spec, "': ")));
    def.attrs.push_back(std::move(a));
  }
  for (const auto& spec : inputs_) {
    ArgDef arg;
    Status s = ParseArg(spec, def.attrs, &arg);
    if (!s.ok()) return fail(errors::Annotate(s, absl::StrCat("spec '", spec, "': ")));
    def.inputs.push_back(std::move(arg));
  }
  for (const auto& spec : outputs_) {
    ArgDef arg;
    Status s = ParseArg(spec, def.attrs, &arg);
    if (!s.ok()) return fail(errors::Annotate(s, absl::StrCat("spec '", spec, "': ")));
    def.outputs.push_back(std::move(arg));
  }
  RETURN_IF_ERROR(CheckConsistent(def));
  def.shape_fn = shape_fn_ ? shape_fn_ : ShapeFn(UnknownShape);
  return def;
}

struct OpRegistry::Impl {
  mutable std::shared_mutex mu;
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops;
};

OpRegistry* OpRegistry::Global() {
  static OpRegistry* r = [] {
    auto* reg = new OpRegistry;
    return reg;
  }();
  return r;
}

OpRegistry::Impl* OpRegistry::impl() {
  static Impl* i = new Impl;
  return i;
}
const OpRegistry::Impl* OpRegistry::impl() const { return const_cast<OpRegistry*>(this)->impl(); }

Status OpRegistry::Register(const OpDefBuilder& builder) {
  ASSIGN_OR_RETURN(OpDef def, builder.Finalize());
  Impl* i = impl();
  std::unique_lock l(i->mu);
  if (i->ops.count(def.name)) return errors::AlreadyExists("Op '", def.name, "' is already registered");
  std::string name = def.name;
  i->ops.emplace(std::move(name), std::make_unique<OpDef>(std::move(def)));
  return absl::OkStatus();
}

const OpDef* OpRegistry::LookUp(absl::string_view name) const {
  const Impl* i = impl();
  std::shared_lock l(i->mu);
  auto it = i->ops.find(name);
  return it == i->ops.end() ? nullptr : it->second.get();
}

StatusOr<const OpDef*> OpRegistry::LookUpOrError(absl::string_view name) const {
  const OpDef* d = LookUp(name);
  if (d == nullptr) return errors::NotFound("Op type not registered '", name, "'");
  return d;
}

std::vector<const OpDef*> OpRegistry::ListOps() const {
  const Impl* i = impl();
  std::shared_lock l(i->mu);
  std::vector<const OpDef*> out;
  for (const auto& [n, d] : i->ops) out.push_back(d.get());
  return out;
}

void RegisterOp(const OpDefBuilder& builder) { CHECK_OK(OpRegistry::Global()->Register(builder)); }

}  // namespace dflow
