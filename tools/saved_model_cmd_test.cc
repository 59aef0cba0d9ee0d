// `dflow run DIR --signature KEY --input K=V` and `dflow inspect DIR` on a SavedModel written by
// SavedModelWriter: the outputs by key, the listing, and errors that name what is there.
#include <sstream>

#include "absl/strings/match.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "dflow/saved_model.h"
#include "gtest/gtest.h"
#include "tools/cli_test_util.h"

namespace dflow::tools {
namespace {

TEST(SavedModelCmdTest, RunsASignatureByItsKeysAndListsTheModel) {
  TempDir dir;
  const std::string export_dir = dir.File("m");
  {
    Scope root = Scope::NewRootScope();
    Variable w = Variable::Create(root.WithOpName("w"), {2, 1}, DT_FLOAT,
                                  init::Constant(Tensor::FromValues<float>({2, -1}, TensorShape{2, 1}).value()));
    Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, PartialTensorShape({-1, 2}));
    Output y = ops::MatMul(root.WithOpName("y"), x, w);
    Operation init = GlobalVariablesInitializer(root);
    train::Saver saver(root);
    ASSERT_TRUE(root.ok()) << root.status();
    ClientSession session(root);
    ASSERT_TRUE(session.Run({init}).ok());
    SavedModelWriter writer;
    ASSERT_TRUE(writer
                    .AddMetaGraphAndVariables(root, session, saver, {kSavedModelTagServe},
                                              {{kDefaultServingSignatureDefKey,
                                                BuildSignatureDef({{"x", x}}, {{"y", y}})}})
                    .ok());
    ASSERT_TRUE(writer.Save(export_dir).ok());
  }
  Result r = Cmd({"run", export_dir, "--signature", "serving_default", "--input", "x=[[1,2],[3,4]]"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "y = [[0] [2]]\n");
  r = Cmd({"run", export_dir, "--input=x=[[1,1]]", "--output", "y"});  // serving_default by default
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "y = [[1]]\n");
  r = Cmd({"inspect", export_dir});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "tag set [serve]")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "signature 'serving_default' (tensorflow/serving/predict)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "input  x: x:0 float32(?, 2)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "output y: y:0 float32(?, 1)")) << r.out;
  r = Cmd({"run", export_dir, "--signature", "classify", "--input", "x=[[1,1]]"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "its signatures: [serving_default]")) << r.err;
  r = Cmd({"run", export_dir, "--input", "z=[[1,1]]"});
  EXPECT_TRUE(absl::StrContains(r.err, "its inputs: [x]")) << r.err;
  r = Cmd({"run", export_dir, "--input", "x=[[1,1]]", "--output", "q"});
  EXPECT_TRUE(absl::StrContains(r.err, "its outputs: [y]")) << r.err;
  r = Cmd({"run", export_dir, "--tag", "train", "--input", "x=[[1,1]]"});
  EXPECT_TRUE(absl::StrContains(r.err, "the tag sets present: [serve]")) << r.err;
  r = Cmd({"run", dir.File("missing"), "--signature", "serving_default"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "SavedModel not found")) << r.err;
}

}  // namespace
}  // namespace dflow::tools
