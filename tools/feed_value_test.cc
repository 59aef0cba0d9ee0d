// ParseFeedValue at the edges of each integer type (found by fuzz/fuzz_feed_value.cc: a value
// out of range was converted before being rejected, which is undefined behaviour; its
// regressions replay as fuzz_replay_feed_value).
#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/feed_value.h"

namespace dflow::tools {
namespace {

TEST(FeedValueRangeTest, OutOfRangeIntegersAreErrorsNamingTheValue) {
  for (const auto& [text, dtype] : std::vector<std::pair<std::string, DType>>{{"[0,552]", DT_UINT8},
                                                                              {"-1", DT_UINT8},
                                                                              {"256", DT_UINT8},
                                                                              {"2147483648", DT_INT32},
                                                                              {"-2147483649", DT_INT32},
                                                                              {"9223372036854775808", DT_INT64},
                                                                              {"-9223372036854775809", DT_INT64},
                                                                              {"9.3e18", DT_INT64},
                                                                              {"[1, -0.0, 256]", DT_UINT8},
                                                                              {"1e300", DT_INT64},
                                                                              {"2", DT_BOOL},
                                                                              {"0.5", DT_INT32}}) {
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
  EXPECT_EQ(ParseFeedValue("[True, False]", DT_BOOL)->ToString(), "[True False]");  // Python's spelling
  EXPECT_EQ(ParseFeedValue("[0, 1]", DT_BOOL)->ToString(), "[False True]");
  EXPECT_EQ(ParseFeedValue("[1e2, -0, 2.0]", DT_INT32)->ToString(), "[100 0 2]");
}

// The text is JSON, read by protobuf into doubles; integers are taken from the text as written,
// so that an int64 beyond 2^53 arrives exactly.
TEST(FeedValueRangeTest, Int64LiteralsAreExact) {
  StatusOr<Tensor> t = ParseFeedValue("[9223372036854775807, 9007199254740993, -9223372036854775807]", DT_INT64);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->flat<int64_t>()[0], INT64_MAX);
  EXPECT_EQ(t->flat<int64_t>()[1], 9007199254740993);  // 2^53 + 1: no double holds it
  EXPECT_EQ(t->flat<int64_t>()[2], -INT64_MAX);
  // Written with an exponent or a fraction it is a double, and must be a whole one in range.
  EXPECT_EQ(ParseFeedValue("9.007199254740992e15", DT_INT64)->flat<int64_t>()[0], 9007199254740992);
  EXPECT_FALSE(ParseFeedValue("9.3e18", DT_INT64).ok());
}

TEST(FeedValueSyntaxTest, ErrorsSayWhatIsWrong) {
  auto error = [](const std::string& text, DType dtype) {
    StatusOr<Tensor> t = ParseFeedValue(text, dtype);
    EXPECT_FALSE(t.ok()) << text;
    return std::string(t.status().message());
  };
  EXPECT_EQ(error("[[1,2],[3]]", DT_INT32),
            "Cannot parse value '[[1,2],[3]]': rows have different lengths (ragged list)");
  EXPECT_EQ(error("[[1,2],3]", DT_INT32), "Cannot parse value '[[1,2],3]': rows have different nesting (ragged list)");
  EXPECT_EQ(error("[1,2", DT_INT32),
            "Cannot parse value '[1,2': JSON: Unexpected end of string. Expected , or ] after array value. at the end "
            "of the input");
  EXPECT_EQ(error("[1,\"2\"]", DT_FLOAT), "Cannot parse value '[1,\"2\"]': a string is not a number");
  EXPECT_EQ(error("{\"a\": 1}", DT_FLOAT), "Cannot parse value '{\"a\": 1}': an object is not a number");
  EXPECT_EQ(error("[null]", DT_FLOAT), "Cannot parse value '[null]': null is not a number");
  EXPECT_EQ(error("[1,2,]", DT_FLOAT), "Cannot parse value '[1,2,]': JSON: a trailing comma at byte 5");
  EXPECT_EQ(error("abc", DT_FLOAT), "Cannot parse value 'abc': JSON: Unexpected token. near 'abc'");
  EXPECT_EQ(error("[1] 2", DT_FLOAT),
            "Cannot parse value '[1] 2': JSON: Parsing terminated before end of input. near '2'");
  EXPECT_THAT(error(std::string(33, '[') + std::string(33, ']'), DT_FLOAT),
              ::testing::HasSubstr("nested deeper than 32"));
  EXPECT_EQ(ParseFeedValue(std::string(32, '[') + std::string(32, ']'), DT_FLOAT)->dims(), 32);
  EXPECT_THAT(error("1e999", DT_DOUBLE), ::testing::HasSubstr("Number exceeds the range of double"));
}

}  // namespace
}  // namespace dflow::tools
