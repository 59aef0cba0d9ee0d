// PartitionedCall / StatefulPartitionedCall through a direct session: a call's values, a nested
// call, a function reading a resource variable passed in, an error inside the function (its
// class kept; the function and node named), and a call of a function the library lacks.
#include <mutex>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"
#include "proto/graph.pb.h"
#include "runtime/direct_session.h"
#include "runtime/local_device.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

void RegisterForTest() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterAllOps();
    RegisterDirectSessionFactory();
  });
}

proto::NodeDef* AddNode(google::protobuf::RepeatedPtrField<proto::NodeDef>* nodes, const std::string& name,
                        const std::string& op, std::vector<std::string> inputs) {
  proto::NodeDef* n = nodes->Add();
  n->set_name(name);
  n->set_op(op);
  for (auto& i : inputs) n->add_input(i);
  return n;
}

void SetType(proto::NodeDef* n, const std::string& attr, proto::DataType t) { (*n->mutable_attr())[attr].set_type(t); }

void AddArg(proto::OpDef* sig, const std::string& name, proto::DataType t, bool out) {
  proto::OpDef::ArgDef* a = out ? sig->add_output_arg() : sig->add_input_arg();
  a->set_name(name);
  a->set_type(t);
}

// f(x, y) = x * y + x (float).
proto::FunctionDef MulAdd() {
  proto::FunctionDef f;
  f.mutable_signature()->set_name("mul_add");
  AddArg(f.mutable_signature(), "x", proto::DT_FLOAT, false);
  AddArg(f.mutable_signature(), "y", proto::DT_FLOAT, false);
  AddArg(f.mutable_signature(), "out", proto::DT_FLOAT, true);
  SetType(AddNode(f.mutable_node_def(), "mul", "Mul", {"x", "y"}), "T", proto::DT_FLOAT);
  SetType(AddNode(f.mutable_node_def(), "add", "AddV2", {"mul:z:0", "x"}), "T", proto::DT_FLOAT);
  (*f.mutable_ret())["out"] = "add:z:0";
  return f;
}

proto::NodeDef* AddCall(google::protobuf::RepeatedPtrField<proto::NodeDef>* nodes, const std::string& name,
                        const std::string& op, const std::string& fn, std::vector<std::string> inputs,
                        std::vector<proto::DataType> tin, std::vector<proto::DataType> tout) {
  proto::NodeDef* n = AddNode(nodes, name, op, std::move(inputs));
  auto& attr = *n->mutable_attr();
  attr["f"].mutable_func()->set_name(fn);
  for (auto t : tin) attr["Tin"].mutable_list()->add_type(t);
  for (auto t : tout) attr["Tout"].mutable_list()->add_type(t);
  attr["Tin"].mutable_list();
  attr["Tout"].mutable_list();
  return n;
}

proto::NodeDef* AddPlaceholder(proto::GraphDef* g, const std::string& name, proto::DataType t) {
  proto::NodeDef* n = AddNode(g->mutable_node(), name, "Placeholder", {});
  SetType(n, "dtype", t);
  return n;
}

Tensor Floats(std::vector<float> v) { return Tensor::FromValues<float>(v, TensorShape{int64_t(v.size())}).value(); }

StatusOr<std::vector<Tensor>> RunGraph(const proto::GraphDef& g, std::vector<std::pair<std::string, Tensor>> feeds,
                                       std::vector<std::string> fetches) {
  RegisterForTest();
  auto session = NewDirectSession(SessionOptions(), {LocalCpuDevice()});
  RETURN_IF_ERROR(session->Create(g));
  std::vector<Tensor> out;
  RETURN_IF_ERROR(session->Run(feeds, fetches, {}, &out));
  return out;
}

TEST(CallOpsTest, CallsTheFunction) {
  for (const char* op : {"PartitionedCall", "StatefulPartitionedCall"}) {
    proto::GraphDef g;
    *g.mutable_library()->add_function() = MulAdd();
    AddPlaceholder(&g, "x", proto::DT_FLOAT);
    AddPlaceholder(&g, "y", proto::DT_FLOAT);
    AddCall(g.mutable_node(), "call", op, "mul_add", {"x", "y"}, {proto::DT_FLOAT, proto::DT_FLOAT}, {proto::DT_FLOAT});
    auto out = RunGraph(g, {{"x", Floats({1, 2})}, {"y", Floats({3, 4})}}, {"call:0"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data<float>()[0], 4.0f);
    EXPECT_EQ((*out)[0].data<float>()[1], 10.0f);
  }
}

TEST(CallOpsTest, NestedCall) {
  proto::GraphDef g;
  *g.mutable_library()->add_function() = MulAdd();
  proto::FunctionDef outer;
  outer.mutable_signature()->set_name("outer");
  AddArg(outer.mutable_signature(), "a", proto::DT_FLOAT, false);
  AddArg(outer.mutable_signature(), "r", proto::DT_FLOAT, true);
  AddCall(outer.mutable_node_def(), "inner", "StatefulPartitionedCall", "mul_add", {"a", "a"},
          {proto::DT_FLOAT, proto::DT_FLOAT}, {proto::DT_FLOAT});
  SetType(AddNode(outer.mutable_node_def(), "neg", "Neg", {"inner:output:0"}), "T", proto::DT_FLOAT);
  (*outer.mutable_ret())["r"] = "neg:y:0";
  *g.mutable_library()->add_function() = outer;
  AddPlaceholder(&g, "x", proto::DT_FLOAT);
  AddCall(g.mutable_node(), "call", "PartitionedCall", "outer", {"x"}, {proto::DT_FLOAT}, {proto::DT_FLOAT});
  auto out = RunGraph(g, {{"x", Floats({2, 3})}}, {"call:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[0], -6.0f);   // -(2*2+2)
  EXPECT_EQ((*out)[0].data<float>()[1], -12.0f);  // -(3*3+3)
}

TEST(CallOpsTest, ErrorInsideKeepsItsClassAndNamesFunctionAndNode) {
  proto::GraphDef g;
  proto::FunctionDef f;
  f.mutable_signature()->set_name("bad_reshape");
  AddArg(f.mutable_signature(), "x", proto::DT_FLOAT, false);
  AddArg(f.mutable_signature(), "s", proto::DT_INT32, false);
  AddArg(f.mutable_signature(), "r", proto::DT_FLOAT, true);
  proto::NodeDef* n = AddNode(f.mutable_node_def(), "reshape_here", "Reshape", {"x", "s"});
  SetType(n, "T", proto::DT_FLOAT);
  SetType(n, "Tshape", proto::DT_INT32);
  (*f.mutable_ret())["r"] = "reshape_here:output:0";
  *g.mutable_library()->add_function() = f;
  AddPlaceholder(&g, "x", proto::DT_FLOAT);
  AddPlaceholder(&g, "s", proto::DT_INT32);
  AddCall(g.mutable_node(), "call", "PartitionedCall", "bad_reshape", {"x", "s"}, {proto::DT_FLOAT, proto::DT_INT32},
          {proto::DT_FLOAT});
  Tensor shape = Tensor::FromValues<int32_t>({5}, TensorShape{1}).value();
  auto out = RunGraph(g, {{"x", Floats({1, 2, 3})}, {"s", shape}}, {"call:0"});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("bad_reshape"));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("reshape_here"));
}

TEST(CallOpsTest, MissingFunctionAndWrongTout) {
  proto::GraphDef g;
  *g.mutable_library()->add_function() = MulAdd();
  AddPlaceholder(&g, "x", proto::DT_FLOAT);
  AddCall(g.mutable_node(), "call", "PartitionedCall", "nowhere", {"x"}, {proto::DT_FLOAT}, {proto::DT_FLOAT});
  auto out = RunGraph(g, {{"x", Floats({1})}}, {"call:0"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("nowhere"));

  proto::GraphDef h;
  *h.mutable_library()->add_function() = MulAdd();
  AddPlaceholder(&h, "x", proto::DT_FLOAT);
  AddCall(h.mutable_node(), "call", "PartitionedCall", "mul_add", {"x", "x"}, {proto::DT_FLOAT, proto::DT_FLOAT},
          {proto::DT_INT32});
  out = RunGraph(h, {{"x", Floats({1})}}, {"call:0"});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Tout"));
}

// A function waiting on a queue (its handle passed in) ends with the caller's run: the run's
// deadline cancels the call, and the next run, after an enqueue, gets the element.
TEST(CallOpsTest, CallerCancellationReachesTheFunction) {
  RegisterForTest();
  proto::GraphDef g;
  proto::FunctionDef f;
  f.mutable_signature()->set_name("take");
  AddArg(f.mutable_signature(), "q", proto::DT_RESOURCE, false);
  AddArg(f.mutable_signature(), "r", proto::DT_FLOAT, true);
  proto::NodeDef* deq = AddNode(f.mutable_node_def(), "deq", "QueueDequeueV2", {"q"});
  (*deq->mutable_attr())["component_types"].mutable_list()->add_type(proto::DT_FLOAT);
  (*f.mutable_ret())["r"] = "deq:components:0";
  *g.mutable_library()->add_function() = f;
  proto::NodeDef* q = AddNode(g.mutable_node(), "q", "FIFOQueueV2", {});
  (*q->mutable_attr())["component_types"].mutable_list()->add_type(proto::DT_FLOAT);
  AddPlaceholder(&g, "v", proto::DT_FLOAT);
  proto::NodeDef* enq = AddNode(g.mutable_node(), "enq", "QueueEnqueueV2", {"q", "v"});
  (*enq->mutable_attr())["Tcomponents"].mutable_list()->add_type(proto::DT_FLOAT);
  AddCall(g.mutable_node(), "call", "StatefulPartitionedCall", "take", {"q"}, {proto::DT_RESOURCE}, {proto::DT_FLOAT});
  auto session = NewDirectSession(SessionOptions(), {LocalCpuDevice()});
  ASSERT_TRUE(session->Create(g).ok());
  RunOptions opts;
  opts.timeout_in_ms = 80;
  std::vector<Tensor> out;
  Status s = session->Run(opts, {}, {"call:0"}, {}, &out, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  ASSERT_TRUE(session->Run({{"v", Tensor(5.0f)}}, {}, {"enq"}, &out).ok());
  s = session->Run({}, {"call:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 5.0f);
}

}  // namespace
}  // namespace dflow
