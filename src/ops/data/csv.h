// CSV records with TensorFlow's decode_csv semantics, shared by DecodeCSV and CSVDataset.
//
// A record is split at `delim`; with use_quote_delim a field that starts with '"' runs to the
// next lone '"' (a doubled "" inside is one quote) and may hold delimiters. Each selected
// column takes the dtype of its record default; an empty field, or one equal to na_value, takes
// the default, and a column whose default is empty (shape [0]) is required.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/status.h"
#include "tensor/tensor.h"

namespace dflow {

struct CsvSpec {
  char delim = ',';
  bool use_quote_delim = true;
  std::string na_value;
  std::vector<int64_t> select_cols;  // strictly increasing; empty: every column
  std::vector<Tensor> defaults;      // one per output: 0 or 1 element of a supported dtype

  // InvalidArgument (naming `op`) for a bad delimiter, select_cols or default.
  Status Validate(absl::string_view op) const;
  size_t num_outputs() const { return defaults.size(); }
};

// The dtypes decode_csv accepts: float, double, int32, int64, string.
bool IsCsvType(DType t);

// Parses one record into element `row` of each output tensor (outputs[i] has the dtype of
// spec.defaults[i]). Errors are InvalidArgument in TensorFlow's words with `where` after the
// field or record named: "Field 2<where> is not a valid float: abc", "Expect 5 fields but have
// 4<where>", "Field 0 is required but missing<where>!".
Status ParseCsvRecord(absl::string_view record, const CsvSpec& spec, absl::string_view where,
                      std::vector<Tensor>* outputs, int64_t row);

}  // namespace dflow
