// ParseFeedValue at the edges of each integer type (found by fuzz/fuzz_feed_value.cc: a value
// out of range was converted before being rejected, which is undefined behaviour; its
// regressions replay as fuzz_replay_feed_value).
#include <string>

#include "gtest/gtest.h"
#include "tools/feed_value.h"

namespace dflow::tools {
namespace {

TEST(FeedValueRangeTest, OutOfRangeIntegersAreErrorsNamingTheValue) {
  for (const auto& [text, dtype] : std::vector<std::pair<std::string, DType>>{
           {"[0,552]", DT_UINT8}, {"-1", DT_UINT8}, {"256", DT_UINT8}, {"2147483648", DT_INT32},
           {"-2147483649", DT_INT32}, {"9223372036854775807", DT_INT64},  // reads as 2^63
           {"1e300", DT_INT64}, {"2", DT_BOOL}, {"0.5", DT_INT32}}) {
    StatusOr<Tensor> t = ParseFeedValue(text, dtype);
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_NE(t.status().message().find("is not a valid"), std::string::npos) << t.status();
  }
}

TEST(FeedValueRangeTest, TheEndsOfEachRangeAreAccepted) {
  EXPECT_EQ(ParseFeedValue("[0,255]", DT_UINT8)->ToString(), "[0 255]");
  EXPECT_EQ(ParseFeedValue("[-2147483648,2147483647]", DT_INT32)->ToString(), "[-2147483648 2147483647]");
  EXPECT_EQ(ParseFeedValue("-9223372036854775808", DT_INT64)->ToString(), "-9223372036854775808");
  EXPECT_EQ(ParseFeedValue("[true,false]", DT_BOOL)->ToString(), "[True False]");
}

}  // namespace
}  // namespace dflow::tools
