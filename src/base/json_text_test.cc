#include "base/json_text.h"

#include <string>

#include "gtest/gtest.h"

namespace dflow {
namespace {

std::string Check(const std::string& text, JsonLimits limits = {}) {
  Status s = CheckJsonText(text, limits);
  return s.ok() ? "ok" : std::string(s.message());
}

TEST(JsonTextTest, LimitsAndStrictness) {
  EXPECT_EQ(Check(R"({"a": ["x\"[{", "\\", "\u00e9\n"], "b": [[]]})"), "ok");  // brackets in strings do not count
  EXPECT_EQ(Check("[[[]]]", {.max_bytes = 100, .max_depth = 3}), "ok");
  EXPECT_EQ(Check("[[[[]]]]", {.max_bytes = 100, .max_depth = 3}),
            "JSON: arrays and objects nested deeper than 3 at byte 3");
  EXPECT_EQ(Check("[1, 2]", {.max_bytes = 5}), "JSON: the input is 6 bytes, which exceeds the limit of 5");
  EXPECT_EQ(Check(R"(["a\x"])"), "JSON: invalid escape in a string at byte 3");
  EXPECT_EQ(Check(std::string("[\"a\0\"]", 6)), "JSON: a control character in a string (escape it) at byte 3");
  EXPECT_EQ(Check("['a']"), "JSON: a single-quoted string (JSON strings take double quotes) at byte 1");
  EXPECT_EQ(Check("[1, 2 ,\n ]"), "JSON: a trailing comma at byte 9");
  EXPECT_EQ(Check(R"({"a": 1,})"), "JSON: a trailing comma at byte 8");
  EXPECT_EQ(Check(R"(["a\)"), "ok");  // an unfinished string is the parser's to report
}

TEST(JsonTextTest, ParserErrorsOnOneLine) {
  EXPECT_EQ(JsonParseError("Unexpected token.\nNaN}\n^").message(), "JSON: Unexpected token. near 'NaN}'");
  EXPECT_EQ(JsonParseError("Expected a value.\n[1, \n \n    ^").message(),
            "JSON: Expected a value. at the end of the input");
  EXPECT_EQ(JsonParseError("Bad.\n{\"a\":\n x}\n      ^").message(), "JSON: Bad. near 'x}'");  // a line break around it
  EXPECT_EQ(JsonParseError("(fields[0]) a: Repeated map key: 'a' is already set.").message(),
            "JSON: (fields[0]) a: Repeated map key: 'a' is already set.");
  EXPECT_EQ(JsonParseError("two\nlines").message(), "JSON: two lines");
  EXPECT_EQ(JsonParseError("x\nshort\n          ^").message(), "JSON: x at the end of the input");
  EXPECT_EQ(JsonParseError("x\nshort\n          ^").code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
