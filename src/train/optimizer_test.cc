// The optimizers below the client API: names and devices of what they build, slot creation and
// reuse, initializers, and bad input. Values are tested in src/api/train_test.cc.
#include "train/optimizers.h"

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow::optimizers {
namespace {

using ::testing::HasSubstr;

NodeOut N(const Output& o) { return NodeOut{o.node(), o.index()}; }

// w (2 floats) and the gradient 2 * (w - [1, -2]) of sum((w - t)^2), built without autodiff.
struct Quadratic {
  Scope root = Scope::NewRootScope();
  Variable w;
  Output grad;
  explicit Quadratic(const std::string& device = "") {
    Scope s = device.empty() ? root : root.WithDevice(device);
    w = Variable::Create(s.WithOpName("w"), {2}, DT_FLOAT);
    grad = ops::Mul(root.WithOpName("grad"), ops::Sub(root, w.read(), ops::Const(root, {1.0f, -2.0f})), 2.0f);
  }
  Graph* graph() const { return root.graph(); }
};

TEST(OptimizerTest, NamesFollowTensorFlow) {
  Quadratic q;
  AdamOptimizer adam(0.1);
  auto op = adam.ApplyGradients(q.graph(), {{N(q.grad), N(q.w.ref())}});
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ((*op)->name(), "Adam");
  EXPECT_EQ((*op)->op(), "NoOp");
  Graph* g = q.graph();
  for (const char* name : {"w/Adam", "w/Adam_1", "beta1_power", "beta2_power", "w/Adam/Assign", "Adam/learning_rate",
                           "Adam/beta1", "Adam/beta2", "Adam/epsilon", "Adam/update_w/ApplyAdam"}) {
    EXPECT_NE(g->FindNode(name), nullptr) << name;
  }
  EXPECT_EQ(g->FindNode("w/Adam")->op(), "VariableV2");
  EXPECT_EQ(adam.GetSlot(N(q.w.ref()), "m").node, g->FindNode("w/Adam"));
  EXPECT_EQ(adam.GetSlot(N(q.w.read()), "v").node, g->FindNode("w/Adam_1"));
  EXPECT_EQ(adam.GetSlot(N(q.w.ref()), "nope").node, nullptr);
  // Slots m, v and the two beta powers, each with its initializer.
  std::vector<CreatedVariable> created = adam.TakeCreatedVariables();
  ASSERT_EQ(created.size(), 4u);
  for (const CreatedVariable& c : created) {
    ASSERT_NE(c.initializer, nullptr);
    EXPECT_EQ(c.initializer->op(), "Assign");
  }
  EXPECT_TRUE(adam.TakeCreatedVariables().empty());

  // A second call reuses the slots and takes the next unique name.
  auto again = adam.ApplyGradients(q.graph(), {{N(q.grad), N(q.w.ref())}});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->name(), "Adam_1");
  EXPECT_TRUE(adam.TakeCreatedVariables().empty());
  EXPECT_EQ(g->FindNode("w/Adam_2"), nullptr);
}

TEST(OptimizerTest, GlobalStepIsIncrementedAfterTheUpdates) {
  Quadratic q;
  Output step = train::CreateGlobalStep(q.root);
  GradientDescentOptimizer gd(0.1);
  auto op = gd.ApplyGradients(q.graph(), {{N(q.grad), N(q.w.ref())}}, N(step));
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ((*op)->name(), "GradientDescent");
  EXPECT_EQ((*op)->op(), "AssignAdd");
  Node* update = q.graph()->FindNode("GradientDescent/update");
  ASSERT_NE(update, nullptr);
  ASSERT_EQ((*op)->control_inputs().size(), 1u);
  EXPECT_EQ((*op)->control_inputs()[0]->src, update);

  Operation init = GlobalVariablesInitializer(q.root);
  ClientSession session(q.root);
  ASSERT_TRUE(session.Run({init}).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(session.Run({Operation(*op)}).ok());
  auto r = session.Run({step, q.w.read()});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<int64_t>(), 3);
  // w = t - (t - 0) * 0.8^3.
  EXPECT_NEAR((*r)[1].flat<float>()[0], 1 - 0.512, 1e-6);
}

TEST(OptimizerTest, SlotsAreColocatedAndInitialized) {
  Quadratic q("/job:localhost/replica:0/task:0/device:CPU:0");
  RMSPropOptimizer rms(0.01);
  auto op = rms.ApplyGradients(q.graph(), {{N(q.grad), N(q.w.ref())}});
  ASSERT_TRUE(op.ok()) << op.status();
  Node* ms = q.graph()->FindNode("w/RMSProp");
  Node* mom = q.graph()->FindNode("w/RMSProp_1");
  ASSERT_NE(ms, nullptr);
  ASSERT_NE(mom, nullptr);
  EXPECT_EQ(ms->requested_device(), q.w.ref().node()->requested_device());
  EXPECT_EQ(mom->requested_device(), q.w.ref().node()->requested_device());
  Node* update = q.graph()->FindNode("RMSProp/update_w/ApplyRMSProp");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->requested_device(), q.w.ref().node()->requested_device());

  ClientSession session(q.root);
  ASSERT_TRUE(session.Run({q.w.initializer()}).ok());
  for (const CreatedVariable& c : rms.TakeCreatedVariables()) ASSERT_TRUE(session.Run({Operation(c.initializer)}).ok());
  auto r = session.Run({Output(ms, 0), Output(mom, 0)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[1 1]");  // TensorFlow starts rms at ones
  EXPECT_EQ((*r)[1].ToString(), "[0 0]");
}

TEST(OptimizerTest, CenteredRMSPropHasTensorFlowsSlots) {
  Quadratic q;
  RMSPropOptimizer rms(0.01, 0.9, 0.0, 1e-10, false, /*centered=*/true);
  auto op = rms.ApplyGradients(q.graph(), {{N(q.grad), N(q.w.ref())}});
  ASSERT_TRUE(op.ok()) << op.status();
  // TensorFlow makes rms, then mg, then momentum: "w/RMSProp", "w/RMSProp_1", "w/RMSProp_2".
  Node* ms = q.graph()->FindNode("w/RMSProp");
  Node* mg = q.graph()->FindNode("w/RMSProp_1");
  Node* mom = q.graph()->FindNode("w/RMSProp_2");
  ASSERT_NE(ms, nullptr);
  ASSERT_NE(mg, nullptr);
  ASSERT_NE(mom, nullptr);
  Node* update = q.graph()->FindNode("RMSProp/update_w/ApplyCenteredRMSProp");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->data_inputs()[1]->src, mg);
  EXPECT_EQ(update->data_inputs()[2]->src, ms);
  EXPECT_EQ(update->data_inputs()[3]->src, mom);

  ClientSession session(q.root);
  ASSERT_TRUE(session.Run({q.w.initializer()}).ok());
  for (const CreatedVariable& c : rms.TakeCreatedVariables()) ASSERT_TRUE(session.Run({Operation(c.initializer)}).ok());
  auto r = session.Run({Output(ms, 0), Output(mg, 0), Output(mom, 0)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[1 1]");
  EXPECT_EQ((*r)[1].ToString(), "[0 0]");
  EXPECT_EQ((*r)[2].ToString(), "[0 0]");
}

TEST(OptimizerTest, VariablesWithoutGradientAreSkipped) {
  Quadratic q;
  Variable other = Variable::Create(q.root.WithOpName("other"), {3}, DT_FLOAT);
  MomentumOptimizer m(0.1, 0.9);
  auto op = m.ApplyGradients(q.graph(), {{N(q.grad), N(q.w.ref())}, {NodeOut{}, N(other.ref())}});
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_NE(q.graph()->FindNode("w/Momentum"), nullptr);
  EXPECT_EQ(q.graph()->FindNode("other/Momentum"), nullptr);

  auto none = m.ApplyGradients(q.graph(), {{NodeOut{}, N(other.ref())}});
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("no gradients provided for any variable: [other]"));
}

TEST(OptimizerTest, ComputeGradientsGivesNullForUnconnectedVariables) {
  Quadratic q;
  Variable other = Variable::Create(q.root.WithOpName("other"), {2}, DT_FLOAT);
  Output loss = ops::Identity(q.root.WithOpName("loss"), ops::Const(q.root, 1.0f));
  GradientDescentOptimizer gd(0.1);
  auto gvs = gd.ComputeGradients(q.graph(), N(loss), {N(other.ref()), N(q.w.read())});
  ASSERT_TRUE(gvs.ok()) << gvs.status();
  ASSERT_EQ(gvs->size(), 2u);
  EXPECT_EQ((*gvs)[0].grad.node, nullptr);
  EXPECT_EQ((*gvs)[0].var.node, other.ref().node());
  // A read() resolves to the variable itself.
  EXPECT_EQ((*gvs)[1].var.node, q.w.ref().node());
  EXPECT_EQ((*gvs)[1].grad.node, nullptr);
}

TEST(OptimizerTest, RejectsBadInput) {
  Quadratic q;
  GradientDescentOptimizer gd(0.1);
  // Not a variable.
  auto r = gd.ApplyGradients(q.graph(), {{N(q.grad), N(q.grad)}});
  EXPECT_THAT(r.status().message(), HasSubstr("is not a variable"));
  // Gradient of the wrong dtype or shape.
  Output dgrad = ops::Const(q.root, {1.0, 2.0});
  r = gd.ApplyGradients(q.graph(), {{N(dgrad), N(q.w.ref())}});
  EXPECT_THAT(r.status().message(), HasSubstr("has type double"));
  Output sgrad = ops::Const(q.root, {1.0f, 2.0f, 3.0f});
  r = gd.ApplyGradients(q.graph(), {{N(sgrad), N(q.w.ref())}});
  EXPECT_THAT(r.status().message(), HasSubstr("does not match variable 'w'"));
  // The same variable twice.
  r = gd.ApplyGradients(q.graph(), {{N(q.grad), N(q.w.ref())}, {N(q.grad), N(q.w.read())}});
  EXPECT_THAT(r.status().message(), HasSubstr("given twice"));
  // An integer variable cannot be trained; a float global_step cannot count.
  Variable i = Variable::Create(q.root.WithOpName("i"), {2}, DT_INT32);
  auto g = gd.ComputeGradients(q.graph(), N(q.grad), {N(i.ref())});
  EXPECT_THAT(g.status().message(), HasSubstr("only float and double variables"));
  Variable fstep = Variable::Create(q.root.WithOpName("fstep"), {}, DT_FLOAT);
  r = gd.ApplyGradients(q.graph(), {{N(q.grad), N(q.w.ref())}}, N(fstep.ref()));
  EXPECT_THAT(r.status().message(), HasSubstr("global_step"));
  // An integer loss.
  g = gd.ComputeGradients(q.graph(), N(ops::Const(q.root, 1)), {N(q.w.ref())});
  EXPECT_THAT(g.status().message(), HasSubstr("must be float or double"));
  // Slots need a fully defined shape.
  Output unknown = ops::VariableV2(q.root.WithOpName("unknown"), PartialTensorShape({-1}), DT_FLOAT);
  AdagradOptimizer ada(0.1);
  r = ada.ApplyGradients(q.graph(), {{N(ops::Identity(q.root, q.grad)), N(unknown)}});
  EXPECT_THAT(r.status().message(), HasSubstr("fully defined shape"));
  // A bad Adagrad accumulator start.
  AdagradOptimizer bad(0.1, 0.0);
  r = bad.ApplyGradients(q.graph(), {{N(q.grad), N(q.w.ref())}});
  EXPECT_THAT(r.status().message(), HasSubstr("initial_accumulator_value"));
  // The exact name is taken.
  r = gd.ApplyGradients(q.graph(), {{N(q.grad), N(q.w.ref())}}, {}, "w");
  EXPECT_THAT(r.status().message(), HasSubstr("already used"));
}

TEST(OptimizerTest, TensorLearningRateIsCastToTheVariableType) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {1}, DT_DOUBLE, init::Ones());
  Output lr = ops::Placeholder(root.WithOpName("lr"), DT_FLOAT, PartialTensorShape({}));
  GradientDescentOptimizer gd(N(lr));
  auto op = gd.ApplyGradients(root.graph(), {{N(ops::Const(root, {1.0})), N(w.ref())}});
  ASSERT_TRUE(op.ok()) << op.status();
  Node* cast = root.graph()->FindNode("GradientDescent/learning_rate_cast");
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(cast->op(), "Cast");
  ClientSession session(root);
  ASSERT_TRUE(session.Run({w.initializer()}).ok());
  ASSERT_TRUE(session.Run({{lr, 0.25f}}, {}, {Operation(*op)}).ok());
  auto r = session.Run({w.read()});
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ((*r)[0].flat<double>()[0], 0.75);
}

// An embedding table [5, 2] looked up at rows {3, 1, 3}; loss = sum(rows * weights).
struct Embedding {
  Scope root = Scope::NewRootScope();
  Variable table;
  Output loss;
  Embedding() {
    table = Variable::Create(root.WithOpName("table"), {5, 2}, DT_FLOAT, init::Ones());
    Output rows = ops::Gather(root, table.read(), ops::Const(root, {3, 1, 3}));
    Output weights = ops::Const(root, {{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}});
    loss = ops::Sum(root, ops::Mul(root, rows, weights), {0, 1});
  }
  std::vector<float> Step(Optimizer* o) {
    auto gvs = o->ComputeGradients(root.graph(), N(loss), {N(table.ref())});
    EXPECT_TRUE(gvs.ok()) << gvs.status();
    auto op = o->ApplyGradients(root.graph(), *gvs);
    EXPECT_TRUE(op.ok()) << op.status();
    ClientSession session(root);
    EXPECT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
    for (const CreatedVariable& c : o->TakeCreatedVariables())
      EXPECT_TRUE(session.Run({Operation(c.initializer)}).ok());
    Status s = session.Run({Operation(*op)});
    EXPECT_TRUE(s.ok()) << s;
    auto r = session.Run({table.read()});
    EXPECT_TRUE(r.ok()) << r.status();
    std::vector<float> v;
    if (r.ok())
      for (float x : (*r)[0].flat<float>()) v.push_back(x);
    return v;
  }
};

TEST(OptimizerTest, GradientDescentUpdatesOnlyTheRowsAnEmbeddingLookedUp) {
  Embedding e;
  GradientDescentOptimizer gd(0.5);
  std::vector<float> table = e.Step(&gd);
  // Row 3 was looked up twice: its gradients add up.
  EXPECT_THAT(table, ::testing::ElementsAre(1, 1, 1 - 0.5f * 3, 1 - 0.5f * 4, 1, 1, 1 - 0.5f * 6, 1 - 0.5f * 8, 1, 1));
  Graph* g = e.root.graph();
  Node* update = g->FindNode("GradientDescent/update_table/ScatterSub");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(g->FindNode("GradientDescent/update_table/ApplyGradientDescent"), nullptr);
  // The table-sized sum is still there for whoever fetches the gradient, but the update does
  // not read it.
  for (const Edge* in : update->data_inputs()) EXPECT_NE(in->src->op(), "UnsortedSegmentSum");
}

TEST(OptimizerTest, MomentumSumsRepeatedRowsThenUpdatesOnlyThoseRows) {
  Embedding e;
  MomentumOptimizer momentum(0.5, 0.9);
  std::vector<float> table = e.Step(&momentum);
  // The first momentum step is a plain gradient step.
  EXPECT_THAT(table, ::testing::ElementsAre(1, 1, 1 - 0.5f * 3, 1 - 0.5f * 4, 1, 1, 1 - 0.5f * 6, 1 - 0.5f * 8, 1, 1));
  Graph* g = e.root.graph();
  EXPECT_NE(g->FindNode("Momentum/update_table/SparseApplyMomentum"), nullptr);
  EXPECT_EQ(g->FindNode("Momentum/update_table/ApplyMomentum"), nullptr);
}

TEST(OptimizerTest, AdamAppliesTheDenseGradientOfAGather) {
  // TensorFlow's sparse Adam decays m and v and moves every row as well: the dense update is the
  // same computation.
  Embedding e;
  AdamOptimizer adam(0.5);
  std::vector<float> table = e.Step(&adam);
  ASSERT_EQ(table.size(), 10u);
  for (int i : {0, 1, 4, 5, 8, 9}) EXPECT_EQ(table[i], 1.0f) << i;
  for (int i : {2, 3, 6, 7}) EXPECT_NEAR(table[i], 0.5f, 1e-5) << i;  // the first step moves by lr
  EXPECT_NE(e.root.graph()->FindNode("Adam/update_table/ApplyAdam"), nullptr);
}

TEST(OptimizerTest, OnlyAGathersGradientIsTakenAsSparse) {
  Embedding e;
  auto gvs = GradientDescentOptimizer(0.5).ComputeGradients(e.root.graph(), N(e.loss), {N(e.table.ref())});
  ASSERT_TRUE(gvs.ok());
  NodeOut values, indices;
  EXPECT_TRUE(SparseGradientOf((*gvs)[0].grad, &values, &indices));
  EXPECT_EQ(indices.node->op(), "Reshape");
  // A hand-built UnsortedSegmentSum is an ordinary dense gradient.
  Output dense = ops::UnsortedSegmentSum(e.root, ops::Const(e.root, {{1.0f, 1.0f}}), ops::Const(e.root, {-1}), 5);
  EXPECT_FALSE(SparseGradientOf(N(dense), &values, &indices));
  // Nor is the sum of two gathers' gradients (a table used twice).
  Output twice = ops::AddN(e.root, {Output((*gvs)[0].grad.node, (*gvs)[0].grad.index), dense});
  EXPECT_FALSE(SparseGradientOf(N(twice), &values, &indices));
}

}  // namespace
}  // namespace dflow::optimizers
