#include "tensor/tensor_bundle.h"

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/crc32c.h"
#include "base/table.h"
#include "base/temp_file.h"
#include "tensor/tensor_proto.h"

namespace dflow {
namespace {

constexpr int kBundleVersion = 1;  // TensorFlow's kTensorBundleVersion

bool SupportedDType(DType t) {
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

// The bytes of a string tensor as TensorFlow lays them out, and their (unmasked) checksum.
std::string EncodeStrings(const Tensor& t, uint32_t* crc) {
  std::string out;
  *crc = 0;
  auto strings = t.flat<std::string>();
  for (const std::string& s : strings) {
    table::PutVarint64(&out, s.size());
    if (s.size() <= UINT32_MAX) {
      const uint32_t n = static_cast<uint32_t>(s.size());
      char b[4];
      std::memcpy(b, &n, 4);
      *crc = crc32c::Extend(*crc, b, 4);
    } else {
      const uint64_t n = s.size();
      char b[8];
      std::memcpy(b, &n, 8);
      *crc = crc32c::Extend(*crc, b, 8);
    }
  }
  std::string masked;
  table::PutFixed32(&masked, crc32c::Mask(*crc));
  out += masked;
  *crc = crc32c::Extend(*crc, masked.data(), 4);
  for (const std::string& s : strings) {
    out += s;
    *crc = crc32c::Extend(*crc, s.data(), s.size());
  }
  return out;
}

// Writes the index table to `path` atomically through env's virtual calls (a TempFile: temporary,
// sync, rename; a failure deletes the temporary). The caller syncs the directory.
Status WriteTableFile(Env* env, const std::string& path, const std::map<std::string, proto::BundleEntryProto>& entries,
                      const proto::BundleHeaderProto& header) {
  ASSIGN_OR_RETURN(TempFile tmp, TempFile::Create(env, path, 0644, ".tempstate"));
  table::TableBuilder builder(tmp.file(), table::Options{});
  RETURN_IF_ERROR(builder.Add("", header.SerializeAsString()));
  for (const auto& [key, entry] : entries) RETURN_IF_ERROR(builder.Add(key, entry.SerializeAsString()));
  RETURN_IF_ERROR(builder.Finish());
  return tmp.Commit(/*sync_dir=*/false);
}

proto::BundleHeaderProto MakeHeader(int num_shards) {
  proto::BundleHeaderProto h;
  h.set_num_shards(num_shards);
  h.set_endianness(proto::BundleHeaderProto::LITTLE);
  h.mutable_version()->set_producer(kBundleVersion);
  return h;
}

bool IsSliceKey(const std::string& key) { return !key.empty() && key[0] == '\0'; }

}  // namespace

std::string BundleIndexFilename(absl::string_view prefix) { return absl::StrCat(prefix, ".index"); }

std::string BundleDataFilename(absl::string_view prefix, int shard, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

// ---- writer ----

BundleWriter::BundleWriter(Env* env, std::string prefix) : env_(env), prefix_(std::move(prefix)) {
  const std::string id = RandomTempSuffix();
  data_tmp_ = absl::StrCat(BundleDataFilename(prefix_, 0, 1), ".tempstate", id);
  index_tmp_ = absl::StrCat(BundleIndexFilename(prefix_), ".tempstate", id);
  status_ = env_->CreateDirs(DirName(prefix_));
  if (!status_.ok()) return;
  // Written in place under its temporary name (it can be large), renamed by Finish.
  auto f = env_->NewExclusiveFile(data_tmp_, 0644);
  if (!f.ok()) {
    status_ = f.status();
    return;
  }
  data_ = std::move(f).value();
  stage_ = std::make_unique<bundle_io::StagedWriter>(data_.get());
}

BundleWriter::~BundleWriter() {
  stage_.reset();  // joins its thread
  if (!finished_) {
    if (data_ != nullptr) data_->Close().IgnoreError();
    env_->DeleteFile(data_tmp_).IgnoreError();
  }
}

Status BundleWriter::Add(absl::string_view key, const Tensor& t) {
  if (!status_.ok()) return status_;
  if (finished_) return errors::FailedPrecondition("BundleWriter for ", prefix_, " is finished");
  if (key.empty()) return status_ = errors::InvalidArgument("Cannot save a tensor under the empty name");
  if (!SupportedDType(t.dtype())) {
    return status_ = errors::InvalidArgument("Cannot save tensor '", key, "' of type ", DTypeString(t.dtype()));
  }
  auto [it, inserted] = entries_.try_emplace(std::string(key));
  if (!inserted) return status_ = errors::InvalidArgument("Adding duplicate key: ", key);
  proto::BundleEntryProto& e = it->second;
  e.set_dtype(static_cast<proto::DataType>(t.dtype()));
  ShapeToProto(PartialTensorShape::FromDims(t.shape().dim_sizes()).value(), e.mutable_shape());
  e.set_shard_id(0);
  e.set_offset(static_cast<int64_t>(stage_->size()));
  uint32_t crc = 0;
  if (t.dtype() == DT_STRING) {
    std::string bytes = EncodeStrings(t, &crc);
    status_ = stage_->Append(bytes);
    e.set_size(static_cast<int64_t>(bytes.size()));
  } else {
    absl::string_view bytes(static_cast<const char*>(t.raw_data()), t.TotalBytes());
    status_ = stage_->Append(bytes, &crc);  // checksummed while copied
    e.set_size(static_cast<int64_t>(bytes.size()));
  }
  e.set_crc32c(crc32c::Mask(crc));
  return status_;
}

Status BundleWriter::AddSlice(absl::string_view full_name, const TensorShape& full_shape, const TensorSlice& slice,
                              const Tensor& slice_tensor) {
  if (!status_.ok()) return status_;
  auto slice_shape = slice.SliceShape(full_shape);
  if (!slice_shape.ok())
    return status_ = errors::Annotate(slice_shape.status(), absl::StrCat("Saving ", full_name, ": "));
  if (*slice_shape != slice_tensor.shape()) {
    return status_ = errors::InvalidArgument("Saving ", full_name, ": slice '", slice.DebugString(), "' of shape ",
                                             full_shape.DebugString(), " has shape ", slice_shape->DebugString(),
                                             " but the tensor has shape ", slice_tensor.shape().DebugString());
  }
  if (*slice_shape == full_shape) return Add(full_name, slice_tensor);
  if (full_name.empty() || IsSliceKey(std::string(full_name))) {
    return status_ = errors::InvalidArgument("Cannot save a slice under the name '", full_name, "'");
  }
  proto::BundleEntryProto& full = entries_[std::string(full_name)];
  if (full.dtype() != 0 || full.has_shape()) {
    if (full.slices_size() == 0) return status_ = errors::InvalidArgument("Adding duplicate key: ", full_name);
    auto shape = ShapeFromProto(full.shape());
    if (full.dtype() != static_cast<int>(slice_tensor.dtype()) || !shape.ok() || *shape != full_shape) {
      return status_ = errors::InvalidArgument("Slices of '", full_name, "' disagree on dtype or full shape");
    }
  }
  full.set_dtype(static_cast<proto::DataType>(slice_tensor.dtype()));
  ShapeToProto(PartialTensorShape::FromDims(full_shape.dim_sizes()).value(), full.mutable_shape());
  slice.ToProto(full.add_slices());
  return Add(EncodeTensorNameSlice(full_name, slice), slice_tensor);
}

Status BundleWriter::Finish() {
  if (!status_.ok()) return status_;
  if (finished_) return errors::FailedPrecondition("BundleWriter for ", prefix_, " is finished");
  // Whether the prefix is a bundle already (saved again): its data file is replaced below.
  const bool had_index = env_->FileExists(BundleIndexFilename(prefix_));
  const std::string data = BundleDataFilename(prefix_, 0, 1);
  status_ = stage_->Finish();
  if (status_.ok()) status_ = SyncCloseAndRename(env_, data_.get(), data_tmp_, data);
  if (!status_.ok()) return status_;
  finished_ = true;  // the data file has its name now; the index below makes the bundle exist
  status_ = WriteTableFile(env_, BundleIndexFilename(prefix_), entries_, MakeHeader(1));
  // Without an index the data file belongs to no bundle: a failed save leaves nothing behind. (An
  // earlier bundle of the prefix keeps the new data file: its old one is gone already.)
  if (!status_.ok() && !had_index) env_->DeleteFile(data).IgnoreError();
  if (status_.ok()) status_ = env_->SyncDir(DirName(prefix_));
  return status_;
}

// ---- merge and delete ----

Status MergeBundles(Env* env, const std::vector<std::string>& prefixes, const std::string& merged_prefix,
                    bool delete_old_dirs) {
  std::map<std::string, proto::BundleEntryProto> merged;
  std::vector<std::string> data_files;  // in the order of the new shard ids
  for (const std::string& prefix : prefixes) {
    ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> r, BundleReader::Open(env, prefix));
    const int first_shard = static_cast<int>(data_files.size());
    for (int i = 0; i < r->num_shards(); ++i) data_files.push_back(BundleDataFilename(prefix, i, r->num_shards()));
    for (const std::string& name : r->TensorNames()) {
      ASSIGN_OR_RETURN(proto::BundleEntryProto e, r->GetEntry(name));
      auto it = merged.find(name);
      if (it == merged.end()) {
        if (e.slices_size() == 0) e.set_shard_id(e.shard_id() + first_shard);
        merged[name] = e;
        for (const auto& sp : e.slices()) {
          ASSIGN_OR_RETURN(TensorSlice sl, TensorSlice::FromProto(sp));
          const std::string key = EncodeTensorNameSlice(name, sl);
          ASSIGN_OR_RETURN(proto::BundleEntryProto se, r->GetEntry(key));
          se.set_shard_id(se.shard_id() + first_shard);
          merged[key] = se;
        }
        continue;
      }
      if (it->second.slices_size() == 0 || e.slices_size() == 0 || it->second.dtype() != e.dtype() ||
          it->second.shape().SerializeAsString() != e.shape().SerializeAsString()) {
        return errors::InvalidArgument("Duplicate tensor keyed by ", name,
                                       " encountered, when merging prefix: ", prefix);
      }
      for (const auto& sp : e.slices()) {
        ASSIGN_OR_RETURN(TensorSlice sl, TensorSlice::FromProto(sp));
        const std::string key = EncodeTensorNameSlice(name, sl);
        if (merged.count(key)) {
          return errors::InvalidArgument("Slice ", sl.DebugString(), " of ", name, " is saved twice (", prefix, ")");
        }
        ASSIGN_OR_RETURN(proto::BundleEntryProto se, r->GetEntry(key));
        se.set_shard_id(se.shard_id() + first_shard);
        merged[key] = se;
        *it->second.add_slices() = sp;
      }
    }
  }
  const int n = static_cast<int>(data_files.size());
  RETURN_IF_ERROR(env->CreateDirs(DirName(merged_prefix)));
  const bool had_index = env->FileExists(BundleIndexFilename(merged_prefix));
  int renamed = 0;
  Status s;
  while (s.ok() && renamed < n) {
    s = env->RenameFile(data_files[renamed], BundleDataFilename(merged_prefix, renamed, n));
    if (s.ok()) ++renamed;
  }
  if (s.ok()) s = WriteTableFile(env, BundleIndexFilename(merged_prefix), merged, MakeHeader(n));
  if (!s.ok()) {
    // As in BundleWriter::Finish: data files renamed into place without an index are removed.
    for (int i = 0; i < renamed && !had_index; ++i) {
      env->DeleteFile(BundleDataFilename(merged_prefix, i, n)).IgnoreError();
    }
    return s;
  }
  RETURN_IF_ERROR(env->SyncDir(DirName(merged_prefix)));
  for (const std::string& prefix : prefixes) {
    env->DeleteFile(BundleIndexFilename(prefix)).IgnoreError();
    if (delete_old_dirs && DirName(prefix) != DirName(merged_prefix)) env->DeleteDir(DirName(prefix)).IgnoreError();
  }
  return absl::OkStatus();
}

Status DeleteBundle(Env* env, const std::string& prefix) {
  // The index first: without it the checkpoint no longer exists, whatever is left.
  Status first = env->DeleteFile(BundleIndexFilename(prefix));
  if (absl::IsNotFound(first)) first = absl::OkStatus();
  const std::string dir = DirName(prefix), base = BaseName(prefix);
  auto children = env->GetChildren(dir);
  if (children.ok()) {
    // PREFIX.data-*-of-* and leftover temporaries of this prefix.
    for (const std::string& c : *children) {
      if (absl::StartsWith(c, base + ".data-") || absl::StartsWith(c, base + ".index.tempstate")) {
        Status s = env->DeleteFile(JoinPath(dir, c));
        if (first.ok() && !s.ok() && !absl::IsNotFound(s)) first = s;
      }
    }
  }
  return first;
}

}  // namespace dflow
