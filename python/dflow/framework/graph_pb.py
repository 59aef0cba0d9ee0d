"""Protocol buffer messages of dflow's .proto files (proto/*.proto): GraphDef, NodeDef, AttrValue,
TensorProto, Event, Summary, ... as Python protobuf classes.

The classes are made at import from the descriptors the C++ extension was compiled with
(`_dflow.proto_files()`), in a pool of their own, so that no generated _pb2 code has to match the
installed protobuf runtime's version. The field numbers are TensorFlow's: `SerializeToString()` of
these messages is what TensorFlow reads, and TensorFlow's bytes parse here.
"""
from google.protobuf import descriptor_pb2
from google.protobuf import descriptor_pool
from google.protobuf import message_factory

from dflow import _dflow

_PACKAGE = "dflow.proto."

_pool = descriptor_pool.DescriptorPool()
for _b in _dflow.proto_files():
    _pool.Add(descriptor_pb2.FileDescriptorProto.FromString(_b))
del _b

_classes = {}


def message_class(name):
    """The message class for `name` ("GraphDef", "AttrValue.ListValue", or a full name)."""
    full = name if name.startswith(_PACKAGE) else _PACKAGE + name
    cls = _classes.get(full)
    if cls is None:
        try:
            desc = _pool.FindMessageTypeByName(full)
        except KeyError:
            raise KeyError("dflow has no protocol buffer message named %r" % name) from None
        cls = message_factory.GetMessageClass(desc)
        _classes[full] = cls
    return cls


def enum_values(name):
    """{value name: number} of an enum ("DataType")."""
    e = _pool.FindEnumTypeByName(name if name.startswith(_PACKAGE) else _PACKAGE + name)
    return {v.name: v.number for v in e.values}


GraphDef = message_class("GraphDef")
NodeDef = message_class("NodeDef")
VersionDef = message_class("VersionDef")
FunctionDefLibrary = message_class("FunctionDefLibrary")
FunctionDef = message_class("FunctionDef")
GradientDef = message_class("GradientDef")
AttrValue = message_class("AttrValue")
NameAttrList = message_class("NameAttrList")
TensorProto = message_class("TensorProto")
TensorShapeProto = message_class("TensorShapeProto")
OpDef = message_class("OpDef")
Event = message_class("Event")
Summary = message_class("Summary")
SummaryMetadata = message_class("SummaryMetadata")
HistogramProto = message_class("HistogramProto")
SessionLog = message_class("SessionLog")
CheckpointState = message_class("CheckpointState")


def as_graph_def_message(graph_def):
    """A dflow GraphDef for a GraphDef message of any protobuf class with TensorFlow's fields
    (dflow's own, or TensorFlow's tensorflow.GraphDef), or for serialized bytes."""
    if isinstance(graph_def, GraphDef):
        return graph_def
    if isinstance(graph_def, (bytes, bytearray, memoryview)):
        return GraphDef.FromString(bytes(graph_def))
    ser = getattr(graph_def, "SerializeToString", None)
    desc = getattr(graph_def, "DESCRIPTOR", None)
    if ser is None or desc is None or desc.name != "GraphDef":
        raise TypeError("graph_def must be a GraphDef proto, got %s" % type(graph_def).__name__)
    return GraphDef.FromString(ser())
