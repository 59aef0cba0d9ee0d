// Fingerprint64 against FarmHash's published values: strings of every length class (0-16, 17-32,
// 33-64 and the block loop for longer ones) and the values TensorFlow's own tests quote.
#include "base/fingerprint.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace dflow {
namespace {

TEST(Fingerprint64Test, MatchesFarmHashReferenceValues) {
  const std::vector<std::pair<uint64_t, std::string>> cases = {
      {0x9ae16a3b2f90404fULL, ""},
      {0xb3454265b6df75e3ULL, "a"},
      {0xaa8d6e5242ada51eULL, "ab"},
      {0x24a5b3a074e7f369ULL, "abc"},
      {0x1a5502de4a1f8101ULL, "abcd"},
      {0xc329379e6a03c2cdULL, "abcdef"},
      {0xfee9d22990c82909ULL, "abcdefgh"},
      {0x332c8ed4dae5ba42ULL, "abcdefghi"},
      {0xad052244b781c4ebULL, "0123456789"},
      {0x4283d4ef43627f64ULL, "0123456789'01234"},
      {0x46a7416ed4861e3bULL, "0123456789=012345"},
      {0xd78d5f852d522e6aULL, "0123456789$0123456789!0"},
      {0xb944f8a16261e414ULL, "C is as portable as Stonehedge!!"},
      {0xe8f89ab6df9bdd25ULL, "Discard medicine more than two years old."},
      {0x5a0a6efd52e84e2aULL, "How can you write a big system without C++?  -Paul Glick"},
      {0x786d7e1987023ca9ULL, "He who has a shady past knows that nice guys finish last."},
      {0xabcdb319fcf2826cULL, "You remind me of a TV show, but that's all right: I watch it anyway."},
      {0xa2b8bf3032021993ULL, "Give me a rock, paper and scissors and I will move the world.  CCFestoon"},
      {0x098eff6958c5e91aULL,
       "The fugacity of a constituent in a mixture of gases at a given temperature is proportional to its mole "
       "fraction.  Lewis-Randall Rule"},
      {0xc3f02c4ffd5d71e6ULL,
       "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et "
       "dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex "
       "ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu "
       "fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt "
       "mollit anim id est laborum."},
  };
  for (const auto& [want, s] : cases) {
    EXPECT_EQ(Fingerprint64(s), want) << "length " << s.size() << ": \"" << s << "\"";
  }
}

// The values TensorFlow's StringToHashBucketFast test documents.
TEST(Fingerprint64Test, MatchesTensorFlowQuotedValues) {
  EXPECT_EQ(Fingerprint64("a"), 12917804110809363939ULL);
  EXPECT_EQ(Fingerprint64("b"), 11795596070477164822ULL);
  EXPECT_EQ(Fingerprint64("c"), 11430444447143000872ULL);
  EXPECT_EQ(Fingerprint64("d"), 4470636696479570465ULL);
}

TEST(Fingerprint64Test, EmbeddedZeroBytesCount) {
  EXPECT_NE(Fingerprint64(std::string("a\0b", 3)), Fingerprint64("a"));
  EXPECT_NE(Fingerprint64(std::string("a\0b", 3)), Fingerprint64(std::string("a\0c", 3)));
}

}  // namespace
}  // namespace dflow
