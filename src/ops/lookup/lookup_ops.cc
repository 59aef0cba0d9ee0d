// TensorFlow's lookup-table ops with their exact OpDefs: HashTableV2, MutableHashTableV2,
// LookupTableFindV2, LookupTableInsertV2, LookupTableRemoveV2, LookupTableImportV2,
// LookupTableExportV2, LookupTableSizeV2, InitializeTableV2 and InitializeTableFromTextFileV2.
//
// A table handle op outputs a DT_RESOURCE handle naming a LookupTable in the device's
// ResourceMgr under (container or the step's default, name), creating the table on first run.
// The name is shared_name; without one the node's name when use_node_name_sharing, else a name
// private to the kernel ("_<id>_<node>"), as TensorFlow's ContainerInfo does.
#include <atomic>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "framework/file_policy.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/lookup/lookup_table.h"
#include "ops/lookup/text_file_lines.h"
#include "ops/register_all.h"
#include "ops/state/resource_util.h"

namespace dflow {
namespace {

constexpr const char* kTableType = "LookupTable";

class TableHandleOp : public OpKernel {
 public:
  explicit TableHandleOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("container", &container_));
    c->SetStatus(c->GetAttr("shared_name", &shared_name_));
    c->SetStatus(c->GetAttr("use_node_name_sharing", &use_node_name_sharing_));
    c->SetStatus(c->GetAttr("key_dtype", &key_dtype_));
    c->SetStatus(c->GetAttr("value_dtype", &value_dtype_));
  }
  void Compute(OpKernelContext* ctx) override {
    std::string table_name = shared_name_;
    if (table_name.empty() && !use_node_name_sharing_) {
      static std::atomic<int64_t> next_id{0};
      std::call_once(private_once_, [&] { private_name_ = absl::StrCat("_", next_id++, "_", ctx->node_name()); });
      table_name = private_name_;
    }
    ResourceHandle h = MakeResourceHandle(ctx, container_, table_name, kTableType);
    const bool is_mutable = type_string() == "MutableHashTableV2";
    ResourceMgr* rm = ctx->step().device->resource_manager();
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<LookupTable> table,
                       rm->LookupOrCreate<LookupTable>(h.container, h.name, [&] {
                         return LookupTable::Create(key_dtype_, value_dtype_, is_mutable);
                       }));
    OP_REQUIRES(ctx,
                table->key_dtype() == key_dtype_ && table->value_dtype() == value_dtype_ &&
                    table->is_mutable() == is_mutable,
                errors::InvalidArgument(type_string(), " ", name(), ": table ", h.name, " exists as a ",
                                        table->DebugString(), ", not a ", is_mutable ? "MutableHashTable" : "HashTable",
                                        " of ", DTypeString(key_dtype_), " to ", DTypeString(value_dtype_)));
    SetHandleOutput(ctx, 0, std::move(h));
  }

 private:
  std::string container_, shared_name_, private_name_;
  std::once_flag private_once_;
  bool use_node_name_sharing_ = false;
  DType key_dtype_ = DT_INVALID, value_dtype_ = DT_INVALID;
};

StatusOr<std::shared_ptr<LookupTable>> TableFromInput(OpKernelContext* ctx) {
  ASSIGN_OR_RETURN(const ResourceHandle* h, HandleFromInput(ctx, 0));
  return LookupResource<LookupTable>(ctx, *h);
}

// TensorFlow's signature check: the op's input (and output) dtypes against the table's.
Status CheckSignature(OpKernelContext* ctx, const LookupTable& t, std::vector<DType> in, std::vector<DType> out,
                      std::vector<DType> want_in, std::vector<DType> want_out) {
  if (in == want_in && out == want_out) return absl::OkStatus();
  auto sig = [](const std::vector<DType>& i, const std::vector<DType>& o) {
    std::string s = "resource";
    for (DType d : i) absl::StrAppend(&s, ", ", DTypeString(d));
    absl::StrAppend(&s, "->");
    for (size_t k = 0; k < o.size(); ++k) absl::StrAppend(&s, k ? ", " : "", DTypeString(o[k]));
    return s;
  };
  return errors::InvalidArgument(ctx->op_kernel().type_string(), " ", ctx->node_name(),
                                 ": Signature mismatch, have: ", sig(in, out), " expected: ", sig(want_in, want_out));
}

class LookupTableFindOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<LookupTable> t, TableFromInput(ctx));
    const Tensor& keys = ctx->input(1);
    const Tensor& dflt = ctx->input(2);
    OP_REQUIRES_OK(ctx, CheckSignature(ctx, *t, {keys.dtype(), dflt.dtype()}, {dflt.dtype()},
                                       {t->key_dtype(), t->value_dtype()}, {t->value_dtype()}));
    Tensor out;
    OP_REQUIRES_OK(ctx, t->Find(keys, dflt, &out));
    ctx->set_output(0, std::move(out));
  }
};

// LookupTableImportV2, LookupTableInsertV2 and InitializeTableV2 (kInit: keys must be a vector
// and the table static).
template <int kMode>
class TableWriteOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  static constexpr int kImport = 0, kInsert = 1, kInit = 2;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<LookupTable> t, TableFromInput(ctx));
    const Tensor& keys = ctx->input(1);
    const Tensor& values = ctx->input(2);
    OP_REQUIRES_OK(ctx,
                   CheckSignature(ctx, *t, {keys.dtype(), values.dtype()}, {}, {t->key_dtype(), t->value_dtype()}, {}));
    if constexpr (kMode == kInit) {
      OP_REQUIRES(ctx, keys.dims() == 1,
                  errors::InvalidArgument(type_string(), " ", name(), ": Keys must be a vector, but received shape",
                                          keys.shape().DebugString()));
      OP_REQUIRES(ctx, !t->is_mutable(),
                  errors::InvalidArgument(type_string(), " ", name(), ": a ", t->kind(), " is not initializable"));
    }
    Status s = kMode == kInsert ? t->Insert(keys, values) : t->Import(keys, values);
    OP_REQUIRES_OK(ctx, errors::Annotate(s, absl::StrCat(type_string(), " ", name(), ": ")));
  }
};

class LookupTableRemoveOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<LookupTable> t, TableFromInput(ctx));
    OP_REQUIRES_OK(ctx, CheckSignature(ctx, *t, {ctx->input(1).dtype()}, {}, {t->key_dtype()}, {}));
    OP_REQUIRES_OK(ctx, t->Remove(ctx->input(1)));
  }
};

class LookupTableSizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<LookupTable> t, TableFromInput(ctx));
    ctx->set_output(0, Tensor(t->size()));
  }
};

class LookupTableExportOp : public OpKernel {
 public:
  explicit LookupTableExportOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("Tkeys", &tkeys_));
    c->SetStatus(c->GetAttr("Tvalues", &tvalues_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<LookupTable> t, TableFromInput(ctx));
    OP_REQUIRES_OK(ctx, CheckSignature(ctx, *t, {}, {tkeys_, tvalues_}, {}, {t->key_dtype(), t->value_dtype()}));
    Tensor keys, values;
    OP_REQUIRES_OK(ctx, t->Export(&keys, &values));
    ctx->set_output(0, std::move(keys));
    ctx->set_output(1, std::move(values));
  }

 private:
  DType tkeys_ = DT_INVALID, tvalues_ = DT_INVALID;
};

class InitializeTableFromTextFileOp : public OpKernel {
 public:
  explicit InitializeTableFromTextFileOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("key_index", &opts_.key_index));
    c->SetStatus(c->GetAttr("value_index", &opts_.value_index));
    c->SetStatus(c->GetAttr("vocab_size", &opts_.vocab_size));
    c->SetStatus(c->GetAttr("delimiter", &opts_.delimiter));
    c->SetStatus(c->GetAttr("offset", &opts_.offset));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<LookupTable> t, TableFromInput(ctx));
    const Tensor& f = ctx->input(1);
    OP_REQUIRES(ctx, f.dtype() == DT_STRING && f.dims() == 0,
                errors::InvalidArgument(type_string(), " ", name(), ": filename should be a single string, but got ",
                                        f.shape().DebugString()));
    OP_REQUIRES(ctx, !t->is_mutable(),
                errors::InvalidArgument(type_string(), " ", name(), ": a ", t->kind(), " is not initializable"));
    const std::string& filename = f.scalar<std::string>();
    OP_REQUIRES(ctx, !filename.empty(),
                errors::InvalidArgument(type_string(), " ", name(), ": filename cannot be empty."));
    const Device* d = ctx->step().device;
    const FilePolicy* policy = d != nullptr ? d->file_policy() : nullptr;
    if (policy != nullptr) {
      OP_REQUIRES_OK(ctx,
                     errors::Annotate(policy->CheckRead(filename), absl::StrCat(type_string(), " ", name(), ": ")));
    }
    Env* env = d != nullptr ? d->file_env().get() : Env::Default();
    Tensor keys, values;
    Status s = ReadTextFileTable(env, filename, opts_, t->key_dtype(), t->value_dtype(), &keys, &values);
    if (s.ok()) s = t->Import(keys, values);
    OP_REQUIRES_OK(ctx, errors::Annotate(s, absl::StrCat(type_string(), " ", name(), ": ")));
  }

 private:
  TextFileTableOptions opts_;
};

// ---- shape functions ----

Status HandleScalar(InferenceContext* c) {
  PartialTensorShape s;
  return c->WithRank(c->input(0), 0, &s);
}

Status FindShape(InferenceContext* c) {
  RETURN_IF_ERROR(HandleScalar(c));
  c->set_output(0, c->input(1));  // the tables hold scalar values
  return absl::OkStatus();
}

Status InitShape(InferenceContext* c) {
  RETURN_IF_ERROR(HandleScalar(c));
  PartialTensorShape keys;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &keys));
  if (!c->input(2).IsCompatibleWith(keys)) {
    return errors::InvalidArgument("Shapes must be equal: keys ", keys.DebugString(), " and values ",
                                   c->input(2).DebugString());
  }
  return NoOutputs(c);
}

Status WriteShape(InferenceContext* c) {
  RETURN_IF_ERROR(HandleScalar(c));
  return NoOutputs(c);
}

Status ExportShape(InferenceContext* c) {
  RETURN_IF_ERROR(HandleScalar(c));
  c->set_output(0, PartialTensorShape({-1}));
  c->set_output(1, PartialTensorShape({-1}));
  return absl::OkStatus();
}

Status TextFileInitShape(InferenceContext* c) {
  RETURN_IF_ERROR(HandleScalar(c));
  PartialTensorShape f;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &f));
  return NoOutputs(c);
}

}  // namespace

void RegisterLookupOps() {
  for (const char* op : {"HashTableV2", "MutableHashTableV2"}) {
    RegisterOp(OpDefBuilder(op)
                   .Output("table_handle: resource")
                   .Attr("container: string = ''")
                   .Attr("shared_name: string = ''")
                   .Attr("use_node_name_sharing: bool = false")
                   .Attr("key_dtype: type")
                   .Attr("value_dtype: type")
                   .SetIsStateful()
                   .SetShapeFn(ScalarShape)
                   .Doc("A handle to a lookup table (container, shared_name, or the node name when "
                        "use_node_name_sharing, else a name private to the kernel)."));
    RegisterKernel<TableHandleOp>(KernelBuilder(op));
    RegisterNoGradient(op);
  }
  RegisterOp(OpDefBuilder("LookupTableFindV2")
                 .Input("table_handle: resource")
                 .Input("keys: Tin")
                 .Input("default_value: Tout")
                 .Output("values: Tout")
                 .Attr("Tin: type")
                 .Attr("Tout: type")
                 .SetIsStateful()
                 .SetShapeFn(FindShape)
                 .Doc("The table's values for keys; default_value (one, or one per key) where absent."));
  RegisterOp(OpDefBuilder("LookupTableImportV2")
                 .Input("table_handle: resource")
                 .Input("keys: Tin")
                 .Input("values: Tout")
                 .Attr("Tin: type")
                 .Attr("Tout: type")
                 .SetIsStateful()
                 .SetShapeFn(WriteShape)
                 .Doc("Initializes a static table, or replaces a mutable table's contents."));
  RegisterOp(OpDefBuilder("LookupTableInsertV2")
                 .Input("table_handle: resource")
                 .Input("keys: Tin")
                 .Input("values: Tout")
                 .Attr("Tin: type")
                 .Attr("Tout: type")
                 .SetIsStateful()
                 .SetShapeFn(WriteShape)
                 .Doc("Inserts or updates entries of a mutable table."));
  RegisterOp(OpDefBuilder("LookupTableRemoveV2")
                 .Input("table_handle: resource")
                 .Input("keys: Tin")
                 .Attr("Tin: type")
                 .SetIsStateful()
                 .SetShapeFn(WriteShape)
                 .Doc("Removes keys from a mutable table."));
  RegisterOp(OpDefBuilder("LookupTableSizeV2")
                 .Input("table_handle: resource")
                 .Output("size: int64")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("The number of entries of the table."));
  RegisterOp(OpDefBuilder("LookupTableExportV2")
                 .Input("table_handle: resource")
                 .Output("keys: Tkeys")
                 .Output("values: Tvalues")
                 .Attr("Tkeys: type")
                 .Attr("Tvalues: type")
                 .SetIsStateful()
                 .SetShapeFn(ExportShape)
                 .Doc("Every key and value of the table."));
  RegisterOp(OpDefBuilder("InitializeTableV2")
                 .Input("table_handle: resource")
                 .Input("keys: Tkey")
                 .Input("values: Tval")
                 .Attr("Tkey: type")
                 .Attr("Tval: type")
                 .SetIsStateful()
                 .SetShapeFn(InitShape)
                 .Doc("Initializes a static table from key and value vectors."));
  RegisterOp(OpDefBuilder("InitializeTableFromTextFileV2")
                 .Input("table_handle: resource")
                 .Input("filename: string")
                 .Attr("key_index: int >= -2")
                 .Attr("value_index: int >= -2")
                 .Attr("vocab_size: int >= -1 = -1")
                 .Attr("delimiter: string = '\t'")
                 .Attr("offset: int = 0")
                 .SetIsStateful()
                 .SetShapeFn(TextFileInitShape)
                 .Doc("Initializes a static table from a text file: per line, the key and the value are "
                      "a column (delimiter-separated), the line number (-1, plus offset) or the whole line (-2)."));

  RegisterKernel<LookupTableFindOp>(KernelBuilder("LookupTableFindV2"));
  RegisterKernel<TableWriteOp<0>>(KernelBuilder("LookupTableImportV2"));
  RegisterKernel<TableWriteOp<1>>(KernelBuilder("LookupTableInsertV2"));
  RegisterKernel<TableWriteOp<2>>(KernelBuilder("InitializeTableV2"));
  RegisterKernel<LookupTableRemoveOp>(KernelBuilder("LookupTableRemoveV2"));
  RegisterKernel<LookupTableSizeOp>(KernelBuilder("LookupTableSizeV2"));
  RegisterKernel<LookupTableExportOp>(KernelBuilder("LookupTableExportV2"));
  RegisterKernel<InitializeTableFromTextFileOp>(KernelBuilder("InitializeTableFromTextFileV2"));
  for (const char* op :
       {"LookupTableFindV2", "LookupTableImportV2", "LookupTableInsertV2", "LookupTableRemoveV2", "LookupTableSizeV2",
        "LookupTableExportV2", "InitializeTableV2", "InitializeTableFromTextFileV2"}) {
    RegisterNoGradient(op);
  }
}

}  // namespace dflow
