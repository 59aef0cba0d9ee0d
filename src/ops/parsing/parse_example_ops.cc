// ParseExample, ParseExampleV2 and ParseSingleExample: TensorFlow's ops that turn serialized
// tf.train.Example protos into dense tensors and the (indices, values, shape) triples of sparse
// ones (ParseExampleV2 also ragged (values, row_splits) pairs), with TensorFlow's OpDefs. The
// parsing itself is ops/parsing/example_parser.h. None is differentiable.
#include <string>
#include <vector>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/parsing/example_parser.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

using parsing::ParseConfig;
using parsing::ParseResult;

// The attrs the three ops share: per-feature dtypes and the dense shapes.
struct ParseAttrs {
  std::vector<DType> sparse_types, dense_types, ragged_types, ragged_split_types;
  std::vector<PartialTensorShape> dense_shapes;
  int64_t num_sparse = 0;
  std::vector<std::string> sparse_keys, dense_keys;  // ParseSingleExample: attrs

  template <typename Ctx>
  Status Read(Ctx* c, const std::string& op) {
    const bool v1 = op == "ParseExample";
    RETURN_IF_ERROR(c->GetAttr(v1 ? "Nsparse" : "num_sparse", &num_sparse));
    RETURN_IF_ERROR(c->GetAttr("sparse_types", &sparse_types));
    RETURN_IF_ERROR(c->GetAttr("Tdense", &dense_types));
    RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense_shapes));
    if (op == "ParseExampleV2") {
      RETURN_IF_ERROR(c->GetAttr("ragged_value_types", &ragged_types));
      RETURN_IF_ERROR(c->GetAttr("ragged_split_types", &ragged_split_types));
    }
    if (op == "ParseSingleExample") {
      RETURN_IF_ERROR(c->GetAttr("sparse_keys", &sparse_keys));
      RETURN_IF_ERROR(c->GetAttr("dense_keys", &dense_keys));
    }
    if (static_cast<int64_t>(sparse_types.size()) != num_sparse) {
      return errors::InvalidArgument("len(sparse_keys) != len(sparse_types): ", num_sparse, " vs. ",
                                     sparse_types.size());
    }
    if (dense_shapes.size() != dense_types.size()) {
      return errors::InvalidArgument("len(dense_keys) != len(dense_shapes): ", dense_types.size(), " vs. ",
                                     dense_shapes.size());
    }
    if (v1) {
      int64_t ndense = 0;
      RETURN_IF_ERROR(c->GetAttr("Ndense", &ndense));
      if (ndense != static_cast<int64_t>(dense_types.size())) {
        return errors::InvalidArgument("len(dense_keys) != len(dense_types): ", ndense, " vs. ", dense_types.size());
      }
    }
    if (ragged_types.size() != ragged_split_types.size()) {
      return errors::InvalidArgument("len(ragged_value_types) != len(ragged_split_types): ", ragged_types.size(),
                                     " vs. ", ragged_split_types.size());
    }
    if (op == "ParseSingleExample") {
      if (static_cast<int64_t>(sparse_keys.size()) != num_sparse) {
        return errors::InvalidArgument("len(sparse_keys) != num_sparse: ", sparse_keys.size(), " vs. ", num_sparse);
      }
      if (dense_keys.size() != dense_types.size()) {
        return errors::InvalidArgument("len(dense_keys) != len(Tdense): ", dense_keys.size(), " vs. ",
                                       dense_types.size());
      }
    }
    for (size_t i = 0; i < dense_shapes.size(); ++i) {
      const PartialTensorShape& s = dense_shapes[i];
      bool ok = !s.unknown_rank();
      for (int k = 1; ok && k < s.dims(); ++k) ok = s.dim_size(k) >= 0;
      if (!ok) {
        return errors::InvalidArgument("dense_shapes[", i,
                                       "] has unknown rank or unknown inner dimensions: ", s.DebugString());
      }
    }
    return absl::OkStatus();
  }
};

// Output shapes (serialized is a vector for ParseExample, a scalar for ParseSingleExample, either
// for ParseExampleV2): sparse indices [?, batch rank + 1], values [?], shapes [batch rank + 1]; dense
// batch shape + dense shape; ragged values [?] and row splits [?].
Status ParseShape(InferenceContext* c, const std::string& op) {
  ParseAttrs a;
  RETURN_IF_ERROR(a.Read(c, op));
  PartialTensorShape batch;
  if (op == "ParseExample") {
    RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &batch));
  } else if (op == "ParseSingleExample") {
    RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &batch));
  } else {
    const PartialTensorShape& in = c->input(0);
    if (in.dims() > 1) {
      return errors::InvalidArgument("Shape must be at most rank 1 but is rank ", in.dims());
    }
    batch = in;
  }
  const int rank1 = batch.unknown_rank() ? -1 : batch.dims() + 1;
  int out = 0;
  for (int64_t i = 0; i < a.num_sparse; ++i) c->set_output(out++, PartialTensorShape({-1, rank1}));
  for (int64_t i = 0; i < a.num_sparse; ++i) c->set_output(out++, PartialTensorShape({-1}));
  for (int64_t i = 0; i < a.num_sparse; ++i) c->set_output(out++, PartialTensorShape({rank1}));
  for (const PartialTensorShape& s : a.dense_shapes) {
    if (batch.unknown_rank()) {
      c->set_output(out++, PartialTensorShape::UnknownRank());
      continue;
    }
    std::vector<int64_t> dims(batch.dim_sizes().begin(), batch.dim_sizes().end());
    dims.insert(dims.end(), s.dim_sizes().begin(), s.dim_sizes().end());
    ASSIGN_OR_RETURN(PartialTensorShape o, PartialTensorShape::FromDims(dims));
    c->set_output(out++, std::move(o));
  }
  for (size_t i = 0; i < 2 * a.ragged_types.size(); ++i) c->set_output(out++, PartialTensorShape({-1}));
  return absl::OkStatus();
}

// The strings of a 1-D (or, for names, empty) string input.
Status StringVector(const Tensor& t, const char* what, int64_t want, std::vector<std::string>* out) {
  if (t.dims() > 1)
    return errors::InvalidArgument("Expected ", what, " to be a vector, got shape: ", t.shape().DebugString());
  if (want >= 0 && t.NumElements() != want) {
    return errors::InvalidArgument("Expected len(", what, ") == ", want, ", got ", t.NumElements());
  }
  out->assign(t.data<std::string>(), t.data<std::string>() + t.NumElements());
  return absl::OkStatus();
}

class ParseExampleOp : public OpKernel {
 public:
  ParseExampleOp(OpKernelConstruction* ctx, std::string op) : OpKernel(ctx), op_(std::move(op)) {
    ctx->SetStatus(attrs_.Read(ctx, op_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    const size_t nsparse = attrs_.sparse_types.size(), ndense = attrs_.dense_types.size();
    const size_t nragged = attrs_.ragged_types.size();
    std::vector<std::string> sparse_keys, dense_keys, ragged_keys;
    const Tensor* names = nullptr;
    int defaults_at = 0;
    if (op_ == "ParseExample") {
      OP_REQUIRES(ctx, serialized.dims() == 1,
                  errors::InvalidArgument("Expected serialized to be a vector, got shape: ",
                                          serialized.shape().DebugString()));
      names = &ctx->input(1);
      OP_REQUIRES(ctx, names->dims() == 1,
                  errors::InvalidArgument("Expected names to be a vector, got shape: ", names->shape().DebugString()));
      for (size_t i = 0; i < nsparse; ++i) {
        const Tensor& k = ctx->input(2 + static_cast<int>(i));
        OP_REQUIRES(ctx, k.dims() == 0,
                    errors::InvalidArgument("Expected sparse_keys[", i,
                                            "] to be a scalar, got shape: ", k.shape().DebugString()));
        sparse_keys.push_back(k.scalar<std::string>());
      }
      for (size_t i = 0; i < ndense; ++i) {
        const Tensor& k = ctx->input(2 + static_cast<int>(nsparse + i));
        OP_REQUIRES(ctx, k.dims() == 0,
                    errors::InvalidArgument("Expected dense_keys[", i,
                                            "] to be a scalar, got shape: ", k.shape().DebugString()));
        dense_keys.push_back(k.scalar<std::string>());
      }
      defaults_at = 2 + static_cast<int>(nsparse + ndense);
    } else if (op_ == "ParseExampleV2") {
      OP_REQUIRES(ctx, serialized.dims() <= 1,
                  errors::InvalidArgument("Expected serialized to be a scalar or vector, got shape: ",
                                          serialized.shape().DebugString()));
      names = &ctx->input(1);
      OP_REQUIRES_OK(ctx, StringVector(ctx->input(2), "sparse_keys", static_cast<int64_t>(nsparse), &sparse_keys));
      OP_REQUIRES_OK(ctx, StringVector(ctx->input(3), "dense_keys", static_cast<int64_t>(ndense), &dense_keys));
      OP_REQUIRES_OK(ctx, StringVector(ctx->input(4), "ragged_keys", static_cast<int64_t>(nragged), &ragged_keys));
      defaults_at = 5;
    } else {
      OP_REQUIRES(ctx, serialized.dims() == 0,
                  errors::InvalidArgument("Expected serialized to be a scalar, got shape: ",
                                          serialized.shape().DebugString()));
      sparse_keys = attrs_.sparse_keys;
      dense_keys = attrs_.dense_keys;
      defaults_at = 1;
    }
    if (names != nullptr && names->NumElements() > 0) {
      OP_REQUIRES(ctx, names->shape() == serialized.shape(),
                  errors::InvalidArgument("Expected names have same shape as serialized: name.shape=",
                                          names->shape().DebugString(),
                                          ", serialized.shape=", serialized.shape().DebugString()));
    }

    ParseConfig config;
    for (size_t i = 0; i < ndense; ++i) {
      parsing::DenseSpec s;
      s.key = dense_keys[i];
      s.dtype = attrs_.dense_types[i];
      s.shape = attrs_.dense_shapes[i];
      s.default_value = ctx->input(defaults_at + static_cast<int>(i));
      config.dense.push_back(std::move(s));
    }
    for (size_t i = 0; i < nsparse; ++i) config.sparse.push_back({sparse_keys[i], attrs_.sparse_types[i], DT_INT64});
    for (size_t i = 0; i < nragged; ++i) {
      config.ragged.push_back({ragged_keys[i], attrs_.ragged_types[i], attrs_.ragged_split_types[i]});
    }
    OP_REQUIRES_OK(ctx, config.Finalize());

    absl::Span<const std::string> name_span;
    if (names != nullptr && names->NumElements() > 0) {
      name_span = absl::Span<const std::string>(names->data<std::string>(), names->NumElements());
    }
    ParseResult r;
    OP_REQUIRES_OK(ctx, parsing::ParseExamples(config,
                                               absl::Span<const std::string>(serialized.data<std::string>(),
                                                                             serialized.NumElements()),
                                               name_span, serialized.shape(), &r));
    int out = 0;
    for (auto* group :
         {&r.sparse_indices, &r.sparse_values, &r.sparse_shapes, &r.dense_values, &r.ragged_values, &r.ragged_splits}) {
      for (Tensor& t : *group) ctx->set_output(out++, std::move(t));
    }
  }

 private:
  std::string op_;
  ParseAttrs attrs_;
};

template <const char* kOp>
class ParseOp : public ParseExampleOp {
 public:
  explicit ParseOp(OpKernelConstruction* ctx) : ParseExampleOp(ctx, kOp) {}
};

constexpr char kV1[] = "ParseExample";
constexpr char kV2[] = "ParseExampleV2";
constexpr char kSingle[] = "ParseSingleExample";

}  // namespace

void RegisterSparseToDenseOp();  // sparse_to_dense_op.cc

void RegisterParsingOps() {
  RegisterSparseToDenseOp();
  RegisterOp(OpDefBuilder("ParseExample")
                 .Input("serialized: string")
                 .Input("names: string")
                 .Input("sparse_keys: Nsparse * string")
                 .Input("dense_keys: Ndense * string")
                 .Input("dense_defaults: Tdense")
                 .Output("sparse_indices: Nsparse * int64")
                 .Output("sparse_values: sparse_types")
                 .Output("sparse_shapes: Nsparse * int64")
                 .Output("dense_values: Tdense")
                 .Attr("Nsparse: int >= 0")
                 .Attr("Ndense: int >= 0")
                 .Attr("sparse_types: list({float,int64,string}) >= 0")
                 .Attr("Tdense: list({float,int64,string}) >= 0")
                 .Attr("dense_shapes: list(shape) >= 0")
                 .SetShapeFn([](InferenceContext* c) { return ParseShape(c, kV1); })
                 .Doc("Parses a vector of serialized tf.train.Example protos: sparse features as (indices, "
                      "values, shape), dense ones as [batch] + dense_shapes[i] tensors."));
  RegisterOp(OpDefBuilder("ParseExampleV2")
                 .Input("serialized: string")
                 .Input("names: string")
                 .Input("sparse_keys: string")
                 .Input("dense_keys: string")
                 .Input("ragged_keys: string")
                 .Input("dense_defaults: Tdense")
                 .Output("sparse_indices: num_sparse * int64")
                 .Output("sparse_values: sparse_types")
                 .Output("sparse_shapes: num_sparse * int64")
                 .Output("dense_values: Tdense")
                 .Output("ragged_values: ragged_value_types")
                 .Output("ragged_row_splits: ragged_split_types")
                 .Attr("Tdense: list({float,int64,string}) >= 0")
                 .Attr("num_sparse: int >= 0")
                 .Attr("sparse_types: list({float,int64,string}) >= 0")
                 .Attr("ragged_value_types: list({float,int64,string}) >= 0")
                 .Attr("ragged_split_types: list({int32,int64}) >= 0")
                 .Attr("dense_shapes: list(shape) >= 0")
                 .SetShapeFn([](InferenceContext* c) { return ParseShape(c, kV2); })
                 .Doc("Parses serialized tf.train.Example protos of any batch shape: sparse, dense and ragged "
                      "features; the keys are inputs."));
  RegisterOp(OpDefBuilder("ParseSingleExample")
                 .Input("serialized: string")
                 .Input("dense_defaults: Tdense")
                 .Output("sparse_indices: num_sparse * int64")
                 .Output("sparse_values: sparse_types")
                 .Output("sparse_shapes: num_sparse * int64")
                 .Output("dense_values: Tdense")
                 .Attr("num_sparse: int >= 0")
                 .Attr("sparse_keys: list(string) >= 0")
                 .Attr("dense_keys: list(string) >= 0")
                 .Attr("sparse_types: list({float,int64,string}) >= 0")
                 .Attr("Tdense: list({float,int64,string}) >= 0")
                 .Attr("dense_shapes: list(shape) >= 0")
                 .SetShapeFn([](InferenceContext* c) { return ParseShape(c, kSingle); })
                 .Doc("Parses one serialized tf.train.Example (a scalar); the keys are attrs."));
  RegisterKernel<ParseOp<kV1>>(KernelBuilder("ParseExample"));
  RegisterKernel<ParseOp<kV2>>(KernelBuilder("ParseExampleV2"));
  RegisterKernel<ParseOp<kSingle>>(KernelBuilder("ParseSingleExample"));
  for (const char* op : {"ParseExample", "ParseExampleV2", "ParseSingleExample"}) RegisterNoGradient(op);
}

}  // namespace dflow
