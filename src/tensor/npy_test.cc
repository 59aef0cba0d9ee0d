#include "tensor/npy.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

std::string Header(const std::string& dict) {
  std::string h = dict;
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(h.size() & 0xff));
  out.push_back(static_cast<char>(h.size() >> 8));
  return out + h;
}

TEST(NpyTest, ReadsWhatNumPyWrites) {
  // np.save of np.array([[1.5, 2], [3, 4]], dtype=np.float32), written out by hand.
  std::string bytes = Header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }");
  float values[] = {1.5f, 2, 3, 4};
  bytes.append(reinterpret_cast<const char*>(values), sizeof(values));
  auto t = ParseNpy(bytes);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_FLOAT);
  EXPECT_EQ(t->ToString(), "[[1.5 2] [3 4]]");
}

TEST(NpyTest, RoundTripsEveryType) {
  std::vector<Tensor> ts = {
      Tensor::FromValues<float>({1.5f, -2}, TensorShape{2}).value(),
      Tensor::FromValues<double>({0.1, 2, 3, 4, 5, 6}, TensorShape{2, 3}).value(),
      Tensor::FromValues<int32_t>({7}, TensorShape{}).value(),
      Tensor::FromValues<int64_t>({1LL << 40}, TensorShape{1}).value(),
      Tensor::FromValues<uint8_t>({0, 255}, TensorShape{2}).value(),
      Tensor::FromValues<bool>({true, false, true}, TensorShape{3}).value(),
      Tensor(DT_FLOAT, TensorShape{0, 3}),
  };
  for (const Tensor& t : ts) {
    auto bytes = SerializeNpy(t);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(bytes->find("\n") % 64, 63u);  // header padded to 64 bytes
    auto back = ParseNpy(*bytes);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->dtype(), t.dtype());
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(back->ToString(), t.ToString());
  }
  EXPECT_FALSE(SerializeNpy(Tensor("s")).ok());
}

TEST(NpyTest, RejectsMalformedFilesWithClearErrors) {
  auto err = [](const std::string& b) { return std::string(ParseNpy(b).status().message()); };
  EXPECT_THAT(err("hello"), HasSubstr("magic"));
  EXPECT_THAT(err(Header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") + "abcd"),
              HasSubstr("unsupported element type"));
  EXPECT_THAT(err(Header("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }") + "abcd"), HasSubstr("Fortran"));
  EXPECT_THAT(err(Header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }") + "abcd"),
              HasSubstr("needs 8 data bytes but 4"));
  EXPECT_THAT(err(Header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 1000000000), }")),
              HasSubstr("too many elements"));
  EXPECT_THAT(err(Header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }")), HasSubstr("bad dimension"));
  EXPECT_THAT(err(Header("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }") + "12345678"),
              HasSubstr("unsupported"));
  EXPECT_THAT(err(Header("{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }") + "\x07"), HasSubstr("bool"));
  std::string big("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
  EXPECT_THAT(err(big), HasSubstr("header"));
}

TEST(NpyTest, TruncationsAndMutationsNeverCrash) {
  std::string good = *SerializeNpy(Tensor::FromValues<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape{2, 3}).value());
  for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(ParseNpy(good.substr(0, n)).ok()) << n;
  std::mt19937 rng(42);
  for (int i = 0; i < 3000; ++i) {
    std::string b = good;
    b[rng() % b.size()] = static_cast<char>(rng());
    auto t = ParseNpy(b);
    if (t.ok()) EXPECT_LE(t->TotalBytes(), good.size());
  }
}

}  // namespace
}  // namespace dflow
