#include "tensor/npy.h"

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/env.h"

namespace dflow {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kMaxHeader = 1 << 20;

Status Bad(absl::string_view why) { return errors::InvalidArgument("Malformed .npy data: ", why); }

// Finds the value text of `'key':` in the header dict.
StatusOr<absl::string_view> DictValue(absl::string_view header, absl::string_view key) {
  std::string k1 = absl::StrCat("'", key, "'");
  size_t at = header.find(k1);
  if (at == absl::string_view::npos) return Bad(absl::StrCat("header has no '", key, "'"));
  absl::string_view rest = header.substr(at + k1.size());
  rest = absl::StripLeadingAsciiWhitespace(rest);
  if (!absl::ConsumePrefix(&rest, ":")) return Bad(absl::StrCat("no ':' after '", key, "'"));
  rest = absl::StripLeadingAsciiWhitespace(rest);
  if (!rest.empty() && rest[0] == '(') {
    size_t close = rest.find(')');
    if (close == absl::string_view::npos) return Bad("unclosed shape tuple");
    return rest.substr(0, close + 1);
  }
  size_t end = rest.find_first_of(",}");
  if (end == absl::string_view::npos) return Bad(absl::StrCat("unterminated value of '", key, "'"));
  return absl::StripTrailingAsciiWhitespace(rest.substr(0, end));
}

}  // namespace

StatusOr<Tensor> ParseNpy(absl::string_view bytes) {
  if (bytes.size() < kMagicLen + 4 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) {
    return Bad("missing the \\x93NUMPY magic");
  }
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Bad("truncated header length");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    return Bad(absl::StrCat("unsupported format version ", major));
  }
  if (header_len > kMaxHeader || offset + header_len > bytes.size()) return Bad("header is truncated or too long");
  absl::string_view header = bytes.substr(offset, header_len);
  absl::string_view data = bytes.substr(offset + header_len);

  ASSIGN_OR_RETURN(absl::string_view descr, DictValue(header, "descr"));
  ASSIGN_OR_RETURN(absl::string_view fortran, DictValue(header, "fortran_order"));
  ASSIGN_OR_RETURN(absl::string_view shape_text, DictValue(header, "shape"));
  if (fortran != "False") return Bad("Fortran-order arrays are not supported (save with C order)");
  if (descr.size() < 3 || (descr.front() != '\'' && descr.front() != '"')) return Bad("descr is not a string");
  descr = descr.substr(1, descr.size() - 2);
  DType dtype;
  if (descr == "<f4") dtype = DT_FLOAT;
  else if (descr == "<f8") dtype = DT_DOUBLE;
  else if (descr == "<i4") dtype = DT_INT32;
  else if (descr == "<i8") dtype = DT_INT64;
  else if (descr == "|u1" || descr == "<u1") dtype = DT_UINT8;
  else if (descr == "|b1") dtype = DT_BOOL;
  else return Bad(absl::StrCat("unsupported element type '", descr, "' (little-endian f4, f8, i4, i8, u1, b1 only)"));

  if (!absl::ConsumePrefix(&shape_text, "(") || !absl::ConsumeSuffix(&shape_text, ")")) {
    return Bad("shape is not a tuple");
  }
  std::vector<int64_t> dims;
  for (absl::string_view d : absl::StrSplit(shape_text, ',', absl::SkipWhitespace())) {
    int64_t v;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(d), &v) || v < 0) {
      return Bad(absl::StrCat("bad dimension '", d, "'"));
    }
    dims.push_back(v);
  }
  ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  int64_t want = MultiplyWithoutOverflow(shape.num_elements(), static_cast<int64_t>(DTypeSize(dtype)));
  if (want < 0 || static_cast<uint64_t>(want) != data.size()) {
    return Bad(absl::StrCat("shape ", shape.DebugString(), " of ", descr, " needs ", want, " data bytes but ",
                            data.size(), " follow the header"));
  }
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  if (dtype == DT_BOOL) {
    for (size_t i = 0; i < data.size(); ++i) {
      uint8_t b = static_cast<uint8_t>(data[i]);
      if (b > 1) return Bad(absl::StrCat("bool element ", i, " has byte value ", static_cast<int>(b)));
      t.data<bool>()[i] = b != 0;
    }
  } else if (!data.empty()) {
    std::memcpy(t.raw_data(), data.data(), data.size());
  }
  return t;
}

StatusOr<Tensor> ReadNpyFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, Env::Default()->ReadFile(path));
  auto t = ParseNpy(bytes);
  if (!t.ok()) return errors::Annotate(t.status(), absl::StrCat(path, ": "));
  return t;
}

StatusOr<std::string> SerializeNpy(const Tensor& t) {
  const char* descr;
  switch (t.dtype()) {
    case DT_FLOAT: descr = "<f4"; break;
    case DT_DOUBLE: descr = "<f8"; break;
    case DT_INT32: descr = "<i4"; break;
    case DT_INT64: descr = "<i8"; break;
    case DT_UINT8: descr = "|u1"; break;
    case DT_BOOL: descr = "|b1"; break;
    default: return errors::InvalidArgument("Cannot write a ", DTypeString(t.dtype()), " tensor as .npy");
  }
  std::string shape;
  for (int i = 0; i < t.dims(); ++i)
    absl::StrAppend(&shape, t.dim_size(i), t.dims() == 1 ? "," : (i + 1 < t.dims() ? ", " : ""));
  std::string header = absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (", shape, "), }");
  size_t total = kMagicLen + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(kMagic, kMagicLen);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  if (t.dtype() == DT_BOOL) {
    for (bool b : t.flat<bool>()) out.push_back(b ? 1 : 0);
  } else {
    out.append(static_cast<const char*>(t.raw_data()), t.TotalBytes());
  }
  return out;
}

}  // namespace dflow
