// Gradient accumulators: aggregation against hand-computed values, stale gradients dropped and
// counted, blocking takes served by other threads, cancellation and deadlines, and bad input.
// Every wait is bounded.
#include <chrono>
#include <future>

#include "base/status.h"
#include "dflow/dflow.h"
#include "framework/cancellation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

struct Acc {
  Scope root = Scope::NewRootScope();
  Output acc, grad, step, n, num, dropped, take, new_step;
  Operation apply, set_step;
  explicit Acc(const PartialTensorShape& shape = PartialTensorShape({2}),
               const ops::ConditionalAccumulatorAttrs& attrs = {}, DType dtype = DT_FLOAT) {
    acc = ops::ConditionalAccumulator(root.WithOpName("acc"), dtype, shape, attrs);
    grad = ops::Placeholder(root.WithOpName("grad"), dtype);
    step = ops::Placeholder(root.WithOpName("local_step"), DT_INT64);
    n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
    new_step = ops::Placeholder(root.WithOpName("new_step"), DT_INT64);
    apply = ops::AccumulatorApplyGradient(root, acc, step, grad);
    take = ops::AccumulatorTakeGradient(root, acc, n, dtype);
    num = ops::AccumulatorNumAccumulated(root, acc);
    dropped = ops::AccumulatorNumDropped(root, acc);
    set_step = ops::AccumulatorSetGlobalStep(root, acc, new_step);
  }
  Status Apply(ClientSession& s, std::vector<float> g, int64_t local_step) const {
    Tensor t = Tensor::FromValues<float>(g, {static_cast<int64_t>(g.size())}).value();
    return s.Run({{grad, t}, {step, local_step}}, {}, {apply}).status();
  }
  StatusOr<Tensor> Take(ClientSession& s, int32_t count, const RunOptions& o = RunOptions()) const {
    ASSIGN_OR_RETURN(std::vector<Tensor> r, s.Run({{n, count}}, {take}, {}, nullptr, o));
    return r[0];
  }
  int32_t Num(ClientSession& s) const {
    auto r = s.Run({num});
    return r.ok() ? (*r)[0].scalar<int32_t>() : -1;
  }
  int64_t Dropped(ClientSession& s) const {
    auto r = s.Run({dropped});
    return r.ok() ? (*r)[0].scalar<int64_t>() : -1;
  }
};

template <typename T>
bool StillWaiting(std::future<T>& f) {
  return f.wait_for(100ms) == std::future_status::timeout;
}
template <typename T>
bool Finishes(std::future<T>& f) {
  return f.wait_for(20s) == std::future_status::ready;
}

TEST(AccumulatorTest, TakeReturnsTheMeanOfTheGradientsOfTheStep) {
  Acc a;
  ClientSession s(a.root);
  ASSERT_TRUE(a.Apply(s, {1, 2}, 0).ok());
  ASSERT_TRUE(a.Apply(s, {3, 4}, 0).ok());
  ASSERT_TRUE(a.Apply(s, {5, 9}, 7).ok());  // a newer local step counts too
  EXPECT_EQ(a.Num(s), 3);
  auto t = a.Take(s, 3);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "[3 5]");  // (1+3+5)/3, (2+4+9)/3
  EXPECT_EQ(a.Num(s), 0);
  // The next step starts from nothing: a fresh mean, not polluted by the last.
  ASSERT_TRUE(a.Apply(s, {10, 20}, 1).ok());
  auto t2 = a.Take(s, 1);
  ASSERT_TRUE(t2.ok()) << t2.status();
  EXPECT_EQ(t2->ToString(), "[10 20]");
  // The first result was not changed by later accumulation.
  EXPECT_EQ(t->ToString(), "[3 5]");
}

TEST(AccumulatorTest, SumReductionAndDoubles) {
  Acc a(PartialTensorShape({2}), {.reduction_type = "SUM"}, DT_DOUBLE);
  ClientSession s(a.root);
  Tensor g1 = Tensor::FromValues<double>({0.5, 1.5}, {2}).value();
  Tensor g2 = Tensor::FromValues<double>({2.0, -4.0}, {2}).value();
  ASSERT_TRUE(s.Run({{a.grad, g1}, {a.step, int64_t{0}}}, {}, {a.apply}).ok());
  ASSERT_TRUE(s.Run({{a.grad, g2}, {a.step, int64_t{0}}}, {}, {a.apply}).ok());
  auto t = a.Take(s, 2);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_DOUBLE);
  EXPECT_EQ(t->flat<double>()[0], 2.5);
  EXPECT_EQ(t->flat<double>()[1], -2.5);
}

TEST(AccumulatorTest, StaleGradientsAreDroppedAndCounted) {
  Acc a;
  ClientSession s(a.root);
  ASSERT_TRUE(a.Apply(s, {1, 1}, 0).ok());
  ASSERT_TRUE(a.Take(s, 1).ok());               // global step 0 -> 1
  ASSERT_TRUE(a.Apply(s, {100, 100}, 0).ok());  // computed for step 0: stale, not an error
  EXPECT_EQ(a.Num(s), 0);
  EXPECT_EQ(a.Dropped(s), 1);
  ASSERT_TRUE(a.Apply(s, {2, 4}, 1).ok());
  EXPECT_EQ(a.Num(s), 1);
  // SetGlobalStep moves the boundary.
  ASSERT_TRUE(s.Run({{a.new_step, int64_t{5}}}, {}, {a.set_step}).ok());
  ASSERT_TRUE(a.Apply(s, {9, 9}, 4).ok());
  EXPECT_EQ(a.Dropped(s), 2);
  ASSERT_TRUE(a.Apply(s, {4, 6}, 5).ok());
  auto t = a.Take(s, 2);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "[3 5]");  // only the step-1 and step-5 gradients: (2+4)/2, (4+6)/2
  // The take moved the global step to 6: step-5 gradients are stale now.
  ASSERT_TRUE(a.Apply(s, {1, 1}, 5).ok());
  EXPECT_EQ(a.Dropped(s), 3);
  EXPECT_EQ(a.Num(s), 0);
}

TEST(AccumulatorTest, GradientsBeyondMaxGradientsPerStepAreDroppedAndCounted) {
  Acc a(PartialTensorShape({2}), {.max_gradients_per_step = 2});
  ClientSession s(a.root);
  ASSERT_TRUE(a.Apply(s, {1, 2}, 0).ok());
  ASSERT_TRUE(a.Apply(s, {3, 4}, 0).ok());
  ASSERT_TRUE(a.Apply(s, {100, 100}, 0).ok());  // a backup replica's surplus
  EXPECT_EQ(a.Num(s), 2);
  EXPECT_EQ(a.Dropped(s), 1);
  auto t = a.Take(s, 2);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "[2 3]");        // the first two only
  ASSERT_TRUE(a.Apply(s, {5, 5}, 1).ok());  // the next step has room again
  EXPECT_EQ(a.Num(s), 1);
}

TEST(AccumulatorTest, ATakeWaitsForTheGradientsOfOtherThreads) {
  Acc a;
  ClientSession s(a.root);
  auto take = std::async(std::launch::async, [&] { return a.Take(s, 2); });
  ASSERT_TRUE(StillWaiting(take));
  ASSERT_TRUE(a.Apply(s, {2, 0}, 0).ok());
  ASSERT_TRUE(StillWaiting(take));  // one of two
  ASSERT_TRUE(a.Apply(s, {4, 2}, 0).ok());
  ASSERT_TRUE(Finishes(take));
  auto t = take.get();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "[3 1]");
}

TEST(AccumulatorTest, ADeadlineOrACancellationEndsAWaitingTakeAndKeepsTheGradients) {
  Acc a;
  ClientSession s(a.root);
  ASSERT_TRUE(a.Apply(s, {1, 2}, 0).ok());
  RunOptions o;
  o.timeout_in_ms = 100;
  auto t = a.Take(s, 2, o);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kDeadlineExceeded) << t.status();
  EXPECT_EQ(a.Num(s), 1);  // the abandoned take took nothing
  CancellationManager cm;
  RunOptions c;
  c.cancellation = &cm;
  auto take = std::async(std::launch::async, [&] { return a.Take(s, 2, c); });
  ASSERT_TRUE(StillWaiting(take));
  cm.StartCancel();
  ASSERT_TRUE(Finishes(take));
  EXPECT_EQ(take.get().status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(a.Num(s), 1);
  ASSERT_TRUE(a.Apply(s, {3, 4}, 0).ok());
  auto done = a.Take(s, 2);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->ToString(), "[2 3]");
}

TEST(AccumulatorTest, ClosingTheSessionEndsAWaitingTake) {
  Acc a;
  ClientSession s(a.root);
  auto take = std::async(std::launch::async, [&] { return a.Take(s, 1); });
  ASSERT_TRUE(StillWaiting(take));
  ASSERT_TRUE(s.session()->Close().ok());
  ASSERT_TRUE(Finishes(take));
  EXPECT_FALSE(take.get().ok());
}

TEST(AccumulatorTest, AccumulatorsAreSharedByNameAcrossGraphs) {
  ops::ConditionalAccumulatorAttrs attrs{.container = "acc_test", .shared_name = "shared_acc"};
  Acc a(PartialTensorShape({2}), attrs), b(PartialTensorShape({2}), attrs);
  ClientSession sa(a.root), sb(b.root);
  ASSERT_TRUE(a.Apply(sa, {1, 1}, 0).ok());
  ASSERT_TRUE(b.Apply(sb, {3, 5}, 0).ok());
  auto t = a.Take(sa, 2);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "[2 3]");
  // A node that declares the same name with another shape may not share it.
  Acc c(PartialTensorShape({3}), attrs);
  ClientSession sc(c.root);
  EXPECT_THAT(sc.Run({c.num}).status().message(),
              HasSubstr("Shared accumulator 'shared_acc' has shape [2] but requested shape was [3]"));
}

TEST(AccumulatorTest, BadInputIsAnErrorThatSaysWhatIsWrong) {
  Acc a;
  ClientSession s(a.root);
  auto zero = a.Take(s, 0);
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.status().message(), HasSubstr("Argument num_required must be positive, but was 0"));
  Status wrong_shape = a.Apply(s, {1, 2, 3}, 0);
  EXPECT_EQ(wrong_shape.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_shape.message(), HasSubstr("Shape mismatch: expected [2], got [3]"));
  EXPECT_EQ(a.Num(s), 0);
  Status bad_step = s.Run({{a.grad, Tensor::FromValues<float>({1, 2}, {2}).value()},
                           {a.step, Tensor::FromValues<int64_t>({1, 2}, {2}).value()}},
                          {}, {a.apply})
                        .status();
  EXPECT_THAT(bad_step.message(), HasSubstr("local_step must be a int64 scalar"));

  // Gradients of one step must agree in shape when the accumulator's shape is partial.
  Acc p{PartialTensorShape::UnknownRank()};
  ClientSession sp(p.root);
  ASSERT_TRUE(p.Apply(sp, {1, 2}, 0).ok());
  Status mixed = p.Apply(sp, {1, 2, 3}, 0);
  EXPECT_THAT(mixed.message(), HasSubstr("Shape mismatch: expected [2], got [3]"));

  // A double gradient for a float accumulator.
  Scope root = Scope::NewRootScope();
  Output acc = ops::ConditionalAccumulator(root.WithOpName("acc"), DT_FLOAT, PartialTensorShape({1}));
  Operation apply_double = ops::AccumulatorApplyGradient(root, acc, ops::Const(root, int64_t{0}),
                                                         ops::Const(root,
                                                                    Tensor::FromValues<double>({1}, {1}).value()));
  ClientSession sr(root);
  Status dtype = sr.Run({apply_double});
  EXPECT_EQ(dtype.code(), absl::StatusCode::kInvalidArgument) << dtype;
  EXPECT_THAT(dtype.message(), HasSubstr("has dtype float but the op's dtype is double"));

  // Attrs the kernel refuses.
  Scope r2 = Scope::NewRootScope();
  Output bad_reduction = ops::ConditionalAccumulator(r2.WithOpName("r"), DT_FLOAT, PartialTensorShape({1}),
                                                     {.reduction_type = "MAX"});
  ClientSession s2(r2);
  EXPECT_THAT(s2.Run({bad_reduction}).status().message(), HasSubstr("reduction_type 'MAX' is not one of MEAN, SUM"));
  // Only float and double gradients: an int32 accumulator does not build.
  Scope r3 = Scope::NewRootScope();
  ops::ConditionalAccumulator(r3.WithOpName("t"), DT_INT32, PartialTensorShape({1}));
  EXPECT_EQ(r3.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r3.status().message(), HasSubstr("int32"));
}

}  // namespace
}  // namespace dflow
