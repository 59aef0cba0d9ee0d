// Resource variables: handles, reads, assignments, updates, initialization checks, gathers, bad
// inputs and gradients with respect to the handle (exact and numerical).
#include <cmath>
#include <thread>

#include "dflow/dflow.h"
#include "tensor/resource_handle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

Tensor Floats(std::vector<float> v, TensorShape s) { return Tensor::FromValues<float>(v, s).value(); }
Tensor Doubles(std::vector<double> v, TensorShape s) { return Tensor::FromValues<double>(v, s).value(); }

TEST(ResourceVariableTest, HandleNamesTheVariableWithoutCreatingIt) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialTensorShape({2}));
  Output init = ops::VarIsInitializedOp(root, v);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(v.dtype(), DT_RESOURCE);
  ClientSession session(root);
  auto r = session.Run({v, init});
  ASSERT_TRUE(r.ok()) << r.status();
  const ResourceHandle& h = (*r)[0].scalar<ResourceHandle>();
  EXPECT_EQ(h.name, "v");  // shared_name defaults to the node name
  EXPECT_THAT(h.container, HasSubstr("__graph_"));
  EXPECT_EQ(h.type_name, "Var");
  EXPECT_FALSE((*r)[1].scalar<bool>());
}

TEST(ResourceVariableTest, AssignThenReadReturnsTheValue) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialTensorShape({3}));
  Operation assign = ops::AssignVariableOp(root, v, {1.5f, -2.0f, 4.0f});
  Output read = ops::ReadVariableOp(root, v, DT_FLOAT);
  Output init = ops::VarIsInitializedOp(root, v);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  auto r = session.Run({read, init});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[1.5 -2 4]");
  EXPECT_TRUE((*r)[1].scalar<bool>());
}

TEST(ResourceVariableTest, UninitializedReadIsFailedPreconditionNamingTheVariable) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("weights"), DT_FLOAT, PartialTensorShape({3}));
  Output read = ops::ReadVariableOp(root, v, DT_FLOAT);
  ClientSession session(root);
  auto r = session.Run({read});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("Attempting to use uninitialized value weights"));
}

// TensorFlow: NotFound for an update (or VariableShape) of a variable never assigned; only
// ReadVariableOp calls it uninitialized.
TEST(ResourceVariableTest, UpdateOfAnUnassignedVariableIsNotFound) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("w"), DT_FLOAT, PartialTensorShape({1}));
  Operation add = ops::AssignAddVariableOp(root, v, {1.0f});
  ClientSession session(root);
  Status s = session.Run({add});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(s.message(), HasSubstr("w does not exist"));
}

TEST(ResourceVariableTest, Uint8AssignAdd) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("u"), DT_UINT8, PartialTensorShape({2}));
  Operation assign = ops::AssignVariableOp(root, v, Tensor::FromValues<uint8_t>({250, 1}, TensorShape{2}).value());
  Operation add = ops::AssignAddVariableOp(root, v, Tensor::FromValues<uint8_t>({10, 2}, TensorShape{2}).value());
  Output read = ops::ReadVariableOp(root, v, DT_UINT8);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  ASSERT_TRUE(session.Run({add}).ok());
  auto r = session.Run({read});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[4 3]");
}

TEST(ResourceVariableTest, AssignAddAndSubUpdateInPlaceOfTheValue) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_INT64, PartialTensorShape({2}));
  Operation assign = ops::AssignVariableOp(root, v, Tensor::FromValues<int64_t>({10, 20}, TensorShape{2}).value());
  Operation add = ops::AssignAddVariableOp(root, v, Tensor::FromValues<int64_t>({1, 2}, TensorShape{2}).value());
  Operation sub = ops::AssignSubVariableOp(root, v, Tensor::FromValues<int64_t>({5, 5}, TensorShape{2}).value());
  Output read = ops::ReadVariableOp(root, v, DT_INT64);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  ASSERT_TRUE(session.Run({add}).ok());
  ASSERT_TRUE(session.Run({add}).ok());
  ASSERT_TRUE(session.Run({sub}).ok());
  auto r = session.Run({read});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[7 19]");  // 10+1+1-5, 20+2+2-5
}

TEST(ResourceVariableTest, UpdatesWorkForEveryNumericType) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> reads;
  std::vector<Operation> steps;
  for (DType t : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64}) {
    Output v = ops::VarHandleOp(root.WithOpName(absl::StrCat("v_", DTypeString(t))), t, PartialTensorShape({}));
    Output three = ops::Cast(root, 3, t);
    Output two = ops::Cast(root, 2, t);
    steps.push_back(ops::AssignVariableOp(root, v, three));
    steps.push_back(ops::AssignAddVariableOp(root, v, three));
    steps.push_back(ops::AssignSubVariableOp(root, v, two));
    reads.push_back(ops::ReadVariableOp(root, v, t));
  }
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  for (size_t i = 0; i < steps.size(); i += 3) {
    for (size_t k = 0; k < 3; ++k) ASSERT_TRUE(session.Run({steps[i + k]}).ok()) << i;
  }
  auto r = session.Run(reads);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const Tensor& t : *r) EXPECT_EQ(t.ToString(), "4") << t.DebugString();
}

TEST(ResourceVariableTest, ReadersKeepTheirSnapshot) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialTensorShape({2}));
  Operation assign = ops::AssignVariableOp(root, v, {1.0f, 2.0f});
  Output read = ops::ReadVariableOp(root, v, DT_FLOAT);
  Operation add = ops::AssignAddVariableOp(root, v, {10.0f, 10.0f});
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  auto before = session.Run({read});
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(session.Run({add}).ok());
  auto after = session.Run({read});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*before)[0].ToString(), "[1 2]");
  EXPECT_EQ((*after)[0].ToString(), "[11 12]");
}

TEST(ResourceVariableTest, AssignMayChangeTheShapeUnlessValidateShape) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialTensorShape());
  Operation a1 = ops::AssignVariableOp(root, v, {1.0f, 2.0f});
  Operation a2 = ops::AssignVariableOp(root, v, {{1.0f, 2.0f, 3.0f}});
  Operation strict = ops::BuildOp(root, "AssignVariableOp", {v, Input({5.0f})}, {{"validate_shape", true}});
  Output read = ops::ReadVariableOp(root, v, DT_FLOAT);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({a1}).ok());
  ASSERT_TRUE(session.Run({a2}).ok());
  auto r = session.Run({read});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (TensorShape{1, 3}));
  Status s = session.Run({strict});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("[1]"));
  EXPECT_THAT(s.message(), HasSubstr("[1,3]"));
}

TEST(ResourceVariableTest, WrongDtypeIsInvalidArgument) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialTensorShape({}));
  Operation assign = ops::AssignVariableOp(root, v, 1.0f);
  Output read_int = ops::ReadVariableOp(root, v, DT_INT32);
  Operation assign_int = ops::AssignVariableOp(root, v, 7);
  Operation add_double = ops::AssignAddVariableOp(root, v, 1.0);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  auto r = session.Run({read_int});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("float"));
  EXPECT_THAT(r.status().message(), HasSubstr("int32"));
  EXPECT_EQ(session.Run({assign_int}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(session.Run({add_double}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ResourceVariableTest, UpdateShapeMismatchIsInvalidArgumentAndLeavesTheValue) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialTensorShape({2}));
  Operation assign = ops::AssignVariableOp(root, v, {1.0f, 2.0f});
  Operation bad = ops::AssignAddVariableOp(root, v, {1.0f, 2.0f, 3.0f});
  Output read = ops::ReadVariableOp(root, v, DT_FLOAT);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  Status s = session.Run({bad});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("[2]"));
  EXPECT_THAT(s.message(), HasSubstr("[3]"));
  auto r = session.Run({read});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].ToString(), "[1 2]");
}

TEST(ResourceVariableTest, ANonHandleInputIsInvalidArgument) {
  // A DT_RESOURCE placeholder fed with a vector of handles instead of a scalar.
  Scope root = Scope::NewRootScope();
  Output h = ops::Placeholder(root, DT_RESOURCE);
  Output read = ops::ReadVariableOp(root, h, DT_FLOAT);
  ClientSession session(root);
  Tensor handles(DT_RESOURCE, TensorShape{2});
  auto r = session.Run({{h, handles}}, {read});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("scalar resource handle"));
}

TEST(ResourceVariableTest, SharedNameAndContainerPickTheVariable) {
  Scope root = Scope::NewRootScope();
  Output a = ops::VarHandleOp(root.WithOpName("a"), DT_FLOAT, PartialTensorShape({}), {.shared_name = "shared"});
  Output b = ops::VarHandleOp(root.WithOpName("b"), DT_FLOAT, PartialTensorShape({}), {.shared_name = "shared"});
  Output c = ops::VarHandleOp(root.WithOpName("c"), DT_FLOAT, PartialTensorShape({}),
                              {.container = "other_container_for_test", .shared_name = "shared"});
  Operation assign = ops::AssignVariableOp(root, a, 5.0f);
  Output read_b = ops::ReadVariableOp(root, b, DT_FLOAT);
  Output init_c = ops::VarIsInitializedOp(root, c);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  auto r = session.Run({read_b, init_c});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 5.0f);
  EXPECT_FALSE((*r)[1].scalar<bool>());
}

TEST(ResourceVariableTest, ValuesPersistAcrossSessionsOfTheGraph) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialTensorShape({}));
  Operation assign = ops::AssignVariableOp(root, v, 3.0f);
  Output read = ops::ReadVariableOp(root, v, DT_FLOAT);
  {
    ClientSession s1(root);
    ASSERT_TRUE(s1.Run({assign}).ok());
  }
  ClientSession s2(root);
  auto r = s2.Run({read});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 3.0f);
}

TEST(ResourceVariableTest, VariableV2AndAHandleShareStorage) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {2}, DT_FLOAT, init::Constant({1.0f, 2.0f}));
  Output h = ops::VarHandleOp(root.WithOpName("h"), DT_FLOAT, PartialTensorShape({2}), {.shared_name = "w"});
  Output read = ops::ReadVariableOp(root, h, DT_FLOAT);
  Operation add = ops::AssignAddVariableOp(root, h, {1.0f, 1.0f});
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  ASSERT_TRUE(session.Run({add}).ok());
  auto r = session.Run({read, w.read()});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[2 3]");
  EXPECT_EQ((*r)[1].ToString(), "[2 3]");
}

TEST(ResourceVariableTest, ConcurrentAddsAreAtomic) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("counter"), DT_INT64, PartialTensorShape({}));
  Operation assign = ops::AssignVariableOp(root, v, int64_t{0});
  Operation add = ops::AssignAddVariableOp(root, v, int64_t{1});
  Output read = ops::ReadVariableOp(root, v, DT_INT64);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 250; ++i) ASSERT_TRUE(session.Run({add}).ok());
    });
  }
  for (auto& t : threads) t.join();
  auto r = session.Run({read});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].scalar<int64_t>(), 1000);
}

// ---- ResourceGather ----

TEST(ResourceGatherTest, GathersRowsLikeANaiveLoop) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("table"), DT_FLOAT, PartialTensorShape({4, 3}));
  std::vector<float> table(12);
  for (int i = 0; i < 12; ++i) table[i] = static_cast<float>(i * i) - 3.0f;
  Operation assign = ops::AssignVariableOp(root, v, Floats(table, {4, 3}));
  Output idx = ops::Placeholder(root, DT_INT64);
  Output g = ops::ResourceGather(root, v, idx, DT_FLOAT);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  std::vector<int64_t> indices = {3, 0, 3, 1, 2, 2};
  auto r = session.Run({{idx, Tensor::FromValues<int64_t>(indices, {2, 3}).value()}}, {g});
  ASSERT_TRUE(r.ok()) << r.status();
  const Tensor& out = (*r)[0];
  ASSERT_EQ(out.shape(), (TensorShape{2, 3, 3}));
  for (size_t i = 0; i < indices.size(); ++i) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(out.flat<float>()[i * 3 + k], table[indices[i] * 3 + k]) << i << "," << k;
  }
}

TEST(ResourceGatherTest, OutOfRangeIndexIsInvalidArgumentNamingIt) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("table"), DT_INT32, PartialTensorShape({3}));
  Operation assign = ops::AssignVariableOp(root, v, {1, 2, 3});
  Output g = ops::ResourceGather(root, v, {0, 3}, DT_INT32);
  Output neg = ops::ResourceGather(root, v, {-1}, DT_INT32);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  auto r = session.Run({g});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("indices[1] = 3 is not in [0, 3)"));
  EXPECT_EQ(session.Run({neg}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ResourceGatherTest, ScalarVariableIsRejected) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("s"), DT_FLOAT, PartialTensorShape({}));
  Operation assign = ops::AssignVariableOp(root, v, 1.0f);
  Output g = ops::ResourceGather(root, v, {0}, DT_FLOAT);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  EXPECT_EQ(session.Run({g}).status().code(), absl::StatusCode::kInvalidArgument);
}

// batch_dims = 1 (TensorFlow's rule): row b of the indices gathers from row b of the variable.
TEST(ResourceGatherTest, BatchDims) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("b"), DT_FLOAT, PartialTensorShape({2, 3}));
  Operation assign = ops::AssignVariableOp(root, v, {{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}});
  Operation g = ops::BuildOp(root, "ResourceGather", {v, Input({{2, 0}, {1, 1}})},
                             {{"dtype", DT_FLOAT}, {"batch_dims", 1}});
  Operation bad = ops::BuildOp(root, "ResourceGather", {v, Input({{2, 0}, {1, 1}, {0, 0}})},
                               {{"dtype", DT_FLOAT}, {"batch_dims", 1}});
  ASSERT_TRUE(root.status().ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  auto r = session.Run({Output(g, 0)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[[3 1] [5 5]]");
  EXPECT_EQ(session.Run({Output(bad, 0)}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ResourceGatherTest, EmptyIndicesGiveAnEmptyResult) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("table"), DT_FLOAT, PartialTensorShape({2, 2}));
  Operation assign = ops::AssignVariableOp(root, v, {{1.0f, 2.0f}, {3.0f, 4.0f}});
  Output idx = ops::Placeholder(root, DT_INT32);
  Output g = ops::ResourceGather(root, v, idx, DT_FLOAT);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  auto r = session.Run({{idx, Tensor(DT_INT32, TensorShape{0})}}, {g});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].shape(), (TensorShape{0, 2}));
}

// ---- Gradients with respect to the handle ----

TEST(ResourceVariableGradientTest, ReadTimesThreeHasGradientThree) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialTensorShape({3}));
  Operation assign = ops::AssignVariableOp(root, v, {1.0f, -2.0f, 5.0f});
  Output y = ops::ReadVariableOp(root, v, DT_FLOAT) * 3.0f;
  std::vector<Output> g = Gradients(root, {y}, {v});
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].dtype(), DT_FLOAT);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  auto r = session.Run({g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[3 3 3]");
}

TEST(ResourceVariableGradientTest, TwoReadsAreSummed) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_DOUBLE, PartialTensorShape({2}));
  Operation assign = ops::AssignVariableOp(root, v, {2.0, 3.0});
  Output r1 = ops::ReadVariableOp(root, v, DT_DOUBLE);
  Output r2 = ops::ReadVariableOp(root, v, DT_DOUBLE);
  Output y = r1 * r2;  // d(v^2)/dv = 2v
  std::vector<Output> g = Gradients(root, {y}, {v});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  auto r = session.Run({g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[4 6]");
}

// Central differences of `loss` (a scalar double) with respect to the variable's elements,
// against the gradient that AddGradients builds for the handle.
double MaxHandleGradientError(const Scope& root, ClientSession& session, Output handle, Output loss, Tensor value) {
  std::vector<Output> g = Gradients(root, {loss}, {handle});
  EXPECT_TRUE(root.ok()) << root.status();
  Output fed = ops::Placeholder(root, DT_DOUBLE);
  Operation set = ops::AssignVariableOp(root, handle, fed);
  EXPECT_TRUE(session.Run({{fed, value}}, {}, {set}).ok());
  auto theory = session.Run({g[0]});
  EXPECT_TRUE(theory.ok()) << theory.status();
  if (!theory.ok()) return 1e9;
  const double delta = 1e-4;
  double max_err = 0;
  for (int64_t i = 0; i < value.NumElements(); ++i) {
    double f[2];
    for (int side = 0; side < 2; ++side) {
      Tensor x = value.DeepCopy();
      x.flat<double>()[i] += side == 0 ? delta : -delta;
      EXPECT_TRUE(session.Run({{fed, x}}, {}, {set}).ok());
      auto l = session.Run({loss});
      EXPECT_TRUE(l.ok());
      f[side] = (*l)[0].scalar<double>();
    }
    const double numeric = (f[0] - f[1]) / (2 * delta);
    max_err = std::max(max_err, std::abs(numeric - (*theory)[0].flat<double>()[i]));
  }
  return max_err;
}

TEST(ResourceVariableGradientTest, NumericalCheckOfANonlinearLossOfTheRead) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_DOUBLE, PartialTensorShape({2, 2}));
  Output x = ops::ReadVariableOp(root, v, DT_DOUBLE);
  Output loss = ops::Sum(root, ops::Exp(root, x * 0.5) * x, {0, 1});  // sum(x e^{x/2})
  ClientSession session(root);
  double err = MaxHandleGradientError(root, session, v, loss, Doubles({0.3, -1.2, 2.0, 0.7}, {2, 2}));
  EXPECT_LT(err, 1e-6);
}

TEST(ResourceVariableGradientTest, NumericalCheckOfResourceGather) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("table"), DT_DOUBLE, PartialTensorShape({4, 2}));
  // Row 2 twice (its gradients add up), row 1 never (zero gradient).
  Output rows = ops::ResourceGather(root, v, {{2, 0}, {3, 2}}, DT_DOUBLE);
  Output loss = ops::Sum(root, rows * rows * Input({1.0, -3.0}), {0, 1, 2});
  ClientSession session(root);
  double err = MaxHandleGradientError(root, session, v, loss,
                                      Doubles({0.5, -1.0, 2.0, 0.25, -0.75, 1.5, 3.0, -2.0}, {4, 2}));
  EXPECT_LT(err, 1e-6);
}

TEST(ResourceVariableGradientTest, ResourceGatherGradientValues) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("table"), DT_FLOAT, PartialTensorShape({3, 2}));
  Operation assign = ops::AssignVariableOp(root, v, {{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}});
  Output rows = ops::ResourceGather(root, v, {2, 0, 2}, DT_FLOAT);
  std::vector<Output> g = Gradients(root, {rows}, {v});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  auto r = session.Run({g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[[1 1] [0 0] [2 2]]");
}

}  // namespace
}  // namespace dflow
