// The histogram of HistogramSummary: TensorFlow's default buckets and its encoding into a
// HistogramProto, so that TensorBoard draws dflow's histograms exactly as TensorFlow's.
//
// The default bucket limits are 0 and ±1e-12·1.1^k for every k with 1e-12·1.1^k < 1e20, in
// increasing order, with -DBL_MAX first and DBL_MAX last. A value v falls in the first bucket
// whose limit is greater than v (bucket i holds [limit[i-1], limit[i])). Not thread-safe.
#pragma once

#include <vector>

namespace dflow {
namespace proto {
class HistogramProto;
}

class Histogram {
 public:
  Histogram();
  // The default limits (shared, computed once).
  static const std::vector<double>& DefaultBucketLimits();

  // Adds a finite value (callers reject NaN and infinities first).
  void Add(double value);
  // min, max, num, sum, sum_squares; then each run of empty buckets merged into the next
  // non-empty bucket's predecessor, as TensorFlow does: a run of empty buckets becomes one
  // entry with the run's last limit and count 0. An empty histogram encodes one bucket
  // (DBL_MAX, 0), min DBL_MAX and max -DBL_MAX.
  void EncodeToProto(proto::HistogramProto* proto) const;

  const std::vector<double>& bucket_counts() const { return buckets_; }

 private:
  const std::vector<double>& limits_;
  std::vector<double> buckets_;
  double min_, max_, num_ = 0, sum_ = 0, sum_squares_ = 0;
};

}  // namespace dflow
