// BundleReader: reads and verifies V2 checkpoints (see tensor_bundle.h).
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/crc32c.h"
#include "base/table.h"
#include "tensor/tensor_bundle.h"
#include "tensor/tensor_proto.h"

namespace dflow {
namespace {

constexpr int kMaxSlices = 4096;  // per tensor; overlaps are checked pairwise

bool ReadableDType(int t) {
  switch (t) {
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_INT32:
    case DT_UINT8:
    case DT_STRING:
    case DT_INT64:
    case DT_BOOL: return true;
    default: return false;
  }
}

// A name for errors: slice keys are binary, so they are shown as "NAME[slice]".
std::string Printable(absl::string_view key) {
  std::string out;
  for (char c : key) {
    if (c >= 0x20 && c < 0x7f) out.push_back(c);
    else absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(c));
  }
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(Env* env, const std::string& prefix) {
  const std::string index = BundleIndexFilename(prefix);
  StatusOr<uint64_t> size = env->FileSize(index);
  if (!size.ok()) {
    if (absl::IsNotFound(size.status())) {
      return errors::NotFound("Checkpoint ", prefix, " not found: ", index, " does not exist");
    }
    return size.status();
  }
  ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, env->NewRandomAccessFile(index));
  ASSIGN_OR_RETURN(auto kvs, table::ReadTable(*file, *size));
  std::unique_ptr<BundleReader> r(new BundleReader());
  r->env_ = env;
  r->prefix_ = prefix;
  if (kvs.empty() || !kvs[0].first.empty()) {
    return errors::DataLoss("Checkpoint index ", index, " has no header entry");
  }
  if (!r->header_.ParseFromString(kvs[0].second)) {
    return errors::DataLoss("Checkpoint index ", index, ": the header entry cannot be parsed");
  }
  if (r->header_.num_shards() < 0 || r->header_.num_shards() > (1 << 20)) {
    return errors::DataLoss("Checkpoint index ", index, ": bad number of data files ", r->header_.num_shards());
  }
  if (r->header_.endianness() != proto::BundleHeaderProto::LITTLE) {
    return errors::Unimplemented("Checkpoint ", prefix, " was written on a big-endian machine");
  }
  if (r->header_.version().min_consumer() > 1) {
    return errors::FailedPrecondition("Checkpoint ", prefix, " needs a reader of version ",
                                      r->header_.version().min_consumer(), " or later (this one reads version 1)");
  }
  for (size_t i = 1; i < kvs.size(); ++i) {
    proto::BundleEntryProto e;
    if (!e.ParseFromString(kvs[i].second)) {
      return errors::DataLoss("Checkpoint index ", index, ": the entry of tensor '", Printable(kvs[i].first),
                              "' cannot be parsed");
    }
    auto shape = PartialShapeFromProto(e.shape());
    if (!shape.ok() || shape->dims() < 0 || e.shard_id() < 0 || e.shard_id() >= std::max(1, r->num_shards()) ||
        e.offset() < 0 || e.size() < 0) {
      return errors::DataLoss("Checkpoint index ", index, ": the entry of tensor '", Printable(kvs[i].first),
                              "' is invalid (shape, data file, offset or size): ", e.ShortDebugString());
    }
    r->entries_.emplace(std::move(kvs[i].first), std::move(e));
  }
  return r;
}

std::vector<std::string> BundleReader::TensorNames() const {
  std::vector<std::string> names;
  for (const auto& [k, e] : entries_) {
    if (k[0] != '\0') names.push_back(k);
  }
  return names;
}

StatusOr<proto::BundleEntryProto> BundleReader::GetEntry(absl::string_view name) const {
  auto it = entries_.find(std::string(name));
  if (it == entries_.end()) {
    return errors::NotFound("Key ", Printable(name), " not found in checkpoint ", prefix_);
  }
  return it->second;
}

Status BundleReader::GetDTypeAndShape(absl::string_view name, DType* dtype, TensorShape* shape) const {
  ASSIGN_OR_RETURN(proto::BundleEntryProto e, GetEntry(name));
  auto s = ShapeFromProto(e.shape());
  if (!s.ok()) return errors::DataLoss("Checkpoint ", prefix_, ": tensor '", name, "' has a bad shape");
  *shape = *s;
  *dtype = static_cast<DType>(e.dtype());
  return absl::OkStatus();
}

StatusOr<const RandomAccessFile*> BundleReader::DataFile(int shard, uint64_t* size) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = data_files_.find(shard);
  if (it == data_files_.end()) {
    const std::string path = BundleDataFilename(prefix_, shard, std::max(1, num_shards()));
    StatusOr<uint64_t> n = env_->FileSize(path);
    if (!n.ok()) {
      if (absl::IsNotFound(n.status())) {
        return errors::DataLoss("Checkpoint ", prefix_, ": data file ", path, " is missing");
      }
      return n.status();
    }
    ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> f, env_->NewRandomAccessFile(path));
    it = data_files_.emplace(shard, std::make_pair(std::move(f), *n)).first;
  }
  *size = it->second.second;
  return it->second.first.get();
}

Status BundleReader::CheckEntryBounds(absl::string_view display_name, const proto::BundleEntryProto& entry) const {
  auto shape = ShapeFromProto(entry.shape());
  if (!shape.ok()) return errors::DataLoss("Checkpoint ", prefix_, ": tensor '", display_name, "' has a bad shape");
  uint64_t file_size = 0;
  ASSIGN_OR_RETURN(const RandomAccessFile* file, DataFile(entry.shard_id(), &file_size));
  auto loss = [&](const auto&... args) {
    return errors::DataLoss("Checkpoint data file ", file->path(), ", tensor '", display_name, "': ", args...);
  };
  const uint64_t offset = static_cast<uint64_t>(entry.offset()), size = static_cast<uint64_t>(entry.size());
  if (offset > file_size || size > file_size - offset) {
    return loss("bytes [", offset, ", ", offset + size, ") lie beyond the end of the file (", file_size,
                " bytes): the file is truncated");
  }
  const int64_t n = shape->num_elements();
  const DType dtype = static_cast<DType>(entry.dtype());
  if (dtype != DT_STRING) {
    const uint64_t want = static_cast<uint64_t>(n) * DTypeSize(dtype);
    if (size != want) {
      return loss("size ", size, " in the index does not match ", want, " bytes of shape ", shape->DebugString());
    }
  } else if (n > 0 && (size < 4 || static_cast<uint64_t>(n) > size - 4)) {
    return loss("size ", size, " is too small for ", n, " strings");
  }
  return absl::OkStatus();
}

StatusOr<Tensor> BundleReader::ReadEntry(absl::string_view key, absl::string_view display_name,
                                         const proto::BundleEntryProto& entry) const {
  if (!ReadableDType(entry.dtype())) {
    return errors::Unimplemented("Checkpoint ", prefix_, ": tensor '", display_name, "' has dtype ",
                                 static_cast<int>(entry.dtype()), ", which dflow cannot hold");
  }
  const DType dtype = static_cast<DType>(entry.dtype());
  auto shape = ShapeFromProto(entry.shape());
  if (!shape.ok()) return errors::DataLoss("Checkpoint ", prefix_, ": tensor '", display_name, "' has a bad shape");
  RETURN_IF_ERROR(CheckEntryBounds(display_name, entry));
  uint64_t file_size = 0;
  ASSIGN_OR_RETURN(const RandomAccessFile* file, DataFile(entry.shard_id(), &file_size));
  const std::string& path = file->path();
  auto loss = [&](const auto&... args) {
    return errors::DataLoss("Checkpoint data file ", path, ", tensor '", display_name, "': ", args...);
  };
  const uint64_t offset = static_cast<uint64_t>(entry.offset()), size = static_cast<uint64_t>(entry.size());
  const int64_t n = shape->num_elements();
  // Reads `size` bytes into dst (a tensor's buffer for numbers: no second copy), large ones with
  // several threads, and checksums them as they arrive.
  uint32_t actual = 0;
  auto read_into = [&](char* dst) -> Status {
    if (size == 0) return absl::OkStatus();
    auto r = bundle_io::ReadAndChecksum(*file, offset, size, dst);
    if (!r.ok()) {
      if (absl::IsOutOfRange(r.status())) return loss("the file ends early");
      return loss("cannot read: ", r.status().message());
    }
    actual = *r;
    return absl::OkStatus();
  };
  const uint32_t expected = crc32c::Unmask(entry.crc32c());
  if (dtype != DT_STRING) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, *shape));
    RETURN_IF_ERROR(read_into(static_cast<char*>(t.raw_data())));
    if (actual != expected) {
      return loss(absl::StrFormat("checksum does not match: stored %08x vs. calculated on the restored bytes %08x",
                                  expected, actual));
    }
    return t;
  }
  std::string bytes(size, '\0');
  RETURN_IF_ERROR(read_into(bytes.data()));
  // Strings: varint64 lengths, a masked checksum of them, then the bytes.
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, *shape));
  if (n == 0) return t;
  absl::string_view in = bytes;
  std::vector<uint64_t> lengths(n);
  uint32_t crc = 0;
  uint64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!table::GetVarint64(&in, &lengths[i])) return loss("bad length of string ", i);
    if (lengths[i] > size) return loss("string ", i, " claims ", lengths[i], " bytes, more than the entry's ", size);
    total += lengths[i];
    if (lengths[i] <= UINT32_MAX) {
      const uint32_t l = static_cast<uint32_t>(lengths[i]);
      char b[4];
      std::memcpy(b, &l, 4);
      crc = crc32c::Extend(crc, b, 4);
    } else {
      char b[8];
      std::memcpy(b, &lengths[i], 8);
      crc = crc32c::Extend(crc, b, 8);
    }
  }
  if (in.size() < 4) return loss("the checksum of the string lengths is missing");
  const uint32_t length_crc = table::DecodeFixed32(in.data());
  if (crc32c::Unmask(length_crc) != crc) return loss("the checksum of the string lengths does not match");
  crc = crc32c::Extend(crc, in.data(), 4);
  in.remove_prefix(4);
  if (total != in.size()) return loss("the strings take ", in.size(), " bytes but their lengths add up to ", total);
  std::string* out = t.data<std::string>();
  for (int64_t i = 0; i < n; ++i) {
    out[i].assign(in.data(), lengths[i]);
    crc = crc32c::Extend(crc, in.data(), lengths[i]);
    in.remove_prefix(lengths[i]);
  }
  if (crc != expected) {
    return loss(absl::StrFormat("checksum does not match: stored %08x vs. calculated on the restored bytes %08x",
                                expected, crc));
  }
  return t;
}

StatusOr<Tensor> BundleReader::Lookup(absl::string_view name) const {
  ASSIGN_OR_RETURN(proto::BundleEntryProto e, GetEntry(name));
  if (e.slices_size() == 0) return ReadEntry(name, name, e);
  return LookupSlice(name, TensorSlice(e.shape().dim_size()));
}

StatusOr<Tensor> BundleReader::LookupSlice(absl::string_view name, const TensorSlice& slice) const {
  ASSIGN_OR_RETURN(proto::BundleEntryProto e, GetEntry(name));
  DType dtype;
  TensorShape full;
  RETURN_IF_ERROR(GetDTypeAndShape(name, &dtype, &full));
  ASSIGN_OR_RETURN(TensorSlice want, slice.Resolve(full));
  ASSIGN_OR_RETURN(TensorShape want_shape, want.SliceShape(full));
  if (e.slices_size() == 0) {
    ASSIGN_OR_RETURN(Tensor whole, ReadEntry(name, name, e));
    if (want_shape == full) return whole;
    ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, want_shape));
    CopySliceIntersection(whole, TensorSlice(full.dims()).Resolve(full).value(), &out, want);
    return out;
  }
  if (!ReadableDType(e.dtype())) {
    return errors::Unimplemented("Checkpoint ", prefix_, ": tensor '", name, "' has dtype ",
                                 static_cast<int>(e.dtype()), ", which dflow cannot hold");
  }
  if (e.slices_size() > kMaxSlices) {
    return errors::DataLoss("Checkpoint ", prefix_, ": tensor '", name, "' lists ", e.slices_size(),
                            " slices, more than ", kMaxSlices);
  }
  // First the metadata: which saved slices overlap the box, that they cover it exactly once,
  // and that their bytes lie in the data files; only then is the result allocated (the full
  // shape comes from the file and may be a lie).
  struct Part {
    TensorSlice stored, resolved;
    std::string key, display;
    proto::BundleEntryProto entry;
  };
  std::vector<Part> parts;
  std::vector<TensorSlice> seen;
  int64_t covered = 0;
  for (const auto& sp : e.slices()) {
    auto stored = TensorSlice::FromProto(sp);
    StatusOr<TensorSlice> resolved = stored.ok() ? stored->Resolve(full) : stored.status();
    if (!resolved.ok()) {
      return errors::DataLoss("Checkpoint ", prefix_, ": tensor '", name,
                              "' lists a bad slice: ", resolved.status().message());
    }
    for (const TensorSlice& other : seen) {
      TensorSlice overlap;
      if (resolved->Intersect(other, &overlap)) {
        return errors::DataLoss("Checkpoint ", prefix_, ": slices ", resolved->DebugString(), " and ",
                                other.DebugString(), " of tensor '", name, "' overlap");
      }
    }
    seen.push_back(*resolved);
    TensorSlice box;
    if (!resolved->Intersect(want, &box)) continue;
    Part part{*stored,
              *resolved,
              EncodeTensorNameSlice(name, *stored),
              absl::StrCat(name, "[", stored->DebugString(), "]"),
              {}};
    auto se = GetEntry(part.key);
    if (!se.ok()) {
      return errors::DataLoss("Checkpoint ", prefix_, ": slice ", stored->DebugString(), " of tensor '", name,
                              "' is listed but not stored");
    }
    ASSIGN_OR_RETURN(TensorShape stored_shape, resolved->SliceShape(full));
    auto se_shape = ShapeFromProto(se->shape());
    if (se->dtype() != e.dtype() || !se_shape.ok() || *se_shape != stored_shape) {
      return errors::DataLoss("Checkpoint ", prefix_, ": slice ", part.display,
                              " has a dtype or shape that does not match");
    }
    RETURN_IF_ERROR(CheckEntryBounds(part.display, *se));
    part.entry = *std::move(se);
    int64_t volume = 1;
    for (int d = 0; d < box.dims(); ++d) volume *= box.length(d);
    covered += volume;
    parts.push_back(std::move(part));
  }
  if (covered != want_shape.num_elements()) {
    return errors::NotFound("Checkpoint ", prefix_, ": the saved slices of tensor '", name, "' do not cover slice ",
                            want.DebugString());
  }
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, want_shape));
  for (const Part& part : parts) {
    ASSIGN_OR_RETURN(Tensor value, ReadEntry(part.key, part.display, part.entry));
    CopySliceIntersection(value, part.resolved, &out, want);
  }
  return out;
}

}  // namespace dflow
