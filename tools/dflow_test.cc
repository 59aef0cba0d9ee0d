// The `dflow` command run in-process on the TensorFlow graphs in testdata/.
#include <fstream>
#include <sstream>

#include "base/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/npy.h"
#include "tools/cli_test_util.h"
#include "tools/feed_value.h"

namespace dflow::tools {
namespace {

using ::testing::HasSubstr;

TEST(DflowCommandTest, RunsTensorFlowAdditionGraph) {
  Result r = Cmd({"run", Data("rust_addition.pb"), "--feed", "x=2", "--feed", "y=3", "--fetch", "z"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "z = 5\n");
}

TEST(DflowCommandTest, RunsTensorFlowMultiplicationGraph) {
  Result r = Cmd({"run", Data("rust_multiplication.pb"), "--feed=a=1.5", "--feed=b=-4", "--fetch=c:0"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "c:0 = -6\n");
}

TEST(DflowCommandTest, RunsTheFrozenRegressionGraphWithAnNpyFeed) {
  std::string npy = ::testing::TempDir() + "/x.npy";
  {
    std::ofstream f(npy, std::ios::binary);
    f << *SerializeNpy(Tensor::FromValues<float>({0, 1, 2, 3}, TensorShape{4}).value());
  }
  Result inspect = Cmd({"inspect", Data("tf2onnx_regression_frozen.pb")});
  ASSERT_EQ(inspect.code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, HasSubstr("Placeholder"));
  // pred = X*W + b with W = 0.21396178, b = 1.0495254.
  Result r = Cmd({"run", Data("tf2onnx_regression_frozen.pb"), "--feed", "X=@" + npy, "--fetch", "pred"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("pred = [1.0495"));
  EXPECT_THAT(r.out, HasSubstr(" 1.6914"));
}

TEST(DflowCommandTest, InspectListsNodes) {
  Result r = Cmd({"inspect", Data("rust_addition.pb")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("3 nodes"));
  EXPECT_THAT(r.out, HasSubstr("z  AddV2 -> int32[]  inputs: x, y"));
}

TEST(DflowCommandTest, InspectListsCheckpointTensors) {
  for (const std::string& path : {Data("checkpoint_v2_regression/model"), Data("checkpoint_v2_regression/model.index"),
                                  Data("checkpoint_v2_regression")}) {
    Result r = Cmd({"inspect", path});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(": 2 tensors in 1 data file\n"));
    EXPECT_THAT(r.out, HasSubstr("W  float32 []  = 0.21396178\n"));
    EXPECT_THAT(r.out, HasSubstr("b  float32 []  = 1.0495254\n"));
  }
}

TEST(DflowCommandTest, InspectReportsADamagedCheckpoint) {
  TempDir dir;
  for (const char* suffix : {".index", ".data-00000-of-00001"}) {
    std::ifstream in(Data(std::string("checkpoint_v2_regression/model") + suffix), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (std::string(suffix) != ".index") bytes[6] ^= 0x10;  // a byte of b
    std::ofstream(dir.File(std::string("model") + suffix), std::ios::binary) << bytes;
  }
  Result r = Cmd({"inspect", dir.File("model")});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("W  float32 []  = 0.21396178\n"));
  EXPECT_THAT(r.err, HasSubstr("DATA_LOSS"));
  EXPECT_THAT(r.err, HasSubstr("tensor 'b'"));
  EXPECT_THAT(r.err, HasSubstr("checksum does not match"));
}

TEST(DflowCommandTest, OpsListsSignatures) {
  Result r = Cmd({"ops"});
  EXPECT_EQ(r.code, 0);
  for (const char* op :
       {"Const(",   "Placeholder(", "Identity(", "NoOp(", "Add(",  "AddV2(",   "Sub(",        "Mul(",   "Div(",
        "RealDiv(", "Pow(",         "Neg(",      "Exp(",  "Log(",  "Greater(", "Less(",       "Equal(", "Cast(",
        "Fill(",    "Reshape(",     "Shape(",    "Rank(", "Size(", "MatMul(",  "VariableV2(", "Assign("}) {
    EXPECT_THAT("\n" + r.out, HasSubstr(std::string("\n") + op)) << op;
  }
  EXPECT_THAT(r.out, HasSubstr("MatMul(a: T, b: T) -> (product: T)"));
}

TEST(DflowCommandTest, ErrorsAreClear) {
  Result r = Cmd({"run", Data("missing.pb"), "--fetch", "z"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("not found"));
  r = Cmd({"run", Data("rust_addition.pb"), "--feed", "x=2", "--fetch", "z"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("placeholder tensor 'y'"));
  r = Cmd({"run", Data("rust_addition.pb"), "--feed", "x=2.5", "--feed", "y=1", "--fetch", "z"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("not a valid int32"));
  r = Cmd({"run", Data("rust_addition.pb"), "--feed", "x", "--fetch", "z"});
  EXPECT_EQ(r.code, 2);
  r = Cmd({"run", Data("rust_addition.pb"), "--feed", "x=1", "--feed", "y=1", "--fetch", "nope"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("nope"));
  r = Cmd({"frobnicate"});
  EXPECT_EQ(r.code, 2);
  std::string junk = ::testing::TempDir() + "/junk.pb";
  std::ofstream(junk) << "this is not a graph";
  r = Cmd({"inspect", junk});
  EXPECT_EQ(r.code, 1);
}

TEST(FeedValueTest, ParsesScalarsAndNestedLists) {
  EXPECT_EQ(ParseFeedValue("2", DT_INT32)->ToString(), "2");
  EXPECT_EQ(ParseFeedValue("-1.5e1", DT_FLOAT)->ToString(), "-15");
  EXPECT_EQ(ParseFeedValue("[[1,2],[3,4]]", DT_INT64)->ToString(), "[[1 2] [3 4]]");
  EXPECT_EQ(ParseFeedValue(" [ 1 , 2 ] ", DT_DOUBLE)->shape(), TensorShape({2}));
  EXPECT_EQ(ParseFeedValue("[]", DT_FLOAT)->shape(), TensorShape({0}));
  EXPECT_EQ(ParseFeedValue("[true,false]", DT_BOOL)->ToString(), "[True False]");
  EXPECT_EQ(ParseFeedValue("hello world", DT_STRING)->ToString(), "hello world");
  EXPECT_FALSE(ParseFeedValue("[[1,2],[3]]", DT_INT32).ok());
  EXPECT_FALSE(ParseFeedValue("[[1,2],3]", DT_INT32).ok());
  EXPECT_FALSE(ParseFeedValue("[1,2", DT_INT32).ok());
  EXPECT_FALSE(ParseFeedValue("abc", DT_FLOAT).ok());
  EXPECT_FALSE(ParseFeedValue("300", DT_UINT8).ok());
  EXPECT_FALSE(ParseFeedValue("@/no/such/file.npy", DT_FLOAT).ok());
  std::string deep(300, '[');
  EXPECT_FALSE(ParseFeedValue(deep, DT_FLOAT).ok());
}

}  // namespace
}  // namespace dflow::tools
