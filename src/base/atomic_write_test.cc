// Env's monotonic clock and sleep, and the one atomic-write path (Env::WriteFileAtomic, TempFile):
// an injected failure at any step leaves the old or the new contents, never a mix or nothing;
// the file gets exactly the mode asked for; a link planted at the temporary's name is not
// followed.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "base/env.h"
#include "base/fault_injection_env.h"
#include "base/temp_dir.h"
#include "base/temp_file.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

int ModeOf(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

// The names in `dir` other than `keep`.
std::vector<std::string> Others(const std::string& dir, const std::string& keep) {
  std::vector<std::string> out;
  StatusOr<std::vector<std::string>> names = Env::Default()->GetChildren(dir);
  EXPECT_TRUE(names.ok()) << names.status();
  if (!names.ok()) return out;
  for (const std::string& n : *names) {
    if (n != keep) out.push_back(n);
  }
  return out;
}

// Sets the umask while it lives.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t m) : old_(::umask(m)) {}
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

TEST(MonotonicClockTest, NeverGoesBackAndSleepWaitsAtLeastTheTimeAsked) {
  Env* env = Env::Default();
  int64_t last = env->NowMonotonicMicros();
  for (int i = 0; i < 1000; ++i) {
    const int64_t now = env->NowMonotonicMicros();
    ASSERT_GE(now, last);
    last = now;
  }
  const auto start = std::chrono::steady_clock::now();
  const int64_t before = env->NowMonotonicMicros();
  env->SleepForMicros(20000);
  EXPECT_GE(env->NowMonotonicMicros() - before, 20000);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
  env->SleepForMicros(-5);  // returns at once
  env->SleepForMicros(0);
}

TEST(MonotonicClockTest, TestClockEnvMovesEachClockOnItsOwn) {
  TestClockEnv env(/*wall_drift_per_call=*/0, /*fake_sleep=*/true);
  const int64_t wall = env.NowMicros(), mono = env.NowMonotonicMicros();
  env.JumpWallClock(-10 * int64_t{1000000});
  EXPECT_LT(env.NowMicros(), wall - 9 * int64_t{1000000});
  const int64_t mono_after_jump = env.NowMonotonicMicros();
  EXPECT_GE(mono_after_jump, mono);
  EXPECT_LT(mono_after_jump - mono, 5 * int64_t{1000000});
  const auto start = std::chrono::steady_clock::now();
  env.SleepForMicros(3600 * int64_t{1000000});  // faked: returns at once, the clock moves an hour
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_GE(env.NowMonotonicMicros() - mono, 3600 * int64_t{1000000});
  EXPECT_EQ(env.sleeps(), 1);
}

TEST(AtomicWriteTest, AppliesExactlyTheModeAskedWhateverTheUmask) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Env* env = Env::Default();
  {
    ScopedUmask um(0077);  // would narrow 0644 to 0600
    ASSERT_TRUE(env->WriteFileAtomic(dir.File("public"), "p").ok());
    EXPECT_EQ(ModeOf(dir.File("public")), 0644);
  }
  {
    ScopedUmask um(0);  // would leave 0666 open to everyone
    ASSERT_TRUE(env->WriteFileAtomic(dir.File("secret"), "s", 0600).ok());
    EXPECT_EQ(ModeOf(dir.File("secret")), 0600);
    // Replacing a file gives the new mode, not the old file's.
    ASSERT_TRUE(env->WriteFileAtomic(dir.File("public"), "now secret", 0600).ok());
    EXPECT_EQ(ModeOf(dir.File("public")), 0600);
    ASSERT_TRUE(env->WriteFileAtomic(dir.File("secret"), "group", 0640).ok());
    EXPECT_EQ(ModeOf(dir.File("secret")), 0640);
  }
  EXPECT_EQ(*env->ReadFile(dir.File("public")), "now secret");
  EXPECT_EQ(*env->ReadFile(dir.File("secret")), "group");
  EXPECT_TRUE(Others(dir.path(), "public").size() == 1) << "a temporary was left behind";
}

TEST(AtomicWriteTest, ExclusiveCreationFollowsNoLinkAndReplacesNothing) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Env* env = Env::Default();
  ASSERT_TRUE(env->WriteFileAtomic(dir.File("target"), "untouched").ok());
  ASSERT_EQ(::symlink(dir.File("target").c_str(), dir.File("link").c_str()), 0);
  StatusOr<std::unique_ptr<WritableFile>> via_link = env->NewExclusiveFile(dir.File("link"), 0600);
  EXPECT_TRUE(absl::IsAlreadyExists(via_link.status())) << via_link.status();
  StatusOr<std::unique_ptr<WritableFile>> over_file = env->NewExclusiveFile(dir.File("target"), 0600);
  EXPECT_TRUE(absl::IsAlreadyExists(over_file.status())) << over_file.status();
  // A dangling link: following it would create the file it names.
  ASSERT_EQ(::symlink(dir.File("made_through_link").c_str(), dir.File("dangling").c_str()), 0);
  EXPECT_TRUE(absl::IsAlreadyExists(env->NewExclusiveFile(dir.File("dangling"), 0600).status()));
  EXPECT_FALSE(env->FileExists(dir.File("made_through_link")));
  EXPECT_EQ(*env->ReadFile(dir.File("target")), "untouched");
  EXPECT_EQ(ModeOf(dir.File("target")), 0644);
}

TEST(AtomicWriteTest, WritingOverALinkReplacesTheLinkNotItsTarget) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Env* env = Env::Default();
  ASSERT_TRUE(env->WriteFileAtomic(dir.File("elsewhere"), "other file").ok());
  ASSERT_EQ(::symlink(dir.File("elsewhere").c_str(), dir.File("cred").c_str()), 0);
  ASSERT_TRUE(env->WriteFileAtomic(dir.File("cred"), "secret", 0600).ok());
  EXPECT_EQ(*env->ReadFile(dir.File("elsewhere")), "other file");
  EXPECT_EQ(*env->ReadFile(dir.File("cred")), "secret");
  EXPECT_EQ(ModeOf(dir.File("cred")), 0600);  // a regular file now (lstat)
}

// Fails each step of a replacement in turn: the target has the old or the new contents, all of
// them; a failure before the rename leaves the old ones and deletes the temporary.
void CheckEveryFailure(bool stop_after_failure) {
  const std::string old_contents(10000, 'o'), new_contents(7000, 'n');
  int64_t steps = 0;
  for (int64_t fail_at = 1;; ++fail_at) {
    SCOPED_TRACE(absl::StrCat("fail_at ", fail_at, " stop_after_failure ", stop_after_failure));
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    const std::string path = dir.File("state");
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, old_contents).ok());
    FaultInjectionEnv env(fail_at, stop_after_failure);
    Status s = env.WriteFileAtomic(path, new_contents, 0600);
    StatusOr<std::string> now = Env::Default()->ReadFile(path);
    ASSERT_TRUE(now.ok()) << now.status();
    if (!env.failed()) {
      // Every step passed: the write is done and fail_at was past its last step.
      ASSERT_TRUE(s.ok()) << s;
      EXPECT_EQ(*now, new_contents);
      EXPECT_EQ(ModeOf(path), 0600);
      steps = fail_at - 1;
      break;
    }
    EXPECT_FALSE(s.ok());
    EXPECT_TRUE(absl::IsUnavailable(s)) << s;
    EXPECT_TRUE(*now == old_contents || *now == new_contents) << "the target has " << now->size() << " bytes";
    if (*now == old_contents) {
      EXPECT_EQ(ModeOf(path), 0644);
      if (!stop_after_failure) {
        EXPECT_TRUE(Others(dir.path(), "state").empty()) << "a temporary was left behind";
      }
    } else {
      // Only the directory sync, after the rename, failed.
      EXPECT_NE(s.message().find("syncdir"), absl::string_view::npos) << s;
    }
  }
  // create, append, sync, close, rename, syncdir.
  EXPECT_EQ(steps, 6);
}

TEST(AtomicWriteTest, AnInjectedFailureLeavesTheOldOrTheNewContents) { CheckEveryFailure(false); }
TEST(AtomicWriteTest, AProcessThatDiesAtAnyStepLeavesTheOldOrTheNewContents) { CheckEveryFailure(true); }

TEST(AtomicWriteTest, ATempFileNotCommittedIsDeleted) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.File("out");
  {
    StatusOr<TempFile> t = TempFile::Create(Env::Default(), path, 0644, ".tempstate");
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->temp_path().rfind(path + ".tempstate", 0), 0u) << t->temp_path();
    ASSERT_TRUE(t->file()->Append("partial").ok());
    EXPECT_TRUE(Env::Default()->FileExists(t->temp_path()));
  }
  EXPECT_TRUE(Others(dir.path(), "").empty()) << "the abandoned temporary is still there";
  StatusOr<TempFile> t = TempFile::Create(Env::Default(), path);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->file()->Append("whole").ok());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(t->file(), nullptr);
  EXPECT_FALSE(t->Commit().ok());  // once only
  EXPECT_EQ(*Env::Default()->ReadFile(path), "whole");
  EXPECT_EQ(Others(dir.path(), "out").size(), 0u);
}

TEST(AtomicWriteTest, TwoTemporariesOfOnePathDoNotCollide) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  StatusOr<TempFile> a = TempFile::Create(Env::Default(), dir.File("x"));
  StatusOr<TempFile> b = TempFile::Create(Env::Default(), dir.File("x"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->temp_path(), b->temp_path());
  ASSERT_TRUE(a->file()->Append("a").ok());
  ASSERT_TRUE(b->file()->Append("b").ok());
  ASSERT_TRUE(a->Commit().ok());
  ASSERT_TRUE(b->Commit().ok());
  EXPECT_EQ(*Env::Default()->ReadFile(dir.File("x")), "b");
}

}  // namespace
}  // namespace dflow
