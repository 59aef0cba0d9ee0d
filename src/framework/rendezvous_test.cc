// Rendezvous keys: TensorFlow's layout, round trips, and malformed keys.
#include "framework/rendezvous.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

constexpr char kPs[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kWorker[] = "/job:worker/replica:0/task:1/device:CPU:0";

TEST(RendezvousKeyTest, TensorFlowLayout) {
  RendezvousKey k{kPs, 0x1234abcdULL, kWorker, "edge_5_x", 0, 0};
  EXPECT_EQ(CreateRendezvousKey(k),
            "/job:ps/replica:0/task:0/device:CPU:0;000000001234abcd;/job:worker/replica:0/task:1/device:CPU:0;"
            "edge_5_x;0:0");
}

TEST(RendezvousKeyTest, RoundTrips) {
  for (uint64_t inc : {uint64_t{0}, uint64_t{1}, uint64_t{0xffffffffffffffffULL}, uint64_t{0x8000000000000000ULL}}) {
    RendezvousKey k{kPs, inc, kWorker, "edge_12_scope/a", 3, 7};
    std::string key = CreateRendezvousKey(k);
    RendezvousKey back;
    ASSERT_TRUE(ParseRendezvousKey(key, &back).ok()) << key;
    EXPECT_EQ(back.send_device, kPs);
    EXPECT_EQ(back.send_device_incarnation, inc);
    EXPECT_EQ(back.recv_device, kWorker);
    EXPECT_EQ(back.edge_name, "edge_12_scope/a");
    EXPECT_EQ(back.frame_id, 3);
    EXPECT_EQ(back.iteration, 7);
    EXPECT_EQ(CreateRendezvousKey(back), key);
  }
}

TEST(RendezvousKeyTest, AcceptsUpperCaseHexIncarnation) {
  RendezvousKey k;
  ASSERT_TRUE(ParseRendezvousKey(absl::StrCat(kPs, ";00000000000000FF;", kWorker, ";e;0:0"), &k).ok());
  EXPECT_EQ(k.send_device_incarnation, 255u);
}

TEST(RendezvousKeyTest, MalformedKeysAreInvalidArgumentQuotingTheKey) {
  const std::string inc = "0000000000000001";
  const std::vector<std::string> bad = {
      "",
      "garbage",
      absl::StrCat(kPs, ";", inc, ";", kWorker, ";e"),                         // four parts
      absl::StrCat(kPs, ";", inc, ";", kWorker, ";e;0:0;extra"),               // six parts
      absl::StrCat(kPs, ";", inc, ";", kWorker, ";;0:0"),                      // empty edge name
      absl::StrCat(kPs, ";xyz;", kWorker, ";e;0:0"),                           // incarnation not hex
      absl::StrCat(kPs, ";;", kWorker, ";e;0:0"),                              // empty incarnation
      absl::StrCat(kPs, ";00000000000000001;", kWorker, ";e;0:0"),             // 17 hex digits
      absl::StrCat(kPs, ";0x1;", kWorker, ";e;0:0"),                           // prefix
      absl::StrCat(kPs, ";-1;", kWorker, ";e;0:0"),                            // sign
      absl::StrCat("/job:ps/task:0;", inc, ";", kWorker, ";e;0:0"),            // partial send device
      absl::StrCat(kPs, ";", inc, ";not a device;e;0:0"),                      // bad recv device
      absl::StrCat(kPs, ";", inc, ";", kWorker, ";e;0"),                       // no iteration
      absl::StrCat(kPs, ";", inc, ";", kWorker, ";e;a:0"),                     // frame not a number
      absl::StrCat(kPs, ";", inc, ";", kWorker, ";e;0:1:2"),                   // three numbers
      absl::StrCat(kPs, ";", inc, ";", kWorker, ";e;0:99999999999999999999"),  // overflow
  };
  for (const std::string& key : bad) {
    RendezvousKey k;
    k.edge_name = "untouched";
    Status s = ParseRendezvousKey(key, &k);
    ASSERT_FALSE(s.ok()) << key;
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(absl::StrCat("'", key, "'"))) << s;
    EXPECT_EQ(k.edge_name, "untouched") << "a failed parse must leave the output as it was";
  }
}

}  // namespace
}  // namespace dflow
