#include "distributed/json.h"

#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow::json {
namespace {

using ::testing::HasSubstr;

Value ParseOk(absl::string_view text) {
  auto v = Parse(text);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status();
  return v.ok() ? *v : Value();
}

std::string ErrorOf(absl::string_view text, const ParseOptions& options = ParseOptions()) {
  auto v = Parse(text, options);
  EXPECT_FALSE(v.ok()) << "parsed: " << std::string(text.substr(0, 80));
  if (v.ok()) return "";
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(v.status().message());
}

TEST(JsonTest, Scalars) {
  EXPECT_TRUE(ParseOk("null").is_null());
  EXPECT_TRUE(ParseOk("true").bool_value());
  EXPECT_FALSE(ParseOk(" false ").bool_value());
  EXPECT_EQ(ParseOk("0").number_value(), 0);
  EXPECT_EQ(ParseOk("-0").number_value(), 0);
  EXPECT_EQ(ParseOk("42").number_value(), 42);
  EXPECT_EQ(ParseOk("-17").number_value(), -17);
  EXPECT_EQ(ParseOk("1.5").number_value(), 1.5);
  EXPECT_EQ(ParseOk("2.5e3").number_value(), 2500);
  EXPECT_EQ(ParseOk("25E-1").number_value(), 2.5);
  EXPECT_EQ(ParseOk("1e+2").number_value(), 100);
  EXPECT_EQ(ParseOk("\"hi\"").string_value(), "hi");
  EXPECT_EQ(ParseOk("\t\r\n 7 \n").number_value(), 7);
  // Underflow is the nearest double, zero; it is not an error.
  EXPECT_EQ(ParseOk("1e-400").number_value(), 0);
  EXPECT_EQ(ParseOk("0.0000000000000000000000000000000000001e-400").number_value(), 0);
  EXPECT_EQ(ParseOk("1.7976931348623157e308").number_value(), 1.7976931348623157e308);
}

TEST(JsonTest, ArraysAndObjects) {
  Value v = ParseOk(R"({"a": [1, "two", null, true, {"b": []}], "c": {}})");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.object_members().size(), 2u);
  EXPECT_EQ(v.object_members()[0].first, "a");
  const Value* a = v.Find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->array_items().size(), 5u);
  EXPECT_EQ(a->array_items()[0].number_value(), 1);
  EXPECT_EQ(a->array_items()[1].string_value(), "two");
  EXPECT_TRUE(a->array_items()[2].is_null());
  EXPECT_TRUE(a->array_items()[3].bool_value());
  EXPECT_TRUE(a->array_items()[4].Find("b")->is_array());
  EXPECT_TRUE(v.Find("c")->is_object());
  EXPECT_EQ(v.Find("missing"), nullptr);
  EXPECT_EQ(a->Find("x"), nullptr);  // not an object
  EXPECT_EQ(v.ToString(), R"({"a":[1,"two",null,true,{"b":[]}],"c":{}})");
  EXPECT_TRUE(ParseOk("[]").array_items().empty());
  EXPECT_TRUE(ParseOk("[ ]").is_array());
  EXPECT_TRUE(ParseOk("{ }").is_object());
}

TEST(JsonTest, AccessorsOfTheWrongKindAreNeutral) {
  Value v = ParseOk("[1]");
  EXPECT_EQ(v.string_value(), "");
  EXPECT_TRUE(v.object_members().empty());
  EXPECT_FALSE(v.bool_value());
  EXPECT_EQ(v.number_value(), 0);
  EXPECT_TRUE(ParseOk("\"s\"").array_items().empty());
}

TEST(JsonTest, StringEscapes) {
  EXPECT_EQ(ParseOk(R"("a\"b\\c\/d\be\ff\ng\rh\ti")").string_value(), "a\"b\\c/d\be\ff\ng\rh\ti");
  EXPECT_EQ(ParseOk(R"("\u0041\u00e9\u20AC")").string_value(), "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(ParseOk(R"("\ud83d\ude00")").string_value(), "\xF0\x9F\x98\x80");  // U+1F600
  EXPECT_EQ(ParseOk(R"("\u0000")").string_value(), std::string(1, '\0'));
  EXPECT_EQ(ParseOk("\"caf\xC3\xA9 \xF0\x9F\x98\x80\"").string_value(), "caf\xC3\xA9 \xF0\x9F\x98\x80");
  // Round trip through ToString.
  Value v = ParseOk(R"("q\"\\\n\u0001")");
  EXPECT_EQ(v.ToString(), R"("q\"\\\n\u0001")");
}

TEST(JsonTest, BadEscapesAndStrings) {
  EXPECT_THAT(ErrorOf(R"("\x")"), HasSubstr("invalid escape in a string at byte 1"));
  EXPECT_THAT(ErrorOf(R"("\u12")"), HasSubstr("\\u escape"));
  EXPECT_THAT(ErrorOf(R"("\u12G4")"), HasSubstr("invalid hex digit in a \\u escape at byte 5"));
  EXPECT_THAT(ErrorOf(R"("\ud800")"), HasSubstr("high surrogate not followed by a low surrogate"));
  EXPECT_THAT(ErrorOf(R"("\ud800\u0041")"), HasSubstr("high surrogate not followed by a low surrogate"));
  EXPECT_THAT(ErrorOf(R"("\udc00")"), HasSubstr("lone low surrogate"));
  EXPECT_THAT(ErrorOf("\"a\nb\""), HasSubstr("unescaped control character in a string at byte 2"));
  EXPECT_THAT(ErrorOf("\"abc"), HasSubstr("unterminated string at byte 0"));
  EXPECT_THAT(ErrorOf("\"abc\\"), HasSubstr("unterminated escape"));
  EXPECT_THAT(ErrorOf("\"\xFF\""), HasSubstr("invalid UTF-8"));
  EXPECT_THAT(ErrorOf("\"\xC0\xAF\""), HasSubstr("invalid UTF-8"));          // overlong '/'
  EXPECT_THAT(ErrorOf("\"\xED\xA0\x80\""), HasSubstr("invalid UTF-8"));      // encoded surrogate
  EXPECT_THAT(ErrorOf("\"\xF4\x90\x80\x80\""), HasSubstr("invalid UTF-8"));  // > U+10FFFF
  EXPECT_THAT(ErrorOf("\"\xE2\x82\""), HasSubstr("UTF-8"));                  // truncated
  EXPECT_THAT(ErrorOf("'single'"), HasSubstr("unexpected character '''"));
}

TEST(JsonTest, BadNumbers) {
  EXPECT_THAT(ErrorOf("01"), HasSubstr("leading zero at byte 1"));
  EXPECT_THAT(ErrorOf("-"), HasSubstr("expected a digit at byte 1"));
  EXPECT_THAT(ErrorOf("1."), HasSubstr("expected a digit after '.' at byte 2"));
  EXPECT_THAT(ErrorOf(".5"), HasSubstr("unexpected character '.'"));
  EXPECT_THAT(ErrorOf("1e"), HasSubstr("exponent"));
  EXPECT_THAT(ErrorOf("1e+"), HasSubstr("exponent"));
  EXPECT_THAT(ErrorOf("+1"), HasSubstr("unexpected character '+'"));
  EXPECT_THAT(ErrorOf("NaN"), HasSubstr("unexpected character 'N'"));
  EXPECT_THAT(ErrorOf("Infinity"), HasSubstr("expected a value"));
  EXPECT_THAT(ErrorOf("-Infinity"), HasSubstr("expected a digit"));
  EXPECT_THAT(ErrorOf("0x10"), HasSubstr("unexpected character 'x' after the value at byte 1"));
}

TEST(JsonTest, HugeNumbersAreErrorsNotInfinity) {
  EXPECT_THAT(ErrorOf("1e309"), HasSubstr("too large for a double at byte 0"));
  EXPECT_THAT(ErrorOf("[1, -1e99999999999999999999]"), HasSubstr("too large for a double at byte 4"));
  EXPECT_THAT(ErrorOf(std::string(400, '9')), HasSubstr("too large"));
  // Very long but representable numbers are fine.
  EXPECT_EQ(ParseOk("1" + std::string(300, '0')).number_value(), 1e300);
  EXPECT_EQ(ParseOk("0." + std::string(5000, '0') + "1e5000").number_value(), 0.1);
}

TEST(JsonTest, SyntaxErrorsNameTheByteOffset) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("unexpected end of input, expected a value at byte 0"));
  EXPECT_THAT(ErrorOf("   "), HasSubstr("at byte 3"));
  EXPECT_THAT(ErrorOf("[1,]"), HasSubstr("unexpected character ']', expected a value at byte 3"));
  EXPECT_THAT(ErrorOf("[1 2]"), HasSubstr("expected ',' or ']' at byte 3"));
  EXPECT_THAT(ErrorOf(R"({"a" 1})"), HasSubstr("expected ':' at byte 5"));
  EXPECT_THAT(ErrorOf(R"({"a": 1,})"), HasSubstr("expected a key at byte 8"));
  EXPECT_THAT(ErrorOf(R"({a: 1})"), HasSubstr("expected a key at byte 1"));
  EXPECT_THAT(ErrorOf(R"({"a": 1 "b": 2})"), HasSubstr("expected ',' or '}' at byte 8"));
  EXPECT_THAT(ErrorOf(R"({"a": 1, "a": 2})"), HasSubstr("duplicate key \"a\" at byte 9"));
  EXPECT_THAT(ErrorOf("tru"), HasSubstr("expected 'true' at byte 0"));
  EXPECT_THAT(ErrorOf("nul"), HasSubstr("expected 'null'"));
  EXPECT_THAT(ErrorOf("1 2"), HasSubstr("after the value at byte 2"));
  EXPECT_THAT(ErrorOf("{} x"), HasSubstr("after the value at byte 3"));
  EXPECT_THAT(ErrorOf("[1] // comment"), HasSubstr("after the value"));
  EXPECT_THAT(ErrorOf(std::string("1\0", 2)), HasSubstr("byte 0x00 after the value at byte 1"));
  EXPECT_THAT(ErrorOf("\xEF\xBB\xBF{}"), HasSubstr("byte 0xef"));  // no byte-order mark
}

TEST(JsonTest, EveryTruncationIsAnErrorNotACrash) {
  const std::string doc =
      R"({"cluster": {"ps": ["h:1", "h:2"], "worker": ["w:3"]}, "n": -1.25e-3, "s": "\u00e9\ud83d\ude00\n",)"
      R"( "t": [true, false, null, {}, []]})";
  ASSERT_TRUE(Parse(doc).ok());
  for (size_t n = 0; n < doc.size(); ++n) {
    auto v = Parse(absl::string_view(doc).substr(0, n));
    // Only "-1.25e-3"-style prefixes that end a number could parse, and none do here at top level.
    EXPECT_FALSE(v.ok()) << n;
  }
}

TEST(JsonTest, DeepNestingIsBounded) {
  EXPECT_TRUE(Parse(std::string(64, '[') + std::string(64, ']')).ok());
  EXPECT_THAT(ErrorOf(std::string(65, '[') + std::string(65, ']')),
              HasSubstr("nested deeper than 64 at byte 64"));
  // Far deeper than any stack could recurse: still a clean error.
  EXPECT_THAT(ErrorOf(std::string(1000000, '[')), HasSubstr("nested deeper than 64"));
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  EXPECT_THAT(ErrorOf(objects), HasSubstr("nested deeper than 64"));
  ParseOptions shallow;
  shallow.max_depth = 2;
  EXPECT_TRUE(Parse("[[1]]", shallow).ok());
  EXPECT_THAT(ErrorOf("[[[1]]]", shallow), HasSubstr("nested deeper than 2 at byte 2"));
}

TEST(JsonTest, SizeAndValueCountAreBounded) {
  ParseOptions small;
  small.max_bytes = 10;
  EXPECT_THAT(ErrorOf("[1, 2, 3, 4, 5]", small), HasSubstr("exceeds the limit of 10 bytes"));
  small.max_bytes = 1 << 20;
  small.max_values = 3;
  EXPECT_TRUE(Parse("[1, 2]", small).ok());
  EXPECT_THAT(ErrorOf("[1, 2, 3]", small), HasSubstr("more than 3 values at byte 7"));
}

TEST(JsonTest, ManyKeysParseQuickly) {
  // Duplicate detection must not be quadratic.
  std::string doc = "{";
  for (int i = 0; i < 200000; ++i) absl::StrAppend(&doc, i ? "," : "", "\"k", i, "\":", i);
  doc += "}";
  auto v = Parse(doc);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->object_members().size(), 200000u);
  EXPECT_EQ(v->Find("k199999")->number_value(), 199999);
}

TEST(JsonTest, AsInt) {
  EXPECT_EQ(*ParseOk("3").AsInt("x", 0, 10), 3);
  EXPECT_EQ(*ParseOk("3.0").AsInt("x", 0, 10), 3);
  EXPECT_EQ(*ParseOk("1e1").AsInt("x", 0, 10), 10);
  EXPECT_THAT(ParseOk("3.5").AsInt("idx", 0, 10).status().message(), HasSubstr("idx must be an integer, got 3.5"));
  EXPECT_THAT(ParseOk("11").AsInt("idx", 0, 10).status().message(), HasSubstr("idx must be in [0, 10], got 11"));
  EXPECT_THAT(ParseOk("-1").AsInt("idx", 0, 10).status().message(), HasSubstr("got -1"));
  EXPECT_THAT(ParseOk("1e300").AsInt("idx", 0, 10).status().message(), HasSubstr("must be in"));
  EXPECT_THAT(ParseOk("\"1\"").AsInt("idx", 0, 10).status().message(),
              HasSubstr("idx must be an integer, got string \"1\""));
}

TEST(JsonTest, RandomBytesAndMutationsNeverCrash) {
  std::mt19937 rng(1234);
  const std::string alphabet = "{}[]:,\"\\/-+.eE0123456789abfnrtu \t\n\x01\x7f\x80\xc3\xa9\xed\xf0truefalsenull";
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s;
    int len = static_cast<int>(rng() % 40);
    for (int i = 0; i < len; ++i) s.push_back(alphabet[rng() % alphabet.size()]);
    auto v = Parse(s);
    if (v.ok()) {
      // Whatever parses must print back to something that parses to the same text.
      auto again = Parse(v->ToString());
      ASSERT_TRUE(again.ok()) << v->ToString();
      EXPECT_EQ(again->ToString(), v->ToString());
    }
  }
  const std::string doc = R"({"cluster": {"ps": ["h:1"], "worker": ["w:3", "w:4"]}, "task": {"type": "worker", "index": 1}})";
  for (size_t i = 0; i < doc.size(); ++i) {
    for (int b = 0; b < 256; b += 7) {
      std::string m = doc;
      m[i] = static_cast<char>(b);
      (void)Parse(m);
    }
  }
}

}  // namespace
}  // namespace dflow::json
