// The kernels that touch the file system (SaveV2, RestoreV2, MergeV2Checkpoints, TextLineDataset,
// TFRecordDataset, CSVDataset) obey their device's file policy (framework/file_policy.h): paths
// inside the allowed directories work; paths outside, with "..", or through symlinks that lead
// outside are PermissionDenied and touch nothing; an allowed directory may be a symlink; a device
// without a policy is unrestricted.
#include <unistd.h>

#include "base/record_io.h"
#include "base/temp_dir.h"
#include "framework/dataset.h"
#include "framework/device.h"
#include "framework/file_policy.h"
#include "framework/op_kernel.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

StatusOr<std::vector<Tensor>> RunOn(Device* device, const std::string& op, const std::vector<Tensor>& inputs,
                                    AttrMap attrs) {
  return testing::RunOpKernelOn(device, op, inputs, std::move(attrs));
}

Tensor Strings(const std::vector<std::string>& v) {
  return Tensor::FromValues<std::string>(v, TensorShape{static_cast<int64_t>(v.size())}).value();
}

bool Exists(const std::string& path) { return Env::Default()->FileExists(path); }

// root/allowed (the policy's directory, with allowed/out -> root/outside and allowed/secret_link
// -> outside/secret), root/outside, root/link -> allowed.
class FileAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(root_.ok());
    allowed_ = root_.File("allowed");
    outside_ = root_.File("outside");
    ASSERT_TRUE(Env::Default()->CreateDirs(allowed_).ok());
    ASSERT_TRUE(Env::Default()->CreateDirs(outside_).ok());
    ASSERT_EQ(::symlink(outside_.c_str(), (allowed_ + "/out").c_str()), 0);
    ASSERT_EQ(::symlink(allowed_.c_str(), root_.File("link").c_str()), 0);
    auto p = FilePolicy::Create({allowed_});
    ASSERT_TRUE(p.ok()) << p.status();
    restricted_.set_file_policy(*p);
    auto via_link = FilePolicy::Create({root_.File("link")});
    ASSERT_TRUE(via_link.ok()) << via_link.status();
    via_link_.set_file_policy(*via_link);
  }

  // The paths outside that a restricted kernel must refuse: absolute, through "..", through a
  // symlinked directory, and (`file_link`, made by the caller) a symlinked file.
  std::vector<std::string> Escapes(const std::string& name) const {
    return {outside_ + "/" + name, allowed_ + "/../outside/" + name, allowed_ + "/out/" + name};
  }

  static void ExpectDenied(const Status& s, const std::string& path) {
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << path << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("--allowed_dirs=")) << path;
  }

  TempDir root_;
  std::string allowed_, outside_;
  Device restricted_{"/job:worker/replica:0/task:0/device:CPU:0", "CPU"};
  Device via_link_{"/job:worker/replica:0/task:1/device:CPU:0", "CPU"};
  Device unrestricted_{"/job:worker/replica:0/task:2/device:CPU:0", "CPU"};
};

// ---- checkpoints ----

const AttrMap kOneFloat = {{"dtypes", std::vector<DType>{DT_FLOAT}}};

Status Save(Device* d, const std::string& prefix, const std::string& name = "v", float value = 1.5f) {
  return RunOn(d, "SaveV2", {Tensor(prefix), Strings({name}), Strings({""}), Tensor(value)}, kOneFloat).status();
}

StatusOr<float> Restore(Device* d, const std::string& prefix, const std::string& name = "v") {
  ASSIGN_OR_RETURN(std::vector<Tensor> out,
                   RunOn(d, "RestoreV2", {Tensor(prefix), Strings({name}), Strings({""})}, kOneFloat));
  return out[0].scalar<float>();
}

Status Merge(Device* d, const std::vector<std::string>& sources, const std::string& dest) {
  return RunOn(d, "MergeV2Checkpoints", {Strings(sources), Tensor(dest)}, {}).status();
}

TEST_F(FileAccessTest, SaveV2WritesOnlyInsideTheAllowedDirectories) {
  ASSERT_TRUE(Save(&restricted_, allowed_ + "/ckpt").ok());
  ASSERT_TRUE(Save(&restricted_, allowed_ + "/new/dir/ckpt").ok());  // directories it creates
  EXPECT_TRUE(Exists(allowed_ + "/new/dir/ckpt.index"));
  for (const std::string& p : Escapes("ckpt")) ExpectDenied(Save(&restricted_, p), p);
  // A symlinked index file that points outside: the prefix is fine, the file it writes is not.
  ASSERT_EQ(::symlink((outside_ + "/evil.index").c_str(), (allowed_ + "/evil.index").c_str()), 0);
  ExpectDenied(Save(&restricted_, allowed_ + "/evil"), "evil");
  EXPECT_EQ(*Env::Default()->GetChildren(outside_), std::vector<std::string>{});  // nothing written there
  // The message names the op's path.
  Status s = Save(&restricted_, outside_ + "/ckpt");
  EXPECT_THAT(std::string(s.message()), HasSubstr("SaveV2 node: Path '" + outside_ + "/ckpt' is outside"));
  // Unrestricted: anywhere.
  EXPECT_TRUE(Save(&unrestricted_, outside_ + "/ckpt").ok());
  EXPECT_TRUE(Exists(outside_ + "/ckpt.index"));
}

TEST_F(FileAccessTest, RestoreV2ReadsOnlyInsideTheAllowedDirectories) {
  ASSERT_TRUE(Save(&unrestricted_, outside_ + "/ckpt", "v", 7).ok());
  ASSERT_TRUE(Save(&restricted_, allowed_ + "/ckpt", "v", 3).ok());
  auto v = Restore(&restricted_, allowed_ + "/ckpt");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 3);
  for (const std::string& p : Escapes("ckpt")) ExpectDenied(Restore(&restricted_, p).status(), p);
  // Index and data files symlinked from inside to the checkpoint outside.
  for (const char* suffix : {".index", ".data-00000-of-00001"}) {
    ASSERT_EQ(::symlink((outside_ + "/ckpt" + suffix).c_str(), (allowed_ + "/evil" + suffix).c_str()), 0);
  }
  ExpectDenied(Restore(&restricted_, allowed_ + "/evil").status(), "evil");
  auto u = Restore(&unrestricted_, outside_ + "/ckpt");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(*u, 7);
}

TEST_F(FileAccessTest, CheckpointsThroughASymlinkedAllowedDirectory) {
  const std::string prefix = root_.File("link/ckpt");
  ASSERT_TRUE(Save(&via_link_, prefix, "v", 4).ok());
  auto v = Restore(&via_link_, prefix);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 4);
  EXPECT_TRUE(Exists(allowed_ + "/ckpt.index"));
  ExpectDenied(Save(&via_link_, root_.File("link/out/ckpt")), "link/out/ckpt");
  ExpectDenied(Save(&via_link_, root_.File("link/../outside/ckpt")), "link/../outside/ckpt");
}

TEST_F(FileAccessTest, MergeV2CheckpointsChecksSourcesAndDestination) {
  const std::string part0 = allowed_ + "/tmp/part-0", part1 = allowed_ + "/tmp/part-1";
  ASSERT_TRUE(Save(&restricted_, part0, "a", 1).ok());
  ASSERT_TRUE(Save(&restricted_, part1, "b", 2).ok());
  // Destination outside (absolute, "..", symlinked directory): refused, the sources stay.
  for (const std::string& p : Escapes("merged")) ExpectDenied(Merge(&restricted_, {part0, part1}, p), p);
  EXPECT_TRUE(Exists(part0 + ".index"));
  EXPECT_TRUE(Exists(part1 + ".index"));
  // Sources outside: refused, not deleted.
  ASSERT_TRUE(Save(&unrestricted_, outside_ + "/victim", "c", 3).ok());
  for (const std::string& p : Escapes("victim")) ExpectDenied(Merge(&restricted_, {part0, p}, allowed_ + "/merged"), p);
  EXPECT_TRUE(Exists(outside_ + "/victim.index"));
  EXPECT_TRUE(Exists(outside_ + "/victim.data-00000-of-00001"));
  EXPECT_TRUE(Exists(part0 + ".index"));
  EXPECT_FALSE(Exists(allowed_ + "/merged.index"));
  // Inside: merged, the sources and their directory deleted.
  ASSERT_TRUE(Merge(&restricted_, {part0, part1}, allowed_ + "/merged").ok());
  EXPECT_FALSE(Exists(part0 + ".index"));
  EXPECT_FALSE(Env::Default()->IsDirectory(allowed_ + "/tmp"));
  EXPECT_EQ(*Restore(&restricted_, allowed_ + "/merged", "b"), 2);
  // Unrestricted: from outside into outside.
  ASSERT_TRUE(Save(&unrestricted_, outside_ + "/tmp/part", "d", 5).ok());
  ASSERT_TRUE(Merge(&unrestricted_, {outside_ + "/tmp/part"}, outside_ + "/merged").ok());
  EXPECT_EQ(*Restore(&unrestricted_, outside_ + "/merged", "d"), 5);
}

// ---- file datasets ----

// Writes `lines` in the format of `op` (one line, record or CSV row each).
void WriteData(const std::string& op, const std::string& path, const std::vector<std::string>& lines) {
  auto f = Env::Default()->NewWritableFile(path);
  ASSERT_TRUE(f.ok()) << f.status();
  if (op == "TFRecordDataset") {
    RecordWriter w(f->get());
    for (const std::string& l : lines) ASSERT_TRUE(w.WriteRecord(l).ok());
  } else {
    for (const std::string& l : lines) ASSERT_TRUE((*f)->Append(l + "\n").ok());
  }
  ASSERT_TRUE((*f)->Close().ok());
}

// Makes the dataset `op` over `file` on `d` (CSV: one string column).
StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(Device* d, const std::string& op, const std::string& file) {
  std::vector<Tensor> inputs{Tensor(file), Tensor(std::string()), Tensor(int64_t{0})};
  AttrMap attrs;
  if (op == "CSVDataset") {
    inputs.insert(inputs.end(), {Tensor(false), Tensor(std::string(",")), Tensor(true), Tensor(std::string()),
                                 Tensor(DT_INT64, TensorShape{0}), Tensor(std::string("default"))});
    attrs = {{"output_types", std::vector<DType>{DT_STRING}},
             {"output_shapes", std::vector<PartialTensorShape>{PartialTensorShape::Scalar()}}};
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> out, RunOn(d, op, inputs, attrs));
  return DatasetFromTensor(out[0], "dataset");
}

// Makes the dataset and reads it to the end.
StatusOr<std::vector<std::string>> ReadDataset(Device* d, const std::string& op, const std::string& file) {
  ASSIGN_OR_RETURN(std::shared_ptr<const DatasetBase> ds, MakeDataset(d, op, file));
  ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, ds->MakeIterator());
  std::vector<std::string> values;
  IteratorContext ctx;
  while (true) {
    std::vector<Tensor> element;
    bool end = false;
    RETURN_IF_ERROR(it->GetNext(&ctx, &element, &end));
    if (end) return values;
    values.push_back(element[0].scalar<std::string>());
  }
}

class FileDatasetTest : public FileAccessTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(FileDatasetTest, ReadsOnlyInsideTheAllowedDirectories) {
  const std::string& op = GetParam();
  WriteData(op, allowed_ + "/data", {"a", "b"});
  WriteData(op, outside_ + "/secret", {"s"});
  ASSERT_EQ(::symlink((outside_ + "/secret").c_str(), (allowed_ + "/secret_link").c_str()), 0);
  auto inside = ReadDataset(&restricted_, op, allowed_ + "/data");
  ASSERT_TRUE(inside.ok()) << inside.status();
  EXPECT_THAT(*inside, ElementsAre("a", "b"));
  std::vector<std::string> escapes = Escapes("secret");
  escapes.push_back(allowed_ + "/secret_link");
  for (const std::string& p : escapes) {
    auto r = ReadDataset(&restricted_, op, p);
    ExpectDenied(r.status(), p);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(op + " node: Path '" + p + "'"));
  }
  // A symlinked allowed directory.
  auto via_link = ReadDataset(&via_link_, op, root_.File("link/data"));
  ASSERT_TRUE(via_link.ok()) << via_link.status();
  EXPECT_THAT(*via_link, ElementsAre("a", "b"));
  ExpectDenied(ReadDataset(&via_link_, op, root_.File("link/secret_link")).status(), "link/secret_link");
  // No policy: anywhere.
  auto anywhere = ReadDataset(&unrestricted_, op, outside_ + "/secret");
  ASSERT_TRUE(anywhere.ok()) << anywhere.status();
  EXPECT_THAT(*anywhere, ElementsAre("s"));
}

// A file that is made a symlink to the outside after the dataset was made is refused when the
// iterator opens it.
TEST_P(FileDatasetTest, ChecksAgainWhenTheIteratorOpensTheFile) {
  const std::string& op = GetParam();
  WriteData(op, outside_ + "/secret", {"s"});
  auto ds = MakeDataset(&restricted_, op, allowed_ + "/later");  // does not exist yet: fine
  ASSERT_TRUE(ds.ok()) << ds.status();
  ASSERT_EQ(::symlink((outside_ + "/secret").c_str(), (allowed_ + "/later").c_str()), 0);
  auto it = (*ds)->MakeIterator();
  ASSERT_TRUE(it.ok());
  IteratorContext ctx;
  std::vector<Tensor> element;
  bool end = false;
  ExpectDenied((*it)->GetNext(&ctx, &element, &end), "later");
}

INSTANTIATE_TEST_SUITE_P(Ops, FileDatasetTest, ::testing::Values("TextLineDataset", "TFRecordDataset", "CSVDataset"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace dflow
