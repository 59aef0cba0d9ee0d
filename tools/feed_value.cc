#include "tools/feed_value.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "base/json_text.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tensor/npy.h"

namespace dflow::tools {
namespace {

using JsonValue = google::protobuf::Value;

// Lists nest at most this deep (protobuf's parser itself gives up near 50).
constexpr int kMaxFeedDepth = 32;

std::string Shown(const std::string& s) { return s.size() <= 200 ? s : s.substr(0, 200) + "..."; }

// Python's True and False read as JSON's true and false (the text holds no strings: quotes are
// not valid in a number list anyway, and are left for the parser to reject).
std::string WithJsonBools(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (!absl::ascii_isalpha(static_cast<unsigned char>(text[i]))) {
      out += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && absl::ascii_isalnum(static_cast<unsigned char>(text[j]))) ++j;
    std::string word = text.substr(i, j - i);
    out += word == "True" ? "true" : word == "False" ? "false" : word;
    i = j;
  }
  return out;
}

// The shape of nested lists: every list at one depth has the same length, every number sits at
// the same depth (the rank). The leaves are gathered in order.
class ShapeWalker {
 public:
  Status Walk(const JsonValue& v, int depth) {
    if (v.has_list_value()) {
      const auto& items = v.list_value().values();
      if (static_cast<int>(dims_.size()) <= depth) dims_.resize(depth + 1, -1);
      if (dims_[depth] < 0) dims_[depth] = items.size();
      else if (dims_[depth] != items.size())
        return errors::InvalidArgument("rows have different lengths (ragged list)");
      if (items.empty() && leaf_depth_ < 0) leaf_depth_ = depth + 1;
      for (const JsonValue& item : items) RETURN_IF_ERROR(Walk(item, depth + 1));
      return absl::OkStatus();
    }
    if (!v.has_number_value() && !v.has_bool_value()) {
      return errors::InvalidArgument(v.has_string_value()   ? "a string"
                                     : v.has_struct_value() ? "an object"
                                                            : "null",
                                     " is not a number");
    }
    if (leaf_depth_ < 0) leaf_depth_ = depth;
    else if (leaf_depth_ != depth) return errors::InvalidArgument("rows have different nesting (ragged list)");
    leaves_.push_back(&v);
    return absl::OkStatus();
  }
  const std::vector<int64_t>& dims() const { return dims_; }
  const std::vector<const JsonValue*>& leaves() const { return leaves_; }

 private:
  std::vector<int64_t> dims_;
  int leaf_depth_ = -1;
  std::vector<const JsonValue*> leaves_;
};

// The numbers as written, in order: JSON numbers are doubles, but an integer beyond 2^53 must
// reach an int64 tensor exactly. Only called on text that parsed to lists of numbers and
// booleans, so a number is a run of [-+.0-9eE] that starts with '-' or a digit.
std::vector<std::string> NumberTokens(const std::string& text) {
  std::vector<std::string> tokens;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '-' && !absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < text.size() && (absl::ascii_isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.' ||
                               text[j] == 'e' || text[j] == 'E' || text[j] == '+' || text[j] == '-')) {
      ++j;
    }
    tokens.push_back(text.substr(i, j - i));
    i = j;
  }
  return tokens;
}

// Whether `token` (a JSON number) is a value of the integer type T, and that value.
template <typename T>
bool IntegerValue(const std::string& token, double number, T* out) {
  const bool literal = token.find_first_of(".eE") == std::string::npos;
  if (literal && std::is_signed_v<T>) {
    int64_t v;
    if (!absl::SimpleAtoi(token, &v) || v < std::numeric_limits<T>::lowest() || v > std::numeric_limits<T>::max()) {
      return false;
    }
    *out = static_cast<T>(v);
    return true;
  }
  if (literal) {
    uint64_t v;
    if (token == "-0") v = 0;
    else if (!absl::SimpleAtoi(token, &v) || v > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    *out = static_cast<T>(v);
    return true;
  }
  // 1e3, 2.0: [lowest, 2^digits) as a double: max itself does not convert to a double exactly
  // (2^63 - 1 rounds up to 2^63), and converting a double out of T's range is undefined behaviour.
  const double limit = std::ldexp(1.0, std::numeric_limits<T>::digits);
  if (std::trunc(number) != number || number < static_cast<double>(std::numeric_limits<T>::lowest()) ||
      number >= limit) {
    return false;
  }
  *out = static_cast<T>(number);
  return true;
}

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
  auto error = [&](const Status& s) {
    return errors::InvalidArgument("Cannot parse value '", Shown(text), "': ", s.message());
  };
  const std::string json = WithJsonBools(text);
  if (Status s = CheckJsonText(json, {.max_bytes = size_t{64} << 20, .max_depth = kMaxFeedDepth}); !s.ok()) {
    return error(s);
  }
  JsonValue root;
  if (auto s = google::protobuf::util::JsonStringToMessage(json, &root); !s.ok()) {
    return error(JsonParseError(absl::string_view(s.message().data(), s.message().size())));
  }
  ShapeWalker walker;
  if (Status s = walker.Walk(root, 0); !s.ok()) return error(s);
  ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(walker.dims()));
  const std::vector<const JsonValue*>& leaves = walker.leaves();
  if (shape.num_elements() != static_cast<int64_t>(leaves.size())) {
    return errors::InvalidArgument("Value '", Shown(text), "' is ragged");
  }
  const std::vector<std::string> tokens = NumberTokens(json);
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  Status status;
  size_t token = 0;
  bool ok = VisitPOD(dtype, [&]<typename T>() {
    T* out = t.data<T>();
    for (size_t i = 0; i < leaves.size() && status.ok(); ++i) {
      const JsonValue& v = *leaves[i];
      if (v.has_bool_value()) {
        out[i] = static_cast<T>(v.bool_value() ? 1 : 0);
        continue;
      }
      if (token >= tokens.size()) {
        status = errors::Internal("Value '", Shown(text), "': the numbers in the text do not match the parsed ones");
        break;
      }
      const std::string& written = tokens[token++];
      if constexpr (std::is_integral_v<T>) {
        if (!IntegerValue<T>(written, v.number_value(), &out[i])) {
          status = errors::InvalidArgument("Value ", written, " in '", Shown(text), "' is not a valid ",
                                           DTypeString(dtype));
        }
      } else {
        out[i] = static_cast<T>(v.number_value());
      }
    }
  });
  if (!ok) return errors::InvalidArgument("Cannot feed values of type ", DTypeString(dtype), " from text");
  RETURN_IF_ERROR(status);
  return t;
}

}  // namespace dflow::tools
