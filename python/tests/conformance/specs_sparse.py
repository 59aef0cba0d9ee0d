"""Differential specs: SparseToDense (the dense form of tf.io.parse_example's sparse outputs).
(Format: see diffsuite's docstring.)"""
import numpy as np

from diffsuite import Case, Const, Spec, gen

SPECS = []


def _sparse_to_dense(dtype):
    out = []
    for it in (np.int32, np.int64):
        f = lambda tf, i, s, v, d, val=True: tf.raw_ops.SparseToDense(  # noqa: E731
            sparse_indices=i, output_shape=s, sparse_values=v, default_value=d, validate_indices=val)
        n = np.dtype(it).name
        for label, idx, shape in [("2-D", [[0, 1], [1, 3], [2, 0]], [3, 4]), ("1-D", [0, 2, 5], [6]),
                                  ("scalar index", 3, [5]), ("3-D", [[0, 0, 1], [1, 2, 0]], [2, 3, 2]),
                                  ("none", np.zeros((0, 2)), [2, 2])]:
            k = int(np.asarray(idx).shape[0]) if np.asarray(idx).ndim else 1
            vshape = (k,) if np.asarray(idx).ndim else ()
            out.append(Case("%s %s" % (label, n), f, [np.array(idx, it), Const(shape, it),
                                                      gen(dtype, vshape, "normal", len(out)),
                                                      gen(dtype, (), "normal", len(out) + 1)]))
        out.append(Case("scalar value %s" % n, f, [np.array([[0, 1], [2, 2]], it), Const([3, 3], it),
                                                   gen(dtype, (), "normal", 3), gen(dtype, (), "normal", 4)]))
        bad = [("unsorted", [[1, 0], [0, 1]], True), ("unsorted, not validated", [[1, 0], [0, 1]], False),
               ("duplicate", [[0, 1], [0, 1]], True), ("out of range", [[0, 1], [3, 0]], True),
               ("negative", [[0, -1], [1, 0]], True)]
        for label, idx, val in bad:
            out.append(Case("%s %s" % (label, n), lambda tf, i, s, v, d, val=val: f(tf, i, s, v, d, val),
                            [np.array(idx, it), np.array([3, 3], it), gen(dtype, (2,), "normal", 5),
                             gen(dtype, (), "normal", 6)], grad=[]))
        out.append(Case("values count wrong %s" % n, f, [np.array([[0, 1], [1, 1]], it), Const([3, 3], it),
                                                         gen(dtype, (3,)), gen(dtype, ())]))
        out.append(Case("default not a scalar %s" % n, f, [np.array([[0, 1]], it), Const([3, 3], it),
                                                           gen(dtype, (1,)), gen(dtype, (1,))]))
    return out


SPECS.append(Spec("SparseToDense", _sparse_to_dense))

EXCLUDED = {}
KNOWN = {}
