"""tf.data.Iterator (TensorFlow 1.x): one-shot, initializable and reinitializable iterators.

One-shot and initializable iterators are the C++ data::Iterator of a dataset. A reinitializable
iterator (`Iterator.from_structure`) is an IteratorV2 resource that `make_initializer(dataset)`
starts on any dataset of the same structure. `get_next()` gives the element as the dataset's
nested structure of tensors; running it past the end raises OutOfRangeError.
"""
import weakref

from dflow.data import nest
from dflow.data.dataset_ops import DatasetV1, TensorSpec, _cc_call, _HasStructure
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape


# IteratorGetNext ops of one-shot iterators -> their dataset: an estimator given the tensors of
# `dataset.make_one_shot_iterator().get_next()` reads the dataset itself (to its end, as TensorFlow).
_ONE_SHOT_GET_NEXT = weakref.WeakKeyDictionary()


def dataset_of_get_next(op):
    """The dataset whose one-shot iterator's get_next built `op`, or None."""
    return _ONE_SHOT_GET_NEXT.get(op)


class Iterator(_HasStructure):
    """Reads the elements of a dataset, one get_next() run at a time."""

    def __init__(self, handle, initializer, structure, cc=None, dataset=None):
        self._handle = handle          # the iterator resource (a Tensor)
        self._initializer = initializer  # an Operation, or None (one-shot)
        self._structure = structure    # nested TensorSpecs
        self._cc = cc                  # the C++ iterator, when the dataset made it
        self._dataset = dataset
        self._graph = handle.graph

    @staticmethod
    def _from_cc(cc, dataset):
        g = dataset._graph
        scope = g._scope
        handle = g._tensor_of(cc.handle_of(scope))
        node = cc.initializer(scope)
        init = None if node is None else g._wrap(node)
        return Iterator(handle, init, dataset._structure, cc, dataset)

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        flat_types = [dtypes.as_dtype(t) for t in nest.flatten(output_types)]
        if output_shapes is None:
            flat_shapes = [tensor_shape.TensorShape(None)] * len(flat_types)
        else:
            flat_shapes = [tensor_shape.as_shape(s) for s in nest.flatten_up_to(output_types, output_shapes)]
        specs = [TensorSpec(s, t) for s, t in zip(flat_shapes, flat_types)]
        structure = nest.pack_sequence_as(output_types, specs)
        handle = ops.apply_op("IteratorV2", "Iterator", [], {
            "shared_name": shared_name or "", "container": "",
            "output_types": flat_types, "output_shapes": [s.as_proto() for s in flat_shapes]})
        return Iterator(handle, None, structure)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        raise NotImplementedError("Iterator.from_string_handle: dflow has no IteratorFromStringHandle op")

    def string_handle(self, name=None):
        raise NotImplementedError("Iterator.string_handle: dflow has no IteratorToStringHandle op")

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        if not isinstance(dataset, DatasetV1):
            raise TypeError("make_initializer takes a Dataset, got %r" % (dataset,))
        nest.assert_same_structure(self._structure, dataset._structure)
        for want, have in zip(nest.flatten(self._structure), nest.flatten(dataset._structure)):
            if want.dtype != have.dtype:
                raise TypeError("Expected output types %r but got dataset with output types %r." % (
                    nest.map_structure(lambda s: s.dtype, self._structure), dataset.output_types))
            if not want.shape.is_compatible_with(have.shape):
                raise TypeError("Expected output shapes compatible with %r but got dataset with output shapes %r." % (
                    nest.map_structure(lambda s: s.shape, self._structure), dataset.output_shapes))
        with ops.get_default_graph().name_scope(name or "make_initializer") as scope:
            return ops.apply_op("MakeIterator", scope, [dataset._variant_tensor(), self._handle])

    def get_next(self, name=None):
        g = ops.get_default_graph()
        if self._cc is not None and name is None:
            outs = [g._tensor_of(o) for o in _cc_call(self._cc.get_next, g._scope)]
        else:
            flat = nest.flatten(self._structure)
            attrs = {"output_types": [s.dtype for s in flat], "output_shapes": [s.shape.as_proto() for s in flat]}
            outs = ops.apply_op("IteratorGetNext", name or "IteratorGetNext", [self._handle], attrs)
            if isinstance(outs, ops.Tensor):
                outs = [outs]
        for t, s in zip(outs, nest.flatten(self._structure)):
            if s.shape.ndims is not None and t.shape.ndims is None:
                t.set_shape(s.shape)
        if self._cc is not None and self._initializer is None and outs:
            _ONE_SHOT_GET_NEXT[outs[0].op] = self._dataset
        return nest.pack_sequence_as(self._structure, outs)


def make_one_shot_iterator(dataset):
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes


def get_structure(dataset_or_iterator):
    return dataset_or_iterator.element_spec
