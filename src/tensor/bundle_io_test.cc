// The data-file I/O of tensor bundles (bundle_io.h): staged (O_DIRECT) writes, threaded reads,
// checksums of parts combined, and the failures of each in a bundle.
#include "tensor/bundle_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <random>

#include "base/crc32c.h"
#include "base/temp_dir.h"
#include "gtest/gtest.h"
#include "tensor/tensor_bundle.h"

namespace dflow {
namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// Files whose WriteAt number `fail_at` (1-based, counted over the Env) fails as a full disk
// would; with `positional` false they offer no WriteAt at all (writers fall back to Append).
class FailingWriteEnv : public Env {
 public:
  explicit FailingWriteEnv(int fail_at, bool positional = true) : fail_at_(fail_at), positional_(positional) {}
  StatusOr<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path, int mode) const override {
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, Env::NewExclusiveFile(path, mode));
    return std::unique_ptr<WritableFile>(new File(this, std::move(f)));
  }
  int writes() const { return writes_.load(); }

 private:
  class File : public WritableFile {
   public:
    File(const FailingWriteEnv* env, std::unique_ptr<WritableFile> f) : env_(env), f_(std::move(f)) {}
    Status Append(absl::string_view d) override { return f_->Append(d); }
    Status Flush() override { return f_->Flush(); }
    Status Sync() override { return f_->Sync(); }
    Status Close() override { return f_->Close(); }
    const std::string& path() const override { return f_->path(); }
    Status WriteAt(uint64_t offset, absl::string_view d) override {
      if (!env_->positional_) return WritableFile::WriteAt(offset, d);
      if (!d.empty() && ++env_->writes_ == env_->fail_at_) {
        return errors::ResourceExhausted("Cannot write ", path(), ": No space left on device");
      }
      return f_->WriteAt(offset, d);
    }
    Status EnableDirectWrites() override { return f_->EnableDirectWrites(); }
    Status Truncate(uint64_t size) override { return f_->Truncate(size); }
    Status StartWriteback(uint64_t o, uint64_t n) override { return f_->StartWriteback(o, n); }

   private:
    const FailingWriteEnv* env_;
    std::unique_ptr<WritableFile> f_;
  };
  const int fail_at_;
  const bool positional_;
  mutable std::atomic<int> writes_{0};
};

TEST(BundleIoTest, CombinedChecksumsOfPartsEqualTheWholeOne) {
  const std::string s = RandomBytes(100000, 1);
  const uint32_t whole = crc32c::Value(s.data(), s.size());
  for (size_t cut : {size_t{0}, size_t{1}, size_t{7}, size_t{4096}, size_t{65537}, s.size()}) {
    const uint32_t a = crc32c::Value(s.data(), cut), b = crc32c::Value(s.data() + cut, s.size() - cut);
    EXPECT_EQ(bundle_io::Crc32cCombine(a, b, s.size() - cut), whole) << cut;
  }
}

TEST(BundleIoTest, FastChecksumEqualsThePlainOne) {
  const std::string s = RandomBytes(3 * 3 * 4096 + 1000, 8);
  for (size_t start : {size_t{0}, size_t{3}}) {
    for (size_t n :
         {size_t{0}, size_t{5}, size_t{3 * 4096 - 1}, size_t{3 * 4096}, size_t{3 * 4096 + 9}, s.size() - 3}) {
      EXPECT_EQ(bundle_io::Crc32cExtend(0x1234567, s.data() + start, n), crc32c::Extend(0x1234567, s.data() + start, n))
          << start << " " << n;
    }
  }
}

// Every mix of direct, buffered and Append-only files, with blocks small enough that the thread
// writes many of them: the file holds exactly the bytes appended, the checksum is theirs.
TEST(BundleIoTest, StagedWriterWritesExactlyTheBytesAppended) {
  const std::string bytes = RandomBytes(5 * 4096 * 3 + 123, 2);
  for (bool positional : {true, false}) {
    for (size_t block : {size_t{4096}, size_t{3 * 4096}, size_t{1} << 20}) {
      TempDir dir;
      FailingWriteEnv env(/*fail_at=*/0, positional);
      auto f = env.NewExclusiveFile(dir.File("f"), 0644);
      ASSERT_TRUE(f.ok());
      uint32_t crc = 0;
      {
        bundle_io::StagedWriter w(f->get(), block);
        EXPECT_EQ(w.direct(), positional && (*f)->EnableDirectWrites().ok());
        size_t done = 0, step = 1;
        while (done < bytes.size()) {  // pieces of growing sizes, across block boundaries
          const size_t n = std::min(step, bytes.size() - done);
          ASSERT_TRUE(w.Append(absl::string_view(bytes).substr(done, n), &crc).ok());
          done += n;
          step = step * 3 + 1;
        }
        EXPECT_EQ(w.size(), bytes.size());
        ASSERT_TRUE(w.Finish().ok());
      }
      ASSERT_TRUE((*f)->Sync().ok());
      ASSERT_TRUE((*f)->Close().ok());
      EXPECT_EQ(crc, crc32c::Value(bytes.data(), bytes.size()));
      auto back = Env::Default()->ReadFile(dir.File("f"));
      ASSERT_TRUE(back.ok());
      EXPECT_TRUE(*back == bytes) << "positional " << positional << " block " << block << " size " << back->size();
    }
  }
}

TEST(BundleIoTest, ThreadedReadsAreBitIdenticalAndChecksummed) {
  TempDir dir;
  const std::string bytes = RandomBytes((size_t{40} << 20) + 4321, 3);
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(dir.File("f"), bytes).ok());
  auto file = Env::Default()->NewRandomAccessFile(dir.File("f"));
  ASSERT_TRUE(file.ok());
  // Out of the page cache: the reads then go around it (O_DIRECT); after the first round some
  // pieces may be cached again.
  const int fd = ::open(dir.File("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  EXPECT_FALSE((*file)->InPageCache(4096 * 3 + 5, 1 << 20));
  for (int threads : {1, 2, 4}) {
    for (uint64_t offset : {uint64_t{0}, uint64_t{4321}}) {
      const uint64_t n = bytes.size() - offset;
      std::string out(n, '\0');
      auto crc = bundle_io::ReadAndChecksum(**file, offset, n, out.data(), threads);
      ASSERT_TRUE(crc.ok()) << crc.status();
      EXPECT_EQ(*crc, crc32c::Value(bytes.data() + offset, n));
      EXPECT_TRUE(out == bytes.substr(offset)) << threads << " " << offset;
    }
  }
  std::string out(bytes.size(), '\0');
  auto past = bundle_io::ReadAndChecksum(**file, 1000, bytes.size(), out.data(), 4);  // runs off the end
  EXPECT_FALSE(past.ok());
}

Tensor LargeFloats(int64_t n, uint32_t seed) {
  Tensor t = Tensor::Allocate(DT_FLOAT, TensorShape({n})).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  float* p = t.data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = u(rng);
  return t;
}

// Tensors large enough to be read by several threads, among small ones at unaligned offsets.
TEST(BundleIoTest, LargeTensorsRoundTripBitIdentical) {
  TempDir dir;
  const std::string p = dir.File("m");
  Tensor big = LargeFloats((int64_t{12} << 20) + 3, 4), big2 = LargeFloats(int64_t{9} << 20, 5);
  Tensor small = Tensor::FromValues<float>({1, 2, 3}, {3}).value();
  {
    BundleWriter w(Env::Default(), p);
    ASSERT_TRUE(w.Add("a_small", small).ok());
    ASSERT_TRUE(w.Add("b_big", big).ok());
    ASSERT_TRUE(w.Add("c_str", Tensor::FromValues<std::string>({"x", "yz"}, {2}).value()).ok());
    ASSERT_TRUE(w.Add("d_big", big2).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  auto r = BundleReader::Open(Env::Default(), p);
  ASSERT_TRUE(r.ok()) << r.status();
  for (auto [name, want] : {std::pair{"a_small", &small}, {"b_big", &big}, {"d_big", &big2}}) {
    auto got = (*r)->Lookup(name);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->TotalBytes(), want->TotalBytes());
    EXPECT_EQ(std::memcmp(got->raw_data(), want->raw_data(), want->TotalBytes()), 0) << name;
  }
  EXPECT_EQ((*r)->Lookup("c_str")->data<std::string>()[1], "yz");
  const uint64_t file_size = Env::Default()->FileSize(BundleDataFilename(p, 0, 1)).value();
  EXPECT_EQ(file_size, small.TotalBytes() + big.TotalBytes() + big2.TotalBytes() + 1 + 1 + 4 + 3);
}

TEST(BundleIoTest, FlippedByteInAnyPartOfALargeTensorIsDataLoss) {
  TempDir dir;
  const std::string p = dir.File("m");
  Tensor big = LargeFloats(int64_t{16} << 20, 6);  // 64 MiB: four parts
  {
    BundleWriter w(Env::Default(), p);
    ASSERT_TRUE(w.Add("big", big).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  const std::string data = BundleDataFilename(p, 0, 1);
  for (uint64_t at : {uint64_t{5}, (uint64_t{40} << 20) + 17, big.TotalBytes() - 1}) {
    char c;
    {
      std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(at));
      f.get(c);
      f.seekp(static_cast<std::streamoff>(at));
      f.put(static_cast<char>(c ^ 1));
    }
    auto r = BundleReader::Open(Env::Default(), p);
    ASSERT_TRUE(r.ok());
    Status s = (*r)->Lookup("big").status();
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << at;
    EXPECT_NE(s.message().find(data), std::string::npos) << s;
    EXPECT_NE(s.message().find("tensor 'big'"), std::string::npos) << s;
    EXPECT_NE(s.message().find("checksum"), std::string::npos) << s;
    std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(c);
  }
  EXPECT_TRUE((*BundleReader::Open(Env::Default(), p))->Lookup("big").ok());
}

// A write that fails in the middle of a large save (a full disk): the error comes back, nothing
// is presented as a checkpoint and no file is left behind; with and without positional writes.
TEST(BundleIoTest, FailedWriteInTheMiddleLeavesNoCheckpoint) {
  Tensor big = LargeFloats(int64_t{10} << 20, 7);  // 40 MiB: five staging blocks
  for (int fail_at : {1, 2, 3, 5, 6}) {
    TempDir dir;
    const std::string p = dir.File("m");
    FailingWriteEnv env(fail_at);
    Status s = [&] {
      BundleWriter w(&env, p);
      RETURN_IF_ERROR(w.Add("a", big));
      RETURN_IF_ERROR(w.Add("b", big));
      return w.Finish();
    }();
    ASSERT_FALSE(s.ok()) << fail_at;
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_NE(s.message().find("No space left"), std::string::npos) << s;
    EXPECT_EQ(BundleReader::Open(Env::Default(), p).status().code(), absl::StatusCode::kNotFound);
    EXPECT_TRUE(Env::Default()->GetChildren(dir.path()).value().empty()) << fail_at;
  }
}

}  // namespace
}  // namespace dflow
