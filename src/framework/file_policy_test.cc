// FilePolicy (which paths a task's ops may touch) and PolicyEnv.
#include "framework/file_policy.h"

#include <unistd.h>

#include "base/fault_injection_env.h"
#include "base/temp_dir.h"
#include "framework/device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

// An allowed directory and, beside it (outside it), a directory with a secret file.
class FilePolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(root_.ok());
    allowed_ = root_.File("allowed");
    outside_ = root_.File("outside");
    ASSERT_TRUE(Env::Default()->CreateDirs(allowed_ + "/sub").ok());
    ASSERT_TRUE(Env::Default()->CreateDirs(outside_).ok());
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(outside_ + "/secret", "s").ok());
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(allowed_ + "/data.txt", "d").ok());
    auto p = FilePolicy::Create({allowed_});
    ASSERT_TRUE(p.ok()) << p.status();
    policy_ = *p;
  }
  // realpath of the TempDir (TMPDIR may itself be a symlink).
  std::string Real(const std::string& path) {
    char* r = ::realpath(path.c_str(), nullptr);
    std::string out = r != nullptr ? r : "";
    ::free(r);
    return out;
  }
  void Symlink(const std::string& target, const std::string& link) {
    ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  }

  TempDir root_;
  std::string allowed_, outside_;
  std::shared_ptr<const FilePolicy> policy_;
};

TEST_F(FilePolicyTest, ParsesTheFlag) {
  EXPECT_EQ(FilePolicy::ParseDirList("/a, /b,,/c "), (std::vector<std::string>{"/a", "/b", "/c"}));
  EXPECT_TRUE(FilePolicy::ParseDirList("").empty());
  EXPECT_TRUE(FilePolicy::ParseDirList(" , ").empty());
}

TEST_F(FilePolicyTest, CreateChecksTheDirectories) {
  auto missing = FilePolicy::Create({allowed_, root_.File("nope")});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr(root_.File("nope")));
  auto file = FilePolicy::Create({allowed_ + "/data.txt"});
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(file.status().message()), HasSubstr("not a directory"));
  auto created = FilePolicy::Create({root_.File("new/ckpt")}, /*create_missing=*/true);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_TRUE(Env::Default()->IsDirectory(root_.File("new/ckpt")));
  EXPECT_EQ((*created)->resolved_dirs(), std::vector<std::string>{Real(root_.File("new/ckpt"))});
  EXPECT_EQ((*created)->DebugString(), "--allowed_dirs=" + root_.File("new/ckpt"));
}

TEST_F(FilePolicyTest, AllowsPathsInsideAndResolvesThem) {
  std::string r;
  ASSERT_TRUE(policy_->CheckRead(allowed_ + "/data.txt", &r).ok());
  EXPECT_EQ(r, Real(allowed_) + "/data.txt");
  // Files and directories that do not exist yet; "." and doubled slashes are dropped.
  ASSERT_TRUE(policy_->CheckWrite(allowed_ + "/./new//dir/ckpt.index", &r).ok());
  EXPECT_EQ(r, Real(allowed_) + "/new/dir/ckpt.index");
  // The allowed directory itself.
  ASSERT_TRUE(policy_->CheckRead(allowed_, &r).ok());
  EXPECT_EQ(r, Real(allowed_));
  ASSERT_TRUE(policy_->CheckWrite(allowed_ + "/", &r).ok());
}

TEST_F(FilePolicyTest, RefusesPathsOutside) {
  Status s = policy_->CheckRead(outside_ + "/secret");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()), HasSubstr("Path '" + outside_ + "/secret' "));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("outside the directories this task may use (--allowed_dirs=" + allowed_ + ")"));
  EXPECT_EQ(policy_->CheckWrite("/etc/passwd").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(policy_->CheckWrite(outside_ + "/new").code(), absl::StatusCode::kPermissionDenied);
  // A sibling whose name starts with the allowed directory's.
  ASSERT_TRUE(Env::Default()->CreateDirs(allowed_ + "2").ok());
  EXPECT_EQ(policy_->CheckWrite(allowed_ + "2/x").code(), absl::StatusCode::kPermissionDenied);
  // A relative path is relative to the working directory, which is not allowed here.
  EXPECT_EQ(policy_->CheckWrite("relative/ckpt").code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(FilePolicyTest, RefusesDotDot) {
  for (const std::string& p :
       {allowed_ + "/../outside/secret", allowed_ + "/sub/../data.txt", allowed_ + "/new/../x"}) {
    Status s = policy_->CheckRead(p);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << p;
    EXPECT_THAT(std::string(s.message()), HasSubstr("'..'")) << p;
    EXPECT_EQ(policy_->CheckWrite(p).code(), absl::StatusCode::kPermissionDenied) << p;
  }
}

TEST_F(FilePolicyTest, RefusesSymlinksThatLeadOutside) {
  Symlink(outside_ + "/secret", allowed_ + "/file_link");
  Symlink(outside_, allowed_ + "/dir_link");
  Symlink(outside_ + "/not_yet", allowed_ + "/dangling");
  Symlink(allowed_ + "/data.txt", allowed_ + "/inside_link");
  for (const std::string& p :
       {allowed_ + "/file_link", allowed_ + "/dir_link/secret", allowed_ + "/dir_link/new", allowed_ + "/dangling"}) {
    Status s = policy_->CheckRead(p);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << p;
    EXPECT_EQ(policy_->CheckWrite(p).code(), absl::StatusCode::kPermissionDenied) << p;
  }
  EXPECT_THAT(std::string(policy_->CheckRead(allowed_ + "/file_link").message()),
              HasSubstr("resolves to '" + Real(outside_) + "/secret'"));
  EXPECT_THAT(std::string(policy_->CheckWrite(allowed_ + "/dangling").message()), HasSubstr("dangling symlink"));
  // A symlink that stays inside is followed.
  std::string r;
  ASSERT_TRUE(policy_->CheckRead(allowed_ + "/inside_link", &r).ok());
  EXPECT_EQ(r, Real(allowed_) + "/data.txt");
}

TEST_F(FilePolicyTest, AnAllowedDirectoryMayBeASymlink) {
  Symlink(allowed_, root_.File("link_to_allowed"));
  auto p = FilePolicy::Create({root_.File("link_to_allowed")});
  ASSERT_TRUE(p.ok()) << p.status();
  std::string r;
  ASSERT_TRUE((*p)->CheckRead(root_.File("link_to_allowed/data.txt"), &r).ok());
  EXPECT_EQ(r, Real(allowed_) + "/data.txt");
  EXPECT_TRUE((*p)->CheckWrite(allowed_ + "/new").ok());  // the real path is allowed too
  EXPECT_EQ((*p)->CheckRead(outside_ + "/secret").code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(FilePolicyTest, EmptyListAllowsNothingAndRootAllowsEverything) {
  auto none = FilePolicy::Create({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->CheckRead(allowed_ + "/data.txt").code(), absl::StatusCode::kPermissionDenied);
  auto all = FilePolicy::Create({"/"});
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE((*all)->CheckRead(outside_ + "/secret").ok());
  EXPECT_EQ((*all)->CheckRead(outside_ + "/../outside/secret").code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(FilePolicyTest, RefusesMalformedPaths) {
  EXPECT_EQ(policy_->CheckRead("").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(policy_->CheckWrite(allowed_ + std::string("/a\0/x", 5)).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(FilePolicyTest, PolicyEnvChecksEveryOperation) {
  PolicyEnv env(policy_);
  ASSERT_TRUE(env.WriteFileAtomic(allowed_ + "/a", "x").ok());
  EXPECT_EQ(*env.ReadFile(allowed_ + "/a", 100), "x");
  EXPECT_TRUE(env.FileExists(allowed_ + "/a"));
  EXPECT_FALSE(env.FileExists(outside_ + "/secret"));
  EXPECT_FALSE(env.IsDirectory(outside_));
  EXPECT_EQ(env.ReadFile(outside_ + "/secret", 100).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(env.NewRandomAccessFile(outside_ + "/secret").status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(env.NewWritableFile(outside_ + "/w", false).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(env.FileSize(outside_ + "/secret").status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(env.GetChildren(outside_).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(env.CreateDirs(outside_ + "/d").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(env.SyncDir(outside_).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(env.DeleteFile(outside_ + "/secret").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(env.RenameFile(allowed_ + "/a", outside_ + "/a").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(env.RenameFile(outside_ + "/secret", allowed_ + "/b").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Env::Default()->FileExists(outside_ + "/secret"));
  EXPECT_FALSE(Env::Default()->FileExists(outside_ + "/a"));
  // The allowed directory itself may not be removed or renamed away.
  ASSERT_TRUE(Env::Default()->DeleteFile(allowed_ + "/data.txt").ok());
  ASSERT_TRUE(Env::Default()->DeleteDir(allowed_ + "/sub").ok());
  ASSERT_TRUE(env.DeleteFile(allowed_ + "/a").ok());
  EXPECT_EQ(env.DeleteDir(allowed_).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(env.RenameFile(allowed_, allowed_ + "/x").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Env::Default()->IsDirectory(allowed_));
  // Inside, everything works.
  ASSERT_TRUE(env.CreateDirs(allowed_ + "/d/e").ok());
  ASSERT_TRUE(env.RenameFile(allowed_ + "/d/e", allowed_ + "/f").ok());
  EXPECT_EQ(*env.GetChildren(allowed_), (std::vector<std::string>{"d", "f"}));
}

TEST_F(FilePolicyTest, DeviceFileEnvFollowsItsPolicy) {
  Device d("/job:localhost/replica:0/task:0/device:CPU:0", "CPU");
  EXPECT_EQ(d.file_policy(), nullptr);
  EXPECT_TRUE(d.file_env()->FileExists(outside_ + "/secret"));  // unrestricted
  ASSERT_TRUE(d.file_env()->WriteFileAtomic(outside_ + "/w", "w").ok());
  EXPECT_EQ(*Env::Default()->ReadFile(outside_ + "/w"), "w");
  d.set_file_policy(policy_);
  EXPECT_EQ(d.file_policy(), policy_.get());
  EXPECT_FALSE(d.file_env()->FileExists(outside_ + "/secret"));
  EXPECT_TRUE(d.file_env()->FileExists(allowed_ + "/data.txt"));
  d.set_file_policy(nullptr);
  EXPECT_TRUE(d.file_env()->FileExists(outside_ + "/secret"));
}

// Without a base, the Env is Env::Default() as it is at each call: a test that swaps it in
// (ScopedDefaultEnv) sees the kernels' file operations.
TEST_F(FilePolicyTest, PolicyEnvUsesTheCurrentDefaultEnv) {
  for (std::shared_ptr<const FilePolicy> policy : {std::shared_ptr<const FilePolicy>(), policy_}) {
    std::shared_ptr<Env> env = MakeFileEnv(policy);
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(allowed_ + "/c", "c").ok());
    FaultInjectionEnv counting;
    {
      ScopedDefaultEnv scoped(&counting);
      ASSERT_TRUE(env->DeleteFile(allowed_ + "/c").ok());
      EXPECT_EQ(env->DeleteFile(allowed_ + "/c").code(), absl::StatusCode::kNotFound);
    }
    EXPECT_EQ(counting.operations(), 2);  // both deletes went through the swapped-in Env
  }
}

}  // namespace
}  // namespace dflow
