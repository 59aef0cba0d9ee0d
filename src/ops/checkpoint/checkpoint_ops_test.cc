// SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename and StringJoin kernels.
#include "base/temp_dir.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_test_util.h"
#include "tensor/tensor_bundle.h"

namespace dflow {
namespace {

using testing::MakeTensor;
using testing::RunOpKernel;

Tensor Strings(std::vector<std::string> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return MakeTensor<std::string>(v, {n});
}

TEST(CheckpointOpsTest, SaveThenRestoreValuesAndSlices) {
  TempDir dir;
  const std::string prefix = dir.File("ckpt");
  Tensor w = MakeTensor<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor step(int64_t{42});
  Tensor s = MakeTensor<std::string>({"a", "bc"}, {2});
  auto saved = RunOpKernel("SaveV2",
                           {Tensor(prefix), Strings({"w", "global_step", "s"}), Strings({"", "", ""}), w, step, s},
                           {{"dtypes", std::vector<DType>{DT_FLOAT, DT_INT64, DT_STRING}}});
  ASSERT_TRUE(saved.ok()) << saved.status();
  ASSERT_TRUE(saved->empty());
  auto restored = RunOpKernel("RestoreV2",
                              {Tensor(prefix), Strings({"global_step", "w", "w", "s"}),
                               Strings({"", "", "3 2 1,2:1,1", ""})},
                              {{"dtypes", std::vector<DType>{DT_INT64, DT_FLOAT, DT_FLOAT, DT_STRING}}});
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ((*restored)[0].scalar<int64_t>(), 42);
  EXPECT_EQ((*restored)[1].shape(), TensorShape({3, 2}));
  EXPECT_EQ(std::vector<float>((*restored)[1].flat<float>().begin(), (*restored)[1].flat<float>().end()),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // Rows [1, 3) of column 1: 4 and 6.
  EXPECT_EQ((*restored)[2].shape(), TensorShape({2, 1}));
  EXPECT_EQ((*restored)[2].flat<float>()[0], 4);
  EXPECT_EQ((*restored)[2].flat<float>()[1], 6);
  EXPECT_EQ((*restored)[3].data<std::string>()[1], "bc");
}

TEST(CheckpointOpsTest, SavesSlicesUnderTheFullName) {
  TempDir dir;
  const std::string prefix = dir.File("ckpt");
  auto saved = RunOpKernel("SaveV2",
                           {Tensor(prefix), Strings({"emb", "emb"}), Strings({"4 1 0,1:-", "4 1 1,3:-"}),
                            MakeTensor<float>({7}, {1, 1}), MakeTensor<float>({8, 9, 10}, {3, 1})},
                           {{"dtypes", std::vector<DType>{DT_FLOAT, DT_FLOAT}}});
  ASSERT_TRUE(saved.ok()) << saved.status();
  auto r = BundleReader::Open(Env::Default(), prefix);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->TensorNames(), std::vector<std::string>{"emb"});
  auto whole = (*r)->Lookup("emb");
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(std::vector<float>(whole->flat<float>().begin(), whole->flat<float>().end()),
            (std::vector<float>{7, 8, 9, 10}));
}

TEST(CheckpointOpsTest, RejectsBadInputs) {
  TempDir dir;
  const std::string prefix = dir.File("ckpt");
  const AttrMap one_float = {{"dtypes", std::vector<DType>{DT_FLOAT}}};
  // Names and tensors disagree in number.
  EXPECT_EQ(RunOpKernel("SaveV2", {Tensor(prefix), Strings({"a", "b"}), Strings({"", ""}), Tensor(1.0f)}, one_float)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  // The prefix is not a scalar.
  EXPECT_EQ(RunOpKernel("SaveV2", {Strings({prefix}), Strings({"a"}), Strings({""}), Tensor(1.0f)}, one_float)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  // A slice spec that does not match the tensor.
  EXPECT_EQ(RunOpKernel("SaveV2", {Tensor(prefix), Strings({"a"}), Strings({"4 0,2"}), Tensor(1.0f)}, one_float)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(Env::Default()->FileExists(prefix + ".index"));
  ASSERT_TRUE(RunOpKernel("SaveV2", {Tensor(prefix), Strings({"a"}), Strings({""}), Tensor(1.0f)}, one_float).ok());
  // Missing checkpoint, missing tensor, wrong dtype, wrong shape in the spec.
  EXPECT_EQ(
      RunOpKernel("RestoreV2", {Tensor(dir.File("none")), Strings({"a"}), Strings({""})}, one_float).status().code(),
      absl::StatusCode::kNotFound);
  EXPECT_EQ(RunOpKernel("RestoreV2", {Tensor(prefix), Strings({"b"}), Strings({""})}, one_float).status().code(),
            absl::StatusCode::kNotFound);
  auto wrong_type = RunOpKernel("RestoreV2", {Tensor(prefix), Strings({"a"}), Strings({""})},
                                {{"dtypes", std::vector<DType>{DT_INT32}}});
  EXPECT_EQ(wrong_type.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_type.status().message().find("expected dtype int32 does not equal original dtype float"),
            std::string::npos)
      << wrong_type.status();
  EXPECT_EQ(RunOpKernel("RestoreV2", {Tensor(prefix), Strings({"a"}), Strings({"2 0,1"})}, one_float).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CheckpointOpsTest, MergeV2CheckpointsJoinsShards) {
  TempDir dir;
  const AttrMap one_float = {{"dtypes", std::vector<DType>{DT_FLOAT}}};
  const std::string a = dir.File("tmp/part-00000-of-00002"), b = dir.File("tmp/part-00001-of-00002");
  ASSERT_TRUE(RunOpKernel("SaveV2", {Tensor(a), Strings({"x"}), Strings({""}), Tensor(1.0f)}, one_float).ok());
  ASSERT_TRUE(RunOpKernel("SaveV2", {Tensor(b), Strings({"y"}), Strings({""}), Tensor(2.0f)}, one_float).ok());
  const std::string dest = dir.File("model-7");
  auto merged = RunOpKernel("MergeV2Checkpoints", {Strings({a, b}), Tensor(dest)});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_TRUE(Env::Default()->FileExists(dest + ".data-00000-of-00002"));
  EXPECT_TRUE(Env::Default()->FileExists(dest + ".data-00001-of-00002"));
  EXPECT_FALSE(Env::Default()->FileExists(a + ".index"));
  auto r = RunOpKernel("RestoreV2", {Tensor(dest), Strings({"y"}), Strings({""})}, one_float);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 2.0f);
  // Merging the same tensor twice is an error.
  const std::string c = dir.File("c"), d = dir.File("d");
  ASSERT_TRUE(RunOpKernel("SaveV2", {Tensor(c), Strings({"x"}), Strings({""}), Tensor(1.0f)}, one_float).ok());
  ASSERT_TRUE(RunOpKernel("SaveV2", {Tensor(d), Strings({"x"}), Strings({""}), Tensor(1.0f)}, one_float).ok());
  EXPECT_EQ(RunOpKernel("MergeV2Checkpoints", {Strings({c, d}), Tensor(dir.File("e"))}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CheckpointOpsTest, ShardedFilenameAndStringJoin) {
  auto f = RunOpKernel("ShardedFilename", {Tensor("/d/m"), Tensor(int32_t{3}), Tensor(int32_t{12})});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)[0].scalar<std::string>(), "/d/m-00003-of-00012");
  // Any numbers, formatted as TensorFlow's kernel does.
  auto odd = RunOpKernel("ShardedFilename", {Tensor("a"), Tensor(int32_t{-1}), Tensor(int32_t{2})});
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ((*odd)[0].scalar<std::string>(), "a--0001-of-00002");
  auto j = RunOpKernel("StringJoin", {Tensor("p"), Strings({"a", "b"})},
                       {{"N", int64_t{2}}, {"separator", std::string("_")}});
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)[0].data<std::string>()[0], "p_a");
  EXPECT_EQ((*j)[0].data<std::string>()[1], "p_b");
  EXPECT_FALSE(RunOpKernel("StringJoin", {Strings({"a"}), Strings({"a", "b"})}, {{"N", int64_t{2}}}).ok());
  // The shape function merges the non-scalar inputs, as TensorFlow's does.
  EXPECT_FALSE(testing::InferShapes("StringJoin", {Strings({"a"}), Strings({"a", "b"})}, {{"N", int64_t{2}}}).ok());
  auto joined = testing::InferShapes("StringJoin", {Tensor("p"), Strings({"a", "b"})}, {{"N", int64_t{2}}});
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_EQ((*joined)[0], PartialTensorShape({2}));
}

}  // namespace
}  // namespace dflow
