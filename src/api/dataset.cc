#include "dflow/dataset.h"

#include <set>

#include "api/scope_internal.h"
#include "dflow/ops.h"
#include "graph/function_library.h"
#include "proto/graph.pb.h"

namespace dflow::data {

// Builds datasets: the private constructor and fields of Dataset and Iterator.
struct DatasetAccess {
  static Dataset Invalid(const Scope& s) { return Dataset(s); }
  static Dataset Make(const Scope& s, Output variant, std::vector<DType> types, std::vector<PartialTensorShape> shapes,
                      std::vector<std::string> names) {
    Dataset d(s);
    if (!variant.valid()) return d;
    d.variant_ = variant;
    d.types_ = std::move(types);
    d.shapes_ = std::move(shapes);
    d.names_ = names.empty() ? std::vector<std::string>(d.types_.size()) : std::move(names);
    return d;
  }
  static Output& variant(Dataset& d) { return d.variant_; }
};

namespace {

Output Out(const Operation& op) { return op.valid() ? Output(op, 0) : Output(); }

// Every Input as an Output (literals become Consts), or an empty vector after recording an error.
std::vector<Output> AsOutputs(const Scope& s, const std::vector<Input>& inputs, const char* what) {
  std::vector<Output> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input& in = inputs[i];
    Output o = in.is_initializer() ? ops::Const(s, in.initializer()) : in.output();
    if (!o.valid()) {
      if (s.ok()) s.UpdateStatus(errors::InvalidArgument(what, " ", i, " is an invalid Output (building it failed)"));
      return {};
    }
    out.push_back(o);
  }
  return out;
}

AttrMap Structure(const std::vector<DType>& types, const std::vector<PartialTensorShape>& shapes) {
  return {{"output_types", types}, {"output_shapes", shapes}};
}

// A transformation of `in` by op `op` with extra inputs, keeping the element structure.
Dataset Unary(const Dataset& in, const char* op, std::vector<Input> extra, AttrMap attrs = {},
              const std::vector<PartialTensorShape>* shapes = nullptr) {
  const Scope& s = in.scope();
  if (!in.ok() || !s.ok()) return DatasetAccess::Invalid(s);
  std::vector<Input> inputs{in.variant()};
  for (Input& e : extra) inputs.push_back(std::move(e));
  const auto& out_shapes = shapes ? *shapes : in.output_shapes();
  for (auto& [k, v] : Structure(in.output_types(), out_shapes)) attrs[k] = v;
  Output v = Out(ops::BuildOp(s, op, inputs, attrs));
  return DatasetAccess::Make(s, v, in.output_types(), out_shapes, in.names());
}

// Builds a function from `body` into the library of `outer`'s graph. The arguments are
// placeholders of the given dtypes and shapes in a graph of the function's own, so that the
// body's ops infer shapes. Returns the function's name ("" after recording an error), with
// the dtypes and shapes of its results.
std::string BuildFunction(const Scope& outer, const std::string& base, const std::vector<DType>& types,
                          const std::vector<PartialTensorShape>& shapes,
                          const std::function<std::vector<Output>(const Scope&, const std::vector<Output>&)>& body,
                          std::vector<DType>* ret_types, std::vector<PartialTensorShape>* ret_shapes) {
  Scope fs = Scope::NewRootScope();
  fs.graph()->set_seed(outer.graph()->seed());
  std::vector<Output> args;
  std::vector<const Node*> arg_nodes;
  for (size_t i = 0; i < types.size(); ++i) {
    Output a = ops::Placeholder(fs.WithOpName(absl::StrCat("arg", i)), types[i], shapes[i]);
    args.push_back(a);
    arg_nodes.push_back(a.node());
  }
  std::vector<Output> rets = body(fs, args);
  auto fail = [&](const Status& s) {
    outer.UpdateStatus(errors::Annotate(s, absl::StrCat("In the function of ", base, ": ")));
    return std::string();
  };
  if (!fs.ok()) return fail(fs.status());
  if (rets.empty()) return fail(errors::InvalidArgument("the function returns nothing"));
  std::vector<NodeOut> ret_outs;
  ret_types->clear();
  ret_shapes->clear();
  for (size_t i = 0; i < rets.size(); ++i) {
    if (!rets[i].valid()) return fail(errors::InvalidArgument("result ", i, " is an invalid Output"));
    if (rets[i].node()->graph() != fs.graph()) {
      return fail(errors::InvalidArgument("result ", i, " (", rets[i].name(),
                                          ") belongs to another graph: a function may use only the ops built "
                                          "on the scope it is given"));
    }
    ret_outs.push_back({rets[i].node(), rets[i].index()});
    ret_types->push_back(BaseType(rets[i].dtype()));
    ret_shapes->push_back(rets[i].shape());
  }
  FunctionLibraryDefinition& lib = outer.graph()->library();
  std::string name = lib.UniqueName(base);
  proto::FunctionDef fdef;
  Status s = GraphToFunctionDef(*fs.graph(), name, arg_nodes, ret_outs, &fdef);
  if (s.ok() && !fs.graph()->library().empty()) {  // functions the body itself uses
    proto::FunctionDefLibrary nested;
    fs.graph()->library().ToProto(&nested);
    s = lib.AddLibrary(nested);
  }
  if (s.ok()) s = lib.Add(fdef);
  if (!s.ok()) return fail(s);
  return name;
}

std::string FunctionBase(const Scope& s, const char* op) {
  std::string base = s.GetUniqueNameForOp(op);
  return absl::StrCat(base, "_fn");
}

// Sorted keys and values of a map of columns.
void SplitColumns(const std::map<std::string, Input>& columns, std::vector<std::string>* names,
                  std::vector<Input>* values) {
  for (const auto& [k, v] : columns) {
    names->push_back(k);
    values->push_back(v);
  }
}

Dataset FromTensorsImpl(const Scope& scope, const std::vector<Input>& components, std::vector<std::string> names,
                        bool slices) {
  const char* op = slices ? "TensorSliceDataset" : "TensorDataset";
  if (!scope.ok()) return DatasetAccess::Invalid(scope);
  if (components.empty()) {
    scope.UpdateStatus(errors::InvalidArgument(op, ": a dataset needs at least one component"));
    return DatasetAccess::Invalid(scope);
  }
  std::vector<Output> outs = AsOutputs(scope, components, "Component");
  if (outs.empty()) return DatasetAccess::Invalid(scope);
  std::vector<DType> types;
  std::vector<PartialTensorShape> shapes;
  int64_t rows = -1;
  for (size_t i = 0; i < outs.size(); ++i) {
    types.push_back(BaseType(outs[i].dtype()));
    PartialTensorShape s = outs[i].shape();
    if (!slices || s.unknown_rank()) {
      shapes.push_back(s);
      continue;
    }
    if (s.dims() == 0) {
      scope.UpdateStatus(errors::InvalidArgument(op, ": component ", i, " (", outs[i].name(),
                                                 ") is a scalar: slicing needs at least one dimension"));
      return DatasetAccess::Invalid(scope);
    }
    if (s.dim_size(0) >= 0) {
      if (rows >= 0 && rows != s.dim_size(0)) {
        scope.UpdateStatus(errors::InvalidArgument(op,
                                                   ": all components must have the same size in dimension 0; "
                                                   "component ",
                                                   i, " has ", s.dim_size(0), " rows, not ", rows));
        return DatasetAccess::Invalid(scope);
      }
      rows = s.dim_size(0);
    }
    std::vector<int64_t> dims(s.dim_sizes().begin() + 1, s.dim_sizes().end());
    shapes.push_back(PartialTensorShape::FromDims(dims).value_or(PartialTensorShape()));
  }
  std::vector<Input> inputs(outs.begin(), outs.end());
  AttrMap attrs{{"Toutput_types", types}, {"output_shapes", shapes}};
  Output v = Out(ops::BuildOp(scope, op, inputs, attrs));
  return DatasetAccess::Make(scope, v, types, shapes, std::move(names));
}

}  // namespace

// ---- Element ----

Output Element::Get(const std::string& name) const {
  for (size_t i = 0; i < names.size() && i < components.size(); ++i)
    if (names[i] == name) return components[i];
  return Output();
}

std::map<std::string, Output> Element::Named() const {
  std::map<std::string, Output> out;
  for (size_t i = 0; i < names.size() && i < components.size(); ++i)
    if (!names[i].empty()) out[names[i]] = components[i];
  return out;
}

std::vector<Output> Element::Unnamed() const {
  std::vector<Output> out;
  for (size_t i = 0; i < components.size(); ++i)
    if (i >= names.size() || names[i].empty()) out.push_back(components[i]);
  return out;
}

// ---- sources ----

Dataset Dataset::FromTensorSlices(const Scope& scope, const std::vector<Input>& components) {
  return FromTensorsImpl(scope, components, {}, true);
}

Dataset Dataset::FromTensorSlices(const Scope& scope, const std::map<std::string, Input>& columns) {
  std::vector<std::string> names;
  std::vector<Input> values;
  SplitColumns(columns, &names, &values);
  return FromTensorsImpl(scope, values, std::move(names), true);
}

Dataset Dataset::FromTensors(const Scope& scope, const std::vector<Input>& components) {
  return FromTensorsImpl(scope, components, {}, false);
}

Dataset Dataset::FromTensors(const Scope& scope, const std::map<std::string, Input>& columns) {
  std::vector<std::string> names;
  std::vector<Input> values;
  SplitColumns(columns, &names, &values);
  return FromTensorsImpl(scope, values, std::move(names), false);
}

Dataset Dataset::Range(const Scope& scope, Input start, Input stop, Input step) {
  std::vector<DType> types{DT_INT64};
  std::vector<PartialTensorShape> shapes{PartialTensorShape::Scalar()};
  Output v = Out(ops::BuildOp(scope, "RangeDataset", {std::move(start), std::move(stop), std::move(step)},
                              Structure(types, shapes)));
  return DatasetAccess::Make(scope, v, types, shapes, {});
}

Dataset Dataset::TextLine(const Scope& scope, Input filenames) {
  Output v = Out(ops::BuildOp(scope, "TextLineDataset", {std::move(filenames), std::string(), int64_t{0}}));
  return DatasetAccess::Make(scope, v, {DT_STRING}, {PartialTensorShape::Scalar()}, {});
}

Dataset Dataset::TFRecord(const Scope& scope, Input filenames, const std::string& compression_type) {
  Output v = Out(ops::BuildOp(scope, "TFRecordDataset", {std::move(filenames), compression_type, int64_t{0}}));
  return DatasetAccess::Make(scope, v, {DT_STRING}, {PartialTensorShape::Scalar()}, {});
}

Dataset Dataset::Csv(const Scope& scope, Input filenames, const std::vector<Input>& record_defaults,
                     const CsvOptions& o) {
  if (!scope.ok()) return DatasetAccess::Invalid(scope);
  std::vector<Output> defaults = AsOutputs(scope, record_defaults, "Record default");
  if (defaults.empty()) {
    if (scope.ok()) scope.UpdateStatus(errors::InvalidArgument("CSVDataset: record_defaults is empty"));
    return DatasetAccess::Invalid(scope);
  }
  if (!o.column_names.empty() && o.column_names.size() != defaults.size()) {
    scope.UpdateStatus(errors::InvalidArgument("CSVDataset: ", o.column_names.size(), " column_names for ",
                                               defaults.size(), " columns"));
    return DatasetAccess::Invalid(scope);
  }
  std::vector<DType> types;
  for (const Output& d : defaults) types.push_back(BaseType(d.dtype()));
  std::vector<PartialTensorShape> shapes(types.size(), PartialTensorShape::Scalar());
  std::vector<Input> inputs{
      std::move(filenames),
      o.compression_type,
      o.buffer_size,
      o.header,
      o.field_delim,
      o.use_quote_delim,
      o.na_value,
      ops::Const(scope,
                 Input::Initializer(o.select_cols.empty()
                                        ? Tensor(DT_INT64, TensorShape{0})
                                        : Tensor::FromValues<int64_t>(
                                              o.select_cols, TensorShape{static_cast<int64_t>(o.select_cols.size())})
                                              .value()))};
  for (const Output& d : defaults) inputs.push_back(d);
  Output v = Out(ops::BuildOp(scope, "CSVDataset", inputs, Structure(types, shapes)));
  return DatasetAccess::Make(scope, v, types, shapes, o.column_names);
}

Dataset Dataset::Zip(const std::vector<Dataset>& datasets) {
  if (datasets.empty()) {
    Scope s = Scope::NewRootScope();
    s.UpdateStatus(errors::InvalidArgument("ZipDataset needs at least one dataset"));
    return DatasetAccess::Invalid(s);
  }
  const Scope& s = datasets[0].scope();
  std::vector<Input> inputs;
  std::vector<DType> types;
  std::vector<PartialTensorShape> shapes;
  std::vector<std::string> names;
  for (const Dataset& d : datasets) {
    if (!d.ok()) {
      if (s.ok()) s.UpdateStatus(errors::InvalidArgument("ZipDataset: an input dataset is invalid"));
      return DatasetAccess::Invalid(s);
    }
    inputs.push_back(d.variant());
    types.insert(types.end(), d.output_types().begin(), d.output_types().end());
    shapes.insert(shapes.end(), d.output_shapes().begin(), d.output_shapes().end());
    names.insert(names.end(), d.names().begin(), d.names().end());
  }
  Output v = Out(ops::BuildOp(s, "ZipDataset", inputs, Structure(types, shapes)));
  return DatasetAccess::Make(s, v, types, shapes, names);
}

// ---- transformations ----

Dataset Dataset::Map(MapFn fn, int num_parallel_calls) const {
  const Scope& s = scope_;
  if (!ok() || !s.ok()) return DatasetAccess::Invalid(s);
  const char* op = num_parallel_calls > 1 ? "ParallelMapDataset" : "MapDataset";
  std::vector<DType> types;
  std::vector<PartialTensorShape> shapes;
  std::string f = BuildFunction(s, FunctionBase(s, op), types_, shapes_, fn, &types, &shapes);
  if (f.empty()) return DatasetAccess::Invalid(s);
  std::vector<Input> inputs{variant_};
  if (num_parallel_calls > 1) inputs.push_back(int32_t{num_parallel_calls});
  AttrMap attrs = Structure(types, shapes);
  attrs["f"] = NameAttrList{f};
  attrs["Targuments"] = std::vector<DType>{};
  Output v = Out(ops::BuildOp(s, op, inputs, attrs));
  return DatasetAccess::Make(s, v, types, shapes, types.size() == names_.size() ? names_ : std::vector<std::string>());
}

Dataset Dataset::Filter(PredicateFn predicate) const {
  const Scope& s = scope_;
  if (!ok() || !s.ok()) return DatasetAccess::Invalid(s);
  std::vector<DType> types;
  std::vector<PartialTensorShape> shapes;
  std::string f = BuildFunction(
      s, FunctionBase(s, "FilterDataset"), types_, shapes_,
      [&](const Scope& fs, const std::vector<Output>& x) { return std::vector<Output>{predicate(fs, x)}; }, &types,
      &shapes);
  if (f.empty()) return DatasetAccess::Invalid(s);
  if (types != std::vector<DType>{DT_BOOL} || (!shapes[0].unknown_rank() && shapes[0].dims() != 0)) {
    s.UpdateStatus(errors::InvalidArgument("Filter predicate must return a scalar bool, not ", DTypeString(types[0]),
                                           " ", shapes[0].DebugString()));
    return DatasetAccess::Invalid(s);
  }
  AttrMap attrs{{"predicate", NameAttrList{f}}, {"Targuments", std::vector<DType>{}}};
  return Unary(*this, "FilterDataset", {}, attrs);
}

Dataset Dataset::Shuffle(Input buffer_size, int64_t seed, bool reshuffle_each_iteration) const {
  if (!ok() || !scope_.ok()) return DatasetAccess::Invalid(scope_);
  AttrMap seeds = ops::RandomSeedAttrs(scope_, seed);
  return Unary(*this, "ShuffleDataset",
               {std::move(buffer_size), *seeds["seed"].get_if<int64_t>(), *seeds["seed2"].get_if<int64_t>()},
               {{"reshuffle_each_iteration", reshuffle_each_iteration}});
}

Dataset Dataset::Batch(Input batch_size, bool drop_remainder) const {
  if (!ok() || !scope_.ok()) return DatasetAccess::Invalid(scope_);
  // The batch dimension is known when the batch size is a constant and the remainder dropped.
  int64_t known = -1;
  if (drop_remainder && batch_size.is_initializer()) {
    StatusOr<Tensor> t = batch_size.initializer().AsType(DT_INT64);
    if (t.ok() && t->NumElements() == 1) known = t->flat<int64_t>()[0];
  }
  std::vector<PartialTensorShape> shapes;
  for (const PartialTensorShape& s : shapes_) {
    if (s.unknown_rank()) {
      shapes.push_back(s);
      continue;
    }
    std::vector<int64_t> dims{known};
    dims.insert(dims.end(), s.dim_sizes().begin(), s.dim_sizes().end());
    shapes.push_back(PartialTensorShape::FromDims(dims).value_or(PartialTensorShape()));
  }
  return Unary(*this, "BatchDatasetV2", {std::move(batch_size), drop_remainder}, {}, &shapes);
}

Dataset Dataset::Repeat(Input count) const { return Unary(*this, "RepeatDataset", {std::move(count)}); }
Dataset Dataset::Take(Input count) const { return Unary(*this, "TakeDataset", {std::move(count)}); }
Dataset Dataset::Skip(Input count) const { return Unary(*this, "SkipDataset", {std::move(count)}); }
Dataset Dataset::Shard(Input num_shards, Input index) const {
  return Unary(*this, "ShardDataset", {std::move(num_shards), std::move(index)});
}
Dataset Dataset::Prefetch(Input buffer_size) const { return Unary(*this, "PrefetchDataset", {std::move(buffer_size)}); }

Dataset Dataset::WithNames(std::vector<std::string> names) const {
  if (!ok()) return *this;
  if (names.size() != types_.size()) {
    scope_.UpdateStatus(errors::InvalidArgument("WithNames: ", names.size(), " names for ", types_.size(),
                                                " components"));
    return DatasetAccess::Invalid(scope_);
  }
  Dataset d = *this;
  d.names_ = std::move(names);
  return d;
}

// ---- iterators ----

Element Iterator::GetNext() const { return GetNext(scope_); }

Element Iterator::GetNext(const Scope& scope) const {
  Element e;
  if (!ok()) {
    if (scope.ok()) scope.UpdateStatus(errors::InvalidArgument("GetNext on an invalid iterator"));
    return e;
  }
  Operation op = ops::BuildOp(scope, "IteratorGetNext", {handle_}, Structure(types_, shapes_));
  if (!op.valid()) return e;
  for (size_t i = 0; i < types_.size(); ++i) e.components.emplace_back(op, static_cast<int>(i));
  e.names = names_;
  return e;
}

Iterator Dataset::MakeInitializableIterator(const std::string& shared_name) const {
  Iterator it;
  it.scope_ = scope_;
  if (!ok() || !scope_.ok()) return it;
  AttrMap attrs = Structure(types_, shapes_);
  attrs["shared_name"] = shared_name;
  attrs["container"] = std::string();
  Output h = Out(ops::BuildOp(scope_, "IteratorV2", {}, attrs, "Iterator"));
  if (!h.valid()) return it;
  Operation init = ops::BuildOp(scope_, "MakeIterator", {variant_, h});
  if (!init.valid()) return it;
  it.handle_ = h;
  it.initializer_ = init;
  it.types_ = types_;
  it.shapes_ = shapes_;
  it.names_ = names_;
  return it;
}

Iterator Dataset::MakeOneShotIterator() const {
  Iterator it;
  it.scope_ = scope_;
  if (!ok() || !scope_.ok()) return it;
  // The factory function is the part of the graph that makes this dataset, copied by value.
  const Graph& g = *scope_.graph();
  std::vector<bool> keep(g.num_node_ids(), false);
  std::vector<const Node*> stack{variant_.node()};
  keep[variant_.node()->id()] = true;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->op() == "Placeholder" || n->op() == "PlaceholderWithDefault") {
      scope_.UpdateStatus(errors::InvalidArgument(
          "MakeOneShotIterator: the dataset depends on placeholder '", n->name(),
          "', which a one-shot iterator cannot capture; use MakeInitializableIterator and feed it"));
      return it;
    }
    for (int i = 0; i < n->num_outputs(); ++i) {
      if (IsRefType(n->output_type(i)) || BaseType(n->output_type(i)) == DT_RESOURCE) {
        scope_.UpdateStatus(errors::InvalidArgument("MakeOneShotIterator: the dataset depends on '", n->name(), "' (",
                                                    n->op(),
                                                    "), whose state a one-shot iterator cannot "
                                                    "capture; use MakeInitializableIterator"));
        return it;
      }
    }
    auto visit = [&](const Edge* e) {
      if (e != nullptr && !keep[e->src->id()]) {
        keep[e->src->id()] = true;
        stack.push_back(e->src);
      }
    };
    for (const Edge* e : n->data_inputs()) visit(e);
    for (const Edge* e : n->control_inputs()) visit(e);
  }
  FunctionLibraryDefinition& lib = scope_.graph()->library();
  std::string name = lib.UniqueName(FunctionBase(scope_, "OneShotIterator"));
  proto::FunctionDef fdef;
  Status s = GraphToFunctionDef(g, name, {}, {{variant_.node(), variant_.index()}}, &fdef, &keep);
  if (s.ok()) s = lib.Add(fdef);
  if (!s.ok()) {
    scope_.UpdateStatus(s);
    return it;
  }
  AttrMap attrs = Structure(types_, shapes_);
  attrs["dataset_factory"] = NameAttrList{name};
  Output h = Out(ops::BuildOp(scope_, "OneShotIterator", {}, attrs));
  if (!h.valid()) return it;
  it.handle_ = h;
  it.types_ = types_;
  it.shapes_ = shapes_;
  it.names_ = names_;
  return it;
}

// ---- DecodeCsv ----

std::vector<Output> DecodeCsv(const Scope& scope, Input records, const std::vector<Input>& record_defaults,
                              const CsvOptions& o) {
  if (!scope.ok()) return {};
  std::vector<Input> inputs{std::move(records)};
  std::vector<Output> defaults = AsOutputs(scope, record_defaults, "Record default");
  if (defaults.empty()) {
    if (scope.ok()) scope.UpdateStatus(errors::InvalidArgument("DecodeCSV: record_defaults is empty"));
    return {};
  }
  for (const Output& d : defaults) inputs.push_back(d);
  AttrMap attrs{{"field_delim", o.field_delim},
                {"use_quote_delim", o.use_quote_delim},
                {"na_value", o.na_value},
                {"select_cols", o.select_cols}};
  Operation op = ops::BuildOp(scope, "DecodeCSV", inputs, attrs);
  if (!op.valid()) return {};
  std::vector<Output> out;
  for (size_t i = 0; i < defaults.size(); ++i) out.emplace_back(op, static_cast<int>(i));
  return out;
}

}  // namespace dflow::data
