// TensorShape: a fully known shape whose element count is checked for overflow.
// PartialTensorShape: a static shape that may have unknown dimensions (-1) or an unknown rank,
// as inferred while a graph is built.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "dflow/status.h"

namespace dflow {

// Ranks above this are rejected (TensorFlow's limit too).
constexpr int kMaxRank = 254;
// Element counts above this are rejected: it keeps every byte count within int64.
constexpr int64_t kMaxElements = int64_t{1} << 56;

using DimVector = absl::InlinedVector<int64_t, 4>;

class TensorShape {
 public:
  TensorShape() = default;  // a scalar
  TensorShape(std::initializer_list<int64_t> dims);
  // Validates every dimension and the element count; InvalidArgument names the bad value.
  static StatusOr<TensorShape> FromDims(absl::Span<const int64_t> dims);

  int dims() const { return static_cast<int>(dims_.size()); }
  int64_t dim_size(int i) const { return dims_[i]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }
  int64_t num_elements() const { return num_elements_; }
  bool IsScalar() const { return dims_.empty(); }

  // Appends a dimension; the result's count must stay within kMaxElements.
  Status AddDim(int64_t size);
  void AddDimUnchecked(int64_t size);

  bool operator==(const TensorShape& o) const { return dims_ == o.dims_; }
  bool operator!=(const TensorShape& o) const { return !(*this == o); }

  // "[2,3]", "[]" for a scalar.
  std::string DebugString() const;

 private:
  void Recount();
  DimVector dims_;
  int64_t num_elements_ = 1;
};

class PartialTensorShape {
 public:
  PartialTensorShape() : unknown_rank_(true) {}             // unknown rank
  PartialTensorShape(std::initializer_list<int64_t> dims);  // -1 marks unknown dimensions
  PartialTensorShape(const TensorShape& s);                 // NOLINT: implicit on purpose
  static StatusOr<PartialTensorShape> FromDims(absl::Span<const int64_t> dims);
  static PartialTensorShape Scalar() { return PartialTensorShape(std::initializer_list<int64_t>{}); }
  static PartialTensorShape UnknownRank() { return PartialTensorShape(); }
  static PartialTensorShape UnknownOfRank(int rank);

  bool unknown_rank() const { return unknown_rank_; }
  // -1 when the rank is unknown.
  int dims() const { return unknown_rank_ ? -1 : static_cast<int>(dims_.size()); }
  int64_t dim_size(int i) const { return dims_[i]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }
  bool IsFullyDefined() const;
  // The element count, or -1 when not fully defined.
  int64_t num_elements() const;
  StatusOr<TensorShape> ToTensorShape() const;

  // True when some fully known shape fits both.
  bool IsCompatibleWith(const PartialTensorShape& other) const;
  bool IsCompatibleWith(const TensorShape& other) const { return IsCompatibleWith(PartialTensorShape(other)); }
  // The most specific shape consistent with both; InvalidArgument if they are incompatible.
  StatusOr<PartialTensorShape> MergeWith(const PartialTensorShape& other) const;

  bool operator==(const PartialTensorShape& o) const { return unknown_rank_ == o.unknown_rank_ && dims_ == o.dims_; }

  // "<unknown>", "[2,?]", "[]".
  std::string DebugString() const;

 private:
  bool unknown_rank_ = false;
  DimVector dims_;
};

// Multiplies two non-negative sizes; -1 on overflow.
int64_t MultiplyWithoutOverflow(int64_t a, int64_t b);

}  // namespace dflow
