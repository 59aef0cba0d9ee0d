#include "ops/summary/histogram.h"

#include <algorithm>
#include <cfloat>

#include "proto/summary.pb.h"

namespace dflow {

const std::vector<double>& Histogram::DefaultBucketLimits() {
  static const std::vector<double>* limits = [] {
    std::vector<double> pos;
    // Each bucket 10% wider than the last, from 1e-12 up to 1e20, mirrored around 0.
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) pos.push_back(v);
    pos.push_back(DBL_MAX);
    auto* out = new std::vector<double>();
    out->reserve(2 * pos.size() + 1);
    for (auto it = pos.rbegin(); it != pos.rend(); ++it) out->push_back(-*it);
    out->push_back(0.0);
    out->insert(out->end(), pos.begin(), pos.end());
    return out;
  }();
  return *limits;
}

Histogram::Histogram() : limits_(DefaultBucketLimits()), buckets_(limits_.size(), 0.0), min_(DBL_MAX), max_(-DBL_MAX) {}

void Histogram::Add(double value) {
  size_t b = std::upper_bound(limits_.begin(), limits_.end(), value) - limits_.begin();
  // Only DBL_MAX itself is past the last limit; it counts in the last bucket.
  if (b == buckets_.size()) --b;
  buckets_[b] += 1.0;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  num_ += 1;
  sum_ += value;
  sum_squares_ += value * value;
}

void Histogram::EncodeToProto(proto::HistogramProto* proto) const {
  proto->Clear();
  proto->set_min(min_);
  proto->set_max(max_);
  proto->set_num(num_);
  proto->set_sum(sum_);
  proto->set_sum_squares(sum_squares_);
  for (size_t i = 0; i < buckets_.size();) {
    double end = limits_[i];
    double count = buckets_[i];
    ++i;
    if (count <= 0.0) {
      while (i < buckets_.size() && buckets_[i] <= 0.0) {
        end = limits_[i];
        count = buckets_[i];
        ++i;
      }
    }
    proto->add_bucket_limit(end);
    proto->add_bucket(count);
  }
}

}  // namespace dflow
