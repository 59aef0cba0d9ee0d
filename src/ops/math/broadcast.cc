#include "ops/math/broadcast.h"

#include <algorithm>

#include "absl/strings/str_join.h"

namespace dflow {

StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& x, const TensorShape& y) {
  BroadcastPlan p;
  const int rank = std::max(x.dims(), y.dims());
  // Merged dimensions with the broadcast pattern (is x / y broadcast along it) of each.
  absl::InlinedVector<bool, 4> x_bcast, y_bcast;
  for (int i = 0; i < rank; ++i) {
    const int ix = x.dims() - rank + i, iy = y.dims() - rank + i;
    const int64_t dx = ix >= 0 ? x.dim_size(ix) : 1;
    const int64_t dy = iy >= 0 ? y.dim_size(iy) : 1;
    int64_t d;
    if (dx == dy) {
      d = dx;
    } else if (dx == 1) {
      d = dy;
    } else if (dy == 1) {
      d = dx;
    } else {
      return errors::InvalidArgument("Incompatible shapes: ", x.DebugString(), " vs. ", y.DebugString());
    }
    Status s = p.output_shape.AddDim(d);
    if (!s.ok()) {
      return errors::InvalidArgument("Broadcasting ", x.DebugString(), " with ", y.DebugString(), ": ", s.message());
    }
    if (d == 1) continue;  // contributes nothing to the iteration
    const bool bx = dx != d, by = dy != d;
    if (!p.dims.empty() && x_bcast.back() == bx && y_bcast.back() == by) {
      p.dims.back() *= d;  // fits: bounded by the output's checked element count
    } else {
      p.dims.push_back(d);
      x_bcast.push_back(bx);
      y_bcast.push_back(by);
    }
  }
  if (p.dims.empty()) {
    p.dims.push_back(1);
    x_bcast.push_back(false);
    y_bcast.push_back(false);
  }
  const int n = static_cast<int>(p.dims.size());
  p.x_strides.assign(n, 0);
  p.y_strides.assign(n, 0);
  int64_t xs = 1, ys = 1;
  for (int i = n - 1; i >= 0; --i) {
    if (!x_bcast[i]) {
      p.x_strides[i] = xs;
      xs *= p.dims[i];
    }
    if (!y_bcast[i]) {
      p.y_strides[i] = ys;
      ys *= p.dims[i];
    }
  }
  return p;
}

Status BroadcastGradientAxes(absl::Span<const int64_t> x, absl::Span<const int64_t> y, DimVector* rx, DimVector* ry) {
  rx->clear();
  ry->clear();
  if (x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin())) return absl::OkStatus();
  const int rank = static_cast<int>(std::max(x.size(), y.size()));
  for (int i = 0; i < rank; ++i) {
    const int ix = i - (rank - static_cast<int>(x.size())), iy = i - (rank - static_cast<int>(y.size()));
    const int64_t dx = ix >= 0 ? x[ix] : 1;
    const int64_t dy = iy >= 0 ? y[iy] : 1;
    if (dx == 1 && dy == 1) {
      rx->push_back(i);
      ry->push_back(i);
    } else if (dx == dy) {
      continue;
    } else if (dx == 1) {
      rx->push_back(i);
    } else if (dy == 1) {
      ry->push_back(i);
    } else {
      return errors::InvalidArgument("Incompatible shapes: [", absl::StrJoin(x, ","), "] vs. [", absl::StrJoin(y, ","),
                                     "]");
    }
  }
  return absl::OkStatus();
}

}  // namespace dflow
