// The GraphTest fixture and helpers shared by the graph layer's tests.
#pragma once

#include "graph/graph.h"
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>
#include "framework/device.h"
#include "framework/op_def.h"
#include "framework/shape_inference.h"
#include "graph/placer.h"
#include "graph/subgraph.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"

namespace dflow::graph_testing {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";

inline bool Contains(absl::string_view haystack, absl::string_view needle) {
  return haystack.find(needle) != absl::string_view::npos;
}

template <typename T>
inline Tensor MakeTensor(std::vector<T> v, TensorShape shape) {
  return Tensor::FromValues<T>(absl::MakeConstSpan(v), shape).value();
}

inline void RegisterGraphTestOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterAllOps();
    // An op with no kernel anywhere, and one with a list(type) input and output.
    RegisterOp(
        OpDefBuilder("GraphTestNoKernel").Input("x: T").Output("y: T").Attr("T: type").SetShapeFn(UnchangedShape));
    RegisterOp(OpDefBuilder("GraphTestListIdentity").Input("x: T").Output("y: T").Attr("T: list(type)"));
    RegisterOp(
        OpDefBuilder("GraphTestSum").Input("xs: N * T").Output("y: T").Attr("N: int >= 1").Attr("T: {float, int32}"));
  });
}

class GraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterGraphTestOps();
    for (const char* op : {"Const", "Placeholder", "Identity", "NoOp", "VariableV2", "Assign", "AssignAdd", "AddV2",
                           "Mul", "MatMul", "Reshape", "_Arg", "_Retval"}) {
      ASSERT_NE(OpRegistry::Global()->LookUp(op), nullptr) << "op " << op << " is not registered";
    }
  }

  // Adds a node that must be valid.
  Node* Add(NodeSpec spec) {
    std::string name = spec.name;
    StatusOr<Node*> n = g_.AddNode(std::move(spec));
    EXPECT_TRUE(n.ok()) << name << ": " << n.status();
    return n.ok() ? *n : nullptr;
  }

  Node* Const(const std::string& name, Tensor value) {
    NodeSpec s;
    s.name = name;
    s.op = "Const";
    s.attrs["dtype"] = value.dtype();
    s.attrs["value"] = std::move(value);
    return Add(std::move(s));
  }
  Node* ConstF(const std::string& name, std::vector<float> v, TensorShape shape) {
    return Const(name, MakeTensor<float>(std::move(v), shape));
  }
  Node* Placeholder(const std::string& name, DType dtype, PartialTensorShape shape = PartialTensorShape()) {
    NodeSpec s;
    s.name = name;
    s.op = "Placeholder";
    s.attrs["dtype"] = dtype;
    s.attrs["shape"] = shape;
    return Add(std::move(s));
  }
  static NodeSpec Binary(const std::string& name, const std::string& op, Node* x, Node* y) {
    NodeSpec s;
    s.name = name;
    s.op = op;
    s.inputs = {{x, 0}, {y, 0}};
    return s;
  }
  static NodeSpec Unary(const std::string& name, const std::string& op, Node* x) {
    NodeSpec s;
    s.name = name;
    s.op = op;
    s.inputs = {{x, 0}};
    return s;
  }
  Node* Variable(const std::string& name, DType dtype, PartialTensorShape shape) {
    NodeSpec s;
    s.name = name;
    s.op = "VariableV2";
    s.attrs["dtype"] = dtype;
    s.attrs["shape"] = shape;
    return Add(std::move(s));
  }

  // Expects AddNode to fail with `code`, leave the graph as it was, and mention each of `mentions`.
  void ExpectAddFails(NodeSpec spec, absl::StatusCode code, std::vector<std::string> mentions) {
    const int before = g_.num_nodes();
    const std::string name = spec.name;
    StatusOr<Node*> n = g_.AddNode(std::move(spec));
    ASSERT_FALSE(n.ok()) << "node '" << name << "' was added";
    EXPECT_EQ(n.status().code(), code) << n.status();
    for (const std::string& m : mentions) EXPECT_TRUE(Contains(n.status().message(), m)) << m << " in: " << n.status();
    EXPECT_EQ(g_.num_nodes(), before);
    if (!name.empty() && g_.num_nodes() == before) {
      // A failed add does not take the name (unless it was taken before).
      if (g_.FindNode(name) == nullptr) {
        EXPECT_FALSE(g_.IsNameUsed(name));
      }
    }
  }

  Graph g_;
};

}  // namespace dflow::graph_testing
