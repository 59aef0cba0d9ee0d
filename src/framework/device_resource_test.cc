// DeviceName, CancellationManager, ResourceMgr, Var and the common shape functions.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/notification.h"
#include "framework/attr_value.h"
#include "framework/cancellation.h"
#include "framework/device_name.h"
#include "framework/op_def.h"
#include "framework/resource_mgr.h"
#include "framework/shape_inference.h"
#include "framework/variable.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

bool Contains(absl::string_view haystack, absl::string_view needle) {
  return haystack.find(needle) != absl::string_view::npos;
}

template <typename T>
Tensor Vec(std::vector<T> v) {
  return Tensor::FromValues<T>(absl::MakeConstSpan(v), TensorShape{static_cast<int64_t>(v.size())}).value();
}

// ---- DeviceName ----

DeviceName MustParse(absl::string_view s) {
  StatusOr<DeviceName> d = DeviceName::Parse(s);
  EXPECT_TRUE(d.ok()) << s << ": " << d.status();
  return d.ok() ? *d : DeviceName();
}

TEST(DeviceNameTest, ParseFullName) {
  DeviceName d = MustParse("/job:ps/replica:0/task:0/device:CPU:0");
  EXPECT_TRUE(d.has_job);
  EXPECT_EQ(d.job, "ps");
  EXPECT_TRUE(d.has_replica);
  EXPECT_EQ(d.replica, 0);
  EXPECT_TRUE(d.has_task);
  EXPECT_EQ(d.task, 0);
  EXPECT_TRUE(d.has_type);
  EXPECT_EQ(d.type, "CPU");
  EXPECT_TRUE(d.has_id);
  EXPECT_EQ(d.id, 0);
  EXPECT_TRUE(d.IsFullySpecified());
  EXPECT_EQ(d.ToString(), "/job:ps/replica:0/task:0/device:CPU:0");

  DeviceName w = MustParse("/job:worker/replica:2/task:13/device:GPU:7");
  EXPECT_EQ(w.job, "worker");
  EXPECT_EQ(w.replica, 2);
  EXPECT_EQ(w.task, 13);
  EXPECT_EQ(w.type, "GPU");
  EXPECT_EQ(w.id, 7);
  EXPECT_EQ(w.ToString(), "/job:worker/replica:2/task:13/device:GPU:7");
}

TEST(DeviceNameTest, ParsePartialNames) {
  DeviceName a = MustParse("/job:ps/task:1");
  EXPECT_TRUE(a.has_job);
  EXPECT_EQ(a.job, "ps");
  EXPECT_FALSE(a.has_replica);
  EXPECT_TRUE(a.has_task);
  EXPECT_EQ(a.task, 1);
  EXPECT_FALSE(a.has_type);
  EXPECT_FALSE(a.has_id);
  EXPECT_FALSE(a.IsFullySpecified());
  EXPECT_EQ(a.ToString(), "/job:ps/task:1");

  DeviceName cpu = MustParse("/cpu:0");
  EXPECT_FALSE(cpu.has_job);
  EXPECT_TRUE(cpu.has_type);
  EXPECT_EQ(cpu.type, "CPU");
  EXPECT_TRUE(cpu.has_id);
  EXPECT_EQ(cpu.id, 0);
  EXPECT_EQ(cpu.ToString(), "/device:CPU:0");

  DeviceName gpu = MustParse("/GPU:1");
  EXPECT_EQ(gpu.type, "GPU");
  EXPECT_EQ(gpu.id, 1);

  DeviceName any_cpu = MustParse("/device:CPU:*");
  EXPECT_TRUE(any_cpu.has_type);
  EXPECT_EQ(any_cpu.type, "CPU");
  EXPECT_FALSE(any_cpu.has_id);
  EXPECT_EQ(any_cpu.ToString(), "/device:CPU:*");

  DeviceName lower = MustParse("/device:cpu:3");
  EXPECT_EQ(lower.type, "CPU");
  EXPECT_EQ(lower.id, 3);

  DeviceName type_only = MustParse("/device:CPU");
  EXPECT_TRUE(type_only.has_type);
  EXPECT_FALSE(type_only.has_id);

  DeviceName star_job = MustParse("/job:*/task:2");
  EXPECT_FALSE(star_job.has_job);
  EXPECT_TRUE(star_job.has_task);

  DeviceName empty = MustParse("");
  EXPECT_FALSE(empty.has_job || empty.has_replica || empty.has_task || empty.has_type || empty.has_id);
  EXPECT_EQ(empty.ToString(), "");
}

TEST(DeviceNameTest, BadNamesAreInvalidArgument) {
  for (const char* bad : {"job:ps", "/job:ps/task:x", "/job:ps/", "//job:ps", "/job:", "/foo:1", "/task:-1",
                          "/replica:1.5", "/device:CPU:abc", "/job:ps:extra", "/cpu:x", "/cpu",
                          "/task:", "/device:CPU:0:1", "cpu:0", "/", "/device:", "/device::0"}) {
    StatusOr<DeviceName> d = DeviceName::Parse(bad);
    EXPECT_FALSE(d.ok()) << "'" << bad << "' parsed as '" << (d.ok() ? d->ToString() : "") << "'";
    if (d.ok()) continue;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(Contains(d.status().message(), bad)) << d.status();
  }
}

TEST(DeviceNameTest, FullName) {
  EXPECT_EQ(DeviceName::FullName("ps", 0, 1, "CPU", 2), "/job:ps/replica:0/task:1/device:CPU:2");
  EXPECT_TRUE(MustParse(DeviceName::FullName("localhost", 0, 0, "CPU", 0)).IsFullySpecified());
}

TEST(DeviceNameTest, Matches) {
  DeviceName full = MustParse("/job:ps/replica:0/task:0/device:CPU:0");
  EXPECT_TRUE(full.Matches(MustParse("")));
  EXPECT_TRUE(full.Matches(MustParse("/job:ps")));
  EXPECT_TRUE(full.Matches(MustParse("/job:ps/task:0")));
  EXPECT_TRUE(full.Matches(MustParse("/cpu:0")));
  EXPECT_TRUE(full.Matches(MustParse("/device:CPU:*")));
  EXPECT_TRUE(full.Matches(MustParse("/job:*/device:CPU:0")));
  EXPECT_TRUE(full.Matches(full));
  EXPECT_FALSE(full.Matches(MustParse("/job:worker")));
  EXPECT_FALSE(full.Matches(MustParse("/job:ps/task:1")));
  EXPECT_FALSE(full.Matches(MustParse("/replica:1")));
  EXPECT_FALSE(full.Matches(MustParse("/gpu:0")));
  EXPECT_FALSE(full.Matches(MustParse("/cpu:1")));
  // A partial name does not match a spec that sets a field it lacks.
  EXPECT_FALSE(MustParse("/job:ps").Matches(MustParse("/job:ps/task:0")));
  EXPECT_TRUE(MustParse("/job:ps/task:0").Matches(MustParse("/job:ps")));
}

TEST(DeviceNameTest, MergeFrom) {
  DeviceName a = MustParse("/job:ps");
  ASSERT_TRUE(a.MergeFrom(MustParse("/task:1/device:CPU:0")).ok());
  EXPECT_EQ(a.ToString(), "/job:ps/task:1/device:CPU:0");
  ASSERT_TRUE(a.MergeFrom(MustParse("/job:ps/replica:3")).ok());  // equal fields are fine
  EXPECT_EQ(a.ToString(), "/job:ps/replica:3/task:1/device:CPU:0");
  EXPECT_TRUE(a.IsFullySpecified());
  ASSERT_TRUE(a.MergeFrom(MustParse("")).ok());
  EXPECT_EQ(a.ToString(), "/job:ps/replica:3/task:1/device:CPU:0");

  DeviceName b = MustParse("/job:ps/task:0");
  Status job = b.MergeFrom(MustParse("/job:worker"));
  EXPECT_EQ(job.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(job.message(), "ps")) << job;
  EXPECT_TRUE(Contains(job.message(), "worker")) << job;

  DeviceName c = MustParse("/job:ps/task:0");
  EXPECT_EQ(c.MergeFrom(MustParse("/task:1")).code(), absl::StatusCode::kInvalidArgument);
  DeviceName d = MustParse("/cpu:0");
  EXPECT_EQ(d.MergeFrom(MustParse("/gpu:0")).code(), absl::StatusCode::kInvalidArgument);
  DeviceName e = MustParse("/cpu:0");
  EXPECT_EQ(e.MergeFrom(MustParse("/cpu:1")).code(), absl::StatusCode::kInvalidArgument);
  DeviceName f = MustParse("/replica:0");
  EXPECT_EQ(f.MergeFrom(MustParse("/replica:1")).code(), absl::StatusCode::kInvalidArgument);

  DeviceName g = MustParse("/device:CPU:*");
  ASSERT_TRUE(g.MergeFrom(MustParse("/cpu:2")).ok());
  EXPECT_EQ(g.ToString(), "/device:CPU:2");
}

TEST(DeviceNameTest, ToStringRoundTrips) {
  for (const char* s : {"/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/task:1", "/device:CPU:0", "/device:CPU:*",
                        "/job:a/replica:1", "/task:3/device:GPU:2"}) {
    DeviceName d = MustParse(s);
    EXPECT_EQ(d.ToString(), s);
    DeviceName back = MustParse(d.ToString());
    EXPECT_TRUE(back.Matches(d) && d.Matches(back)) << s;
  }
}

// ---- CancellationManager ----

TEST(CancellationTest, CallbacksRunOnceOnStartCancel) {
  CancellationManager cm;
  EXPECT_FALSE(cm.IsCancelled());
  int calls[3] = {0, 0, 0};
  std::vector<CancellationManager::Token> tokens;
  for (int i = 0; i < 3; ++i) {
    CancellationManager::Token t = cm.NewToken();
    tokens.push_back(t);
    ASSERT_TRUE(cm.RegisterCallback(t, [&calls, i] { ++calls[i]; }));
  }
  EXPECT_NE(tokens[0], tokens[1]);
  EXPECT_NE(tokens[1], tokens[2]);
  EXPECT_EQ(calls[0] + calls[1] + calls[2], 0);
  cm.StartCancel();
  EXPECT_TRUE(cm.IsCancelled());
  EXPECT_EQ(calls[0], 1);
  EXPECT_EQ(calls[1], 1);
  EXPECT_EQ(calls[2], 1);
  cm.StartCancel();  // a second cancel runs nothing again
  EXPECT_EQ(calls[0], 1);
  EXPECT_EQ(calls[1], 1);
  EXPECT_EQ(calls[2], 1);
  // After cancellation the callbacks are gone: deregistering reports that they ran.
  EXPECT_FALSE(cm.DeregisterCallback(tokens[0]));
}

TEST(CancellationTest, RegisterAfterCancelFails) {
  CancellationManager cm;
  cm.StartCancel();
  bool ran = false;
  EXPECT_FALSE(cm.RegisterCallback(cm.NewToken(), [&ran] { ran = true; }));
  cm.StartCancel();
  EXPECT_FALSE(ran);
}

TEST(CancellationTest, DeregisterBeforeCancel) {
  CancellationManager cm;
  bool ran = false, other_ran = false;
  CancellationManager::Token t = cm.NewToken();
  CancellationManager::Token u = cm.NewToken();
  ASSERT_TRUE(cm.RegisterCallback(t, [&ran] { ran = true; }));
  ASSERT_TRUE(cm.RegisterCallback(u, [&other_ran] { other_ran = true; }));
  EXPECT_TRUE(cm.DeregisterCallback(t));
  EXPECT_FALSE(cm.DeregisterCallback(t));  // already removed
  cm.StartCancel();
  EXPECT_FALSE(ran);
  EXPECT_TRUE(other_ran);
}

TEST(CancellationTest, DeregisterUnknownToken) {
  CancellationManager cm;
  EXPECT_FALSE(cm.DeregisterCallback(cm.NewToken()));
}

TEST(CancellationTest, DeregisterInsideCallbackDoesNotDeadlock) {
  CancellationManager cm;
  CancellationManager::Token t = cm.NewToken();
  std::atomic<int> result{-1};
  ASSERT_TRUE(cm.RegisterCallback(t, [&] { result = cm.DeregisterCallback(t) ? 1 : 0; }));
  cm.StartCancel();
  EXPECT_EQ(result.load(), 0);
}

TEST(CancellationTest, DeregisterWaitsForRunningCallback) {
  CancellationManager cm;
  CancellationManager::Token t = cm.NewToken();
  Notification started;
  std::atomic<bool> finished{false};
  ASSERT_TRUE(cm.RegisterCallback(t, [&] {
    started.Notify();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    finished = true;
  }));
  std::thread canceller([&cm] { cm.StartCancel(); });
  ASSERT_TRUE(started.WaitFor(std::chrono::seconds(30)));
  EXPECT_FALSE(cm.DeregisterCallback(t));
  // Deregister returned only after the callback did, so what it uses may now be freed.
  EXPECT_TRUE(finished.load());
  canceller.join();
}

// ---- ResourceMgr ----

class Counter : public ResourceBase {
 public:
  explicit Counter(int v = 0) : value(v) {}
  std::string DebugString() const override { return absl::StrCat("Counter(", value, ")"); }
  int value;
};

class Other : public ResourceBase {
 public:
  std::string DebugString() const override { return "Other"; }
};

std::function<StatusOr<std::shared_ptr<Counter>>()> MakeCounter(std::atomic<int>* created, int value = 0) {
  return [created, value]() -> StatusOr<std::shared_ptr<Counter>> {
    created->fetch_add(1);
    return std::make_shared<Counter>(value);
  };
}

TEST(ResourceMgrTest, LookupOrCreateCreatesOnceAcrossRacingThreads) {
  ResourceMgr rm;
  std::atomic<int> created{0};
  std::atomic<bool> go{false};
  constexpr int kThreads = 4;
  std::vector<std::shared_ptr<Counter>> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      for (int k = 0; k < 100; ++k) {
        StatusOr<std::shared_ptr<Counter>> r = rm.LookupOrCreate<Counter>("c", "shared", MakeCounter(&created));
        if (!r.ok()) return;
        if (k == 0) got[i] = *r;
        if (*r != got[i]) got[i] = nullptr;  // every call must give the same resource
      }
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 1);
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_NE(got[i], nullptr) << i;
    EXPECT_EQ(got[i], got[0]);
  }
  StatusOr<std::shared_ptr<Counter>> looked = rm.Lookup<Counter>("c", "shared");
  ASSERT_TRUE(looked.ok()) << looked.status();
  EXPECT_EQ(*looked, got[0]);
}

TEST(ResourceMgrTest, LookupMissingIsNotFound) {
  ResourceMgr rm;
  StatusOr<std::shared_ptr<Counter>> r = rm.Lookup<Counter>("c", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(r.status().message(), "x")) << r.status();

  std::atomic<int> created{0};
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("c", "x", MakeCounter(&created)).ok());
  // Same name in another container is another resource.
  EXPECT_EQ(rm.Lookup<Counter>("d", "x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rm.Lookup<Counter>("c", "y").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rm.Lookup<Counter>(ResourceMgr::kDefaultContainer, "x").status().code(), absl::StatusCode::kNotFound);
}

TEST(ResourceMgrTest, WrongTypeIsInvalidArgument) {
  ResourceMgr rm;
  std::atomic<int> created{0};
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("c", "x", MakeCounter(&created, 5)).ok());
  StatusOr<std::shared_ptr<Other>> r = rm.Lookup<Other>("c", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), "Counter(5)")) << r.status();

  bool other_created = false;
  StatusOr<std::shared_ptr<Other>> r2 = rm.LookupOrCreate<Other>("c", "x", [&]() -> StatusOr<std::shared_ptr<Other>> {
    other_created = true;
    return std::make_shared<Other>();
  });
  EXPECT_EQ(r2.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(other_created);
  // The original is still there.
  StatusOr<std::shared_ptr<Counter>> c = rm.Lookup<Counter>("c", "x");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->value, 5);
}

TEST(ResourceMgrTest, FailedCreateStoresNothing) {
  ResourceMgr rm;
  StatusOr<std::shared_ptr<Counter>> r = rm.LookupOrCreate<Counter>("c", "x",
                                                                    []() -> StatusOr<std::shared_ptr<Counter>> {
                                                                      return errors::ResourceExhausted("no room");
                                                                    });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(rm.Lookup<Counter>("c", "x").status().code(), absl::StatusCode::kNotFound);
  std::atomic<int> created{0};
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("c", "x", MakeCounter(&created)).ok());
  EXPECT_EQ(created.load(), 1);
}

TEST(ResourceMgrTest, CleanupRemovesOnlyThatContainer) {
  ResourceMgr rm;
  std::atomic<int> created{0};
  std::shared_ptr<Counter> held = rm.LookupOrCreate<Counter>("a", "x", MakeCounter(&created, 1)).value();
  std::weak_ptr<Counter> weak_ay = rm.LookupOrCreate<Counter>("a", "y", MakeCounter(&created, 2)).value();
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("b", "x", MakeCounter(&created, 3)).ok());
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("", "x", MakeCounter(&created, 4)).ok());
  EXPECT_EQ(rm.Containers(), (std::vector<std::string>{"", "a", "b"}));

  rm.Cleanup("a");
  EXPECT_EQ(rm.Lookup<Counter>("a", "x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rm.Lookup<Counter>("a", "y").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(rm.Lookup<Counter>("b", "x").ok());
  EXPECT_TRUE(rm.Lookup<Counter>("", "x").ok());
  EXPECT_EQ(rm.Containers(), (std::vector<std::string>{"", "b"}));
  // A user still holding a resource keeps it alive; nobody held a/y.
  EXPECT_EQ(held->value, 1);
  EXPECT_TRUE(weak_ay.expired());

  rm.Cleanup("nonexistent");
  EXPECT_EQ(rm.Containers(), (std::vector<std::string>{"", "b"}));

  // A new resource of the same name can be created after cleanup.
  std::shared_ptr<Counter> fresh = rm.LookupOrCreate<Counter>("a", "x", MakeCounter(&created, 9)).value();
  EXPECT_NE(fresh, held);
  EXPECT_EQ(fresh->value, 9);
}

TEST(ResourceMgrTest, Delete) {
  ResourceMgr rm;
  std::atomic<int> created{0};
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("c", "x", MakeCounter(&created)).ok());
  EXPECT_TRUE(rm.Delete("c", "x").ok());
  EXPECT_EQ(rm.Lookup<Counter>("c", "x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rm.Delete("c", "x").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(rm.Containers().empty());
}

TEST(VarTest, ReadBeforeAndAfterAssignment) {
  ResourceMgr rm;
  std::shared_ptr<Var> v = rm.LookupOrCreate<Var>("", "weights", []() -> StatusOr<std::shared_ptr<Var>> {
                               return std::make_shared<Var>("weights", DT_FLOAT, PartialTensorShape{2, -1});
                             }).value();
  EXPECT_EQ(v->name(), "weights");
  EXPECT_EQ(v->dtype(), DT_FLOAT);
  EXPECT_EQ(v->declared_shape(), (PartialTensorShape{2, -1}));
  StatusOr<Tensor> before = v->Read();
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(before.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(before.status().message(), "weights")) << before.status();
  EXPECT_TRUE(Contains(v->DebugString(), "weights"));

  {
    std::lock_guard<std::mutex> l(*v->mu());
    EXPECT_FALSE(v->is_initialized_locked());
    *v->tensor() = Vec<float>({1, 2});
    EXPECT_TRUE(v->is_initialized_locked());
  }
  StatusOr<Tensor> after = v->Read();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->flat<float>()[1], 2.0f);
  // A read is a snapshot that shares the buffer, so a writer must copy before writing.
  std::lock_guard<std::mutex> l(*v->mu());
  EXPECT_TRUE(after->SharesBufferWith(*v->tensor()));
  EXPECT_FALSE(v->tensor()->RefCountIsOne());
}

// ---- Shape functions ----

PartialTensorShape Broadcast(const PartialTensorShape& a, const PartialTensorShape& b) {
  StatusOr<PartialTensorShape> r = BroadcastShapes(a, b);
  EXPECT_TRUE(r.ok()) << a.DebugString() << " + " << b.DebugString() << ": " << r.status();
  // Broadcasting is symmetric.
  StatusOr<PartialTensorShape> s = BroadcastShapes(b, a);
  EXPECT_TRUE(s.ok());
  if (r.ok() && s.ok()) EXPECT_EQ(r->DebugString(), s->DebugString());
  return r.ok() ? *r : PartialTensorShape();
}

TEST(BroadcastShapesTest, Cases) {
  EXPECT_EQ(Broadcast({2, 3}, {3}).DebugString(), "[2,3]");
  EXPECT_EQ(Broadcast({2, 1}, {1, 3}).DebugString(), "[2,3]");
  EXPECT_EQ(Broadcast({-1, 3}, {3}).DebugString(), "[?,3]");
  EXPECT_EQ(Broadcast({2, 3}, {4, 2, 1}).DebugString(), "[4,2,3]");
  EXPECT_EQ(Broadcast(PartialTensorShape::Scalar(), {2, 2}).DebugString(), "[2,2]");
  EXPECT_EQ(Broadcast(PartialTensorShape::Scalar(), PartialTensorShape::Scalar()).DebugString(), "[]");
  EXPECT_EQ(Broadcast({-1}, {1}).DebugString(), "[?]");
  EXPECT_EQ(Broadcast({-1}, {-1}).DebugString(), "[?]");
  EXPECT_EQ(Broadcast({-1}, {5}).DebugString(), "[5]");
  EXPECT_EQ(Broadcast({0}, {1}).DebugString(), "[0]");
  EXPECT_EQ(Broadcast({0, 3}, {3}).DebugString(), "[0,3]");
}

TEST(BroadcastShapesTest, UnknownRankGivesUnknownRank) {
  EXPECT_TRUE(Broadcast(PartialTensorShape(), {2, 3}).unknown_rank());
  EXPECT_TRUE(Broadcast(PartialTensorShape(), PartialTensorShape()).unknown_rank());
}

TEST(BroadcastShapesTest, IncompatibleShapes) {
  StatusOr<PartialTensorShape> r = BroadcastShapes(PartialTensorShape{2}, PartialTensorShape{3});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), "[2]")) << r.status();
  EXPECT_TRUE(Contains(r.status().message(), "[3]")) << r.status();
  EXPECT_FALSE(BroadcastShapes(PartialTensorShape{2, 3}, PartialTensorShape{3, 2}).ok());
  EXPECT_FALSE(BroadcastShapes(PartialTensorShape{0}, PartialTensorShape{3}).ok());
  EXPECT_FALSE(BroadcastShapes(PartialTensorShape{-1, 2}, PartialTensorShape{4}).ok());
}

NodeProperties TestProps(int num_outputs) {
  NodeProperties p;
  p.name = "n";
  p.op = "FwTestShapeOp";
  p.output_types.assign(num_outputs, DT_FLOAT);
  p.attrs["k"] = 4;
  return p;
}

TEST(InferenceContextTest, BasicsAndCommonShapeFunctions) {
  NodeProperties props = TestProps(2);
  props.input_types = {DT_FLOAT, DT_FLOAT};
  InferenceContext c(&props, {PartialTensorShape{2, 3}, PartialTensorShape{3}}, {});
  EXPECT_EQ(c.num_inputs(), 2);
  EXPECT_EQ(c.num_outputs(), 2);
  EXPECT_EQ(c.input(0).DebugString(), "[2,3]");
  EXPECT_EQ(c.input_tensor(0), nullptr);  // missing values are filled with nullptr
  EXPECT_EQ(c.input_tensor(1), nullptr);
  EXPECT_EQ(c.input_type(1), DT_FLOAT);
  int64_t k = 0;
  ASSERT_TRUE(c.GetAttr("k", &k).ok());
  EXPECT_EQ(k, 4);
  EXPECT_EQ(c.node().name, "n");

  ASSERT_TRUE(UnchangedShape(&c).ok());
  EXPECT_EQ(c.output(0).DebugString(), "[2,3]");
  ASSERT_TRUE(BroadcastBinaryShape(&c).ok());
  EXPECT_EQ(c.output(0).DebugString(), "[2,3]");
  ASSERT_TRUE(ScalarShape(&c).ok());
  EXPECT_EQ(c.output(0).DebugString(), "[]");
  EXPECT_EQ(c.output(1).DebugString(), "[]");
  ASSERT_TRUE(UnknownShape(&c).ok());
  EXPECT_TRUE(c.output(0).unknown_rank());
  EXPECT_TRUE(c.output(1).unknown_rank());
  EXPECT_TRUE(NoOutputs(&c).ok());
  std::vector<PartialTensorShape> outs = c.TakeOutputs();
  EXPECT_EQ(outs.size(), 2u);
}

TEST(InferenceContextTest, BroadcastBinaryShapeError) {
  NodeProperties props = TestProps(1);
  InferenceContext c(&props, {PartialTensorShape{2}, PartialTensorShape{3}}, {});
  EXPECT_EQ(BroadcastBinaryShape(&c).code(), absl::StatusCode::kInvalidArgument);
}

TEST(InferenceContextTest, WithRank) {
  NodeProperties props = TestProps(1);
  InferenceContext c(&props, {}, {});
  PartialTensorShape out;
  ASSERT_TRUE(c.WithRank(PartialTensorShape{2, 3}, 2, &out).ok());
  EXPECT_EQ(out.DebugString(), "[2,3]");
  ASSERT_TRUE(c.WithRank(PartialTensorShape(), 3, &out).ok());
  EXPECT_EQ(out.DebugString(), "[?,?,?]");
  Status bad = c.WithRank(PartialTensorShape{2, 3}, 1, &out);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(bad.message(), "rank 1")) << bad;
}

TEST(InferenceContextTest, ShapeFromShapeTensor) {
  NodeProperties props = TestProps(1);
  Tensor known32 = Vec<int32_t>({2, -1, 4});
  Tensor known64 = Vec<int64_t>({5});
  Tensor matrix = Vec<int32_t>({1, 2, 3, 4}).Reshaped(TensorShape{2, 2}).value();
  Tensor floats = Vec<float>({1, 2});
  Tensor negative = Vec<int32_t>({2, -7});
  InferenceContext c(&props,
                     {PartialTensorShape{3}, PartialTensorShape{1}, PartialTensorShape{3}, PartialTensorShape(),
                      PartialTensorShape{2, 2}, PartialTensorShape{2}, PartialTensorShape{2}},
                     {&known32, &known64, nullptr, nullptr, &matrix, &floats, &negative});
  PartialTensorShape out;
  ASSERT_TRUE(c.ShapeFromShapeTensor(0, &out).ok());
  EXPECT_EQ(out.DebugString(), "[2,?,4]");
  ASSERT_TRUE(c.ShapeFromShapeTensor(1, &out).ok());
  EXPECT_EQ(out.DebugString(), "[5]");
  ASSERT_TRUE(c.ShapeFromShapeTensor(2, &out).ok());  // value unknown, length known
  EXPECT_EQ(out.DebugString(), "[?,?,?]");
  ASSERT_TRUE(c.ShapeFromShapeTensor(3, &out).ok());  // nothing known
  EXPECT_TRUE(out.unknown_rank());
  EXPECT_EQ(c.ShapeFromShapeTensor(4, &out).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.ShapeFromShapeTensor(5, &out).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.ShapeFromShapeTensor(6, &out).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
