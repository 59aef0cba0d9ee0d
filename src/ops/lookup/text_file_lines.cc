#include "ops/lookup/text_file_lines.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace dflow {
namespace {

constexpr int64_t kLineNumber = -1;
constexpr int64_t kWholeLine = -2;

Status CheckIndex(int64_t index, DType dtype, const char* what) {
  if (index == kLineNumber && dtype != DT_INT64) {
    return errors::InvalidArgument(what, " index for line number requires table ", what, " dtype of int64, got ",
                                   DTypeString(dtype));
  }
  if (dtype != DT_STRING && dtype != DT_INT64 && dtype != DT_INT32 && dtype != DT_FLOAT && dtype != DT_DOUBLE) {
    return errors::InvalidArgument("Table ", what, " dtype ", DTypeString(dtype),
                                   " cannot be read from a text file (int32, int64, float, double, string)");
  }
  return absl::OkStatus();
}

// Stores field `s` of line `line` into element i of `out`.
Status Store(absl::string_view s, int64_t line, Tensor* out, int64_t i) {
  auto bad = [&](const char* type) {
    return errors::InvalidArgument("Field ", s, " in line ", line, " is not a valid ", type, ".");
  };
  switch (out->dtype()) {
    case DT_STRING: out->data<std::string>()[i] = std::string(s); return absl::OkStatus();
    case DT_INT64:
      if (!absl::SimpleAtoi(s, &out->data<int64_t>()[i])) return bad("int64");
      return absl::OkStatus();
    case DT_INT32:
      if (!absl::SimpleAtoi(s, &out->data<int32_t>()[i])) return bad("int32");
      return absl::OkStatus();
    case DT_FLOAT:
      if (!absl::SimpleAtof(s, &out->data<float>()[i])) return bad("float");
      return absl::OkStatus();
    case DT_DOUBLE:
      if (!absl::SimpleAtod(s, &out->data<double>()[i])) return bad("double");
      return absl::OkStatus();
    default: return errors::Internal("unexpected dtype");
  }
}

}  // namespace

Status ReadTextFileTable(const Env* env, const std::string& filename, const TextFileTableOptions& opts, DType key_dtype,
                         DType value_dtype, Tensor* keys, Tensor* values) {
  if (opts.vocab_size == 0 || opts.vocab_size < -1) {
    return errors::InvalidArgument("Invalid vocab_size ", opts.vocab_size, " (must be -1 or positive)");
  }
  RETURN_IF_ERROR(CheckIndex(opts.key_index, key_dtype, "key"));
  RETURN_IF_ERROR(CheckIndex(opts.value_index, value_dtype, "value"));
  ASSIGN_OR_RETURN(std::string content, env->ReadFile(filename));
  if (content.empty()) return errors::OutOfRange("Read less bytes than requested: ", filename, " is empty");
  // The lines: split at '\n' (a final '\n' ends the last line), a trailing '\r' dropped.
  std::vector<absl::string_view> lines;
  std::vector<size_t> ends;  // the file position after each line
  size_t pos = 0;
  while (pos < content.size()) {
    if (opts.vocab_size != -1 && static_cast<int64_t>(lines.size()) == opts.vocab_size) break;
    size_t nl = content.find('\n', pos);
    size_t end = nl == std::string::npos ? content.size() : nl;
    absl::string_view line(content.data() + pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = nl == std::string::npos ? content.size() : nl + 1;
    lines.push_back(line);
    ends.push_back(pos);
  }
  const int64_t n = static_cast<int64_t>(lines.size());
  if (opts.vocab_size != -1 && n < opts.vocab_size) {
    return errors::InvalidArgument("Invalid vocab_size in ", filename, ": expected ", opts.vocab_size, " but got ", n);
  }
  ASSIGN_OR_RETURN(*keys, Tensor::Allocate(key_dtype, TensorShape{n}));
  ASSIGN_OR_RETURN(*values, Tensor::Allocate(value_dtype, TensorShape{n}));
  const bool split = opts.key_index >= 0 || opts.value_index >= 0;
  const int64_t need = std::max(opts.key_index, opts.value_index) + 1;
  for (int64_t i = 0; i < n; ++i) {
    absl::string_view line = lines[i];
    if (line.empty()) {
      return errors::InvalidArgument("Invalid content in ", filename, ": empty line found at position ", ends[i], ".");
    }
    std::vector<absl::string_view> tokens;
    if (split) {
      tokens = absl::StrSplit(line, absl::ByAnyChar(opts.delimiter));
      if (static_cast<int64_t>(tokens.size()) < need) {
        return errors::InvalidArgument("Invalid number of columns in ", filename, " line ", i, " (", line,
                                       ") : expected at least ", need, " got ", tokens.size());
      }
    }
    auto set = [&](int64_t index, Tensor* out) -> Status {
      if (index == kLineNumber) {
        out->data<int64_t>()[i] = i + opts.offset;
        return absl::OkStatus();
      }
      return Store(index == kWholeLine ? line : tokens[index], i, out, i);
    };
    RETURN_IF_ERROR(set(opts.key_index, keys));
    RETURN_IF_ERROR(set(opts.value_index, values));
  }
  return absl::OkStatus();
}

}  // namespace dflow
