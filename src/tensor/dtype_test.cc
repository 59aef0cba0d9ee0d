// DTypeString on numbers from outside (a proto's dtype field may be any int; found by
// fuzz/fuzz_tensor_proto.cc, whose regressions replay as fuzz_replay_tensor_proto).
#include <climits>

#include "gtest/gtest.h"
#include "tensor/dtype.h"

namespace dflow {
namespace {

TEST(DTypeStringTest, NamesOneLevelOfReference) {
  EXPECT_EQ(DTypeString(DT_FLOAT_REF), "float_ref");
  EXPECT_EQ(DTypeString(static_cast<DType>(kDTypeRefOffset + 55)), "unknown(55)_ref");
}

TEST(DTypeStringTest, AnyIntIsUnknownWithoutRecursion) {
  // These once recursed once per 100 (a stack overflow for INT_MAX).
  EXPECT_EQ(DTypeString(static_cast<DType>(2 * kDTypeRefOffset + 1)), "unknown(201)");
  EXPECT_EQ(DTypeString(static_cast<DType>(INT_MAX)), "unknown(2147483647)");
  EXPECT_EQ(DTypeString(static_cast<DType>(-5)), "unknown(-5)");
}

}  // namespace
}  // namespace dflow
