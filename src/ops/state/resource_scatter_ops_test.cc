// ResourceScatterUpdate/Add/Sub: rows written, added, subtracted (repeated indices in turn), a
// scalar update, bad indices leaving the variable unchanged, a never-assigned variable.
#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

TEST(ResourceScatterTest, UpdateAddSub) {
  for (const char* op : {"ResourceScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub"}) {
    SCOPED_TRACE(op);
    Scope root = Scope::NewRootScope();
    Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialTensorShape({3, 2}));
    Operation init = ops::AssignVariableOp(root, v, ops::Const(root, {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}));
    Operation scatter = ops::BuildOp(root, op,
                                     {v, ops::Const(root, {2, 0, 2}),
                                      ops::Const(root, {{10.f, 20.f}, {30.f, 40.f}, {50.f, 60.f}})});
    Operation bad = ops::BuildOp(root, op, {v, ops::Const(root, {0, 3}), ops::Const(root, {{1.f, 1.f}, {1.f, 1.f}})});
    Output read = ops::ReadVariableOp(root, v, DT_FLOAT);
    ASSERT_TRUE(root.ok()) << root.status();
    ClientSession session(root);
    ASSERT_TRUE(session.Run({init}).ok());
    ASSERT_TRUE(session.Run(std::vector<Operation>{scatter}).ok());
    Status s = session.Run(std::vector<Operation>{bad});
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_THAT(s.message(), HasSubstr("indices[1] = 3 is not in [0, 3)"));
    auto r = session.Run({read});
    ASSERT_TRUE(r.ok()) << r.status();
    const std::string want = std::string(op) == "ResourceScatterUpdate" ? "[[30 40] [3 4] [50 60]]"
                             : std::string(op) == "ResourceScatterAdd"  ? "[[31 42] [3 4] [65 86]]"
                                                                        : "[[-29 -38] [3 4] [-55 -74]]";
    EXPECT_EQ((*r)[0].ToString(), want);
  }
}

TEST(ResourceScatterTest, ScalarUpdateAndMissingVariable) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_DOUBLE, PartialTensorShape({2}));
  Output never = ops::VarHandleOp(root.WithOpName("never"), DT_DOUBLE, PartialTensorShape({2}));
  Operation init = ops::AssignVariableOp(root, v, ops::Const(root, {1.0, 2.0}));
  Operation add = ops::BuildOp(root, "ResourceScatterAdd", {v, ops::Const(root, {1}), ops::Const(root, 0.5)});
  Operation missing = ops::BuildOp(root, "ResourceScatterAdd", {never, ops::Const(root, {1}), ops::Const(root, 0.5)});
  Output read = ops::ReadVariableOp(root, v, DT_DOUBLE);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({init}).ok());
  ASSERT_TRUE(session.Run(std::vector<Operation>{add}).ok());
  EXPECT_EQ((*session.Run({read}))[0].ToString(), "[1 2.5]");
  Status s = session.Run(std::vector<Operation>{missing});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
}

}  // namespace
}  // namespace dflow
