// The SparseApply* kernels: rows `indices` updated by the dense ops' formulas (compared with the
// dense Apply* kernel run on the same rows), repeated indices applied in turn, other rows
// untouched, int32 and int64 indices, and bad input.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "framework/device.h"
#include "framework/op_kernel.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

// Runs one kernel with Ref inputs `vars` (owned here) followed by value inputs of the given types.
class Runner {
 public:
  Runner(const std::string& op, const std::vector<Tensor>& vars, const std::vector<DType>& value_types, AttrMap attrs) {
    RegisterAllOps();
    NodeSpec spec;
    spec.name = "node";
    spec.op = op;
    spec.attrs = std::move(attrs);
    for (size_t i = 0; i < vars.size(); ++i) {
      NodeSpec v;
      v.name = absl::StrCat("var", i);
      v.op = "VariableV2";
      v.attrs["dtype"] = vars[i].dtype();
      v.attrs["shape"] = PartialTensorShape();
      spec.inputs.push_back({graph_.AddNode(std::move(v)).value(), 0});
      auto var = std::make_shared<Var>(absl::StrCat("var", i), vars[i].dtype(), PartialTensorShape());
      *var->tensor() = vars[i].DeepCopy();
      vars_.push_back(std::move(var));
    }
    for (size_t i = 0; i < value_types.size(); ++i) {
      NodeSpec p;
      p.name = absl::StrCat("input", i);
      p.op = "Placeholder";
      p.attrs["dtype"] = value_types[i];
      spec.inputs.push_back({graph_.AddNode(std::move(p)).value(), 0});
    }
    auto node = graph_.AddNode(std::move(spec));
    EXPECT_TRUE(node.ok()) << node.status();
    if (!node.ok()) return;
    auto kernel = KernelRegistry::Global()->CreateKernel(device(), "CPU", (*node)->props_ptr());
    EXPECT_TRUE(kernel.ok()) << kernel.status();
    if (kernel.ok()) kernel_ = std::move(*kernel);
  }

  Status Run(const std::vector<Tensor>& values) {
    if (kernel_ == nullptr) return errors::Internal("no kernel");
    std::vector<TensorValue> in(vars_.size() + values.size());
    for (size_t i = 0; i < vars_.size(); ++i) in[i].ref = vars_[i];
    for (size_t i = 0; i < values.size(); ++i) in[vars_.size() + i].tensor = values[i];
    StepParams step;
    step.device = device();
    OpKernelContext ctx(&step, kernel_.get(), in.data(), static_cast<int>(in.size()));
    kernel_->Compute(&ctx);
    return ctx.status();
  }
  const Tensor& value(int i) const { return *vars_[i]->tensor(); }

 private:
  static Device* device() {
    static Device* d = new Device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU");
    return d;
  }
  Graph graph_;
  std::unique_ptr<OpKernel> kernel_;
  std::vector<std::shared_ptr<Var>> vars_;
};

Tensor Mat(const std::vector<double>& v, int64_t rows) {
  return Tensor::FromValues<double>(v, TensorShape{rows, static_cast<int64_t>(v.size()) / rows}).value();
}
Tensor Row(const Tensor& t, int64_t r) {
  const int64_t cols = t.dim_size(1);
  std::vector<double> v(t.flat<double>().begin() + r * cols, t.flat<double>().begin() + (r + 1) * cols);
  return Tensor::FromValues<double>(v, TensorShape{cols}).value();
}

struct Case {
  std::string op;
  int refs;
  std::vector<double> scalars;
  int grad_at;     // position of grad among the value inputs
  int indices_at;  // position of indices among the value inputs (sparse op only)
  AttrMap attrs;
  bool step_last = false;  // the last scalar is an int64 global_step
};

std::vector<Case> Cases() {
  return {
      {"Adagrad", 2, {0.1}, 1, 2, {}},
      {"Momentum", 2, {0.1, 0.9}, 1, 2, {{"use_nesterov", true}}},
      {"RMSProp", 3, {0.01, 0.9, 0.5, 1e-7}, 4, 5, {}},
      {"CenteredRMSProp", 4, {0.01, 0.9, 0.5, 1e-7}, 4, 5, {}},
      {"Adadelta", 3, {1.0, 0.95, 1e-6}, 3, 4, {}},
      {"ProximalGradientDescent", 1, {0.1, 0.01, 0.1}, 3, 4, {}},
      {"ProximalAdagrad", 2, {0.1, 0.01, 0.1}, 3, 4, {}},
      {"Ftrl", 3, {0.1, 0.01, 0.1, -0.5}, 0, 1, {}},
      {"FtrlV2", 3, {0.1, 0.01, 0.1, 0.05, -0.5}, 0, 1, {}},
      {"AdagradDA", 3, {0.1, 0.01, 0.1, 7}, 0, 1, {}, true},
      {"AdagradDA", 3, {0.1, 0.0, 0.1, 7}, 0, 1, {}, true},
  };
}

// Value inputs of the dense op (scalars with grad at grad_at) and of the sparse op (indices
// after grad, or where the OpDef puts them).
std::vector<Tensor> Values(const Case& c, const Tensor& grad, const Tensor* indices) {
  std::vector<Tensor> v;
  for (double s : c.scalars) v.push_back(Tensor(s));
  if (c.step_last) v.back() = Tensor(static_cast<int64_t>(c.scalars.back()));
  v.insert(v.begin() + c.grad_at, grad);
  if (indices != nullptr) v.insert(v.begin() + c.indices_at, *indices);
  return v;
}

TEST(SparseApplyTest, RowsMatchTheDenseUpdateInTurn) {
  for (const Case& c : Cases()) {
    for (DType index_type : {DT_INT32, DT_INT64}) {
      SCOPED_TRACE(c.op + " " + DTypeString(index_type));
      // var [4, 2] and slots (slot values positive: accumulators); grad rows for indices 2, 0, 2.
      std::vector<Tensor> vars = {Mat({0.5, -1, 0.25, 2, -0.75, 0.1, 1.5, -0.3}, 4)};
      for (int i = 1; i < c.refs; ++i) vars.push_back(Mat({0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}, 4));
      const Tensor grad = Mat({0.3, -0.2, 0.05, 0.4, -0.1, 0.6}, 3);
      const Tensor indices = index_type == DT_INT32 ? Tensor::FromValues<int32_t>({2, 0, 2}, TensorShape{3}).value()
                                                    : Tensor::FromValues<int64_t>({2, 0, 2}, TensorShape{3}).value();
      std::vector<DType> types(c.scalars.size() + 2, DT_DOUBLE);
      if (c.step_last) types.back() = DT_INT64;
      types[c.indices_at] = index_type;
      AttrMap attrs = c.attrs;
      attrs["Tindices"] = index_type;
      Runner sparse("SparseApply" + c.op, vars, types, attrs);
      ASSERT_TRUE(sparse.Run(Values(c, grad, &indices)).ok());
      // The same with the dense op on each row, in the order of indices.
      std::vector<std::vector<Tensor>> rows(4);
      for (int64_t r = 0; r < 4; ++r)
        for (const Tensor& v : vars) rows[r].push_back(Row(v, r));
      const int64_t order[3] = {2, 0, 2};
      std::vector<std::unique_ptr<Runner>> dense;
      for (int k = 0; k < 3; ++k) {
        std::vector<DType> dense_types(c.scalars.size() + 1, DT_DOUBLE);
        if (c.step_last) dense_types.back() = DT_INT64;
        Runner d("Apply" + c.op, rows[order[k]], dense_types, c.attrs);
        ASSERT_TRUE(d.Run(Values(c, Row(grad, k), nullptr)).ok());
        for (int i = 0; i < c.refs; ++i) rows[order[k]][i] = d.value(i).DeepCopy();
      }
      for (int i = 0; i < c.refs; ++i) {
        for (int64_t r = 0; r < 4; ++r) {
          for (int64_t j = 0; j < 2; ++j) {
            EXPECT_NEAR(sparse.value(i).flat<double>()[r * 2 + j], rows[r][i].flat<double>()[j], 1e-14)
                << "variable " << i << " row " << r << " column " << j;
          }
        }
      }
      // Row 1 and 3 were not in indices: unchanged.
      EXPECT_EQ(sparse.value(0).flat<double>()[2], 0.25);
      EXPECT_EQ(sparse.value(0).flat<double>()[7], -0.3);
    }
  }
}

// ApplyAdagradDA (its global_step is int64) against the formula, computed here.
TEST(SparseApplyTest, DenseAdagradDAFormula) {
  const std::vector<double> var0 = {0.5, -1.0, 0.001}, grad = {0.3, -0.2, 0.05};
  const double lr = 0.5, l2 = 0.2;
  auto vec = [](const std::vector<double>& v) {
    return Tensor::FromValues<double>(v, TensorShape{static_cast<int64_t>(v.size())}).value();
  };
  for (double l1 : {0.0, 0.05}) {
    Runner r("ApplyAdagradDA", {vec(var0), vec({0, 0, 0}), vec({0.1, 0.1, 0.1})},
             {DT_DOUBLE, DT_DOUBLE, DT_DOUBLE, DT_DOUBLE, DT_INT64}, {});
    std::vector<double> g_acc = {0, 0, 0}, gg_acc = {0.1, 0.1, 0.1};
    for (int64_t step = 1; step <= 2; ++step) {
      ASSERT_TRUE(r.Run({vec(grad), Tensor(lr), Tensor(l1), Tensor(l2), Tensor(step)}).ok());
      for (int i = 0; i < 3; ++i) {
        g_acc[i] += grad[i];
        gg_acc[i] += grad[i] * grad[i];
        const double denom = l2 * step * lr + std::sqrt(gg_acc[i]);
        const double sign = g_acc[i] > 0 ? 1 : -1;
        const double want = l1 > 0 ? -sign * lr * std::max(std::abs(g_acc[i]) - step * l1, 0.0) / denom
                                   : -lr * g_acc[i] / denom;
        EXPECT_NEAR(r.value(0).flat<double>()[i], want, 1e-14) << "l1 " << l1 << " step " << step << " i " << i;
        EXPECT_NEAR(r.value(1).flat<double>()[i], g_acc[i], 1e-14);
        EXPECT_NEAR(r.value(2).flat<double>()[i], gg_acc[i], 1e-14);
      }
    }
  }
}

TEST(SparseApplyTest, BadInput) {
  const Tensor var = Mat({1, 2, 3, 4}, 2);
  Runner r("SparseApplyAdagrad", {var, var}, {DT_DOUBLE, DT_DOUBLE, DT_INT32}, {{"Tindices", DT_INT32}});
  auto idx = [](std::vector<int32_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return Tensor::FromValues<int32_t>(v, TensorShape{n}).value();
  };
  Status s = r.Run({Tensor(0.1), Mat({1, 1}, 1), idx({2})});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("Index 2 at offset 0 in indices is out of range"));
  s = r.Run({Tensor(0.1), Mat({1, 1}, 1), idx({-1})});
  EXPECT_THAT(std::string(s.message()), HasSubstr("out of range"));
  s = r.Run({Tensor(0.1), Mat({1, 1, 1, 1}, 2), idx({0})});
  EXPECT_THAT(std::string(s.message()), HasSubstr("grad must be"));
  s = r.Run({Tensor(0.1), Mat({1, 1, 1}, 1), idx({0})});
  EXPECT_THAT(std::string(s.message()), HasSubstr("var and grad must match in dimension 1"));
  // Nothing changed by the failed runs.
  EXPECT_EQ(r.value(0).flat<double>()[0], 1);
  EXPECT_EQ(r.value(1).flat<double>()[3], 4);
  // Empty indices: nothing to do.
  EXPECT_TRUE(r.Run({Tensor(0.1), Tensor(DT_DOUBLE, TensorShape({0, 2})), idx({})}).ok());
}

}  // namespace
}  // namespace dflow
