// BroadcastGradientArgs: TensorFlow's reduction axes for pairs of shapes (checked by hand and
// against a naive per-axis rule), int32 and int64, and bad inputs.
#include <string>

#include "gtest/gtest.h"
#include "ops/math/cwise_test_util.h"
#include "ops/math/kernel_runner_test_util.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::ExpectValues;
using testing::KernelRunner;
using testing::MakeTensor;
using testing::RunOpKernel;

template <typename T>
Tensor V(std::vector<T> v) {
  return MakeTensor<T>(v, TensorShape{static_cast<int64_t>(v.size())});
}

template <typename T>
void Expect(std::vector<T> s0, std::vector<T> s1, std::vector<T> r0, std::vector<T> r1) {
  SCOPED_TRACE(::testing::PrintToString(s0) + " " + ::testing::PrintToString(s1));
  auto out = RunOpKernel("BroadcastGradientArgs", {V<T>(s0), V<T>(s1)});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectValues<T>((*out)[0], r0, TensorShape{static_cast<int64_t>(r0.size())});
  ExpectValues<T>((*out)[1], r1, TensorShape{static_cast<int64_t>(r1.size())});
}

template <typename T>
class BroadcastGradientArgsTest : public ::testing::Test {};
using Types = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(BroadcastGradientArgsTest, Types);

TYPED_TEST(BroadcastGradientArgsTest, TensorFlowCases) {
  using T = TypeParam;
  Expect<T>({2, 3}, {2, 3}, {}, {});  // identical: nothing to reduce
  Expect<T>({2, 1}, {2, 1}, {}, {});  // identical even with ones
  Expect<T>({2, 3}, {3}, {}, {0});
  Expect<T>({3}, {2, 3}, {0}, {});
  Expect<T>({2, 1}, {1, 3}, {1}, {0});
  Expect<T>({}, {2, 3}, {0, 1}, {});
  Expect<T>({1, 1}, {1}, {0, 1}, {0, 1});  // axes where both are 1 go to both
  Expect<T>({5, 1, 3}, {4, 1}, {1}, {0, 2});
  Expect<T>({2, 1, 3}, {1, 1, 3}, {1}, {0, 1});
  Expect<T>({0, 3}, {1, 3}, {}, {0});  // 1 broadcasts against 0
  Expect<T>({1}, {0}, {0}, {});
}

TEST(BroadcastGradientArgsTest, MatchesNaiveRule) {
  // Every pair of shapes of rank <= 3 over dims {1, 2}, the shorter padded with ones.
  std::vector<std::vector<int32_t>> shapes = {{}};
  for (int rank = 1; rank <= 3; ++rank) {
    for (int bits = 0; bits < (1 << rank); ++bits) {
      std::vector<int32_t> s;
      for (int i = 0; i < rank; ++i) s.push_back((bits >> i) & 1 ? 2 : 1);
      shapes.push_back(s);
    }
  }
  for (const auto& a : shapes) {
    for (const auto& b : shapes) {
      std::vector<int32_t> ra, rb;
      if (a != b) {
        const int rank = std::max(a.size(), b.size());
        for (int i = 0; i < rank; ++i) {
          const int ia = i - (rank - static_cast<int>(a.size())), ib = i - (rank - static_cast<int>(b.size()));
          const int da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
          if (da == 1) ra.push_back(i);
          if (db == 1) rb.push_back(i);
        }
      }
      Expect<int32_t>(a, b, ra, rb);
    }
  }
}

TEST(BroadcastGradientArgsTest, BadInputs) {
  auto r = KernelRunner::Create("BroadcastGradientArgs", {DT_INT32, DT_INT32});
  ASSERT_TRUE(r.ok()) << r.status();
  auto out = (*r)->Run({V<int32_t>({2, 3}), V<int32_t>({4})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("Incompatible shapes: [2,3] vs. [4]"), absl::string_view::npos) << out.status();
  out = (*r)->Run({V<int32_t>({2, -3}), V<int32_t>({3})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  out = (*r)->Run({MakeTensor<int32_t>({2, 3}, TensorShape{1, 2}), V<int32_t>({3})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  out = (*r)->Run({Tensor(2), V<int32_t>({3})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(RunOpKernel("BroadcastGradientArgs", {V<int32_t>({2}), V<int64_t>({2})}).ok());
  EXPECT_FALSE(RunOpKernel("BroadcastGradientArgs", {V<float>({2}), V<float>({2})}).ok());
  EXPECT_FALSE(testing::InferShapes("BroadcastGradientArgs", {Tensor(2), V<int32_t>({3})}).ok());
}

}  // namespace
}  // namespace dflow
