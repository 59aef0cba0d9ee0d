// Feature columns for the Python package: dflow::feature_column bound as it is (columns,
// input_layer, linear_model), and the C++ collections a Scope's builders filled. A numeric
// column's normalizer_fn is a Python function called while the column builds (see
// estimator_internal.h); an exception it raises is raised again, unchanged, by input_layer or
// linear_model. The estimators (estimator.cc) take the columns bound here.
#include <string>
#include <vector>

#include "api/scope_internal.h"
#include "binding.h"
#include "estimator_internal.h"
#include "dflow/feature_column.h"

namespace dflow::python {

namespace fc = feature_column;

std::vector<fc::Column> ColumnsOf(const std::vector<ColumnRef>& cols) {
  std::vector<fc::Column> out;
  for (const ColumnRef& c : cols) out.push_back(c.column);
  return out;
}

fc::Features FeaturesOf(const py::dict& d) {
  fc::Features f;
  for (auto [k, v] : d) f[k.cast<std::string>()] = v.cast<const OutputRef&>().out;
  return f;
}

namespace {

ColumnRef Checked(fc::Column c) {
  if (!c->status().ok()) ThrowStatus(c->status());
  return ColumnRef{std::move(c)};
}

init::Initializer InitializerOf(const py::dict& d) {
  std::string kind = d["kind"].cast<std::string>();
  double a = d.contains("a") ? d["a"].cast<double>() : 0.0;
  double b = d.contains("b") ? d["b"].cast<double>() : 1.0;
  int64_t seed = d.contains("seed") && !d["seed"].is_none() ? d["seed"].cast<int64_t>() : 0;
  if (kind == "zeros") return init::Zeros();
  if (kind == "ones") return init::Ones();
  if (kind == "constant") return init::Constant(Input::Initializer(ToTensor(d["value"], DT_FLOAT)));
  if (kind == "random_uniform") return init::RandomUniform(a, b, seed);
  if (kind == "random_normal") return init::RandomNormal(a, b, seed);
  if (kind == "truncated_normal") return init::TruncatedNormal(a, b, seed);
  if (kind == "glorot_uniform") return init::GlorotUniform(seed);
  throw py::value_error("Unknown initializer kind '" + kind + "'");
}

}  // namespace

void BindFeatureColumns(py::module_& m) {
  py::class_<ColumnRef>(m, "FeatureColumn")
      .def_property_readonly("name", [](const ColumnRef& c) { return c.column->name(); })
      .def_property_readonly("is_dense", [](const ColumnRef& c) { return c.column->is_dense(); })
      .def_property_readonly("dense_dimension", [](const ColumnRef& c) { return c.column->dense_dimension(); })
      .def_property_readonly("is_categorical", [](const ColumnRef& c) { return c.column->is_categorical(); })
      .def_property_readonly("num_buckets", [](const ColumnRef& c) { return c.column->num_buckets(); });

  m.def("numeric_column", [](const std::string& key, const std::vector<int64_t>& shape,
                             const std::vector<float>& default_value, int dtype, py::object normalizer_fn) {
    return Checked(fc::NumericColumn(key, shape, default_value, static_cast<DType>(dtype),
                                     UnaryBuilder(std::move(normalizer_fn), "normalizer_fn")));
  });
  m.def("bucketized_column", [](const ColumnRef& source, const std::vector<float>& boundaries) {
    return Checked(fc::BucketizedColumn(source.column, boundaries));
  });
  m.def("categorical_column_with_vocabulary_list_str",
        [](const std::string& key, const std::vector<std::string>& vocabulary, int64_t num_oov, int64_t default_value) {
          return Checked(fc::CategoricalColumnWithVocabularyList(key, vocabulary, num_oov, default_value));
        });
  m.def("categorical_column_with_vocabulary_list_int",
        [](const std::string& key, const std::vector<int64_t>& vocabulary, int64_t num_oov, int64_t default_value,
           int dtype) {
          return Checked(fc::CategoricalColumnWithVocabularyList(key, vocabulary, num_oov, default_value,
                                                                 static_cast<DType>(dtype)));
        });
  m.def("categorical_column_with_identity", [](const std::string& key, int64_t num_buckets, int64_t default_value) {
    return Checked(fc::CategoricalColumnWithIdentity(key, num_buckets, default_value));
  });
  m.def("categorical_column_with_hash_bucket", [](const std::string& key, int64_t size, int dtype) {
    return Checked(fc::CategoricalColumnWithHashBucket(key, size, static_cast<DType>(dtype)));
  });
  m.def("indicator_column", [](const ColumnRef& c) { return Checked(fc::IndicatorColumn(c.column)); });
  m.def("embedding_column", [](const ColumnRef& c, int64_t dimension, const std::string& combiner, py::object init) {
    if (init.is_none()) return Checked(fc::EmbeddingColumn(c.column, dimension, combiner));
    return Checked(fc::EmbeddingColumn(c.column, dimension, combiner, InitializerOf(init.cast<py::dict>())));
  });
  m.def("input_layer", [](const Scope& s, py::dict features, const std::vector<ColumnRef>& columns) {
    Output out = fc::InputLayer(s, FeaturesOf(features), ColumnsOf(columns));
    RaisePending(s.graph());
    ThrowIfBuildError(s.graph());
    return OutputRef{s.graph_as_shared_ptr(), out};
  });
  m.def("linear_model", [](const Scope& s, py::dict features, const std::vector<ColumnRef>& columns, int64_t units,
                           const std::string& sparse_combiner) {
    Output out = fc::LinearModel(s, FeaturesOf(features), ColumnsOf(columns), units, sparse_combiner);
    RaisePending(s.graph());
    ThrowIfBuildError(s.graph());
    return OutputRef{s.graph_as_shared_ptr(), out};
  });

  // The variables of the Scope's C++ collections (what the C++ builders registered), so that the
  // Python layer can list the ones it did not make itself.
  m.def("scope_collections", [](const Scope& s) {
    Scope::Collections* c = s.collections();
    auto refs = [&](const std::vector<Output>& v) {
      py::list l;
      for (const Output& o : v) l.append(OutputRef{s.graph_as_shared_ptr(), o});
      return l;
    };
    auto nodes = [&](const std::vector<Operation>& v) {
      py::list l;
      for (const Operation& o : v) l.append(NodeRef{s.graph_as_shared_ptr(), o.node()});
      return l;
    };
    py::dict d;
    d["global_variables"] = refs(c->global_variables);
    d["trainable_variables"] = refs(c->trainable_variables);
    d["local_variables"] = refs(c->local_variables);
    d["initializers"] = nodes(c->initializers);
    d["local_initializers"] = nodes(c->local_initializers);
    d["table_initializers"] = nodes(c->table_initializers);
    return d;
  });
}

}  // namespace dflow::python
