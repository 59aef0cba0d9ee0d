#include "base/net.h"

#include "gtest/gtest.h"

namespace dflow {
namespace {

TEST(NetTest, EveryLoopbackFormIsLoopback) {
  for (const char* host : {"localhost", "LocalHost", "localhost6", "ip6-localhost", "ip6-loopback", "127.0.0.1",
                           "127.0.0.2", "127.255.255.254", "127.1", "[::1]", "::1", "0:0:0:0:0:0:0:1",
                           "[0000:0000:0000:0000:0000:0000:0000:0001]", "::ffff:127.0.0.1", "[::ffff:127.3.2.1]"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host : {"", "::", "[::]", "0.0.0.0", "10.0.0.1", "128.0.0.1", "::2", "[::ffff:10.0.0.1]",
                           "example.com", "localhost.example.com", "127.0.0.1.example.com", "[::1", "::1]"}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

TEST(NetTest, ALoopbackHostListensOnItsOwnAddressOnly) {
  EXPECT_EQ(ListenAddress("localhost", 2222), "127.0.0.1:2222");
  EXPECT_EQ(ListenAddress("localhost6", 2222), "[::1]:2222");
  EXPECT_EQ(ListenAddress("IP6-Localhost", 2222), "[::1]:2222");
  EXPECT_EQ(ListenAddress("127.0.0.1", 2222), "127.0.0.1:2222");
  EXPECT_EQ(ListenAddress("127.0.0.2", 2222), "127.0.0.2:2222");
  EXPECT_EQ(ListenAddress("127.1", 2222), "127.0.0.1:2222");
  EXPECT_EQ(ListenAddress("[::1]", 2222), "[::1]:2222");
  EXPECT_EQ(ListenAddress("::1", 2222), "[::1]:2222");
  EXPECT_EQ(ListenAddress("0:0:0:0:0:0:0:1", 2222), "[::1]:2222");
  EXPECT_EQ(ListenAddress("[::ffff:127.0.0.1]", 2222), "127.0.0.1:2222");
  EXPECT_EQ(ListenAddress("ps0.example.com", 2222), "[::]:2222");
  EXPECT_EQ(ListenAddress("10.1.2.3", 2222), "[::]:2222");
}

}  // namespace
}  // namespace dflow
