// LocalRendezvous: send before and after receive, deadness, duplicates, abort, callbacks outside
// the lock, and many threads at once.
#include "runtime/local_rendezvous.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "base/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

struct Received {
  Notification done;
  Status status;
  Tensor value;
  bool is_dead = false;
  int calls = 0;
};

Rendezvous::DoneCallback Into(Received* r) {
  return [r](const Status& s, const Tensor& t, bool is_dead) {
    r->status = s;
    r->value = t;
    r->is_dead = is_dead;
    ++r->calls;
    r->done.Notify();
  };
}

// The receiver gets the only reference to a value whose sender let go of it, so that a consumer
// like Assign can adopt the buffer instead of copying it.
TEST(LocalRendezvousTest, TheReceiverTakesOverTheValue) {
  for (bool send_first : {true, false}) {
    LocalRendezvous r;
    bool sole = false, called = false;
    const void* data = nullptr;
    auto recv = [&] {
      r.RecvAsync("k", [&](const Status& s, Tensor t, bool) {
        called = s.ok();
        sole = t.RefCountIsOne();
        data = t.raw_data();
      });
    };
    Tensor value = Tensor::Allocate(DT_FLOAT, TensorShape({1024})).value();
    const void* sent = value.raw_data();
    if (!send_first) recv();
    ASSERT_TRUE(r.Send("k", value, false).ok());
    value = Tensor();
    if (send_first) recv();
    EXPECT_TRUE(called) << send_first;
    EXPECT_EQ(data, sent) << send_first;
    // A receiver that waited is handed the sender's own reference (still held by `value` during
    // Send), so only a receiver that came second can be the sole holder.
    if (send_first) EXPECT_TRUE(sole);
  }
}

TEST(LocalRendezvousTest, SendThenRecv) {
  LocalRendezvous r;
  ASSERT_TRUE(r.Send("k", Tensor(3.0f), false).ok());
  Received got;
  r.RecvAsync("k", Into(&got));
  ASSERT_TRUE(got.done.HasBeenNotified()) << "the value was there: the callback runs at once";
  ASSERT_TRUE(got.status.ok()) << got.status;
  EXPECT_EQ(got.value.scalar<float>(), 3.0f);
  EXPECT_FALSE(got.is_dead);
  EXPECT_EQ(got.calls, 1);
}

TEST(LocalRendezvousTest, RecvThenSend) {
  LocalRendezvous r;
  Received got;
  r.RecvAsync("k", Into(&got));
  EXPECT_FALSE(got.done.HasBeenNotified());
  ASSERT_TRUE(r.Send("k", Tensor(int32_t{7}), false).ok());
  ASSERT_TRUE(got.done.HasBeenNotified());
  ASSERT_TRUE(got.status.ok());
  EXPECT_EQ(got.value.scalar<int32_t>(), 7);
}

TEST(LocalRendezvousTest, KeysAreIndependent) {
  LocalRendezvous r;
  Received a, b;
  r.RecvAsync("a", Into(&a));
  r.RecvAsync("b", Into(&b));
  ASSERT_TRUE(r.Send("b", Tensor(2.0f), false).ok());
  EXPECT_FALSE(a.done.HasBeenNotified());
  ASSERT_TRUE(b.done.HasBeenNotified());
  EXPECT_EQ(b.value.scalar<float>(), 2.0f);
  ASSERT_TRUE(r.Send("a", Tensor(1.0f), false).ok());
  EXPECT_EQ(a.value.scalar<float>(), 1.0f);
}

TEST(LocalRendezvousTest, DeadValuesTravelAsDead) {
  LocalRendezvous r;
  ASSERT_TRUE(r.Send("before", Tensor(), true).ok());
  Received before, after;
  r.RecvAsync("before", Into(&before));
  r.RecvAsync("after", Into(&after));
  ASSERT_TRUE(r.Send("after", Tensor(), true).ok());
  for (Received* got : {&before, &after}) {
    ASSERT_TRUE(got->done.HasBeenNotified());
    EXPECT_TRUE(got->status.ok());
    EXPECT_TRUE(got->is_dead);
  }
}

TEST(LocalRendezvousTest, ASecondSendOfAnUnreceivedKeyIsInvalidArgument) {
  LocalRendezvous r;
  ASSERT_TRUE(r.Send("dup_key", Tensor(1.0f), false).ok());
  Status s = r.Send("dup_key", Tensor(2.0f), false);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("dup_key"));
  Received got;
  r.RecvAsync("dup_key", Into(&got));
  EXPECT_EQ(got.value.scalar<float>(), 1.0f) << "the first value stays";
}

TEST(LocalRendezvousTest, EachValueIsReceivedOnce) {
  LocalRendezvous r;
  ASSERT_TRUE(r.Send("k", Tensor(1.0f), false).ok());
  Received first, second;
  r.RecvAsync("k", Into(&first));
  r.RecvAsync("k", Into(&second));
  EXPECT_TRUE(first.done.HasBeenNotified());
  EXPECT_FALSE(second.done.HasBeenNotified()) << "the value was taken: the second receive waits for another send";
  ASSERT_TRUE(r.Send("k", Tensor(2.0f), false).ok());
  ASSERT_TRUE(second.done.HasBeenNotified());
  EXPECT_EQ(second.value.scalar<float>(), 2.0f);
}

TEST(LocalRendezvousTest, ASecondWaitingReceiveOfAKeyIsInvalidArgument) {
  LocalRendezvous r;
  Received first, second;
  r.RecvAsync("wanted", Into(&first));
  r.RecvAsync("wanted", Into(&second));
  ASSERT_TRUE(second.done.HasBeenNotified());
  EXPECT_EQ(second.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(second.status.message()), HasSubstr("wanted"));
  ASSERT_TRUE(r.Send("wanted", Tensor(1.0f), false).ok());
  ASSERT_TRUE(first.done.HasBeenNotified());
  EXPECT_TRUE(first.status.ok());
  EXPECT_EQ(first.calls, 1);
}

TEST(LocalRendezvousTest, AbortFailsPendingAndFutureReceivesAndSends) {
  LocalRendezvous r;
  Received pending;
  r.RecvAsync("p", Into(&pending));
  ASSERT_TRUE(r.Send("stored", Tensor(1.0f), false).ok());
  r.StartAbort(errors::Unavailable("worker 3 died"));
  ASSERT_TRUE(pending.done.HasBeenNotified());
  EXPECT_EQ(pending.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(pending.status.message()), HasSubstr("worker 3 died"));

  Received later, stored;
  r.RecvAsync("later", Into(&later));
  r.RecvAsync("stored", Into(&stored));  // values sent before the abort are dropped too
  for (Received* got : {&later, &stored}) {
    ASSERT_TRUE(got->done.HasBeenNotified());
    EXPECT_EQ(got->status.code(), absl::StatusCode::kUnavailable);
    EXPECT_EQ(got->calls, 1);
  }
  EXPECT_EQ(r.Send("x", Tensor(1.0f), false).code(), absl::StatusCode::kUnavailable);

  // The first abort wins.
  r.StartAbort(errors::Internal("second"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(pending.calls, 1);
}

TEST(LocalRendezvousTest, AbortWithOkIsAborted) {
  LocalRendezvous r;
  r.StartAbort(absl::OkStatus());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted);
  Received got;
  r.RecvAsync("k", Into(&got));
  EXPECT_EQ(got.status.code(), absl::StatusCode::kAborted);
}

TEST(LocalRendezvousTest, DestructionFailsWaitingReceives) {
  Received got;
  {
    LocalRendezvous r;
    r.RecvAsync("never", Into(&got));
  }
  ASSERT_TRUE(got.done.HasBeenNotified());
  EXPECT_EQ(got.status.code(), absl::StatusCode::kAborted);
}

TEST(LocalRendezvousTest, CallbacksRunOutsideTheLock) {
  // A callback that uses the rendezvous again would deadlock if it ran under the lock.
  LocalRendezvous r;
  Received chained;
  Notification first;
  r.RecvAsync("first", [&](const Status& s, const Tensor& t, bool) {
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(r.Send("second", t, false).ok());
    r.RecvAsync("second", Into(&chained));
    first.Notify();
  });
  ASSERT_TRUE(r.Send("first", Tensor(5.0f), false).ok());
  ASSERT_TRUE(first.HasBeenNotified());
  ASSERT_TRUE(chained.done.HasBeenNotified());
  EXPECT_EQ(chained.value.scalar<float>(), 5.0f);

  // And on abort.
  Received after;
  r.RecvAsync("a", [&](const Status& s, const Tensor&, bool) {
    EXPECT_FALSE(s.ok());
    r.RecvAsync("b", Into(&after));
  });
  r.StartAbort(errors::Cancelled("stop"));
  ASSERT_TRUE(after.done.HasBeenNotified());
  EXPECT_EQ(after.status.code(), absl::StatusCode::kCancelled);
}

TEST(LocalRendezvousTest, ManyThreadsSendAndReceive) {
  constexpr int kThreads = 8;
  constexpr int kKeysPerThread = 500;
  LocalRendezvous r;
  std::atomic<int> received{0}, wrong{0}, failed_sends{0};
  std::vector<std::thread> threads;
  // Half the threads send keys, the other half receive them, in different orders.
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const int owner = t / 2;
      for (int i = 0; i < kKeysPerThread; ++i) {
        int k = (t % 2 == 0) ? i : kKeysPerThread - 1 - i;
        std::string key = absl::StrCat("k", owner, "_", k);
        int32_t want = owner * 100000 + k;
        if (t % 2 == 0) {
          if (!r.Send(key, Tensor(want), false).ok()) failed_sends++;
        } else {
          r.RecvAsync(key, [&, want](const Status& s, const Tensor& v, bool dead) {
            if (!s.ok() || dead || v.scalar<int32_t>() != want) wrong++;
            received++;
          });
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed_sends.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(received.load(), kThreads / 2 * kKeysPerThread);
}

TEST(LocalRendezvousTest, AbortRacingWithSendsAndReceivesCallsEveryCallbackOnce) {
  for (int round = 0; round < 20; ++round) {
    LocalRendezvous r;
    constexpr int kKeys = 200;
    std::vector<std::atomic<int>> calls(kKeys);
    for (auto& c : calls) c.store(0);
    std::thread receiver([&] {
      for (int i = 0; i < kKeys; ++i) {
        r.RecvAsync(absl::StrCat("k", i), [&calls, i](const Status&, const Tensor&, bool) { calls[i]++; });
      }
    });
    std::thread sender([&] {
      for (int i = 0; i < kKeys; ++i) r.Send(absl::StrCat("k", i), Tensor(1.0f), false).IgnoreError();
    });
    std::thread aborter([&] { r.StartAbort(errors::Aborted("stop")); });
    receiver.join();
    sender.join();
    aborter.join();
    for (int i = 0; i < kKeys; ++i) ASSERT_EQ(calls[i].load(), 1) << "key " << i << " in round " << round;
  }
}

}  // namespace
}  // namespace dflow
