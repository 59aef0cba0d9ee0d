#include "ops/data/csv.h"

#include <charconv>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"

namespace dflow {
namespace {

// Splits `record` into fields (views into it, or into `scratch` for quoted fields with
// doubled quotes).
Status SplitFields(absl::string_view record, const CsvSpec& spec, absl::string_view where,
                   std::vector<absl::string_view>* fields, std::vector<std::string>* scratch) {
  fields->clear();
  size_t used_scratch = 0;
  size_t i = 0;
  const size_t n = record.size();
  while (true) {
    if (spec.use_quote_delim && i < n && record[i] == '"') {
      // Quoted field.
      size_t j = i + 1;
      bool escaped = false;
      while (true) {
        if (j >= n)
          return errors::InvalidArgument("Quoted field has to end with quote followed by delim or end", where);
        if (record[j] == '"') {
          if (j + 1 < n && record[j + 1] == '"') {
            escaped = true;
            j += 2;
            continue;
          }
          break;
        }
        ++j;
      }
      absl::string_view body = record.substr(i + 1, j - i - 1);
      if (escaped) {
        if (scratch->size() <= used_scratch) scratch->emplace_back();
        std::string& s = (*scratch)[used_scratch++];
        s.clear();
        for (size_t k = 0; k < body.size(); ++k) {
          s.push_back(body[k]);
          if (body[k] == '"') ++k;  // skip the second quote of a pair
        }
        fields->push_back(s);
      } else {
        fields->push_back(body);
      }
      i = j + 1;
      if (i == n) return absl::OkStatus();
      if (record[i] != spec.delim) {
        return errors::InvalidArgument("Quoted field has to end with quote followed by delim or end", where);
      }
      ++i;
      if (i == n) {
        fields->push_back(absl::string_view());  // a trailing delimiter: one more empty field
        return absl::OkStatus();
      }
      continue;
    }
    size_t j = record.find(spec.delim, i);
    absl::string_view field = record.substr(i, j == absl::string_view::npos ? absl::string_view::npos : j - i);
    if (spec.use_quote_delim && field.find('"') != absl::string_view::npos) {
      return errors::InvalidArgument("Unquoted fields cannot have quotes/CRLFs inside", where);
    }
    fields->push_back(field);
    if (j == absl::string_view::npos) return absl::OkStatus();
    i = j + 1;
    if (i == n) {
      fields->push_back(absl::string_view());
      return absl::OkStatus();
    }
  }
}

template <typename T>
bool ParseNumber(absl::string_view s, T* out) {
  // std::from_chars is the fast path; absl's parsers also take what it refuses (a leading '+',
  // surrounding spaces), as TensorFlow's decode_csv does.
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (r.ec == std::errc() && r.ptr == s.data() + s.size()) return true;
  if constexpr (std::is_same_v<T, float>) return absl::SimpleAtof(s, out);
  else if constexpr (std::is_same_v<T, double>) return absl::SimpleAtod(s, out);
  else return absl::SimpleAtoi(s, out);
}

template <typename T>
const char* TypeWord() {
  if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, int32_t>) return "int32";
  else return "int64";
}

template <typename T>
Status StoreNumber(absl::string_view field, const Tensor& def, bool use_default, int col, absl::string_view where,
                   Tensor* out, int64_t row) {
  T v;
  if (use_default) {
    v = def.data<T>()[0];
  } else if (!ParseNumber(field, &v)) {
    return errors::InvalidArgument("Field ", col, where, " is not a valid ", TypeWord<T>(), ": ", field);
  }
  out->data<T>()[row] = v;
  return absl::OkStatus();
}

}  // namespace

bool IsCsvType(DType t) { return t == DT_FLOAT || t == DT_DOUBLE || t == DT_INT32 || t == DT_INT64 || t == DT_STRING; }

Status CsvSpec::Validate(absl::string_view op) const {
  if (defaults.empty()) return errors::InvalidArgument(op, ": record_defaults is empty");
  for (size_t i = 0; i < defaults.size(); ++i) {
    const Tensor& d = defaults[i];
    if (!IsCsvType(d.dtype())) {
      return errors::InvalidArgument(op, ": record_defaults[", i, "] has type ", DTypeString(d.dtype()),
                                     "; float, double, int32, int64 and string are supported");
    }
    if (d.NumElements() > 1 || d.dims() > 1) {
      return errors::InvalidArgument(op, ": record_defaults[", i, "] must have at most one element, not shape ",
                                     d.shape().DebugString());
    }
  }
  for (size_t i = 0; i < select_cols.size(); ++i) {
    if (select_cols[i] < 0 || (i > 0 && select_cols[i] <= select_cols[i - 1])) {
      return errors::InvalidArgument(op, ": select_cols must be non-negative and strictly increasing");
    }
  }
  if (!select_cols.empty() && select_cols.size() != defaults.size()) {
    return errors::InvalidArgument(op, ": ", select_cols.size(), " select_cols but ", defaults.size(),
                                   " record_defaults: there must be one default per selected column");
  }
  return absl::OkStatus();
}

Status ParseCsvRecord(absl::string_view record, const CsvSpec& spec, absl::string_view where,
                      std::vector<Tensor>* outputs, int64_t row) {
  thread_local std::vector<absl::string_view> fields;
  thread_local std::vector<std::string> scratch;
  RETURN_IF_ERROR(SplitFields(record, spec, where, &fields, &scratch));
  const size_t want = spec.defaults.size();
  if (spec.select_cols.empty() ? fields.size() != want
                               : fields.size() <= static_cast<size_t>(spec.select_cols.back())) {
    return errors::InvalidArgument("Expect ", spec.select_cols.empty() ? want : spec.select_cols.back() + 1,
                                   " fields but have ", fields.size(), where);
  }
  for (size_t c = 0; c < want; ++c) {
    const size_t col = spec.select_cols.empty() ? c : static_cast<size_t>(spec.select_cols[c]);
    absl::string_view field = fields[col];
    const Tensor& def = spec.defaults[c];
    const bool missing = field.empty() || field == spec.na_value;
    if (missing && def.NumElements() == 0) {
      return errors::InvalidArgument("Field ", c, " is required but missing", where, "!");
    }
    Tensor* out = &(*outputs)[c];
    const int col_id = static_cast<int>(c);
    switch (def.dtype()) {
      case DT_FLOAT: RETURN_IF_ERROR(StoreNumber<float>(field, def, missing, col_id, where, out, row)); break;
      case DT_DOUBLE: RETURN_IF_ERROR(StoreNumber<double>(field, def, missing, col_id, where, out, row)); break;
      case DT_INT32: RETURN_IF_ERROR(StoreNumber<int32_t>(field, def, missing, col_id, where, out, row)); break;
      case DT_INT64: RETURN_IF_ERROR(StoreNumber<int64_t>(field, def, missing, col_id, where, out, row)); break;
      case DT_STRING: out->data<std::string>()[row] = missing ? def.data<std::string>()[0] : std::string(field); break;
      default: return errors::Internal("unsupported CSV type ", DTypeString(def.dtype()));
    }
  }
  return absl::OkStatus();
}

}  // namespace dflow
