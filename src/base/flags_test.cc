#include "dflow/flags.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

FlagSpec Spec() {
  FlagSpec spec;
  spec.values = {"--steps", "--name", "--rate", "--feed", "--hosts", "--on"};
  spec.switches = {"--sync"};
  spec.aliases = {{"--train_steps", "--steps"}};
  return spec;
}

std::string ErrorOf(const std::vector<std::string>& args, const FlagSpec& spec = Spec()) {
  absl::StatusOr<ParsedFlags> f = ParsedFlags::Parse(args, spec);
  EXPECT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument) << f.status();
  return std::string(f.status().message());
}

TEST(FlagsTest, BothFormsSwitchesAliasesAndPositionals) {
  auto f = ParsedFlags::Parse({"in.csv", "--steps=5", "--name", "-x-", "--sync", "out", "--feed", "a=1", "--feed=b=2="},
                              Spec());
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*f->GetInt64("--steps", 0), 5);
  EXPECT_EQ(f->GetString("--name"), "-x-");  // the next argument is the value, whatever it looks like
  EXPECT_TRUE(f->Has("--sync"));
  EXPECT_TRUE(*f->GetBool("--sync"));
  EXPECT_FALSE(f->Has("--rate"));
  EXPECT_EQ(f->GetString("--rate", "none"), "none");
  EXPECT_EQ(*f->GetDouble("--rate", 0.5), 0.5);
  EXPECT_THAT(f->GetAll("--feed"), ElementsAre("a=1", "b=2="));
  EXPECT_THAT(*f->GetKeyValues("--feed"), ElementsAre(Pair("a", "1"), Pair("b", "2=")));
  EXPECT_THAT(f->positional(), ElementsAre("in.csv", "out"));
  f = ParsedFlags::Parse({"--train_steps", "7", "--steps=8", "--train_steps=9"}, Spec());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->Count("--steps"), 3);
  EXPECT_EQ(*f->GetInt64("--steps", 0), 9);  // the last one counts
}

TEST(FlagsTest, TypedValues) {
  auto f = ParsedFlags::Parse({"--rate=-1.5e2", "--hosts=a:1,,b:2,", "--on=false", "--steps=-3"}, Spec());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f->GetDouble("--rate", 0), -150);
  EXPECT_THAT(f->GetList("--hosts"), ElementsAre("a:1", "b:2"));
  EXPECT_FALSE(*f->GetBool("--on", true));
  EXPECT_EQ(*f->GetInt64("--steps", 0), -3);
  EXPECT_THAT(f->GetInt64("--steps", 0, 1).status().message(), "--steps must be a positive integer, got '-3'");
  EXPECT_THAT(f->GetInt64("--steps", 0, 0).status().message(), "--steps must be a non-negative integer, got '-3'");
  EXPECT_THAT(f->GetInt64("--steps", 0, -2).status().message(), "--steps must be an integer >= -2, got '-3'");
  EXPECT_THAT(f->GetInt64("--steps", 0, 0, 9).status().message(), "--steps takes an integer in 0..9, got '-3'");
  for (const char* bad : {"x", "", "1.0", " 1", "+1", "1 ", "99999999999999999999", "-"}) {
    auto g = ParsedFlags::Parse({std::string("--steps=") + bad, std::string("--rate=") + bad}, Spec());
    ASSERT_TRUE(g.ok());
    EXPECT_THAT(g->GetInt64("--steps", 0).status().message(), HasSubstr("--steps must be an integer, got '")) << bad;
  }
  for (const char* bad : {"x", "", "nan", "inf", "1e999", " 1"}) {
    auto g = ParsedFlags::Parse({std::string("--rate=") + bad}, Spec());
    EXPECT_EQ(g->GetDouble("--rate", 0).status().message(), std::string("--rate takes a number, got '") + bad + "'");
  }
  f = ParsedFlags::Parse({"--on=maybe", "--feed", "=1", "--feed", "x"}, Spec());
  EXPECT_EQ(f->GetBool("--on").status().message(), "--on takes true or false, got 'maybe'");
  EXPECT_EQ(f->GetKeyValues("--feed").status().message(), "--feed takes KEY=VALUE, got '=1'");
  EXPECT_EQ(*ParseFlagInt64("STEPS", "12", 1, 100), 12);
  EXPECT_EQ(ParseFlagInt64("STEPS", "0", 1, 100).status().message(), "STEPS takes an integer in 1..100, got '0'");
}

TEST(FlagsTest, ErrorsNameTheFlag) {
  EXPECT_EQ(ErrorOf({"--steps"}), "--steps needs a value");
  EXPECT_EQ(ErrorOf({"--stesp=1"}), "unknown flag '--stesp'");
  EXPECT_EQ(ErrorOf({"-x"}), "unknown flag '-x'");
  EXPECT_EQ(ErrorOf({"--sync=1"}), "--sync takes no value, got '--sync=1'");
  FlagSpec hinted = Spec();
  hinted.unknown_hint = " (flags: --steps)";
  EXPECT_EQ(ErrorOf({"--nope"}, hinted), "unknown flag '--nope' (flags: --steps)");
}

TEST(FlagsTest, DoubleDashStopAtPositionalAndKeepUnknown) {
  auto f = ParsedFlags::Parse({"--steps=1", "--", "--sync", "x"}, Spec());
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->Has("--sync"));
  EXPECT_THAT(f->positional(), ElementsAre("--sync", "x"));
  FlagSpec command = Spec();
  command.stop_at_positional = true;
  f = ParsedFlags::Parse({"--sync", "train.py", "--steps", "3", "--bogus"}, command);
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->Has("--steps"));
  EXPECT_THAT(f->positional(), ElementsAre("train.py", "--steps", "3", "--bogus"));
  FlagSpec keep = Spec();
  keep.keep_unknown = true;
  f = ParsedFlags::Parse({"--lr=0.1", "--steps", "2", "pos", "--other", "5", "-", "--", "x", "--sync"}, keep);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->GetString("--steps"), "2");
  EXPECT_TRUE(f->Has("--sync"));
  EXPECT_THAT(f->positional(), ElementsAre("--lr=0.1", "pos", "--other", "5", "-", "--", "x"));
  f = ParsedFlags::Parse({}, Spec());
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->positional().empty());
}

}  // namespace
}  // namespace dflow
