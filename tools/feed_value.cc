#include "tools/feed_value.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "tensor/npy.h"

namespace dflow::tools {
namespace {

// A recursive-descent reader of nested bracketed lists of numbers or booleans.
class ListParser {
 public:
  explicit ListParser(const std::string& s) : s_(s) {}

  Status Parse(std::vector<double>* values, std::vector<int64_t>* dims) {
    RETURN_IF_ERROR(Value(0, dims, values));
    SkipSpace();
    if (pos_ != s_.size()) return Error("unexpected text after the value");
    return absl::OkStatus();
  }

 private:
  Status Value(int depth, std::vector<int64_t>* dims, std::vector<double>* values) {
    if (depth > kMaxRank) return Error("nested too deeply");
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == '[') {
      ++pos_;
      int64_t count = 0;
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return Dim(depth, 0, dims, /*leaf_below=*/true);
      }
      for (;;) {
        RETURN_IF_ERROR(Value(depth + 1, dims, values));
        ++count;
        SkipSpace();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < s_.size() && s_[pos_] == ']') {
          ++pos_;
          break;
        }
        return Error("expected ',' or ']'");
      }
      return Dim(depth, count, dims, false);
    }
    // A scalar: its depth is the rank; every scalar must sit at the same depth.
    if (leaf_depth_ < 0) leaf_depth_ = depth;
    else if (leaf_depth_ != depth) return Error("rows have different nesting (ragged list)");
    size_t start = pos_;
    while (pos_ < s_.size() && !absl::ascii_isspace(s_[pos_]) && s_[pos_] != ',' && s_[pos_] != ']') ++pos_;
    std::string tok = s_.substr(start, pos_ - start);
    if (tok == "true" || tok == "True") values->push_back(1), bools_ = true;
    else if (tok == "false" || tok == "False") values->push_back(0), bools_ = true;
    else {
      char* end = nullptr;
      double v = std::strtod(tok.c_str(), &end);
      if (tok.empty() || end != tok.c_str() + tok.size()) return Error("'" + tok + "' is not a number");
      values->push_back(v);
    }
    return absl::OkStatus();
  }

  Status Dim(int depth, int64_t count, std::vector<int64_t>* dims, bool empty) {
    if (static_cast<int>(dims->size()) <= depth) {
      dims->resize(depth + 1, -1);
    }
    if ((*dims)[depth] < 0) (*dims)[depth] = count;
    else if ((*dims)[depth] != count) return Error("rows have different lengths (ragged list)");
    if (empty && leaf_depth_ < 0) leaf_depth_ = depth + 1;
    return absl::OkStatus();
  }

  void SkipSpace() {
    while (pos_ < s_.size() && absl::ascii_isspace(s_[pos_])) ++pos_;
  }
  Status Error(const std::string& what) const {
    return errors::InvalidArgument("Cannot parse value '", s_, "' at character ", pos_, ": ", what);
  }

  const std::string& s_;
  size_t pos_ = 0;
  int leaf_depth_ = -1;
  bool bools_ = false;
};

}  // namespace

StatusOr<Tensor> ParseFeedValue(const std::string& text, DType dtype) {
  if (!text.empty() && text[0] == '@') {
    ASSIGN_OR_RETURN(Tensor t, ReadNpyFile(text.substr(1)));
    if (t.dtype() != dtype) {
      return errors::InvalidArgument("File ", text.substr(1), " holds ", DTypeString(t.dtype()), " values but ",
                                     DTypeString(dtype), " is expected");
    }
    return t;
  }
  if (dtype == DT_STRING) return Tensor(text);
  std::vector<double> values;
  std::vector<int64_t> dims;
  ListParser parser(text);
  RETURN_IF_ERROR(parser.Parse(&values, &dims));
  for (int64_t& d : dims)
    if (d < 0) d = 0;
  ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  if (shape.num_elements() != static_cast<int64_t>(values.size())) {
    return errors::InvalidArgument("Value '", text, "' is ragged");
  }
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  Status status;
  bool ok = VisitPOD(dtype, [&]<typename T>() {
    T* out = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      double v = values[i];
      if constexpr (std::is_integral_v<T>) {
        // [lowest, 2^digits): max itself does not convert to a double exactly (2^63 - 1 rounds up
        // to 2^63), and converting a double out of T's range is undefined behaviour.
        const double limit = std::ldexp(1.0, std::numeric_limits<T>::digits);
        bool fits = std::trunc(v) == v && v >= static_cast<double>(std::numeric_limits<T>::lowest()) && v < limit;
        if (!fits) {
          if (status.ok()) {
            status = errors::InvalidArgument("Value ", FormatNumber(v), " in '", text, "' is not a valid ",
                                             DTypeString(dtype));
          }
          continue;
        }
      }
      out[i] = static_cast<T>(v);
    }
  });
  if (!ok) return errors::InvalidArgument("Cannot feed values of type ", DTypeString(dtype), " from text");
  RETURN_IF_ERROR(status);
  return t;
}

}  // namespace dflow::tools
