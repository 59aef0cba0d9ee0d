#include "tools/tensor_output.h"

#include <array>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "tensor/npy.h"

namespace dflow::tools {
namespace {

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// CRC-32 (ISO 3309, as zip uses).
uint32_t Crc32(absl::string_view data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (unsigned char b : data) c = table[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

StatusOr<std::string> StringNpy(const Tensor& t) {
  size_t width = 1;
  for (const std::string& s : t.flat<std::string>()) width = std::max(width, s.size());
  std::string shape;
  for (int i = 0; i < t.dims(); ++i) {
    absl::StrAppend(&shape, t.dim_size(i), t.dims() == 1 ? "," : (i + 1 < t.dims() ? ", " : ""));
  }
  std::string header = absl::StrCat("{'descr': '|S", width, "', 'fortran_order': False, 'shape': (", shape, "), }");
  const size_t total = 6 + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 0xffff)
    return errors::InvalidArgument("The .npy header of a ", t.dims(), "-d tensor is too long");
  std::string out("\x93NUMPY\x01\x00", 8);
  PutLe(&out, header.size(), 2);
  out += header;
  for (const std::string& s : t.flat<std::string>()) {
    out += s;
    out.append(width - s.size(), '\0');
  }
  return out;
}

}  // namespace

std::string BytesLiteral(absl::string_view s) {
  std::string out = "b'";
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out.push_back(static_cast<char>(c));
        } else {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        }
    }
  }
  out += "'";
  return out;
}

std::string PrintableTensor(const Tensor& t) {
  if (!t.IsInitialized() || t.dtype() != DT_STRING) return t.ToString();
  auto copy = Tensor::Allocate(DT_STRING, t.shape());
  if (!copy.ok()) return t.ToString();
  const std::string* in = t.data<std::string>();
  std::string* out = copy->data<std::string>();
  for (int64_t i = 0; i < t.NumElements(); ++i) out[i] = BytesLiteral(in[i]);
  return copy->ToString();
}

StatusOr<std::string> NpyBytes(const Tensor& t) {
  if (t.dtype() == DT_STRING) return StringNpy(t);
  return SerializeNpy(t);
}

StatusOr<std::string> NpzBytes(const std::vector<std::pair<std::string, Tensor>>& arrays) {
  std::string out, central;
  for (const auto& [name, tensor] : arrays) {
    ASSIGN_OR_RETURN(std::string data, NpyBytes(tensor));
    const std::string file = name + ".npy";
    if (data.size() >= 0xffffffffu || out.size() >= 0xffffffffu || file.size() > 0xffff) {
      return errors::InvalidArgument(
          "'", name, "' (", data.size(),
          " bytes) does not fit an .npz archive without zip64; write one .npy file per fetch");
    }
    const uint32_t crc = Crc32(data);
    const uint64_t offset = out.size();
    // Local file header: version 2.0, no flags, stored, 1980-01-01 00:00.
    PutLe(&out, 0x04034b50u, 4);
    PutLe(&out, 20, 2);
    PutLe(&out, 0, 2);
    PutLe(&out, 0, 2);
    PutLe(&out, 0, 2);
    PutLe(&out, 0x21, 2);
    PutLe(&out, crc, 4);
    PutLe(&out, data.size(), 4);
    PutLe(&out, data.size(), 4);
    PutLe(&out, file.size(), 2);
    PutLe(&out, 0, 2);
    out += file;
    out += data;
    PutLe(&central, 0x02014b50u, 4);
    PutLe(&central, 20, 2);
    PutLe(&central, 20, 2);
    PutLe(&central, 0, 2);
    PutLe(&central, 0, 2);
    PutLe(&central, 0, 2);
    PutLe(&central, 0x21, 2);
    PutLe(&central, crc, 4);
    PutLe(&central, data.size(), 4);
    PutLe(&central, data.size(), 4);
    PutLe(&central, file.size(), 2);
    PutLe(&central, 0, 2);  // extra
    PutLe(&central, 0, 2);  // comment
    PutLe(&central, 0, 2);  // disk
    PutLe(&central, 0, 2);  // internal attributes
    PutLe(&central, 0, 4);  // external attributes
    PutLe(&central, offset, 4);
    central += file;
  }
  if (out.size() >= 0xffffffffu || arrays.size() > 0xffff) {
    return errors::InvalidArgument(
        "The fetches do not fit an .npz archive without zip64; write one .npy file per fetch");
  }
  const uint64_t cd_offset = out.size();
  out += central;
  PutLe(&out, 0x06054b50u, 4);
  PutLe(&out, 0, 2);
  PutLe(&out, 0, 2);
  PutLe(&out, arrays.size(), 2);
  PutLe(&out, arrays.size(), 2);
  PutLe(&out, central.size(), 4);
  PutLe(&out, cd_offset, 4);
  PutLe(&out, 0, 2);
  return out;
}

}  // namespace dflow::tools
