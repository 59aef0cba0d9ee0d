#include "dflow/ops.h"

#include <map>
#include <optional>

#include "api/scope_internal.h"
#include "framework/device_name.h"

namespace dflow::ops {
namespace {

// Which input arg each flat input belongs to (lists take what the fixed args leave).
std::vector<const ArgDef*> ArgsOfInputs(const OpDef& def, size_t n, const std::vector<int>* arg_sizes = nullptr) {
  std::vector<const ArgDef*> out;
  if (arg_sizes != nullptr) {
    for (size_t a = 0; a < def.inputs.size() && a < arg_sizes->size(); ++a)
      for (int i = 0; i < (*arg_sizes)[a] && out.size() < n; ++i) out.push_back(&def.inputs[a]);
    while (out.size() < n) out.push_back(nullptr);
    return out;
  }
  size_t fixed = 0;
  for (const ArgDef& a : def.inputs)
    if (a.number_attr.empty() && a.type_list_attr.empty()) ++fixed;
  for (const ArgDef& a : def.inputs) {
    size_t count = (a.number_attr.empty() && a.type_list_attr.empty()) ? 1 : (n > fixed ? n - fixed : 0);
    for (size_t i = 0; i < count && out.size() < n; ++i) out.push_back(&a);
  }
  while (out.size() < n) out.push_back(nullptr);
  return out;
}

// The device `spec` requests in `scope`. An op that takes a reference or resource input works
// on the state of that input's producer: when device functions gave it a device that conflicts
// with the producer's request, it takes the producer's (TensorFlow's placer overrides such a
// request the same way; dflow's placer would report the conflict instead).
StatusOr<std::string> DeviceOfOp(const Scope& scope, const std::vector<const ArgDef*>& args, const NodeSpec& spec) {
  ASSIGN_OR_RETURN(std::string device, ScopeAccess::DeviceForOp(scope, spec.op, spec.name, spec.attrs));
  if (!ScopeAccess::HasDeviceFunctions(scope)) return device;
  for (size_t i = 0; i < spec.inputs.size() && i < args.size(); ++i) {
    const NodeOut& in = spec.inputs[i];
    DType t = in.node->output_type(in.index);
    bool state = (args[i] != nullptr && args[i]->is_ref && IsRefType(t)) || BaseType(t) == DT_RESOURCE;
    if (!state) continue;
    const std::string& producer = in.node->requested_device();
    StatusOr<DeviceName> mine = DeviceName::Parse(device);
    StatusOr<DeviceName> theirs = DeviceName::Parse(producer);
    if (!mine.ok() || !theirs.ok()) return device;  // AddNode reports a bad name with the node's
    if (!mine->MergeFrom(*theirs).ok()) return producer;
    return device;
  }
  return device;
}

}  // namespace

Operation BuildOp(const Scope& scope, const std::string& op, const std::vector<Input>& inputs, const AttrMap& attrs,
                  const std::string& default_name) {
  return BuildOpWithArgSizes(scope, op, inputs, nullptr, attrs, default_name);
}

Operation BuildOpWithArgSizes(const Scope& scope, const std::string& op, const std::vector<Input>& inputs,
                              const std::vector<int>* arg_sizes, const AttrMap& attrs,
                              const std::string& default_name) {
  if (!scope.ok()) return Operation();
  const OpDef* def = OpRegistry::Global()->LookUp(op);
  if (def == nullptr) {
    scope.UpdateStatus(errors::NotFound("Op type not registered '", op, "'"));
    return Operation();
  }
  Graph* g = scope.graph();
  const std::string name = scope.GetUniqueNameForOp(default_name.empty() ? op : default_name);
  std::vector<const ArgDef*> args = ArgsOfInputs(*def, inputs.size(), arg_sizes);

  // The dtype each type attr takes: given explicitly, or from the first Output bound to it.
  std::map<std::string, DType> type_of;
  for (const auto& [k, v] : attrs)
    if (const DType* t = v.get_if<DType>()) type_of[k] = *t;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_initializer() || args[i] == nullptr || args[i]->type_attr.empty()) continue;
    if (inputs[i].output().valid()) type_of.emplace(args[i]->type_attr, BaseType(inputs[i].output().dtype()));
  }

  NodeSpec spec;
  spec.name = name;
  spec.op = op;
  spec.attrs = attrs;
  for (const Operation& d : scope.control_dependencies()) {
    if (d.valid()) spec.control_inputs.push_back(d.node());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input& in = inputs[i];
    std::string arg_name = args[i] ? args[i]->name : absl::StrCat("input", i);
    if (!in.is_initializer()) {
      if (!in.output().valid()) {
        scope.UpdateStatus(errors::InvalidArgument("Input '", arg_name, "' of '", name,
                                                   "' is an invalid Output (building it failed)"));
        return Operation();
      }
      if (in.output().node()->graph() != g) {
        scope.UpdateStatus(errors::InvalidArgument("Input '", arg_name, "' of '", name, "' (", in.output().name(),
                                                   ") belongs to another graph"));
        return Operation();
      }
      spec.inputs.push_back({in.output().node(), in.output().index()});
      continue;
    }
    // A literal: a Const named "<op>/<arg>", in the dtype the op expects there.
    DType want = DT_INVALID;
    if (args[i] != nullptr) {
      if (args[i]->type != DT_INVALID) want = args[i]->type;
      else if (auto t = type_of.find(args[i]->type_attr); t != type_of.end()) want = t->second;
    }
    StatusOr<Tensor> value = in.initializer().AsType(want);
    if (!value.ok()) {
      scope.UpdateStatus(errors::Annotate(value.status(), absl::StrCat("Input '", arg_name, "' of '", name, "': ")));
      return Operation();
    }
    NodeSpec c;
    c.name = g->UniqueName(absl::StrCat(name, "/", arg_name));
    c.op = "Const";
    c.attrs["value"] = *value;
    c.attrs["dtype"] = value->dtype();
    StatusOr<std::string> const_device = ScopeAccess::DeviceForOp(scope, c.op, c.name, c.attrs);
    if (!const_device.ok()) {
      scope.UpdateStatus(const_device.status());
      return Operation();
    }
    c.device = std::move(*const_device);
    // Literals follow the scope's control dependencies too, so that inside a loop or a branch
    // they belong to it.
    for (const Operation& d : scope.control_dependencies())
      if (d.valid()) c.control_inputs.push_back(d.node());
    auto n = g->AddNode(std::move(c));
    if (!n.ok()) {
      scope.UpdateStatus(n.status());
      return Operation();
    }
    spec.inputs.push_back({*n, 0});
  }
  StatusOr<std::string> device = DeviceOfOp(scope, args, spec);
  if (!device.ok()) {
    scope.UpdateStatus(device.status());
    return Operation();
  }
  spec.device = std::move(*device);
  auto node = g->AddNode(std::move(spec));
  if (!node.ok()) {
    scope.UpdateStatus(node.status());
    return Operation();
  }
  return Operation(*node);
}

namespace {
Output Out(const Operation& op) { return op.valid() ? Output(op, 0) : Output(); }

Output Binary(const Scope& s, const char* op, Input x, Input y) {
  return Out(BuildOp(s, op, {std::move(x), std::move(y)}));
}
Output Unary(const Scope& s, const char* op, Input x) { return Out(BuildOp(s, op, {std::move(x)})); }
}  // namespace

AttrMap RandomSeedAttrs(const Scope& scope, int64_t op_seed) {
  // TensorFlow's rule: a graph seed makes every op deterministic; an op seed alone uses a fixed
  // default graph seed; neither gives fresh randomness every time.
  constexpr int64_t kDefaultGraphSeed = 87654321;
  int64_t seed = 0, seed2 = 0;
  if (auto gs = scope.graph()->seed()) {
    seed = *gs;
    seed2 = op_seed != 0 ? op_seed : scope.graph()->num_node_ids();
    if (seed == 0 && seed2 == 0) seed2 = 0x7fffffff;
  } else if (op_seed != 0) {
    seed = kDefaultGraphSeed;
    seed2 = op_seed;
  }
  return {{"seed", seed}, {"seed2", seed2}};
}

Output Const(const Scope& scope, const Input::Initializer& value) {
  if (!scope.ok()) return Output();
  if (!value.status.ok()) {
    scope.UpdateStatus(value.status);
    return Output();
  }
  return Out(BuildOp(scope, "Const", {}, {{"value", value.tensor}, {"dtype", value.tensor.dtype()}}));
}

Output Placeholder(const Scope& scope, DType dtype, const PartialTensorShape& shape) {
  return Out(BuildOp(scope, "Placeholder", {}, {{"dtype", dtype}, {"shape", shape}}));
}

Output Identity(const Scope& scope, Input x) { return Unary(scope, "Identity", std::move(x)); }
Operation NoOp(const Scope& scope) { return BuildOp(scope, "NoOp", {}); }
Operation Group(const Scope& scope, const std::vector<Operation>& ops) {
  return BuildOp(scope.WithControlDependencies(ops), "NoOp", {}, {}, "group_deps");
}

Output Add(const Scope& s, Input x, Input y) { return Binary(s, "Add", std::move(x), std::move(y)); }
Output AddV2(const Scope& s, Input x, Input y) { return Binary(s, "AddV2", std::move(x), std::move(y)); }
Output Sub(const Scope& s, Input x, Input y) { return Binary(s, "Sub", std::move(x), std::move(y)); }
Output Mul(const Scope& s, Input x, Input y) { return Binary(s, "Mul", std::move(x), std::move(y)); }
Output Div(const Scope& s, Input x, Input y) { return Binary(s, "Div", std::move(x), std::move(y)); }
Output RealDiv(const Scope& s, Input x, Input y) { return Binary(s, "RealDiv", std::move(x), std::move(y)); }
Output Pow(const Scope& s, Input x, Input y) { return Binary(s, "Pow", std::move(x), std::move(y)); }
Output Greater(const Scope& s, Input x, Input y) { return Binary(s, "Greater", std::move(x), std::move(y)); }
Output Less(const Scope& s, Input x, Input y) { return Binary(s, "Less", std::move(x), std::move(y)); }
Output Equal(const Scope& s, Input x, Input y) { return Binary(s, "Equal", std::move(x), std::move(y)); }
Output Neg(const Scope& s, Input x) { return Unary(s, "Neg", std::move(x)); }
Output Exp(const Scope& s, Input x) { return Unary(s, "Exp", std::move(x)); }
Output Log(const Scope& s, Input x) { return Unary(s, "Log", std::move(x)); }

Output Cast(const Scope& s, Input x, DType dtype) { return Out(BuildOp(s, "Cast", {std::move(x)}, {{"DstT", dtype}})); }
Output Fill(const Scope& s, Input dims, Input value) { return Binary(s, "Fill", std::move(dims), std::move(value)); }
Output Reshape(const Scope& s, Input t, Input shape) { return Binary(s, "Reshape", std::move(t), std::move(shape)); }
Output Shape(const Scope& s, Input x, DType out_type) {
  return Out(BuildOp(s, "Shape", {std::move(x)}, {{"out_type", out_type}}));
}
Output Rank(const Scope& s, Input x) { return Unary(s, "Rank", std::move(x)); }
Output Size(const Scope& s, Input x, DType out_type) {
  return Out(BuildOp(s, "Size", {std::move(x)}, {{"out_type", out_type}}));
}

Output MatMul(const Scope& s, Input a, Input b, const MatMulAttrs& attrs) {
  return Out(BuildOp(s, "MatMul", {std::move(a), std::move(b)},
                     {{"transpose_a", attrs.transpose_a}, {"transpose_b", attrs.transpose_b}}));
}

Output RandomUniform(const Scope& s, Input shape, DType dtype, int64_t seed) {
  AttrMap a = RandomSeedAttrs(s, seed);
  a["dtype"] = dtype;
  return Out(BuildOp(s, "RandomUniform", {std::move(shape)}, a));
}
Output RandomNormal(const Scope& s, Input shape, DType dtype, int64_t seed) {
  AttrMap a = RandomSeedAttrs(s, seed);
  a["dtype"] = dtype;
  return Out(BuildOp(s, "RandomStandardNormal", {std::move(shape)}, a));
}
Output TruncatedNormal(const Scope& s, Input shape, DType dtype, int64_t seed) {
  AttrMap a = RandomSeedAttrs(s, seed);
  a["dtype"] = dtype;
  return Out(BuildOp(s, "TruncatedNormal", {std::move(shape)}, a));
}

Output VariableV2(const Scope& s, const PartialTensorShape& shape, DType dtype) {
  return Out(BuildOp(s, "VariableV2", {}, {{"shape", shape}, {"dtype", dtype}}, "Variable"));
}
Output Assign(const Scope& s, Input ref, Input value) { return Binary(s, "Assign", std::move(ref), std::move(value)); }
Output AssignAdd(const Scope& s, Input ref, Input value) {
  return Binary(s, "AssignAdd", std::move(ref), std::move(value));
}
Output AssignSub(const Scope& s, Input ref, Input value) {
  return Binary(s, "AssignSub", std::move(ref), std::move(value));
}

}  // namespace dflow::ops

namespace dflow {
namespace {
Output Operator(const Output& x, const char* op, const char* name, std::vector<Input> inputs) {
  if (!x.valid()) return Output();
  std::optional<Scope> s = ScopeAccess::ScopeOfNode(x.node());
  if (!s) return Output();
  Operation o = ops::BuildOp(*s, op, inputs, {}, name);
  return o.valid() ? Output(o, 0) : Output();
}
}  // namespace

Output operator+(const Output& x, const Input& y) { return Operator(x, "AddV2", "add", {x, y}); }
Output operator-(const Output& x, const Input& y) { return Operator(x, "Sub", "sub", {x, y}); }
Output operator*(const Output& x, const Input& y) { return Operator(x, "Mul", "mul", {x, y}); }
Output operator/(const Output& x, const Input& y) { return Operator(x, "RealDiv", "truediv", {x, y}); }
Output operator-(const Output& x) { return Operator(x, "Neg", "Neg", {x}); }

}  // namespace dflow
