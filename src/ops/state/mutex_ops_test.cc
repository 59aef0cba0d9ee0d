// MutexV2 / MutexLock / ConsumeMutexLock: a critical section across concurrent runs, release
// when the lock tensor dies, sharing by name, cancellation of a waiting lock, bad inputs.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "base/status.h"
#include "dflow/dflow.h"
#include "tensor/resource_handle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

// One increment of every element of `v` inside the critical section of mutex `m`: lock → read →
// +1 → assign, then ConsumeMutexLock after the assign. Returns the op to run.
Operation LockedIncrement(const Scope& root, Output m, Output v) {
  Output lock = ops::MutexLock(root, m);
  Scope in_lock = root.WithControlDependencies({lock.op()});
  Output x = ops::ReadVariableOp(in_lock, v, DT_INT32);
  Operation assign = ops::AssignVariableOp(in_lock, v, x + 1);
  return ops::ConsumeMutexLock(root.WithControlDependencies({assign}), lock);
}

// Two threads, each with its own session of the graph, run the increment 200 times. The
// variable is large so that the read-modify-write takes long enough for unsynchronized runs to
// overlap: with a MutexLock that does not exclude (checked by mutating it) or without the lock,
// increments are lost and the exact count fails.
Status RunTwoIncrementLoops(int32_t* min_value, int32_t* max_value) {
  constexpr int64_t kElements = 1 << 17;
  Scope root = Scope::NewRootScope();
  Output m = ops::Mutex(root.WithOpName("mu"));
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_INT32, PartialTensorShape({kElements}));
  Operation init = ops::AssignVariableOp(root, v, ops::Fill(root, {static_cast<int32_t>(kElements)}, 0));
  Operation step = LockedIncrement(root, m, v);
  Output read = ops::ReadVariableOp(root, v, DT_INT32);
  RETURN_IF_ERROR(root.status());
  ClientSession s1(root), s2(root);  // two sessions of the graph share the mutex and the variable
  RETURN_IF_ERROR(s1.Run({init}));
  auto loop = [&](ClientSession* s) {
    for (int i = 0; i < 200; ++i) RETURN_IF_ERROR(s->Run({step}));
    return absl::OkStatus();
  };
  auto f1 = std::async(std::launch::async, loop, &s1);
  auto f2 = std::async(std::launch::async, loop, &s2);
  if (f1.wait_for(std::chrono::seconds(60)) != std::future_status::ready ||
      f2.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    return errors::DeadlineExceeded("the run loops did not finish");
  }
  RETURN_IF_ERROR(f1.get());
  RETURN_IF_ERROR(f2.get());
  ASSIGN_OR_RETURN(std::vector<Tensor> r, s1.Run({read}));
  auto values = r[0].flat<int32_t>();
  *min_value = *std::min_element(values.begin(), values.end());
  *max_value = *std::max_element(values.begin(), values.end());
  return absl::OkStatus();
}

TEST(MutexTest, TwoConcurrentRunLoopsMakeACriticalSection) {
  int32_t lo = 0, hi = 0;
  ASSERT_TRUE(RunTwoIncrementLoops(&lo, &hi).ok());
  EXPECT_EQ(lo, 400);
  EXPECT_EQ(hi, 400);
}

TEST(MutexTest, TheLockIsReleasedWhenTheFetchedLockTensorDies) {
  Scope root = Scope::NewRootScope();
  Output m = ops::Mutex(root.WithOpName("mu"));
  Output lock = ops::MutexLock(root, m);
  ClientSession session(root);
  std::vector<Tensor> held;
  {
    auto r = session.Run({lock});
    ASSERT_TRUE(r.ok()) << r.status();
    held = std::move(*r);
    EXPECT_EQ(held[0].scalar<ResourceHandle>().type_name, "MutexLock");
  }
  // While the fetched lock lives, another lock waits (here: until its deadline).
  RunOptions opts;
  opts.timeout_in_ms = 100;
  auto blocked = session.Run({}, {lock}, {}, nullptr, opts);
  EXPECT_EQ(blocked.status().code(), absl::StatusCode::kDeadlineExceeded) << blocked.status();
  held.clear();  // releases the mutex
  auto again = session.Run({}, {lock}, {}, nullptr, opts);
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(MutexTest, AWaitingLockIsCancelledWhenTheSessionCloses) {
  Scope root = Scope::NewRootScope();
  Output m = ops::Mutex(root.WithOpName("mu"));
  Output lock = ops::MutexLock(root, m);
  ClientSession holder(root), waiter(root);
  auto r = holder.Run({lock});
  ASSERT_TRUE(r.ok());
  auto f = std::async(std::launch::async, [&] { return waiter.Run({lock}).status(); });
  EXPECT_EQ(f.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);  // it waits
  ASSERT_TRUE(waiter.session()->Close().ok());
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  Status s = f.get();
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
}

TEST(MutexTest, DifferentSharedNamesAreDifferentMutexes) {
  Scope root = Scope::NewRootScope();
  Output a = ops::Mutex(root.WithOpName("a"));
  Output b = ops::Mutex(root.WithOpName("b"));
  Output la = ops::MutexLock(root, a);
  Output lb = ops::MutexLock(root, b);
  ClientSession session(root);
  auto held = session.Run({la});
  ASSERT_TRUE(held.ok());
  RunOptions opts;
  opts.timeout_in_ms = 2000;
  EXPECT_TRUE(session.Run({}, {lb}, {}, nullptr, opts).ok());
}

TEST(MutexTest, ConsumeMutexLockRejectsOtherTensors) {
  Scope root = Scope::NewRootScope();
  Output fake = ops::Placeholder(root, DT_RESOURCE);
  Operation consume = ops::ConsumeMutexLock(root, fake);
  ClientSession session(root);
  auto r = session.Run({{fake, Tensor(ResourceHandle())}}, {}, {consume});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("MutexLock"));
  // A float tensor cannot even be wired to it.
  Scope root2 = Scope::NewRootScope();
  ops::ConsumeMutexLock(root2, ops::Const(root2, 1.0f));
  EXPECT_EQ(root2.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
