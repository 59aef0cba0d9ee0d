// The SparseApply* ops (Adagrad, AdagradDA, Momentum, RMSProp, CenteredRMSProp, Adadelta,
// ProximalGradientDescent, ProximalAdagrad, Ftrl, FtrlV2): the optimizer updates of rows `indices`
// of var (and of its slots) by the rows of grad, which tf.compat.v1.train's optimizers write for
// IndexedSlices gradients (embedding lookups, gathers). TensorFlow's OpDefs and per-element formulas (the dense Apply*
// ops' formulas, row by row, rows in the order of indices). Kernels lock every variable, check
// that each is initialized, of var's shape and dtype, that grad is [len(indices)] + var.shape[1:]
// and that every index is in [0, var.shape[0]) before they change anything; buffers another reader
// holds are copied first; the output is the reference to var.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/training/apply_util.h"
#include "ops/training/training_ops.h"

namespace dflow {
namespace {

// Input layout of one SparseApply op: `refs` variables first; `scalars` and the grad and
// indices inputs anywhere after them.
struct Layout {
  int refs;
  std::vector<int> scalars;
  int grad;
  int indices;
};

template <typename T, typename Idx>
class SparseApplyKernel : public OpKernel {
 public:
  SparseApplyKernel(OpKernelConstruction* c, Layout layout)
      : OpKernel(c), l_(std::move(layout)), resource_(absl::StartsWith(c->node().op, "Resource")) {}

  void Compute(OpKernelContext* ctx) final {
    LockedVars lv;
    OP_REQUIRES_OK(ctx, LockApplyVars(ctx, l_.refs, resource_, DTypeOf<T>::value, Where(), &lv));
    const TensorShape& shape = lv.vars[0]->tensor()->shape();
    OP_REQUIRES(ctx, shape.dims() >= 1, errors::InvalidArgument(Where(), ": var must be at least 1 dimensional"));
    std::vector<T> s;
    OP_REQUIRES_OK(ctx, ReadApplyScalars(ctx, l_.scalars, Where(), &s));
    OP_REQUIRES_OK(ctx, Check(s));
    const Tensor& grad = ctx->input(l_.grad);
    const Tensor& indices = ctx->input(l_.indices);
    OP_REQUIRES(ctx, indices.dims() == 1, errors::InvalidArgument(Where(), ": indices must be one-dimensional"));
    const int64_t n = indices.NumElements();
    OP_REQUIRES(ctx, grad.dims() == shape.dims() && grad.dim_size(0) == n,
                errors::InvalidArgument(Where(), ": grad must be the indices' length by var's inner dimensions; grad ",
                                        grad.shape().DebugString(), ", indices ", indices.shape().DebugString(),
                                        ", var ", shape.DebugString()));
    for (int d = 1; d < shape.dims(); ++d) {
      OP_REQUIRES(ctx, grad.dim_size(d) == shape.dim_size(d),
                  errors::InvalidArgument(Where(), ": var and grad must match in dimension ", d));
    }
    const Idx* idx = indices.data<Idx>();
    const int64_t rows = shape.dim_size(0);
    for (int64_t k = 0; k < n; ++k) {
      OP_REQUIRES(ctx, idx[k] >= 0 && idx[k] < rows,
                  errors::InvalidArgument(Where(), ": Index ", idx[k], " at offset ", k,
                                          " in indices is out of range [0, ", rows, ")"));
    }
    const int64_t inner = rows == 0 ? 0 : shape.num_elements() / rows;
    std::vector<T*> data = lv.ExclusiveData<T>(), row(l_.refs);
    const T* g = grad.data<T>();
    for (int64_t k = 0; k < n; ++k) {
      for (int i = 0; i < l_.refs; ++i) row[i] = data[i] + idx[k] * inner;
      UpdateRow(row.data(), s.data(), g + k * inner, inner);
    }
    lv.locks.clear();
    if (!resource_) ctx->set_output_ref(0, ctx->input_ref_ptr(0));
  }

 protected:
  virtual Status Check(const std::vector<T>&) const { return absl::OkStatus(); }
  // Updates n elements of each variable's row with the matching row of grad.
  virtual void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const = 0;
  std::string Where() const { return absl::StrCat(type_string(), " '", name(), "'"); }

 private:
  const Layout l_;
  const bool resource_;
};

// The formulas are apply_util.h's (those of the dense ops, row by row).
template <typename T, typename Idx>
class SparseApplyAdagradOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyAdagradOp(OpKernelConstruction* c) : SparseApplyKernel<T, Idx>(c, {2, {2}, 3, 4}) {
    c->SetStatus(c->GetAttr("update_slots", &update_slots_));
  }

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
    AdagradUpdate(v, s, g, n, update_slots_);
  }

 private:
  bool update_slots_ = true;
};

template <typename T, typename Idx>
class SparseApplyMomentumOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyMomentumOp(OpKernelConstruction* c) : SparseApplyKernel<T, Idx>(c, {2, {2, 5}, 3, 4}) {
    c->SetStatus(c->GetAttr("use_nesterov", &nesterov_));
  }

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
    MomentumUpdate(v, s, g, n, nesterov_);
  }

 private:
  bool nesterov_ = false;
};

template <typename T, typename Idx>
class SparseApplyRMSPropOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyRMSPropOp(OpKernelConstruction* c) : SparseApplyKernel<T, Idx>(c, {3, {3, 4, 5, 6}, 7, 8}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override { RMSPropUpdate(v, s, g, n); }
};

template <typename T, typename Idx>
class SparseApplyCenteredRMSPropOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyCenteredRMSPropOp(OpKernelConstruction* c)
      : SparseApplyKernel<T, Idx>(c, {4, {4, 5, 6, 7}, 8, 9}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override { CenteredRMSPropUpdate(v, s, g, n); }
};

template <typename T, typename Idx>
class SparseApplyAdadeltaOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyAdadeltaOp(OpKernelConstruction* c) : SparseApplyKernel<T, Idx>(c, {3, {3, 4, 5}, 6, 7}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override { AdadeltaUpdate(v, s, g, n); }
};

template <typename T, typename Idx>
class SparseApplyProximalGradientDescentOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyProximalGradientDescentOp(OpKernelConstruction* c)
      : SparseApplyKernel<T, Idx>(c, {1, {1, 2, 3}, 4, 5}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
    ProximalGradientDescentUpdate(v, s, g, n);
  }
};

template <typename T, typename Idx>
class SparseApplyProximalAdagradOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyProximalAdagradOp(OpKernelConstruction* c) : SparseApplyKernel<T, Idx>(c, {2, {2, 3, 4}, 5, 6}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override { ProximalAdagradUpdate(v, s, g, n); }
};

template <typename T, typename Idx>
class SparseApplyAdagradDAOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyAdagradDAOp(OpKernelConstruction* c) : SparseApplyKernel<T, Idx>(c, {3, {5, 6, 7, 8}, 3, 4}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override { AdagradDAUpdate(v, s, g, n); }
};

// SparseApplyFtrl (shrinkage false) and SparseApplyFtrlV2 (an l2_shrinkage input).
template <typename T, typename Idx, bool kShrinkage>
class SparseApplyFtrlOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyFtrlOp(OpKernelConstruction* c)
      : SparseApplyKernel<T, Idx>(c, {3, kShrinkage ? std::vector<int>{5, 6, 7, 8, 9} : std::vector<int>{5, 6, 7, 8}, 3,
                                      4}) {
    c->SetStatus(c->GetAttr("multiply_linear_by_lr", &multiply_linear_by_lr_));
  }

 protected:
  Status Check(const std::vector<T>& s) const override { return CheckFtrlScalars<T, kShrinkage>(this->Where(), s); }
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
    FtrlUpdate<T, kShrinkage>(v, s, g, n, multiply_linear_by_lr_);
  }

 private:
  bool multiply_linear_by_lr_ = false;
};
template <typename T, typename Idx>
using SparseApplyFtrlV1Op = SparseApplyFtrlOp<T, Idx, false>;
template <typename T, typename Idx>
using SparseApplyFtrlV2Op = SparseApplyFtrlOp<T, Idx, true>;

// var's shape for the output; slots must agree with var, scalars be scalars, indices a vector.
ShapeFn SparseApplyShape(Layout l) {
  return [l = std::move(l)](InferenceContext* c) -> Status {
    const OpDef& def = *c->node().op_def;
    PartialTensorShape s = c->input(0);
    for (int i = 1; i < l.refs; ++i) {
      auto merged = s.MergeWith(c->input(i));
      if (!merged.ok()) {
        return errors::InvalidArgument(def.name, ": var and ", def.inputs[i].name,
                                       " do not have compatible shapes: ", s.DebugString(), " vs ",
                                       c->input(i).DebugString());
      }
      s = *merged;
    }
    Status st = CheckScalarRanks(c, l.scalars);
    if (!st.ok()) return st;
    PartialTensorShape unused;
    if (!c->WithRank(c->input(l.indices), 1, &unused).ok()) {
      return errors::InvalidArgument(def.name, ": indices must be one-dimensional, got shape ",
                                     c->input(l.indices).DebugString());
    }
    c->set_output(0, s);
    return absl::OkStatus();
  };
}

template <template <typename, typename> class K>
void RegisterSparseKernels(const std::string& op);

// The kernels of the op and of its Resource* form.
template <template <typename, typename> class K>
void RegisterBothSparseKernels(const char* op) {
  RegisterSparseKernels<K>(op);
  RegisterSparseKernels<K>(absl::StrCat("Resource", op));
}

template <template <typename, typename> class K>
void RegisterSparseKernels(const std::string& op) {
  RegisterKernel<K<float, int32_t>>(KernelBuilder(op).TypeConstraint<float>("T").TypeConstraint<int32_t>("Tindices"));
  RegisterKernel<K<float, int64_t>>(KernelBuilder(op).TypeConstraint<float>("T").TypeConstraint<int64_t>("Tindices"));
  RegisterKernel<K<double, int32_t>>(KernelBuilder(op).TypeConstraint<double>("T").TypeConstraint<int32_t>("Tindices"));
  RegisterKernel<K<double, int64_t>>(KernelBuilder(op).TypeConstraint<double>("T").TypeConstraint<int64_t>("Tindices"));
}

// One OpDef: `args` are "name: type" of the inputs in order (Ref(T) for the variables).
// The op on reference variables and its Resource* form on resource variables (no output; the
// slots' shapes are known only while running).
void RegisterSparseOpDef(const char* op, std::vector<const char*> args, Layout layout, const char* doc,
                         const char* extra_attr = nullptr) {
  OpDefBuilder b(op);
  for (const char* a : args) b.Input(a);
  b.Output("out: Ref(T)").Attr("T: {float, double}").Attr("Tindices: {int32, int64}");
  b.Attr("use_locking: bool = false");
  if (extra_attr != nullptr) b.Attr(extra_attr);
  RegisterOp(b.SetShapeFn(SparseApplyShape(layout)).Doc(doc));
  RegisterNoGradient(op);

  const std::string resource_op = absl::StrCat("Resource", op);
  OpDefBuilder r(resource_op);
  for (int i = 0; i < static_cast<int>(args.size()); ++i) {
    r.Input(i < layout.refs ? absl::StrCat(std::string(args[i]).substr(0, std::string(args[i]).find(':')), ": resource")
                            : std::string(args[i]));
  }
  r.Attr("T: {float, double}").Attr("Tindices: {int32, int64}").Attr("use_locking: bool = false");
  if (extra_attr != nullptr) r.Attr(extra_attr);
  r.SetShapeFn([layout](InferenceContext* c) -> Status {
    Status st = CheckScalarRanks(c, layout.scalars);
    if (!st.ok()) return st;
    PartialTensorShape unused;
    if (!c->WithRank(c->input(layout.indices), 1, &unused).ok()) {
      return errors::InvalidArgument(c->node().op_def->name, ": indices must be one-dimensional, got shape ",
                                     c->input(layout.indices).DebugString());
    }
    return absl::OkStatus();
  });
  RegisterOp(r.SetIsStateful().Doc(absl::StrCat(doc, " (resource variables)")));
  RegisterNoGradient(resource_op);
}

}  // namespace

void RegisterSparseApplyOps() {
  RegisterSparseOpDef("SparseApplyAdagrad", {"var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T", "indices: Tindices"},
                      {2, {2}, 3, 4}, "ApplyAdagrad on the rows `indices` of var and accum.",
                      "update_slots: bool = true");
  RegisterSparseOpDef("SparseApplyMomentum",
                      {"var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T", "indices: Tindices", "momentum: T"},
                      {2, {2, 5}, 3, 4}, "ApplyMomentum on the rows `indices` of var and accum.",
                      "use_nesterov: bool = false");
  RegisterSparseOpDef("SparseApplyRMSProp",
                      {"var: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T", "rho: T", "momentum: T", "epsilon: T",
                       "grad: T", "indices: Tindices"},
                      {3, {3, 4, 5, 6}, 7, 8}, "ApplyRMSProp on the rows `indices` of var, ms and mom.");
  RegisterSparseOpDef("SparseApplyCenteredRMSProp",
                      {"var: Ref(T)", "mg: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T", "rho: T", "momentum: T",
                       "epsilon: T", "grad: T", "indices: Tindices"},
                      {4, {4, 5, 6, 7}, 8, 9}, "ApplyCenteredRMSProp on the rows `indices` of var, mg, ms and mom.");
  RegisterSparseOpDef("SparseApplyAdadelta",
                      {"var: Ref(T)", "accum: Ref(T)", "accum_update: Ref(T)", "lr: T", "rho: T", "epsilon: T",
                       "grad: T", "indices: Tindices"},
                      {3, {3, 4, 5}, 6, 7}, "ApplyAdadelta on the rows `indices` of var, accum and accum_update.");
  RegisterSparseOpDef("SparseApplyProximalGradientDescent",
                      {"var: Ref(T)", "alpha: T", "l1: T", "l2: T", "grad: T", "indices: Tindices"},
                      {1, {1, 2, 3}, 4, 5}, "ApplyProximalGradientDescent on the rows `indices` of var.");
  RegisterSparseOpDef("SparseApplyProximalAdagrad",
                      {"var: Ref(T)", "accum: Ref(T)", "lr: T", "l1: T", "l2: T", "grad: T", "indices: Tindices"},
                      {2, {2, 3, 4}, 5, 6}, "ApplyProximalAdagrad on the rows `indices` of var and accum.");
  RegisterSparseOpDef("SparseApplyFtrl",
                      {"var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T", "indices: Tindices", "lr: T",
                       "l1: T", "l2: T", "lr_power: T"},
                      {3, {5, 6, 7, 8}, 3, 4}, "ApplyFtrl on the rows `indices` of var, accum and linear.",
                      "multiply_linear_by_lr: bool = false");
  RegisterSparseOpDef("SparseApplyFtrlV2",
                      {"var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T", "indices: Tindices", "lr: T",
                       "l1: T", "l2: T", "l2_shrinkage: T", "lr_power: T"},
                      {3, {5, 6, 7, 8, 9}, 3, 4}, "ApplyFtrlV2 on the rows `indices` of var, accum and linear.",
                      "multiply_linear_by_lr: bool = false");
  RegisterSparseOpDef("SparseApplyAdagradDA",
                      {"var: Ref(T)", "gradient_accumulator: Ref(T)", "gradient_squared_accumulator: Ref(T)", "grad: T",
                       "indices: Tindices", "lr: T", "l1: T", "l2: T", "global_step: int64"},
                      {3, {5, 6, 7, 8}, 3, 4}, "ApplyAdagradDA on the rows `indices` of var and its accumulators.");
  RegisterBothSparseKernels<SparseApplyAdagradDAOp>("SparseApplyAdagradDA");
  RegisterBothSparseKernels<SparseApplyAdagradOp>("SparseApplyAdagrad");
  RegisterBothSparseKernels<SparseApplyMomentumOp>("SparseApplyMomentum");
  RegisterBothSparseKernels<SparseApplyRMSPropOp>("SparseApplyRMSProp");
  RegisterBothSparseKernels<SparseApplyCenteredRMSPropOp>("SparseApplyCenteredRMSProp");
  RegisterBothSparseKernels<SparseApplyAdadeltaOp>("SparseApplyAdadelta");
  RegisterBothSparseKernels<SparseApplyProximalGradientDescentOp>("SparseApplyProximalGradientDescent");
  RegisterBothSparseKernels<SparseApplyProximalAdagradOp>("SparseApplyProximalAdagrad");
  RegisterBothSparseKernels<SparseApplyFtrlV1Op>("SparseApplyFtrl");
  RegisterBothSparseKernels<SparseApplyFtrlV2Op>("SparseApplyFtrlV2");
}

}  // namespace dflow
