// Checkpoint ops with TensorFlow's names and signatures: SaveV2, RestoreV2 and
// MergeV2Checkpoints (V2 checkpoints, tensor/tensor_bundle.h), and the two string ops a sharded
// Saver builds its file names with, ShardedFilename and StringJoin.
//
// SaveV2, RestoreV2 and MergeV2Checkpoints do every file operation through their device's
// file_env(): on a server started with --allowed_dirs each path (the prefix, and every index,
// data, temporary file and directory derived from it) must lie under an allowed directory
// (framework/file_policy.h). The prefixes are also checked up front, for a plain error.
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/device.h"
#include "framework/file_policy.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/register_all.h"
#include "tensor/tensor_bundle.h"

namespace dflow {
namespace {

// TensorFlow's checks of the string inputs: `what` is a scalar / a vector of n strings.
Status CheckScalarString(const OpKernel& k, const Tensor& t, const char* what) {
  if (t.dtype() != DT_STRING || t.dims() != 0) {
    return errors::InvalidArgument(k.type_string(), " ", k.name(), ": input ", what,
                                   " must be a scalar string, got shape ", t.shape().DebugString());
  }
  return absl::OkStatus();
}

// The Env for the kernel's file operations; unrestricted without a device (never in a session).
Env* FileEnv(OpKernelContext* ctx) {
  const Device* d = ctx->step().device;
  return d != nullptr ? d->file_env().get() : Env::Default();
}

// OK when the device's file policy (if any) lets the kernel write (or only read) `path`.
Status CheckPath(const OpKernel& k, OpKernelContext* ctx, const std::string& path, bool write) {
  const Device* d = ctx->step().device;
  const FilePolicy* policy = d != nullptr ? d->file_policy() : nullptr;
  if (policy == nullptr) return absl::OkStatus();
  return errors::Annotate(write ? policy->CheckWrite(path) : policy->CheckRead(path),
                          absl::StrCat(k.type_string(), " ", k.name(), ": "));
}

Status CheckNames(const OpKernel& k, const Tensor& names, const Tensor& slices, int64_t n) {
  if (names.dims() != 1 || names.NumElements() != n) {
    return errors::InvalidArgument(k.type_string(), " ", k.name(), ": tensor_names must be a vector of ", n,
                                   " names (one per tensor), got shape ", names.shape().DebugString());
  }
  if (slices.dims() != 1 || slices.NumElements() != n) {
    return errors::InvalidArgument(k.type_string(), " ", k.name(), ": shape_and_slices must be a vector of ", n,
                                   " strings (one per tensor), got shape ", slices.shape().DebugString());
  }
  return absl::OkStatus();
}

class SaveV2Op : public OpKernel {
 public:
  explicit SaveV2Op(OpKernelConstruction* c) : OpKernel(c) {}
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 3;
    OP_REQUIRES_OK(ctx, CheckScalarString(*this, ctx->input(0), "prefix"));
    OP_REQUIRES_OK(ctx, CheckNames(*this, ctx->input(1), ctx->input(2), n));
    const std::string& prefix = ctx->input(0).scalar<std::string>();
    auto names = ctx->input(1).flat<std::string>();
    auto specs = ctx->input(2).flat<std::string>();
    OP_REQUIRES_OK(ctx, CheckPath(*this, ctx, prefix, /*write=*/true));
    BundleWriter writer(FileEnv(ctx), prefix);
    for (int i = 0; i < n; ++i) {
      const Tensor& t = ctx->input(3 + i);
      Status s;
      if (specs[i].empty()) {
        s = writer.Add(names[i], t);
      } else {
        TensorShape full;
        TensorSlice slice;
        bool has_slice = false;
        s = ParseShapeAndSlice(specs[i], &full, &slice, &has_slice);
        if (s.ok()) s = writer.AddSlice(names[i], full, slice, t);
      }
      OP_REQUIRES_OK(ctx, errors::Annotate(s, absl::StrCat("SaveV2 ", name(), ": tensor '", names[i], "': ")));
    }
    OP_REQUIRES_OK(ctx, errors::Annotate(writer.Finish(), absl::StrCat("SaveV2 ", name(), ": writing ", prefix, ": ")));
  }
};

class RestoreV2Op : public OpKernel {
 public:
  explicit RestoreV2Op(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("dtypes", &dtypes_)); }
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const int n = static_cast<int>(dtypes_.size());
    OP_REQUIRES_OK(ctx, CheckScalarString(*this, ctx->input(0), "prefix"));
    OP_REQUIRES_OK(ctx, CheckNames(*this, ctx->input(1), ctx->input(2), n));
    const std::string& prefix = ctx->input(0).scalar<std::string>();
    auto names = ctx->input(1).flat<std::string>();
    auto specs = ctx->input(2).flat<std::string>();
    OP_REQUIRES_OK(ctx, CheckPath(*this, ctx, prefix, /*write=*/false));
    OP_REQUIRES_ASSIGN(ctx, std::unique_ptr<BundleReader> reader, BundleReader::Open(FileEnv(ctx), prefix));
    for (int i = 0; i < n; ++i) {
      const std::string& tname = names[i];
      DType dtype;
      TensorShape stored;
      OP_REQUIRES_OK(ctx, reader->GetDTypeAndShape(tname, &dtype, &stored));
      OP_REQUIRES(ctx, dtype == dtypes_[i],
                  errors::InvalidArgument("tensor_name = ", tname, "; expected dtype ", DTypeString(dtypes_[i]),
                                          " does not equal original dtype ", DTypeString(dtype)));
      StatusOr<Tensor> value;
      if (specs[i].empty()) {
        value = reader->Lookup(tname);
      } else {
        TensorShape full;
        TensorSlice slice;
        bool has_slice = false;
        OP_REQUIRES_OK(ctx, ParseShapeAndSlice(specs[i], &full, &slice, &has_slice));
        OP_REQUIRES(ctx, full == stored,
                    errors::InvalidArgument("tensor_name = ", tname, "; shape in shape_and_slice spec ",
                                            full.DebugString(),
                                            " does not match the shape stored in checkpoint: ", stored.DebugString()));
        value = reader->LookupSlice(tname, slice);
      }
      OP_REQUIRES_OK(ctx, value.status());
      ctx->set_output(i, std::move(value).value());
    }
  }

 private:
  std::vector<DType> dtypes_;
};

class MergeV2CheckpointsOp : public OpKernel {
 public:
  explicit MergeV2CheckpointsOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("delete_old_dirs", &delete_old_dirs_));
  }
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& prefixes = ctx->input(0);
    OP_REQUIRES(ctx, prefixes.dims() <= 1,
                errors::InvalidArgument("MergeV2Checkpoints ", name(),
                                        ": checkpoint_prefixes must be a scalar or a "
                                        "vector, got shape ",
                                        prefixes.shape().DebugString()));
    OP_REQUIRES_OK(ctx, CheckScalarString(*this, ctx->input(1), "destination_prefix"));
    auto p = prefixes.flat<std::string>();
    std::vector<std::string> sources(p.begin(), p.end());
    OP_REQUIRES(ctx, !sources.empty(),
                errors::InvalidArgument("MergeV2Checkpoints ", name(), ": no checkpoint_prefixes to merge"));
    const std::string& dest = ctx->input(1).scalar<std::string>();
    // The sources are read, then deleted: both need write access.
    for (const std::string& src : sources) OP_REQUIRES_OK(ctx, CheckPath(*this, ctx, src, /*write=*/true));
    OP_REQUIRES_OK(ctx, CheckPath(*this, ctx, dest, /*write=*/true));
    OP_REQUIRES_OK(ctx, errors::Annotate(MergeBundles(FileEnv(ctx), sources, dest, delete_old_dirs_),
                                         absl::StrCat("MergeV2Checkpoints ", name(), " into ", dest, ": ")));
  }

 private:
  bool delete_old_dirs_ = true;
};

class ShardedFilenameOp : public OpKernel {
 public:
  explicit ShardedFilenameOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckScalarString(*this, ctx->input(0), "basename"));
    OP_REQUIRES(ctx, ctx->input(1).dims() == 0 && ctx->input(2).dims() == 0,
                errors::InvalidArgument("ShardedFilename ", name(), ": shard and num_shards must be scalars"));
    const int32_t shard = ctx->input(1).scalar<int32_t>(), num = ctx->input(2).scalar<int32_t>();
    // Any numbers are formatted, as TensorFlow's kernel does (-1 of 2: "-0001-of-00002").
    ctx->set_output(0, Tensor(absl::StrFormat("%s-%05d-of-%05d", ctx->input(0).scalar<std::string>(), shard, num)));
  }
};

// Joins its inputs element-wise; scalars broadcast against the one shape of the others.
class StringJoinOp : public OpKernel {
 public:
  explicit StringJoinOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("separator", &sep_)); }
  void Compute(OpKernelContext* ctx) override {
    TensorShape shape;
    bool have_shape = false;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() == 0) continue;
      OP_REQUIRES(ctx, !have_shape || t.shape() == shape,
                  errors::InvalidArgument("StringJoin ", name(), ": inputs must be scalars or of one shape, got ",
                                          shape.DebugString(), " and ", t.shape().DebugString()));
      shape = t.shape();
      have_shape = true;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    for (int64_t j = 0; j < shape.num_elements(); ++j) {
      std::string s;
      for (int i = 0; i < ctx->num_inputs(); ++i) {
        const Tensor& t = ctx->input(i);
        if (i > 0) s += sep_;
        s += t.data<std::string>()[t.dims() == 0 ? 0 : j];
      }
      out->data<std::string>()[j] = std::move(s);
    }
  }

 private:
  std::string sep_;
};

// StringJoin, as TensorFlow's shape function: a scalar when every input is one, else the merge of
// the non-scalar inputs of known rank (InvalidArgument when they disagree).
Status StringJoinShape(InferenceContext* c) {
  bool all_scalar = true;
  PartialTensorShape out;
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialTensorShape& in = c->input(i);
    if (in.unknown_rank() || in.dims() != 0) all_scalar = false;
    if (!in.unknown_rank() && in.dims() != 0) {
      ASSIGN_OR_RETURN(out, out.MergeWith(in));
    }
  }
  c->set_output(0, all_scalar ? PartialTensorShape(TensorShape()) : out);
  return absl::OkStatus();
}

// RestoreV2's outputs take the shapes that constant shape_and_slices give them.
Status RestoreV2Shape(InferenceContext* c) {
  RETURN_IF_ERROR(UnknownShape(c));
  const Tensor* specs = c->input_tensor(2);
  if (specs == nullptr || specs->dtype() != DT_STRING || specs->dims() != 1 ||
      specs->NumElements() != c->num_outputs()) {
    return absl::OkStatus();
  }
  for (int i = 0; i < c->num_outputs(); ++i) {
    TensorShape full;
    TensorSlice slice;
    bool has_slice = false;
    RETURN_IF_ERROR(ParseShapeAndSlice(specs->data<std::string>()[i], &full, &slice, &has_slice));
    if (!has_slice) continue;
    ASSIGN_OR_RETURN(TensorShape s, slice.SliceShape(full));
    c->set_output(i, PartialTensorShape::FromDims(s.dim_sizes()).value());
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterRegexOps();  // regex_ops.cc

void RegisterCheckpointOps() {
  RegisterRegexOps();
  RegisterOp(OpDefBuilder("SaveV2")
                 .Input("prefix: string")
                 .Input("tensor_names: string")
                 .Input("shape_and_slices: string")
                 .Input("tensors: dtypes")
                 .Attr("dtypes: list(type) >= 1")
                 .SetIsStateful()
                 .SetShapeFn(NoOutputs)
                 .Doc("Saves tensors in the V2 checkpoint format: PREFIX.index and PREFIX.data-00000-of-00001."));
  RegisterOp(OpDefBuilder("RestoreV2")
                 .Input("prefix: string")
                 .Input("tensor_names: string")
                 .Input("shape_and_slices: string")
                 .Output("tensors: dtypes")
                 .Attr("dtypes: list(type) >= 1")
                 .SetIsStateful()
                 .SetShapeFn(RestoreV2Shape)
                 .Doc("Restores tensors (or slices of them) from a V2 checkpoint."));
  RegisterOp(OpDefBuilder("MergeV2Checkpoints")
                 .Input("checkpoint_prefixes: string")
                 .Input("destination_prefix: string")
                 .Attr("delete_old_dirs: bool = true")
                 .Attr("allow_missing_files: bool = false")
                 .SetIsStateful()
                 .SetShapeFn(NoOutputs)
                 .Doc("Merges V2 checkpoints written by several SaveV2 ops into one."));
  RegisterOp(OpDefBuilder("ShardedFilename")
                 .Input("basename: string")
                 .Input("shard: int32")
                 .Input("num_shards: int32")
                 .Output("filename: string")
                 .SetShapeFn(ScalarShape)
                 .Doc("BASENAME-SHARD-of-NUM_SHARDS, each number as printf's %05d."));
  RegisterOp(OpDefBuilder("StringJoin")
                 .Input("inputs: N * string")
                 .Output("output: string")
                 .Attr("N: int >= 1")
                 .Attr("separator: string = ''")
                 .SetShapeFn(StringJoinShape)
                 .Doc("Joins strings element-wise (scalars broadcast)."));
  RegisterKernel<SaveV2Op>(KernelBuilder("SaveV2"));
  RegisterKernel<RestoreV2Op>(KernelBuilder("RestoreV2"));
  RegisterKernel<MergeV2CheckpointsOp>(KernelBuilder("MergeV2Checkpoints"));
  RegisterKernel<ShardedFilenameOp>(KernelBuilder("ShardedFilename"));
  RegisterKernel<StringJoinOp>(KernelBuilder("StringJoin"));
  for (const char* op : {"SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename", "StringJoin"}) {
    RegisterNoGradient(op);
  }
}

}  // namespace dflow
