// Graphs, scopes, nodes, op building and the op registry for the Python package, and the
// conversions every part of the extension shares (Status → exceptions, numpy ↔ Tensor, attrs).
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <cstring>
#include <functional>
#include <limits>
#include <set>

#include "api/scope_internal.h"
#include "binding.h"
#include "dflow/meta_graph.h"
#include "dflow/ops.h"
#include "framework/op_def.h"
#include "graph/graph_def.h"
#include "proto/checkpoint_state.pb.h"
#include "proto/event.pb.h"
#include "proto/example.pb.h"
#include "proto/graph.pb.h"
#include "proto/saved_model.pb.h"
#include "proto/summary.pb.h"

namespace dflow::python {
namespace {

py::object& ErrorFactory() {
  static auto* f = new py::object();  // leaked on purpose: lives as long as the interpreter
  return *f;
}

struct NumpyTypes {
  py::object np, asarray, ndarray, dtype_cls, object_dtype;
  py::object dtypes[32];   // numpy.dtype by DType
  py::object scalars[32];  // numpy scalar type by DType (numpy.float32, ...)
};
NumpyTypes& Np() {
  static NumpyTypes* t = [] {
    auto* n = new NumpyTypes();
    n->np = py::module_::import("numpy");
    n->asarray = n->np.attr("asarray");
    n->ndarray = n->np.attr("ndarray");
    n->dtype_cls = n->np.attr("dtype");
    n->object_dtype = n->dtype_cls(py::str("O"));
    auto set = [&](DType d, const char* name) {
      n->dtypes[d] = n->dtype_cls(py::str(name));
      n->scalars[d] = n->np.attr(name);
    };
    set(DT_FLOAT, "float32");
    set(DT_DOUBLE, "float64");
    set(DT_INT32, "int32");
    set(DT_UINT8, "uint8");
    set(DT_INT64, "int64");
    set(DT_BOOL, "bool_");
    n->dtypes[DT_STRING] = n->object_dtype;
    n->scalars[DT_STRING] = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyBytes_Type));
    return n;
  }();
  return *t;
}

[[noreturn]] void ThrowTypeError(const std::string& m) { throw py::type_error(m); }

std::string ToStdString(py::handle h) {
  if (PyBytes_Check(h.ptr())) return std::string(PyBytes_AS_STRING(h.ptr()), PyBytes_GET_SIZE(h.ptr()));
  if (PyUnicode_Check(h.ptr())) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(h.ptr(), &n);
    if (s == nullptr) throw py::error_already_set();
    return std::string(s, n);
  }
  if (py::isinstance(h, Np().np.attr("bytes_")) || py::isinstance(h, Np().np.attr("str_"))) {
    return ToStdString(h.attr("item")());
  }
  ThrowTypeError("Expected bytes or str, got " + std::string(py::str(py::type::of(h).attr("__name__"))) + ": " +
                 std::string(py::repr(h)));
}

// Python scalars converted without numpy: the fast path of feeds and literals.
bool ScalarToTensor(py::handle v, DType want, Tensor* out) {
  PyObject* p = v.ptr();
  if (PyBool_Check(p)) {
    if (want != DT_INVALID && want != DT_BOOL) return false;
    *out = Tensor(p == Py_True);
    return true;
  }
  if (PyLong_CheckExact(p)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow != 0) return false;
    switch (want) {
      case DT_INVALID:
        if (x >= std::numeric_limits<int32_t>::min() && x <= std::numeric_limits<int32_t>::max())
          *out = Tensor(static_cast<int32_t>(x));
        else *out = Tensor(static_cast<int64_t>(x));
        return true;
      case DT_INT32:
        if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) return false;
        *out = Tensor(static_cast<int32_t>(x));
        return true;
      case DT_INT64: *out = Tensor(static_cast<int64_t>(x)); return true;
      case DT_FLOAT: *out = Tensor(static_cast<float>(x)); return true;
      case DT_DOUBLE: *out = Tensor(static_cast<double>(x)); return true;
      default: return false;
    }
  }
  if (PyFloat_CheckExact(p)) {
    double x = PyFloat_AS_DOUBLE(p);
    switch (want) {
      case DT_INVALID:
      case DT_FLOAT: *out = Tensor(static_cast<float>(x)); return true;
      case DT_DOUBLE: *out = Tensor(x); return true;
      default: return false;
    }
  }
  if (PyBytes_Check(p) || PyUnicode_Check(p)) {
    if (want != DT_INVALID && want != DT_STRING) return false;
    *out = Tensor(ToStdString(v));
    return true;
  }
  return false;
}

bool AllPythonInts(py::handle v, int depth) {
  if (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr())) return true;
  if (depth > 32) return false;
  if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
    for (py::handle e : v)
      if (!AllPythonInts(e, depth + 1)) return false;
    return true;
  }
  return false;
}

const char* DTypeNameForError(DType t) {
  static std::string names[32];
  std::string& n = names[t];
  if (n.empty()) n = PythonDTypeName(t);
  return n.c_str();
}

}  // namespace

void ThrowStatus(const Status& s) {
  py::object& f = ErrorFactory();
  if (!f) throw std::runtime_error(std::string(s.message()));
  py::object exc = f(static_cast<int>(s.code()), py::str(std::string(s.message())));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw py::error_already_set();
}

void ThrowIfBuildError(Graph* g) {
  if (g->build_status().ok()) return;
  ThrowStatus(g->TakeBuildError());
}

py::object NumpyDType(DType t) {
  t = BaseType(t);
  if (t < 0 || t >= 32 || !Np().dtypes[t]) ThrowTypeError(std::string("No numpy dtype for ") + DTypeNameForError(t));
  return Np().dtypes[t];
}

DType FromNumpyDType(py::handle dtype) {
  py::dtype d = py::reinterpret_borrow<py::dtype>(Np().dtype_cls(dtype));
  char kind = d.kind();
  size_t size = d.itemsize();
  switch (kind) {
    case 'f': return size == 4 ? DT_FLOAT : size == 8 ? DT_DOUBLE : DT_INVALID;
    case 'i': return size == 4 ? DT_INT32 : size == 8 ? DT_INT64 : DT_INVALID;
    case 'u': return size == 1 ? DT_UINT8 : DT_INVALID;
    case 'b': return DT_BOOL;
    case 'S':
    case 'U':
    case 'O': return DT_STRING;
    default: return DT_INVALID;
  }
}

Tensor ToTensor(py::handle value, DType want) {
  want = BaseType(want);
  Tensor t;
  if (ScalarToTensor(value, want, &t)) return t;
  NumpyTypes& np = Np();
  py::array arr;
  if (py::isinstance<py::array>(value)) {
    arr = py::reinterpret_borrow<py::array>(value);
  } else {
    if (want == DT_INVALID) {
      // TensorFlow's inference: Python ints are int32 (int64 when they do not fit), floats float32.
      py::array a = py::reinterpret_steal<py::array>(np.asarray(value).release());
      DType got = FromNumpyDType(a.dtype());
      bool python_value = !py::isinstance(value, np.np.attr("generic"));
      if (python_value && got == DT_INT64 && AllPythonInts(value, 0)) {
        py::object mn = a.attr("min")(), mx = a.attr("max")();
        bool fits = a.size() == 0 || (mn.cast<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                                      mx.cast<int64_t>() <= std::numeric_limits<int32_t>::max());
        want = fits ? DT_INT32 : DT_INT64;
      } else if (python_value && got == DT_DOUBLE) {
        want = DT_FLOAT;
      } else {
        want = got;
      }
      if (want == DT_INVALID) {
        ThrowTypeError("Cannot convert " + std::string(py::repr(value)).substr(0, 200) +
                       " to a tensor: unsupported dtype " + std::string(py::str(a.dtype())));
      }
      arr = a;
    } else {
      arr = py::reinterpret_steal<py::array>(np.asarray(value).release());
    }
    // numpy's fixed-width bytes ('S') drop trailing NULs (serialized protos end in them): keep
    // the Python bytes objects instead.
    if (arr.dtype().kind() == 'S') {
      arr = py::reinterpret_steal<py::array>(np.asarray(value, np.object_dtype).release());
    }
  }
  DType have = FromNumpyDType(arr.dtype());
  if (want == DT_INVALID) want = have;
  if (want == DT_INVALID) {
    ThrowTypeError("Cannot convert a numpy array of dtype " + std::string(py::str(arr.dtype())) +
                   " to a tensor: dflow has no such dtype");
  }
  if (want == DT_STRING) {
    if (have != DT_STRING) {
      ThrowTypeError(std::string("Expected string, got ") + std::string(py::repr(value)).substr(0, 200) + " of type " +
                     std::string(py::str(arr.dtype())));
    }
    std::vector<int64_t> dims(arr.shape(), arr.shape() + arr.ndim());
    TensorShape shape = ValueOrThrow(TensorShape::FromDims(dims));
    Tensor out = ValueOrThrow(Tensor::Allocate(DT_STRING, shape));  // ResourceExhausted, not a crash
    py::object flat = arr.attr("ravel")();
    std::string* dst = out.data<std::string>();
    int64_t i = 0;
    for (py::handle e : flat) dst[i++] = ToStdString(e);
    return out;
  }
  if (have != want) {
    if (have == DT_STRING) {
      ThrowTypeError(std::string("Cannot convert ") + std::string(py::repr(value)).substr(0, 200) + " to " +
                     DTypeNameForError(want));
    }
    arr = py::reinterpret_steal<py::array>(np.asarray(arr, NumpyDType(want)).release());
  }
  std::vector<int64_t> dims(arr.shape(), arr.shape() + arr.ndim());
  TensorShape shape = ValueOrThrow(TensorShape::FromDims(dims));
  // Not zero-filled: every byte is written below. ResourceExhausted (not a crash) when too big.
  Tensor out = ValueOrThrow(Tensor::Allocate(want, shape));
  size_t bytes = out.TotalBytes();
  if (bytes == 0) return out;
  if (arr.flags() & py::array::c_style) {
    std::memcpy(const_cast<void*>(out.raw_data()), arr.data(), bytes);
  } else {
    py::array c = py::array::ensure(arr, py::array::c_style);
    std::memcpy(const_cast<void*>(out.raw_data()), c.data(), bytes);
  }
  return out;
}

py::object ToNumpy(Tensor t) {
  NumpyTypes& np = Np();
  DType d = t.dtype();
  if (d == DT_STRING) {
    if (t.dims() == 0) return py::bytes(t.scalar<std::string>());
    std::vector<py::ssize_t> shape(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
    py::array out(np.object_dtype, shape);
    PyObject** dst = static_cast<PyObject**>(out.mutable_data());
    const std::string* src = t.data<std::string>();
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      PyObject* b = PyBytes_FromStringAndSize(src[i].data(), src[i].size());
      if (b == nullptr) throw py::error_already_set();
      Py_XDECREF(dst[i]);
      dst[i] = b;
    }
    return out;
  }
  if (d < 0 || d >= 32 || !np.dtypes[d]) {
    ThrowTypeError(std::string("Cannot fetch a tensor of dtype ") + DTypeNameForError(d) + " into Python");
  }
  if (t.dims() == 0) {
    switch (d) {
      case DT_FLOAT: return np.scalars[d](py::float_(t.scalar<float>()));
      case DT_DOUBLE: return np.scalars[d](py::float_(t.scalar<double>()));
      case DT_INT32: return np.scalars[d](py::int_(t.scalar<int32_t>()));
      case DT_INT64: return np.scalars[d](py::int_(t.scalar<int64_t>()));
      case DT_UINT8: return np.scalars[d](py::int_(t.scalar<uint8_t>()));
      case DT_BOOL: return np.scalars[d](py::bool_(t.scalar<bool>()));
      default: break;
    }
  }
  std::vector<py::ssize_t> shape(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
  py::dtype dt = py::reinterpret_borrow<py::dtype>(np.dtypes[d]);
  if (t.RefCountIsOne()) {
    // Nothing else holds the buffer (no variable, no cache): hand it to numpy as it is.
    auto* keep = new Tensor(std::move(t));
    py::capsule owner(keep, [](void* p) { delete static_cast<Tensor*>(p); });
    return py::array(dt, shape, {}, keep->raw_data(), owner);
  }
  py::array out(dt, shape);
  if (t.TotalBytes() > 0) std::memcpy(out.mutable_data(), t.raw_data(), t.TotalBytes());
  return out;
}

PartialTensorShape ToShape(py::handle shape) {
  if (shape.is_none()) return PartialTensorShape();
  std::vector<int64_t> dims;
  for (py::handle d : shape) dims.push_back(d.is_none() ? -1 : d.cast<int64_t>());
  return ValueOrThrow(PartialTensorShape::FromDims(dims));
}

py::object FromShape(const PartialTensorShape& s) {
  if (s.unknown_rank()) return py::none();
  py::tuple t(s.dims());
  for (int i = 0; i < s.dims(); ++i) {
    int64_t d = s.dim_size(i);
    t[i] = d < 0 ? py::object(py::none()) : py::object(py::int_(d));
  }
  return t;
}

AttrValue ToAttrValue(const std::string& type, py::handle v) {
  if (type == "int") return AttrValue(v.cast<int64_t>());
  if (type == "float") return AttrValue(v.cast<float>());
  if (type == "bool") return AttrValue(v.cast<bool>());
  if (type == "string") return AttrValue(ToStdString(v));
  if (type == "type") return AttrValue(static_cast<DType>(v.cast<int>()));
  if (type == "shape") return AttrValue(ToShape(v));
  if (type == "tensor") {
    if (py::isinstance(v, py::type::of(py::none()))) ThrowTypeError("A tensor attr needs a value");
    return AttrValue(ToTensor(v, DT_INVALID));
  }
  if (type == "func") {
    NameAttrList f;
    f.name = py::isinstance<py::str>(v) || py::isinstance<py::bytes>(v) ? ToStdString(v) : ToStdString(v.attr("name"));
    return AttrValue(f);
  }
  if (type == "list(int)") return AttrValue(v.cast<std::vector<int64_t>>());
  if (type == "list(float)") return AttrValue(v.cast<std::vector<float>>());
  if (type == "list(bool)") return AttrValue(v.cast<std::vector<bool>>());
  if (type == "list(string)") {
    std::vector<std::string> out;
    for (py::handle e : v) out.push_back(ToStdString(e));
    return AttrValue(out);
  }
  if (type == "list(type)") {
    std::vector<DType> out;
    for (py::handle e : v) out.push_back(static_cast<DType>(e.cast<int>()));
    return AttrValue(out);
  }
  if (type == "list(shape)") {
    std::vector<PartialTensorShape> out;
    for (py::handle e : v) out.push_back(ToShape(e));
    return AttrValue(out);
  }
  if (type == "list(tensor)") {
    std::vector<Tensor> out;
    for (py::handle e : v) out.push_back(ToTensor(e, DT_INVALID));
    return AttrValue(out);
  }
  ThrowTypeError("Unsupported attr type '" + type + "'");
}

py::object FromAttrValue(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return py::none();
        else if constexpr (std::is_same_v<T, std::string>) return py::bytes(x);
        else if constexpr (std::is_same_v<T, DType>) return py::int_(static_cast<int>(x));
        else if constexpr (std::is_same_v<T, PartialTensorShape>) return FromShape(x);
        else if constexpr (std::is_same_v<T, Tensor>) return ToNumpy(x.DeepCopy());
        else if constexpr (std::is_same_v<T, NameAttrList>) return py::str(x.name);
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          py::list l;
          for (const auto& s : x) l.append(py::bytes(s));
          return l;
        } else if constexpr (std::is_same_v<T, std::vector<DType>>) {
          py::list l;
          for (DType d : x) l.append(static_cast<int>(d));
          return l;
        } else if constexpr (std::is_same_v<T, std::vector<PartialTensorShape>>) {
          py::list l;
          for (const auto& s : x) l.append(FromShape(s));
          return l;
        } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
          py::list l;
          for (const auto& t : x) l.append(ToNumpy(t.DeepCopy()));
          return l;
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          py::list l;
          for (bool b : x) l.append(py::bool_(b));
          return l;
        } else {
          return py::cast(x);
        }
      },
      v.value());
}

namespace {

py::dict ArgToDict(const ArgDef& a) {
  py::dict d;
  d["name"] = a.name;
  d["type"] = static_cast<int>(a.type);
  d["type_attr"] = a.type_attr;
  d["type_list_attr"] = a.type_list_attr;
  d["number_attr"] = a.number_attr;
  d["is_ref"] = a.is_ref;
  return d;
}

py::dict OpDefToDict(const OpDef& def) {
  py::dict d;
  d["name"] = def.name;
  py::list ins, outs, attrs;
  for (const ArgDef& a : def.inputs) ins.append(ArgToDict(a));
  for (const ArgDef& a : def.outputs) outs.append(ArgToDict(a));
  for (const AttrDef& a : def.attrs) {
    py::dict ad;
    ad["name"] = a.name;
    ad["type"] = a.type;
    ad["has_default"] = a.default_value.has_value();
    ad["default"] = a.default_value ? FromAttrValue(*a.default_value) : py::object(py::none());
    py::list allowed;
    for (DType t : a.allowed_types) allowed.append(static_cast<int>(t));
    ad["allowed_types"] = allowed;
    ad["minimum"] = a.minimum ? py::object(py::int_(*a.minimum)) : py::object(py::none());
    attrs.append(ad);
  }
  d["inputs"] = ins;
  d["outputs"] = outs;
  d["attrs"] = attrs;
  d["is_stateful"] = def.is_stateful;
  d["summary"] = def.summary;
  return d;
}

// The Python graph: a root Scope (the C++ graph and its client collections).
struct GraphHandle {
  GraphHandle() { root.graph()->set_case_insensitive_names(true); }
  // A Python graph over a C++-made one (a dataset function's body, an estimator's graph).
  explicit GraphHandle(Scope scope) : root(std::move(scope)) {}
  Scope root = Scope::NewRootScope();
  Graph* graph() const { return root.graph(); }
};

NodeRef MakeNode(const Scope& s, Node* n) { return NodeRef{s.graph_as_shared_ptr(), n}; }

Input InputOf(py::handle item, const Graph* g) {
  if (py::isinstance<OutputRef>(item)) {
    const OutputRef& o = item.cast<const OutputRef&>();
    return Input(o.out);
  }
  // A value: a Const of exactly its dtype (the Python layer converted it to the op's dtype).
  return Input(Input::Initializer(ToTensor(item, DT_INVALID)));
}

}  // namespace

void BindCore(py::module_& m) {
  InitDflow();
  m.def("_set_error_factory", [](py::object f) { ErrorFactory() = std::move(f); });

  m.def(
      "op_defs",
      [] {
        py::list l;
        for (const OpDef* d : OpRegistry::Global()->ListOps()) l.append(OpDefToDict(*d));
        return l;
      },
      "Every registered op's OpDef, as dicts.");
  m.def("stripped_op_list", [](py::bytes graph_def) {
    // The OpList of the ops a serialized GraphDef uses (a MetaGraphDef's stripped_op_list).
    proto::GraphDef def;
    std::string s = graph_def;
    if (!def.ParseFromString(s))
      ThrowStatus(errors::InvalidArgument("Could not parse ", s.size(), " bytes as a GraphDef"));
    return py::bytes(train::StrippedOpList(def).SerializeAsString());
  });
  m.def("proto_files", [] {
    // The .proto files the Python side builds message classes from (GraphDef, Event, Summary,
    // CheckpointState), as serialized FileDescriptorProtos, each after the files it imports: the
    // same descriptors the C++ side was compiled with, whatever protoc the Python runtime pairs with.
    namespace gpb = google::protobuf;
    std::vector<const gpb::FileDescriptor*> order;
    std::set<const gpb::FileDescriptor*> seen;
    std::function<void(const gpb::FileDescriptor*)> visit = [&](const gpb::FileDescriptor* f) {
      if (!seen.insert(f).second) return;
      for (int i = 0; i < f->dependency_count(); ++i) visit(f->dependency(i));
      order.push_back(f);
    };
    visit(proto::GraphDef::descriptor()->file());
    visit(proto::Event::descriptor()->file());
    visit(proto::Summary::descriptor()->file());
    visit(proto::CheckpointState::descriptor()->file());
    visit(proto::SequenceExample::descriptor()->file());  // and Example, feature.proto
    visit(proto::SavedModel::descriptor()->file());
    py::list l;
    for (const gpb::FileDescriptor* f : order) {
      gpb::FileDescriptorProto p;
      f->CopyTo(&p);
      l.append(py::bytes(p.SerializeAsString()));
    }
    return l;
  });
  m.def("dtype_name", [](int t) { return PythonDTypeName(static_cast<DType>(t)); });
  m.def("numpy_dtype", [](int t) { return NumpyDType(static_cast<DType>(t)); });
  m.def("from_numpy_dtype", [](py::handle d) { return static_cast<int>(FromNumpyDType(d)); });
  m.def(
      "raise_status",
      [](int code, const std::string& message) { ThrowStatus(Status(static_cast<absl::StatusCode>(code), message)); },
      "Raises the exception a C++ Status of this code and message raises (for tests).");
  m.def(
      "to_tensor_roundtrip", [](py::handle v, int want) { return ToNumpy(ToTensor(v, static_cast<DType>(want))); },
      "Converts a value as a feed or a constant would (for tests).");

  py::class_<NodeRef>(m, "Node")
      .def_property_readonly("name", [](const NodeRef& n) { return n.node->name(); })
      .def_property_readonly("type", [](const NodeRef& n) { return n.node->op(); })
      .def_property_readonly("id", [](const NodeRef& n) { return n.node->id(); })
      .def_property_readonly("num_outputs", [](const NodeRef& n) { return n.node->num_outputs(); })
      .def_property_readonly("num_inputs", [](const NodeRef& n) { return n.node->num_inputs(); })
      .def_property_readonly("device", [](const NodeRef& n) { return n.node->requested_device(); })
      .def_property_readonly("is_stateful", [](const NodeRef& n) { return n.node->IsStateful(); })
      .def("output_dtype", [](const NodeRef& n, int i) { return static_cast<int>(n.node->output_type(i)); })
      .def("input_dtype", [](const NodeRef& n, int i) { return static_cast<int>(n.node->input_type(i)); })
      .def("output_shape", [](const NodeRef& n, int i) { return FromShape(n.node->output_shape(i)); })
      .def("refine_output_shape",
           [](const NodeRef& n, int i, py::handle shape) {
             if (i < 0 || i >= n.node->num_outputs()) throw py::index_error("output index out of range");
             Status s = n.node->RefineOutputShape(i, ToShape(shape));
             if (!s.ok()) throw py::value_error(std::string(s.message()));
           })
      .def("output",
           [](const NodeRef& n, int i) {
             if (i < 0 || i >= n.node->num_outputs()) throw py::index_error("output index out of range");
             return OutputRef{n.graph, Output(n.node, i)};
           })
      .def("inputs",
           [](const NodeRef& n) {
             py::list l;
             for (const Edge* e : n.node->data_inputs()) {
               if (e == nullptr) l.append(py::none());
               else l.append(OutputRef{n.graph, Output(e->src, e->src_output)});
             }
             return l;
           })
      .def("control_inputs",
           [](const NodeRef& n) {
             py::list l;
             for (const Edge* e : n.node->control_inputs()) l.append(NodeRef{n.graph, e->src});
             return l;
           })
      .def("consumers",
           [](const NodeRef& n, int i) {
             py::list l;
             for (const Edge* e : n.node->out_edges())
               if (e->src_output == i) l.append(NodeRef{n.graph, e->dst});
             return l;
           })
      .def("control_outputs",
           [](const NodeRef& n) {
             py::list l;
             for (const Edge* e : n.node->out_edges())
               if (e->IsControlEdge()) l.append(NodeRef{n.graph, e->dst});
             return l;
           })
      .def("attrs",
           [](const NodeRef& n) {
             py::dict d;
             for (const auto& [k, v] : n.node->attrs()) d[py::str(k)] = FromAttrValue(v);
             return d;
           })
      .def("attr",
           [](const NodeRef& n, const std::string& name) -> py::object {
             auto it = n.node->attrs().find(name);
             if (it == n.node->attrs().end()) {
               throw py::value_error("Operation '" + n.node->name() + "' has no attr named '" + name + "'.");
             }
             return FromAttrValue(it->second);
           })
      .def("node_def",
           [](const NodeRef& n) {
             proto::GraphDef def;
             ExportGraphDef(*n.graph, &def, n.node->id());
             for (const auto& nd : def.node())
               if (nd.name() == n.node->name()) return py::bytes(nd.SerializeAsString());
             return py::bytes("");
           })
      .def("add_control_input",
           [](const NodeRef& n, const NodeRef& src) { ThrowIfError(n.graph->AddControlEdge(src.node, n.node)); })
      .def("graph_id", [](const NodeRef& n) { return n.graph->id(); })
      .def("__eq__", [](const NodeRef& a, const NodeRef& b) { return a.node == b.node; })
      .def("__hash__", [](const NodeRef& n) { return std::hash<const void*>()(n.node); });

  py::class_<OutputRef>(m, "Output")
      .def_property_readonly("node",
                             [](const OutputRef& o) {
                               return NodeRef{o.graph, o.out.node()};
                             })
      .def_property_readonly("index", [](const OutputRef& o) { return o.out.index(); })
      .def_property_readonly("name", [](const OutputRef& o) { return o.out.name(); })
      .def_property_readonly("dtype", [](const OutputRef& o) { return static_cast<int>(o.out.dtype()); })
      .def_property_readonly("shape", [](const OutputRef& o) { return FromShape(o.out.shape()); })
      .def("__eq__", [](const OutputRef& a, const OutputRef& b) { return a.out == b.out; })
      .def("__hash__", [](const OutputRef& o) { return std::hash<Output>()(o.out); });

  py::class_<Scope>(m, "Scope")
      .def("sub_scope", &Scope::NewSubScope)
      .def(
          "with_prefix", [](const Scope& s, const std::string& p) { return ScopeAccess::WithPrefix(s, p); },
          "A scope whose ops are named '<prefix>Op' exactly (prefix '' or ending in '/').")
      .def("with_op_name", &Scope::WithOpName)
      .def("with_device", &Scope::WithDevice)
      .def("with_device_function",
           [](const Scope& s, py::function fn) {
             // Called while building, with the GIL held (ops are built from Python).
             auto keep = std::make_shared<py::function>(std::move(fn));
             return s.WithDeviceFunction([keep](const DeviceRequest& r) -> StatusOr<std::string> {
               py::gil_scoped_acquire gil;
               try {
                 py::dict attrs;
                 for (const auto& [k, v] : r.attrs) attrs[py::str(k)] = FromAttrValue(v);
                 py::object d = (*keep)(std::string(r.op), std::string(r.name), std::string(r.device), attrs);
                 if (d.is_none()) return std::string();
                 return d.cast<std::string>();
               } catch (py::error_already_set& e) {
                 return errors::InvalidArgument("The device function raised ", e.what());
               }
             });
           })
      .def("with_control_dependencies",
           [](const Scope& s, const std::vector<NodeRef>& deps) {
             std::vector<Operation> ops;
             for (const NodeRef& d : deps) ops.push_back(d.op());
             return s.WithControlDependencies(ops);
           })
      .def("without_control_dependencies", [](const Scope& s) { return ScopeAccess::WithoutControlDependencies(s); })
      .def("unique_name", &Scope::GetUniqueNameForOp)
      .def_property_readonly("name_prefix", &Scope::name_prefix)
      .def_property_readonly("device", &Scope::device)
      .def_property_readonly("control_dependencies",
                             [](const Scope& s) {
                               py::list l;
                               for (const Operation& o : s.control_dependencies())
                                 l.append(NodeRef{s.graph_as_shared_ptr(), o.node()});
                               return l;
                             })
      .def_property_readonly("graph_id", [](const Scope& s) { return s.graph()->id(); });

  py::class_<GraphHandle>(m, "Graph")
      .def(py::init<>())
      .def(py::init<Scope>(), py::arg("scope"))
      .def_property_readonly("root", [](const GraphHandle& g) { return g.root; })
      .def_property_readonly("id", [](const GraphHandle& g) { return g.graph()->id(); })
      .def_property_readonly("num_node_ids", [](const GraphHandle& g) { return g.graph()->num_node_ids(); })
      .def("node",
           [](const GraphHandle& g, int id) -> py::object {
             if (id < 0 || id >= g.graph()->num_node_ids()) throw py::index_error("node id out of range");
             Node* n = g.graph()->node(id);
             if (n == nullptr) return py::none();
             return py::cast(MakeNode(g.root, n));
           })
      .def("find_node",
           [](const GraphHandle& g, const std::string& name) -> py::object {
             Node* n = g.graph()->FindNode(name);
             if (n == nullptr) return py::none();
             return py::cast(MakeNode(g.root, n));
           })
      .def("is_name_used", [](const GraphHandle& g, const std::string& name) { return g.graph()->IsNameUsed(name); })
      .def_property(
          "seed",
          [](const GraphHandle& g) -> py::object {
            auto s = g.graph()->seed();
            return s ? py::object(py::int_(*s)) : py::object(py::none());
          },
          [](const GraphHandle& g, py::object s) {
            if (s.is_none()) g.graph()->set_seed(std::nullopt);
            else g.graph()->set_seed(s.cast<int64_t>());
          })
      .def(
          "graph_def",
          [](const GraphHandle& g, int first) {
            proto::GraphDef def;
            ExportGraphDef(*g.graph(), &def, first);
            return py::bytes(def.SerializeAsString());
          },
          py::arg("first_node_id") = 0)
      .def("import_graph_def",
           [](const GraphHandle& g, py::bytes data) {
             proto::GraphDef def;
             std::string s = data;
             if (!def.ParseFromString(s))
               ThrowStatus(errors::InvalidArgument("Could not parse ", s.size(), " bytes as a GraphDef"));
             ThrowIfError(ImportGraphDef(def, g.graph()));
           })
      .def("take_build_error", [](const GraphHandle& g) { ThrowIfBuildError(g.graph()); });

  // Builds one op. `inputs`: per flat input, an Output or a value (converted to a Const of its
  // own dtype); `arg_sizes`: how many flat inputs each OpDef input takes (None: one list at most);
  // `attrs`: name → value, converted by the OpDef's attr types.
  m.def(
      "build_op",
      [](const Scope& scope, const std::string& op, py::list inputs, py::object arg_sizes, py::dict attrs,
         const std::string& name) {
        Graph* g = scope.graph();
        const OpDef* def = OpRegistry::Global()->LookUp(op);
        if (def == nullptr) ThrowStatus(errors::NotFound("Op type not registered '", op, "'"));
        std::vector<Input> ins;
        ins.reserve(inputs.size());
        for (py::handle item : inputs) ins.push_back(InputOf(item, g));
        AttrMap am;
        for (auto [k, v] : attrs) {
          std::string key = k.cast<std::string>();
          const AttrDef* ad = def->FindAttr(key);
          if (ad == nullptr) {
            ThrowStatus(errors::InvalidArgument("Op ", op, " has no attr named '", key, "'"));
          }
          try {
            am[key] = ToAttrValue(ad->type, v);
          } catch (py::cast_error&) {
            throw py::type_error("Attr '" + key + "' of " + op + " expects a " + ad->type + ", got " +
                                 std::string(py::repr(v)).substr(0, 200));
          }
        }
        std::vector<int> sizes;
        const std::vector<int>* sizes_ptr = nullptr;
        if (!arg_sizes.is_none()) {
          sizes = arg_sizes.cast<std::vector<int>>();
          sizes_ptr = &sizes;
        }
        Operation o = ops::BuildOpWithArgSizes(scope, op, ins, sizes_ptr, am, name);
        ThrowIfBuildError(g);
        if (!o.valid()) ThrowStatus(errors::Internal("Building ", op, " failed without an error"));
        return NodeRef{scope.graph_as_shared_ptr(), o.node()};
      },
      py::arg("scope"), py::arg("op"), py::arg("inputs"), py::arg("arg_sizes"), py::arg("attrs"), py::arg("name"));
}

}  // namespace dflow::python
