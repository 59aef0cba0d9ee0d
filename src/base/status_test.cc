// The status macros: the public DFLOW_RETURN_IF_ERROR / DFLOW_ASSIGN_OR_RETURN (dflow/status.h)
// and the internal short names (base/status.h) that expand to them; errors::Annotate.
#include "base/status.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace dflow {
namespace {

StatusOr<int> Half(int v) {
  if (v % 2 != 0) return errors::InvalidArgument(v, " is odd");
  return v / 2;
}

// Halves twice with the public macros; `calls` counts how far it got.
StatusOr<int> Quarter(int v, int* calls) {
  DFLOW_ASSIGN_OR_RETURN(int h, Half(v));
  ++*calls;
  DFLOW_ASSIGN_OR_RETURN(int q, Half(h));  // a second use on another line: its own temporary
  ++*calls;
  return q;
}

Status CheckEven(int v, int* calls) {
  DFLOW_RETURN_IF_ERROR(Half(v).status());
  ++*calls;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, PublicNamesPropagateErrorsAndValues) {
  int calls = 0;
  StatusOr<int> q = Quarter(12, &calls);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(*q, 3);
  EXPECT_EQ(calls, 2);
  calls = 0;
  q = Quarter(6, &calls);  // 6 -> 3, then 3 is odd
  EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(q.status().message(), "3 is odd");
  EXPECT_EQ(calls, 1);
  calls = 0;
  EXPECT_EQ(CheckEven(5, &calls).message(), "5 is odd");
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(CheckEven(4, &calls).ok());
  EXPECT_EQ(calls, 1);
}

// The short names are the same macros.
StatusOr<std::unique_ptr<int>> Boxed(int v) {
  ASSIGN_OR_RETURN(int h, Half(v));
  RETURN_IF_ERROR(Half(h).status());
  return std::make_unique<int>(h);
}

TEST(StatusMacrosTest, InternalNamesAndMoveOnlyValues) {
  StatusOr<std::unique_ptr<int>> b = Boxed(8);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(**b, 4);
  EXPECT_EQ(Boxed(10).status().message(), "5 is odd");
  EXPECT_EQ(Boxed(3).status().message(), "3 is odd");
}

TEST(StatusMacrosTest, AnnotateKeepsTheCode) {
  Status s = errors::Annotate(errors::NotFound("no file"), "reading x: ");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "reading x: no file");
  EXPECT_TRUE(errors::Annotate(absl::OkStatus(), "reading x: ").ok());
}

}  // namespace
}  // namespace dflow
