#include "dflow/variable.h"

#include <cmath>

#include "api/scope_internal.h"
#include "api/variable_internal.h"
#include "dflow/array_ops.h"
#include "dflow/state_ops.h"

namespace dflow {
namespace init {
Initializer Zeros() { return Initializer{Initializer::Kind::kZeros}; }
Initializer Ones() { return Initializer{Initializer::Kind::kOnes}; }
Initializer Constant(const Input::Initializer& value) {
  Initializer i{Initializer::Kind::kConstant};
  i.value = value.status.ok() ? value.tensor : Tensor();
  return i;
}
Initializer RandomUniform(double minval, double maxval, int64_t seed) {
  return Initializer{Initializer::Kind::kRandomUniform, Tensor(), minval, maxval, seed};
}
Initializer RandomNormal(double mean, double stddev, int64_t seed) {
  return Initializer{Initializer::Kind::kRandomNormal, Tensor(), mean, stddev, seed};
}
Initializer TruncatedNormal(double mean, double stddev, int64_t seed) {
  return Initializer{Initializer::Kind::kTruncatedNormal, Tensor(), mean, stddev, seed};
}
Initializer GlorotUniform(int64_t seed) { return Initializer{Initializer::Kind::kGlorotUniform, Tensor(), 0, 0, seed}; }
}  // namespace init

namespace {

Output ShapeConst(const Scope& s, const TensorShape& shape) {
  std::vector<int32_t> dims;
  for (int64_t d : shape.dim_sizes()) dims.push_back(static_cast<int32_t>(d));
  return ops::Const(s.WithOpName("shape"), Input::Initializer(dims));
}

// Scales a standard random tensor `r` to `r * scale + offset`.
Output Affine(const Scope& s, const Output& r, double scale, double offset) {
  Output scaled = ops::Mul(s.WithOpName("mul"), r, scale);
  return ops::AddV2(s.WithOpName("add"), scaled, offset);
}

}  // namespace

Output VariableAccess::InitialValue(const Scope& s, const TensorShape& shape, DType dtype,
                                    const init::Initializer& init) {
  using Kind = init::Initializer::Kind;
  bool random = init.kind == Kind::kRandomUniform || init.kind == Kind::kRandomNormal ||
                init.kind == Kind::kTruncatedNormal || init.kind == Kind::kGlorotUniform;
  if (random && !IsFloating(dtype)) {
    s.UpdateStatus(errors::InvalidArgument("A random initializer needs a float or double variable, not ",
                                           DTypeString(dtype)));
    return Output();
  }
  auto fill = [&](const Input::Initializer& v) {
    auto t = v.AsType(dtype);
    if (!t.ok()) {
      s.UpdateStatus(t.status());
      return Output();
    }
    return ops::Fill(s.WithOpName("Fill"), ShapeConst(s, shape), ops::Const(s.WithOpName("value"), *t));
  };
  switch (init.kind) {
    case Kind::kZeros: return fill(Input::Initializer(0));
    case Kind::kOnes: return fill(Input::Initializer(1));
    case Kind::kConstant: {
      Input::Initializer v(init.value);
      v.literal = true;
      if (!init.value.IsInitialized()) {
        s.UpdateStatus(errors::InvalidArgument("Constant initializer without a valid value"));
        return Output();
      }
      if (init.value.NumElements() == 1 && init.value.dims() == 0) return fill(v);
      if (init.value.shape() != shape) {
        s.UpdateStatus(errors::InvalidArgument("Constant initializer of shape ", init.value.shape().DebugString(),
                                               " does not match the variable's shape ", shape.DebugString()));
        return Output();
      }
      auto t = v.AsType(dtype);
      if (!t.ok()) {
        s.UpdateStatus(t.status());
        return Output();
      }
      return ops::Const(s.WithOpName("Const"), *t);
    }
    case Kind::kRandomUniform:
      return Affine(s, ops::RandomUniform(s.WithOpName("RandomUniform"), ShapeConst(s, shape), dtype, init.seed),
                    init.b - init.a, init.a);
    case Kind::kRandomNormal:
      return Affine(s, ops::RandomNormal(s.WithOpName("RandomStandardNormal"), ShapeConst(s, shape), dtype, init.seed),
                    init.b, init.a);
    case Kind::kTruncatedNormal:
      return Affine(s, ops::TruncatedNormal(s.WithOpName("TruncatedNormal"), ShapeConst(s, shape), dtype, init.seed),
                    init.b, init.a);
    case Kind::kGlorotUniform: {
      // Fans as in TensorFlow: the last two dims are (in, out); earlier dims are a receptive field.
      double fan_in = 1, fan_out = 1;
      int r = shape.dims();
      if (r == 1) {
        fan_in = fan_out = static_cast<double>(shape.dim_size(0));
      } else if (r >= 2) {
        double field = 1;
        for (int i = 0; i < r - 2; ++i) field *= static_cast<double>(shape.dim_size(i));
        fan_in = static_cast<double>(shape.dim_size(r - 2)) * field;
        fan_out = static_cast<double>(shape.dim_size(r - 1)) * field;
      }
      double limit = std::sqrt(6.0 / std::max(1.0, fan_in + fan_out));
      return Affine(s, ops::RandomUniform(s.WithOpName("RandomUniform"), ShapeConst(s, shape), dtype, init.seed),
                    2 * limit, -limit);
    }
  }
  return Output();
}

Variable VariableAccess::Make(const Scope& scope, const std::string& name, const TensorShape& shape, DType dtype,
                              const std::function<Output(const Scope&)>& value_fn, bool local) {
  Variable v;
  if (!scope.ok()) return v;
  v.ref_ = ops::VariableV2(ScopeAccess::WithPrefix(scope, "").WithOpName(name).WithDevice(scope.device()), shape,
                           dtype);
  if (!v.ref_.valid()) return v;
  // Like TensorFlow's colocate_with(variable): the ops of the variable run where it lives.
  Scope own = ScopeAccess::ColocatedWith(ScopeAccess::WithPrefix(scope, name + "/"), v.ref_.node());
  Output value = value_fn(ScopeAccess::WithPrefix(own, name + "/Initializer/"));
  if (!value.valid()) return Variable();
  Output assign = ops::Assign(own.WithOpName("Assign"), v.ref_, value);
  v.read_ = ops::Identity(own.WithOpName("read"), v.ref_);
  if (!assign.valid() || !v.read_.valid()) return Variable();
  v.initializer_ = assign.op();
  if (local) {
    scope.collections()->local_initializers.push_back(v.initializer_);
    scope.collections()->local_variables.push_back(v.ref_);
    return v;
  }
  scope.collections()->initializers.push_back(v.initializer_);
  scope.collections()->trainable_variables.push_back(v.ref_);
  scope.collections()->global_variables.push_back(v.ref_);
  return v;
}

Variable Variable::Create(const Scope& scope, const TensorShape& shape, DType dtype, const init::Initializer& init) {
  if (!scope.ok()) return Variable();
  std::string name = scope.GetUniqueNameForOp("Variable");
  return VariableAccess::Make(scope, name, shape, dtype,
                              [&](const Scope& s) { return VariableAccess::InitialValue(s, shape, dtype, init); });
}

Variable Variable::CreateLocal(const Scope& scope, const TensorShape& shape, DType dtype,
                               const init::Initializer& init) {
  if (!scope.ok()) return Variable();
  std::string name = scope.GetUniqueNameForOp("Variable");
  return VariableAccess::Make(
      scope, name, shape, dtype, [&](const Scope& s) { return VariableAccess::InitialValue(s, shape, dtype, init); },
      /*local=*/true);
}

std::string Variable::name() const { return ref_.valid() ? ref_.node()->name() : std::string(); }

Operation GlobalVariablesInitializer(const Scope& scope) {
  return ops::BuildOp(scope.WithControlDependencies(scope.collections()->initializers), "NoOp", {}, {}, "init");
}

Output ReportUninitializedVariables(const Scope& scope, std::vector<Output> var_list) {
  if (!scope.ok()) return Output();
  if (var_list.empty()) {
    for (Node* n : scope.graph()->nodes()) {
      if (n->op() == "VariableV2" || n->op() == "Variable" || n->op() == "VarHandleOp") var_list.emplace_back(n, 0);
    }
  }
  Scope s = scope.NewSubScope("report_uninitialized_variables");
  std::vector<std::string> names;
  std::vector<Input> flags;
  for (size_t i = 0; i < var_list.size(); ++i) {
    const Output& v = var_list[i];
    if (!v.valid()) {
      scope.UpdateStatus(errors::InvalidArgument("ReportUninitializedVariables: variable #", i, " is invalid"));
      return Output();
    }
    // The check reads the variable where it lives.
    Scope own = ScopeAccess::ColocatedWith(s, v.node());
    if (IsRefType(v.dtype())) {
      flags.push_back(ops::IsVariableInitialized(own, v));
    } else if (v.dtype() == DT_RESOURCE) {
      flags.push_back(ops::VarIsInitializedOp(own, v));
    } else {
      scope.UpdateStatus(errors::InvalidArgument("ReportUninitializedVariables: '", v.name(), "' is a ",
                                                 DTypeString(v.dtype()), ", not a variable"));
      return Output();
    }
    names.push_back(v.node()->name());
  }
  const int64_t n = static_cast<int64_t>(names.size());
  StatusOr<Tensor> names_tensor = Tensor::FromValues<std::string>(names, TensorShape({n}));
  if (!names_tensor.ok()) {
    scope.UpdateStatus(names_tensor.status());
    return Output();
  }
  Output name_list = ops::Const(s.WithOpName("Const"), *names_tensor);
  if (n == 0) return ops::Identity(s.WithOpName("uninitialized"), name_list);
  // Partition 0 collects the names whose flag is false.
  Output initialized = ops::Cast(s, ops::Stack(s, flags), DT_INT32);
  std::vector<Output> parts = ops::DynamicPartition(s, name_list, initialized, 2);
  if (parts.size() != 2) return Output();
  return ops::Identity(s.WithOpName("uninitialized"), parts[0]);
}

Operation LocalVariablesInitializer(const Scope& scope) {
  return ops::BuildOp(scope.WithControlDependencies(scope.collections()->local_initializers), "NoOp", {}, {}, "init");
}

std::vector<Output> LocalVariables(const Scope& scope) { return scope.collections()->local_variables; }

}  // namespace dflow
