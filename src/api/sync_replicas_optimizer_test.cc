// SyncReplicasOptimizer in one process (one replica): values against hand-computed updates, the
// hook's session work, and the errors of a wrong setup. The cluster tests are in
// src/rpc/sync_replicas_test.cc and tests/sync_replicas_process_test.cc.
#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

TEST(SyncReplicasOptimizerTest, OneReplicaAppliesTheWrappedOptimizerOncePerStep) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {2}, DT_FLOAT, init::Constant(1.0));
  Output step = train::CreateGlobalStep(root);
  // d/dw sum(w * [2, -1]) = [2, -1]
  Output loss = ops::Sum(root, w.read() * ops::Const(root, {2.0f, -1.0f}), ops::Const(root, 0));
  train::GradientDescentOptimizer sgd(0.5f);
  train::SyncReplicasOptimizer sync(sgd, 1);
  Operation train_op = sync.Minimize(root, loss, {}, step);
  auto hook = sync.MakeSessionRunHook(root, /*is_chief=*/true);
  Output local_step = sync.local_step();
  Output dropped = sync.NumDroppedGradients(root);
  Output held = ops::AccumulatorNumAccumulated(root, sync.accumulators()[0]);
  Operation init = GlobalVariablesInitializer(root);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession s(root);
  ASSERT_TRUE(s.Run({init}).ok());
  train::Coordinator coord;
  ASSERT_TRUE(hook->AfterCreateSession(&s, &coord).ok());
  for (int i = 0; i < 4; ++i) {
    Status st = s.Run({train_op});
    ASSERT_TRUE(st.ok()) << st;
  }
  ASSERT_TRUE(hook->End(&s).ok());
  auto r = s.Run({w.ref(), step, local_step, dropped, held});
  ASSERT_TRUE(r.ok()) << r.status();
  // The first run takes the initial token (carrying step 0), so its successor's gradient is
  // still tagged step 0 and is stale if the chief applied step 0 first: 3 or 4 steps.
  const int64_t g = (*r)[1].scalar<int64_t>();
  EXPECT_GE(g, 3);
  EXPECT_LE(g, 4);
  // Every applied step moved w by exactly one update: w = 1 - g * 0.5 * [2, -1].
  const float gf = static_cast<float>(g);
  EXPECT_EQ((*r)[0].flat<float>()[0], 1.0f - gf);
  EXPECT_EQ((*r)[0].flat<float>()[1], 1.0f + 0.5f * gf);
  // Every gradient sent was applied, dropped as stale, or is held.
  EXPECT_EQ(g + (*r)[3].scalar<int64_t>() + (*r)[4].scalar<int32_t>(), 4);
  EXPECT_GE((*r)[2].scalar<int64_t>(), g - 1);  // the worker's local step: the last token it took
  EXPECT_TRUE(coord.GetStatus().ok());
  // After End the token queue is closed: a further train op ends with OutOfRange.
  EXPECT_EQ(s.Run({train_op}).code(), absl::StatusCode::kOutOfRange);
}

TEST(SyncReplicasOptimizerTest, AWrongSetupIsAnErrorInTheScope) {
  {
    Scope root = Scope::NewRootScope();
    Variable w = Variable::Create(root.WithOpName("w"), {1}, DT_FLOAT, init::Zeros());
    train::GradientDescentOptimizer sgd(0.1f);
    train::SyncReplicasOptimizer sync(sgd, 2, 3);
    sync.Minimize(root, ops::Sum(root, w.read(), ops::Const(root, 0)), {}, Output());
    EXPECT_THAT(root.status().message(), HasSubstr("needs a global_step"));
  }
  {
    Scope root = Scope::NewRootScope();
    Variable w = Variable::Create(root.WithOpName("w"), {1}, DT_FLOAT, init::Zeros());
    train::GradientDescentOptimizer sgd(0.1f);
    train::SyncReplicasOptimizer sync(sgd, 0);
    sync.Minimize(root, ops::Sum(root, w.read(), ops::Const(root, 0)), {}, train::CreateGlobalStep(root));
    EXPECT_THAT(root.status().message(),
                HasSubstr("replicas_to_aggregate (0) and total_num_replicas (0) must be >= 1"));
  }
  {
    Scope root = Scope::NewRootScope();
    train::GradientDescentOptimizer sgd(0.1f);
    train::SyncReplicasOptimizer sync(sgd, 2);
    sync.GetInitTokensOp(root);
    EXPECT_THAT(root.status().message(), HasSubstr("must be called after ApplyGradients"));
  }
  {
    // 4 replicas to aggregate from 2 workers: the first step needs 2 tokens beyond the workers.
    Scope root = Scope::NewRootScope();
    Variable w = Variable::Create(root.WithOpName("w"), {1}, DT_FLOAT, init::Zeros());
    train::GradientDescentOptimizer sgd(0.1f);
    train::SyncReplicasOptimizer sync(sgd, 4, 2);
    sync.Minimize(root, ops::Sum(root, w.read(), ops::Const(root, 0)), {}, train::CreateGlobalStep(root));
    ASSERT_TRUE(root.ok()) << root.status();
    sync.GetInitTokensOp(root, 1);
    EXPECT_THAT(root.status().message(), HasSubstr("Too few tokens to finish the first step: 1 (given) vs 2 (needed)"));
  }
}

}  // namespace
}  // namespace dflow
