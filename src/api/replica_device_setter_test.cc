// Device functions in Scope and train::ReplicaDeviceSetter: round robin and greedy placement of
// variables, merging with explicit devices, the ops a variable owns, optimizers, and errors.
#include "dflow/replica_device_setter.h"

#include "dflow/dflow.h"
#include "distributed/cluster_spec.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

std::string Dev(const Output& o) { return o.node()->requested_device(); }
std::string Dev(const Operation& o) { return o.node()->requested_device(); }
std::string DevOf(const Scope& root, const std::string& node) {
  Node* n = root.graph()->FindNode(node);
  EXPECT_NE(n, nullptr) << node;
  return n == nullptr ? "" : n->requested_device();
}

TEST(DeviceFunctionTest, SeesTheOpAndNestsFromTheInsideOut) {
  Scope root = Scope::NewRootScope();
  std::vector<std::string> seen;
  Scope outer = root.WithDeviceFunction([&](const DeviceRequest& r) -> StatusOr<std::string> {
    seen.push_back(absl::StrCat("outer ", r.op, " ", r.name, " [", r.device, "]"));
    return r.device.empty() ? std::string("/job:outer") : std::string(r.device);
  });
  Scope inner = outer.NewSubScope("layer").WithDeviceFunction([&](const DeviceRequest& r) -> StatusOr<std::string> {
    seen.push_back(absl::StrCat("inner ", r.op, " ", r.name, " [", r.device, "]"));
    return absl::StrCat(r.device, "/task:3");
  });
  Output a = ops::Placeholder(inner.WithOpName("x").WithDevice("/job:w"), DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(Dev(a), "/job:w/task:3");
  EXPECT_THAT(seen, ::testing::ElementsAre("inner Placeholder layer/x [/job:w]",
                                           "outer Placeholder layer/x [/job:w/task:3]"));
  // A literal operand becomes a Const that the functions place too.
  seen.clear();
  Output b = ops::Add(outer, ops::Const(outer, 1.0f), 2.0f);
  EXPECT_EQ(Dev(b), "/job:outer");
  EXPECT_EQ(seen.size(), 3u);
  // A WithDevice outside a function only fills the fields the function leaves unset.
  Scope pinned =
      root.WithDevice("/job:chief/device:CPU:0").WithDeviceFunction([](const DeviceRequest&) -> StatusOr<std::string> {
        return std::string("/job:worker");
      });
  EXPECT_EQ(Dev(ops::Const(pinned, 1)), "/job:worker/device:CPU:0");
  // An empty function changes nothing.
  EXPECT_EQ(Dev(ops::Const(root.WithDevice("/job:a").WithDeviceFunction(nullptr), 1)), "/job:a");
}

TEST(DeviceFunctionTest, ErrorsAreRecordedWithTheNode) {
  Scope root = Scope::NewRootScope();
  Scope bad = root.WithDeviceFunction([](const DeviceRequest&) -> StatusOr<std::string> {
    return errors::InvalidArgument("no room");
  });
  EXPECT_FALSE(ops::Const(bad.WithOpName("c"), 1).valid());
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("Device function for node 'c' (op Const): no room"));
  Scope root2 = Scope::NewRootScope();
  Scope garbage = root2.WithDeviceFunction([](const DeviceRequest&) -> StatusOr<std::string> {
    return std::string("job:x");
  });
  EXPECT_FALSE(ops::Const(garbage, 1).valid());
  EXPECT_FALSE(root2.ok());
}

TEST(ReplicaDeviceSetterTest, RoundRobinOverThreePsTasks) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(3, "/job:worker/task:0"));
  std::vector<Variable> vars;
  for (int i = 0; i < 5; ++i) {
    vars.push_back(Variable::Create(s.WithOpName(absl::StrCat("v", i)), {2, 2}, DT_FLOAT, init::RandomUniform()));
  }
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, PartialTensorShape({1, 2}));
  Output y = ops::MatMul(s.WithOpName("y"), x, vars[0]);
  Output h = ops::VarHandleOp(s.WithOpName("h"), DT_FLOAT, PartialTensorShape({2}));
  ASSERT_TRUE(root.ok()) << root.status();
  const char* want[] = {"/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2", "/job:ps/task:0", "/job:ps/task:1"};
  for (int i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(Dev(vars[i].ref()), want[i]);
    // The ops a variable owns are colocated with it.
    EXPECT_EQ(Dev(vars[i].read()), want[i]);
    EXPECT_EQ(Dev(vars[i].initializer()), want[i]);
    EXPECT_EQ(DevOf(root, absl::StrCat("v", i, "/Initializer/RandomUniform")), want[i]);
  }
  EXPECT_EQ(Dev(h), "/job:ps/task:2");  // VarHandleOp is a ps op too
  EXPECT_EQ(Dev(x), "/job:worker/task:0");
  EXPECT_EQ(Dev(y), "/job:worker/task:0");
  EXPECT_EQ(Dev(GlobalVariablesInitializer(s)), "/job:worker/task:0");
}

TEST(ReplicaDeviceSetterTest, GreedyByBytes) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(3, "/job:worker", "/job:ps",
                                                               train::GreedyLoadBalancingStrategy(3)));
  // bytes:             400           40          80           200          80            240
  std::vector<std::pair<TensorShape, DType>> specs = {{{100}, DT_FLOAT},   {{10}, DT_FLOAT},  {{20}, DT_FLOAT},
                                                      {{5, 10}, DT_FLOAT}, {{10}, DT_DOUBLE}, {{30}, DT_INT64},
                                                      {{1}, DT_FLOAT}};
  // loads after each: [400,0,0] [400,40,0] [400,40,80] [400,240,80] [400,240,160] [400,240,400] [400,244,400]
  const int want[] = {0, 1, 2, 1, 2, 2, 1};
  for (size_t i = 0; i < specs.size(); ++i) {
    Variable v = Variable::Create(s.WithOpName(absl::StrCat("g", i)), specs[i].first, specs[i].second);
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_EQ(Dev(v.ref()), absl::StrCat("/job:ps/task:", want[i])) << i;
  }
  // The byte sizes, and what cannot be sized.
  AttrMap attrs = {{"shape", PartialTensorShape({3, 4})}, {"dtype", DT_DOUBLE}};
  EXPECT_EQ(*train::ByteSizeLoadFunction(DeviceRequest{"VariableV2", "v", "", attrs}), 96);
  AttrMap unknown = {{"shape", PartialTensorShape({-1, 4})}, {"dtype", DT_FLOAT}};
  auto u = train::ByteSizeLoadFunction(DeviceRequest{"VarHandleOp", "h", "", unknown});
  ASSERT_FALSE(u.ok());
  EXPECT_THAT(std::string(u.status().message()), HasSubstr("[?,4] is not fully defined"));
  Output h = ops::VarHandleOp(s.WithOpName("h"), DT_FLOAT, PartialTensorShape({-1}));
  EXPECT_FALSE(h.valid());
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("GreedyLoadBalancingStrategy: The byte size of node 'h' (op VarHandleOp) is unknown"));
}

TEST(ReplicaDeviceSetterTest, ExplicitDevicesMerge) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(2, "/job:worker/task:1"));
  Variable a = Variable::Create(s.WithOpName("a"), {1}, DT_FLOAT);                               // strategy: 0
  Variable b = Variable::Create(s.WithDevice("/job:ps/task:0").WithOpName("b"), {1}, DT_FLOAT);  // asked: 1, pinned
  Variable c = Variable::Create(s.WithDevice("/job:local").WithOpName("c"), {1}, DT_FLOAT);  // another job: not asked
  Variable d = Variable::Create(s.WithDevice("/device:CPU:0").WithOpName("d"), {1}, DT_FLOAT);  // strategy: 0
  Output w = ops::Const(s.WithDevice("/task:3/device:CPU:0"), 1.0f);
  Output j = ops::Const(s.WithDevice("/job:chief"), 1.0f);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(Dev(a.ref()), "/job:ps/task:0");
  EXPECT_EQ(Dev(b.ref()), "/job:ps/task:0");
  EXPECT_EQ(Dev(c.ref()), "/job:local");
  EXPECT_EQ(Dev(d.ref()), "/job:ps/task:0/device:CPU:0");
  EXPECT_EQ(Dev(w), "/job:worker/task:3/device:CPU:0");
  EXPECT_EQ(Dev(j), "/job:chief/task:1");
  // merge_devices = false: an op with a device keeps it untouched.
  train::ReplicaDeviceSetterOptions o;
  o.ps_tasks = 2;
  o.merge_devices = false;
  Scope s2 = root.WithDeviceFunction(train::ReplicaDeviceSetter(o));
  EXPECT_EQ(Dev(Variable::Create(s2.WithDevice("/device:CPU:0").WithOpName("e"), {1}, DT_FLOAT).ref()),
            "/device:CPU:0");
  EXPECT_EQ(Dev(Variable::Create(s2.WithOpName("f"), {1}, DT_FLOAT).ref()), "/job:ps/task:0");
  EXPECT_EQ(Dev(ops::Const(s2, 1)), "/job:worker");
  // Custom ps ops and an empty ps device.
  train::ReplicaDeviceSetterOptions q;
  q.ps_tasks = 1;
  q.ps_ops = {"Const"};
  Scope s3 = root.WithDeviceFunction(train::ReplicaDeviceSetter(q));
  EXPECT_EQ(Dev(ops::Const(s3, 1)), "/job:ps/task:0");
  q.ps_device = "";
  EXPECT_EQ(Dev(ops::Const(root.WithDeviceFunction(train::ReplicaDeviceSetter(q)), 1)), "/job:worker");
  // No ps tasks: no device function at all.
  EXPECT_EQ(train::ReplicaDeviceSetter(0), nullptr);
  EXPECT_EQ(Dev(ops::Const(root.WithDeviceFunction(train::ReplicaDeviceSetter(0)), 1)), "");
}

TEST(ReplicaDeviceSetterTest, StateOpsFollowTheirVariable) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(2, "/job:worker/task:0"));
  Variable a = Variable::Create(s.WithOpName("a"), {4}, DT_FLOAT);
  Variable b = Variable::Create(s.WithOpName("b"), {4}, DT_FLOAT);
  // The user's own updates request the worker, which conflicts with the variable: they take the
  // variable's device, as TensorFlow's placer would put them there.
  Output bump = ops::AssignAdd(s.WithOpName("bump"), b.ref(), {1.0f, 1.0f, 1.0f, 1.0f});
  Output scatter = ops::ScatterAdd(s.WithOpName("scatter"), b.ref(), {0}, {2.0f});
  Output h = ops::VarHandleOp(s.WithOpName("h"), DT_FLOAT, PartialTensorShape({4}));
  Operation assign_h = ops::AssignVariableOp(s.WithOpName("assign_h"), h, a);
  Output read_h = ops::ReadVariableOp(s.WithOpName("read_h"), h, DT_FLOAT);
  Output sum = ops::Add(s.WithOpName("sum"), a, b);  // reads: no state, stays on the worker
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(Dev(bump), "/job:ps/task:1");
  EXPECT_EQ(Dev(scatter), "/job:ps/task:1");
  EXPECT_EQ(Dev(h), "/job:ps/task:0");
  EXPECT_EQ(Dev(assign_h), "/job:ps/task:0");
  EXPECT_EQ(Dev(read_h), "/job:ps/task:0");
  EXPECT_EQ(Dev(sum), "/job:worker/task:0");
  // Without device functions an explicit conflicting request is left for the placer to report.
  Output own = ops::AssignAdd(root.WithDevice("/job:worker").WithOpName("own"), a.ref(), {1.0f, 1.0f, 1.0f, 1.0f});
  EXPECT_EQ(Dev(own), "/job:worker");
}

TEST(ReplicaDeviceSetterTest, OptimizerUpdatesRunWithTheirVariables) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(2, "/job:worker/task:0"));
  Variable w = Variable::Create(s.WithOpName("w"), {3, 1}, DT_FLOAT, init::Constant(0.5));
  Variable b = Variable::Create(s.WithOpName("b"), {1}, DT_FLOAT);
  Output step = train::CreateGlobalStep(s);
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, PartialTensorShape({-1, 3}));
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, PartialTensorShape({-1, 1}));
  Output loss = losses::MeanSquaredError(s, y, ops::MatMul(s, x, w) + b);
  train::MomentumOptimizer opt(0.05f, 0.9f);
  Operation train_op = opt.Minimize(s, loss, {}, step);
  Operation init = GlobalVariablesInitializer(s);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(Dev(w.ref()), "/job:ps/task:0");
  EXPECT_EQ(Dev(b.ref()), "/job:ps/task:1");
  EXPECT_EQ(Dev(step), "/job:ps/task:0");
  EXPECT_EQ(DevOf(root, "global_step/Assign"), "/job:ps/task:0");
  EXPECT_EQ(Dev(opt.GetSlot(w.ref(), "momentum")), "/job:ps/task:0");
  EXPECT_EQ(Dev(opt.GetSlot(b.ref(), "momentum")), "/job:ps/task:1");
  EXPECT_EQ(Dev(loss), "/job:worker/task:0");
  int applies = 0;
  for (Node* n : root.graph()->nodes()) {
    if (n->op() != "ApplyMomentum") continue;
    ++applies;
    EXPECT_EQ(n->requested_device(), n->data_inputs()[0]->src->requested_device()) << n->name();
  }
  EXPECT_EQ(applies, 2);
  // In one process (soft placement maps every job onto the local CPU) the model trains.
  SessionOptions so;
  so.allow_soft_placement = true;
  ClientSession session(root, so);
  ASSERT_TRUE(session.Run({init}).ok());
  Tensor xs = Tensor::FromValues<float>({1, 2, 3, 0, 1, 0}, TensorShape({2, 3})).value();
  Tensor ys = Tensor::FromValues<float>({2, 1}, TensorShape({2, 1})).value();
  float first = 0, last = 0;
  for (int i = 0; i < 50; ++i) {
    auto r = session.Run({{x, xs}, {y, ys}}, {loss}, {train_op});
    ASSERT_TRUE(r.ok()) << r.status();
    (i == 0 ? first : last) = (*r)[0].scalar<float>();
  }
  EXPECT_LT(last, first * 0.2f);
}

TEST(ReplicaDeviceSetterTest, FromClusterAndBadOptions) {
  ClusterSpec cluster =
      ClusterSpec::FromJobs({{"ps", {"h:1", "h:2"}}, {"worker", {"h:3"}}, {"store", {"h:4", "h:5", "h:6"}}}).value();
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(cluster));
  EXPECT_EQ(Dev(Variable::Create(s.WithOpName("a"), {1}, DT_FLOAT).ref()), "/job:ps/task:0");
  EXPECT_EQ(Dev(Variable::Create(s.WithOpName("b"), {1}, DT_FLOAT).ref()), "/job:ps/task:1");
  EXPECT_EQ(Dev(Variable::Create(s.WithOpName("c"), {1}, DT_FLOAT).ref()), "/job:ps/task:0");
  train::ReplicaDeviceSetterOptions store;
  store.ps_device = "/job:store";
  Scope t = root.WithDeviceFunction(train::ReplicaDeviceSetter(cluster, store));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Dev(Variable::Create(t.WithOpName(absl::StrCat("s", i)), {1}, DT_FLOAT).ref()),
              absl::StrCat("/job:store/task:", i));
  }
  ASSERT_TRUE(root.ok()) << root.status();

  auto expect_error = [](DeviceFunction fn, const std::string& text) {
    Scope r = Scope::NewRootScope();
    Variable v = Variable::Create(r.WithDeviceFunction(std::move(fn)).WithOpName("v"), {1}, DT_FLOAT);
    EXPECT_FALSE(v.ref().valid());
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(text));
  };
  train::ReplicaDeviceSetterOptions missing;
  missing.ps_device = "/job:params";
  expect_error(train::ReplicaDeviceSetter(cluster, missing),
               "the cluster has no job 'params' (jobs: ps, store, worker)");
  expect_error(train::ReplicaDeviceSetter(-1), "ps_tasks must be non-negative, got -1");
  expect_error(train::ReplicaDeviceSetter(2, "/job:worker", "ps"), "ReplicaDeviceSetter: ps_device");
  expect_error(train::ReplicaDeviceSetter(2, "worker"), "ReplicaDeviceSetter: worker_device");
  expect_error(train::ReplicaDeviceSetter(2, "/job:worker", "/job:ps",
                                          [](const DeviceRequest&) -> StatusOr<int> { return 5; }),
               "the ps strategy chose task 5 for node 'v', but the ps job has tasks 0..1");
  expect_error(train::ReplicaDeviceSetter(2, "/job:worker", "/job:ps", train::RoundRobinStrategy(0)),
               "RoundRobinStrategy needs at least one task");
}

}  // namespace
}  // namespace dflow
