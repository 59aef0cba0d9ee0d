#include "tensor/tensor_slice.h"

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace dflow {

StatusOr<TensorSlice> TensorSlice::Parse(absl::string_view spec) {
  TensorSlice s;
  if (spec.empty()) return s;
  for (absl::string_view part : absl::StrSplit(spec, ':')) {
    if (part == "-") {
      s.starts_.push_back(0);
      s.lengths_.push_back(kFullExtent);
      continue;
    }
    std::vector<absl::string_view> sl = absl::StrSplit(part, ',');
    int64_t start = 0, length = 0;
    if (sl.size() != 2 || !absl::SimpleAtoi(sl[0], &start) || !absl::SimpleAtoi(sl[1], &length) || start < 0 ||
        length < 0 || start > kMaxElements || length > kMaxElements) {
      return errors::InvalidArgument("Invalid tensor slice specification '", spec, "': '", part,
                                     "' is neither '-' nor 'start,length' with non-negative numbers");
    }
    s.starts_.push_back(start);
    s.lengths_.push_back(length);
  }
  if (s.dims() > kMaxRank) return errors::InvalidArgument("Tensor slice '", spec, "' has too many dimensions");
  return s;
}

StatusOr<TensorSlice> TensorSlice::FromProto(const proto::TensorSliceProto& p) {
  if (p.extent_size() > kMaxRank) return errors::InvalidArgument("TensorSliceProto has ", p.extent_size(), " extents");
  TensorSlice s;
  for (const auto& e : p.extent()) {
    const bool has_length = e.has_length_case() == proto::TensorSliceProto::Extent::kLength;
    if (e.start() < 0 || e.start() > kMaxElements || (has_length && (e.length() < 0 || e.length() > kMaxElements))) {
      return errors::InvalidArgument("TensorSliceProto has a bad extent: start ", e.start(), ", length ",
                                     has_length ? e.length() : kFullExtent);
    }
    s.starts_.push_back(e.start());
    s.lengths_.push_back(has_length ? e.length() : kFullExtent);
  }
  return s;
}

TensorSlice TensorSlice::FromBox(std::vector<int64_t> starts, std::vector<int64_t> lengths) {
  TensorSlice s;
  s.starts_ = std::move(starts);
  s.lengths_ = std::move(lengths);
  return s;
}

bool TensorSlice::IsFull() const {
  for (int64_t l : lengths_) {
    if (l != kFullExtent) return false;
  }
  return true;
}

void TensorSlice::ToProto(proto::TensorSliceProto* p) const {
  p->Clear();
  for (int d = 0; d < dims(); ++d) {
    auto* e = p->add_extent();
    if (IsFullAt(d)) continue;  // an empty extent is the whole dimension
    e->set_start(starts_[d]);
    e->set_length(lengths_[d]);
  }
}

std::string TensorSlice::DebugString() const {
  std::vector<std::string> parts;
  for (int d = 0; d < dims(); ++d) {
    parts.push_back(IsFullAt(d) ? "-" : absl::StrCat(starts_[d], ",", lengths_[d]));
  }
  return absl::StrJoin(parts, ":");
}

StatusOr<TensorSlice> TensorSlice::Resolve(const TensorShape& shape) const {
  if (dims() != shape.dims()) {
    return errors::InvalidArgument("Tensor slice '", DebugString(), "' has rank ", dims(), " but the shape ",
                                   shape.DebugString(), " has rank ", shape.dims());
  }
  TensorSlice r = *this;
  for (int d = 0; d < dims(); ++d) {
    if (IsFullAt(d)) {
      r.starts_[d] = 0;
      r.lengths_[d] = shape.dim_size(d);
    } else if (starts_[d] > shape.dim_size(d) || lengths_[d] > shape.dim_size(d) - starts_[d]) {
      return errors::InvalidArgument("Tensor slice '", DebugString(), "' does not fit in shape ", shape.DebugString());
    }
  }
  return r;
}

StatusOr<TensorShape> TensorSlice::SliceShape(const TensorShape& shape) const {
  ASSIGN_OR_RETURN(TensorSlice r, Resolve(shape));
  return TensorShape::FromDims(r.lengths_);
}

bool TensorSlice::Intersect(const TensorSlice& other, TensorSlice* out) const {
  if (dims() != other.dims()) return false;
  TensorSlice r(dims());
  for (int d = 0; d < dims(); ++d) {
    const int64_t lo = std::max(starts_[d], other.starts_[d]);
    const int64_t hi = std::min(starts_[d] + lengths_[d], other.starts_[d] + other.lengths_[d]);
    if (hi <= lo) return false;
    r.starts_[d] = lo;
    r.lengths_[d] = hi - lo;
  }
  *out = r;
  return true;
}

Status ParseShapeAndSlice(absl::string_view shape_and_slice, TensorShape* shape, TensorSlice* slice, bool* has_slice) {
  *shape = TensorShape();
  *slice = TensorSlice();
  *has_slice = false;
  if (shape_and_slice.empty()) return absl::OkStatus();
  std::vector<absl::string_view> parts = absl::StrSplit(shape_and_slice, ' ');
  if (parts.size() < 2) {
    return errors::InvalidArgument("Expected shape_and_slice '", shape_and_slice,
                                   "' to be the dimensions of the full shape and a slice, separated by spaces");
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int64_t d = 0;
    if (!absl::SimpleAtoi(parts[i], &d) || d < 0) {
      return errors::InvalidArgument("Expected a non-negative dimension in shape_and_slice '", shape_and_slice,
                                     "', got '", parts[i], "'");
    }
    dims.push_back(d);
  }
  ASSIGN_OR_RETURN(*shape, TensorShape::FromDims(dims));
  ASSIGN_OR_RETURN(*slice, TensorSlice::Parse(parts.back()));
  if (slice->dims() != shape->dims()) {
    return errors::InvalidArgument("In shape_and_slice '", shape_and_slice, "' the slice has rank ", slice->dims(),
                                   " but the shape has rank ", shape->dims());
  }
  RETURN_IF_ERROR(slice->Resolve(*shape).status());
  *has_slice = true;
  return absl::OkStatus();
}

namespace {

// OrderedCode (TensorFlow's lib/strings/ordered_code): order-preserving encodings.
void WriteNumIncreasing(std::string* dst, uint64_t v) {
  char buf[8];
  int len = 0;
  while (v > 0) {
    buf[7 - len] = static_cast<char>(v & 0xff);
    v >>= 8;
    ++len;
  }
  dst->push_back(static_cast<char>(len));
  dst->append(buf + 8 - len, len);
}

void WriteString(std::string* dst, absl::string_view s) {
  for (char c : s) {
    if (c == '\0') {
      dst->append("\x00\xff", 2);
    } else if (c == '\xff') {
      dst->append("\xff\x00", 2);
    } else {
      dst->push_back(c);
    }
  }
  dst->append("\x00\x01", 2);
}

// The sign bit, then as many bits equal to it as there are bytes after the first, a bit
// opposite to it, and the value in big-endian two's complement.
void WriteSignedNumIncreasing(std::string* dst, int64_t v) {
  const uint64_t x = v < 0 ? ~static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (x < 64) {
    dst->push_back(static_cast<char>(0x80 ^ static_cast<uint8_t>(v)));
    return;
  }
  int bits = 0;  // significant bits of x
  for (uint64_t t = x; t != 0; t >>= 1) ++bits;
  // n bytes hold values with up to 7n - 1 significant bits (n <= 10).
  int len = (bits + 1 + 6) / 7;
  char buf[10];
  const char sign = v < 0 ? '\xff' : '\0';
  buf[0] = buf[1] = sign;
  for (int i = 0; i < 8; ++i) buf[2 + i] = static_cast<char>((static_cast<uint64_t>(v) >> (56 - 8 * i)) & 0xff);
  static const unsigned char kHeader[11][2] = {{0, 0},    {0x80, 0}, {0xc0, 0}, {0xe0, 0},    {0xf0, 0},   {0xf8, 0},
                                               {0xfc, 0}, {0xfe, 0}, {0xff, 0}, {0xff, 0x80}, {0xff, 0xc0}};
  char* begin = buf + 10 - len;
  begin[0] = static_cast<char>(begin[0] ^ kHeader[len][0]);
  begin[1] = static_cast<char>(begin[1] ^ kHeader[len][1]);
  dst->append(begin, len);
}

}  // namespace

std::string EncodeTensorNameSlice(absl::string_view name, const TensorSlice& slice) {
  std::string key;
  WriteNumIncreasing(&key, 0);
  WriteString(&key, name);
  WriteNumIncreasing(&key, static_cast<uint64_t>(slice.dims()));
  for (int d = 0; d < slice.dims(); ++d) {
    WriteSignedNumIncreasing(&key, slice.start(d));
    WriteSignedNumIncreasing(&key, slice.length(d));
  }
  return key;
}

void CopySliceIntersection(const Tensor& src, const TensorSlice& src_slice, Tensor* dst, const TensorSlice& dst_slice) {
  TensorSlice box;
  if (!src_slice.Intersect(dst_slice, &box)) return;
  const int rank = box.dims();
  const bool is_string = src.dtype() == DT_STRING;
  const size_t elem = is_string ? 0 : DTypeSize(src.dtype());
  // Row-major strides of both tensors.
  std::vector<int64_t> src_stride(rank, 1), dst_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) {
    src_stride[d] = src_stride[d + 1] * src_slice.length(d + 1);
    dst_stride[d] = dst_stride[d + 1] * dst_slice.length(d + 1);
  }
  const int64_t run = rank == 0 ? 1 : box.length(rank - 1);  // contiguous elements in the last dimension
  std::vector<int64_t> idx(rank, 0);                         // position in the box, last dimension fixed at 0
  while (true) {
    int64_t s = 0, t = 0;
    for (int d = 0; d < rank; ++d) {
      s += (box.start(d) - src_slice.start(d) + idx[d]) * src_stride[d];
      t += (box.start(d) - dst_slice.start(d) + idx[d]) * dst_stride[d];
    }
    if (is_string) {
      const std::string* from = src.data<std::string>() + s;
      std::string* to = dst->data<std::string>() + t;
      for (int64_t i = 0; i < run; ++i) to[i] = from[i];
    } else {
      std::memcpy(static_cast<char*>(dst->raw_data()) + t * elem, static_cast<const char*>(src.raw_data()) + s * elem,
                  run * elem);
    }
    int d = rank - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < box.length(d)) break;
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

}  // namespace dflow
