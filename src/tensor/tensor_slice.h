// TensorSlice: a box inside a tensor (per dimension a start and a length, or the whole
// dimension), as TensorFlow's checkpoints describe the shards of a partitioned variable.
//
// Text form (SaveV2/RestoreV2's shape_and_slices): "4 6 0,2:-" is the full shape [4, 6] and the
// slice rows [0, 2), all columns; "" is the whole tensor. Each slice of a saved tensor is
// stored under a key that encodes the name and the slice (TensorFlow's OrderedCode encoding, see
// EncodeTensorNameSlice), and the whole tensor's entry lists its slices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/status.h"
#include "proto/tensor_slice.pb.h"
#include "tensor/tensor.h"
#include "tensor/tensor_shape.h"

namespace dflow {

class TensorSlice {
 public:
  static constexpr int64_t kFullExtent = -1;

  TensorSlice() = default;  // rank 0
  // The whole of a tensor of rank `dims`.
  explicit TensorSlice(int dims) : starts_(dims, 0), lengths_(dims, kFullExtent) {}
  // "0,2:-" (one "start,length" or "-" per dimension, separated by ':').
  static StatusOr<TensorSlice> Parse(absl::string_view spec);
  static StatusOr<TensorSlice> FromProto(const proto::TensorSliceProto& p);
  // A slice given by starts and lengths (no full extents).
  static TensorSlice FromBox(std::vector<int64_t> starts, std::vector<int64_t> lengths);

  int dims() const { return static_cast<int>(starts_.size()); }
  int64_t start(int d) const { return starts_[d]; }
  int64_t length(int d) const { return lengths_[d]; }
  bool IsFullAt(int d) const { return lengths_[d] == kFullExtent; }
  bool IsFull() const;

  void ToProto(proto::TensorSliceProto* p) const;
  std::string DebugString() const;  // the text form

  // The same slice with full extents made explicit for `shape`. InvalidArgument when the ranks
  // differ or the slice does not fit in the shape.
  StatusOr<TensorSlice> Resolve(const TensorShape& shape) const;
  // The shape of the slice of a tensor of `shape` (Resolve first).
  StatusOr<TensorShape> SliceShape(const TensorShape& shape) const;
  // The common box of two resolved slices of the same rank; false when they do not overlap.
  bool Intersect(const TensorSlice& other, TensorSlice* out) const;

  bool operator==(const TensorSlice& o) const { return starts_ == o.starts_ && lengths_ == o.lengths_; }

 private:
  std::vector<int64_t> starts_, lengths_;
};

// Splits "4 6 0,2:-" into the full shape and the slice; "" gives an empty shape and a rank-0
// slice with *has_slice false. InvalidArgument names the string.
Status ParseShapeAndSlice(absl::string_view shape_and_slice, TensorShape* shape, TensorSlice* slice, bool* has_slice);

// The key under which a bundle stores slice `slice` of tensor `name` (TensorFlow's
// checkpoint::EncodeTensorNameSlice: OrderedCode 0, name, rank, then start and length of each
// dimension; a full extent is start 0, length -1). Such keys start with a zero byte, so they sort
// before every tensor name.
std::string EncodeTensorNameSlice(absl::string_view name, const TensorSlice& slice);

// Copies the elements where `src` (holding the resolved slice src_slice of a whole tensor) and
// `dst` (holding dst_slice) overlap, from src into dst. Both slices are resolved against the
// same whole shape; the tensors have the same dtype and the slices' shapes.
void CopySliceIntersection(const Tensor& src, const TensorSlice& src_slice, Tensor* dst, const TensorSlice& dst_slice);

}  // namespace dflow
