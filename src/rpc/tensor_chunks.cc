#include "rpc/tensor_chunks.h"

#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "proto/worker.pb.h"
#include "tensor/tensor_proto.h"

namespace dflow::rpc {
namespace {

constexpr int kDataField = 5;  // RecvTensorChunk.data
constexpr int kLengthDelimited = 2;

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Reads bytes across the pieces of one message.
class Cursor {
 public:
  explicit Cursor(absl::Span<const absl::string_view> pieces) : pieces_(pieces) { SkipEmpty(); }

  bool AtEnd() const { return i_ == pieces_.size(); }

  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (AtEnd()) return false;
      uint8_t b = static_cast<uint8_t>(pieces_[i_][off_]);
      Advance(1);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;  // more than ten bytes
  }

  // The next n bytes, appended to `out` (copied) or to `spans` (in place).
  bool Take(uint64_t n, std::string* out, std::vector<absl::string_view>* spans) {
    while (n > 0) {
      if (AtEnd()) return false;
      absl::string_view p = pieces_[i_].substr(off_, n);
      if (out != nullptr) out->append(p.data(), p.size());
      if (spans != nullptr) spans->push_back(p);
      n -= p.size();
      Advance(p.size());
    }
    return true;
  }

 private:
  void Advance(size_t n) {
    off_ += n;
    if (off_ == pieces_[i_].size()) {
      ++i_;
      off_ = 0;
      SkipEmpty();
    }
  }
  void SkipEmpty() {
    while (i_ < pieces_.size() && pieces_[i_].empty()) ++i_;
  }

  absl::Span<const absl::string_view> pieces_;
  size_t i_ = 0, off_ = 0;
};

bool TravelsAsBytes(DType t) { return t != DT_STRING && t != DT_RESOURCE && t != DT_VARIANT; }

}  // namespace

Status TensorChunkAssembler::Malformed(const std::string& what) const {
  return errors::DataLoss("Malformed tensor stream from ", from_, ": ", what);
}

Status TensorChunkAssembler::Add(absl::Span<const absl::string_view> pieces) {
  // Every field but `data` goes to `head`, re-encoded; `data` stays where it is.
  std::string head;
  std::vector<absl::string_view> data;
  size_t data_size = 0;
  Cursor c(pieces);
  while (!c.AtEnd()) {
    uint64_t tag;
    if (!c.Varint(&tag)) return Malformed("a field tag is cut off");
    const uint64_t field = tag >> 3;
    const int wire = static_cast<int>(tag & 7);
    if (field == 0) return Malformed("a field number is 0");
    uint64_t v;
    if (field == kDataField && wire == kLengthDelimited) {
      if (!c.Varint(&v)) return Malformed("the data length is cut off");
      data.clear();  // the last occurrence of a bytes field wins
      if (!c.Take(v, nullptr, &data))
        return Malformed(absl::StrCat("the data field announces ", v, " bytes past the message's end"));
      data_size = v;
      continue;
    }
    AppendVarint(&head, tag);
    bool ok;
    switch (wire) {
      case 0:
        ok = c.Varint(&v);
        if (ok) AppendVarint(&head, v);
        break;
      case 1: ok = c.Take(8, &head, nullptr); break;
      case 5: ok = c.Take(4, &head, nullptr); break;
      case kLengthDelimited:
        ok = c.Varint(&v);
        if (ok) {
          AppendVarint(&head, v);
          ok = c.Take(v, &head, nullptr);
        }
        break;
      default: return Malformed(absl::StrCat("field ", field, " has wire type ", wire));
    }
    if (!ok) return Malformed(absl::StrCat("field ", field, " is cut off"));
  }
  if (!got_first_) {
    got_first_ = true;
    RETURN_IF_ERROR(Begin(head));
  } else if (!head.empty()) {
    return Malformed("a chunk after the first describes the tensor again");
  }
  return Append(data, data_size);
}

Status TensorChunkAssembler::Begin(const std::string& head) {
  proto::RecvTensorChunk chunk;
  if (!chunk.ParseFromString(head)) return Malformed("the first chunk does not parse");
  is_dead_ = chunk.is_dead();
  if (is_dead_) return absl::OkStatus();
  if (chunk.has_proto()) {
    ASSIGN_OR_RETURN(tensor_, TensorFromProto(chunk.proto()));
    return absl::OkStatus();
  }
  if (!IsValidDType(chunk.dtype())) return Malformed(absl::StrCat("unknown dtype ", chunk.dtype()));
  DType dtype = static_cast<DType>(chunk.dtype());
  if (!TravelsAsBytes(dtype)) return Malformed(absl::StrCat("dtype ", DTypeString(dtype), " cannot travel as bytes"));
  StatusOr<TensorShape> shape = ShapeFromProto(chunk.shape());
  if (!shape.ok()) return Malformed(std::string(shape.status().message()));
  // The announced size must match the shape before anything is allocated for it.
  const int64_t elements = shape->num_elements();
  const int64_t element_size = static_cast<int64_t>(DTypeSize(dtype));
  if (element_size > 0 && elements > std::numeric_limits<int64_t>::max() / element_size) {
    return Malformed(absl::StrCat("a ", DTypeString(dtype), " tensor of shape ", shape->DebugString(),
                                  " does not fit in memory"));
  }
  if (chunk.total_bytes() != elements * element_size) {
    return Malformed(absl::StrCat("announces ", chunk.total_bytes(), " bytes for a ", DTypeString(dtype),
                                  " tensor of shape ", shape->DebugString(), " (", elements * element_size, " bytes)"));
  }
  ASSIGN_OR_RETURN(tensor_, Tensor::Allocate(dtype, *shape));
  expected_ = tensor_.TotalBytes();
  return absl::OkStatus();
}

Status TensorChunkAssembler::Append(const std::vector<absl::string_view>& data, size_t size) {
  if (size == 0) return absl::OkStatus();
  if (is_dead_ || !tensor_.IsInitialized() || expected_ == 0 || size > expected_ - received_) {
    return Malformed(absl::StrCat("more bytes than the tensor holds (", size, " more after ", received_, " of ",
                                  expected_, ")"));
  }
  char* to = static_cast<char*>(tensor_.raw_data()) + received_;
  for (absl::string_view p : data) {
    std::memcpy(to, p.data(), p.size());
    to += p.size();
  }
  received_ += size;
  return absl::OkStatus();
}

Status TensorChunkAssembler::Finish(RecvTensorResult* result) {
  if (!got_first_) return Malformed("no chunk arrived");
  if (received_ != expected_) return Malformed(absl::StrCat(received_, " of ", expected_, " bytes arrived"));
  result->tensor = std::move(tensor_);
  result->is_dead = is_dead_;
  return absl::OkStatus();
}

}  // namespace dflow::rpc
