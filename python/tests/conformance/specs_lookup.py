"""Differential specs: lookup tables — HashTableV2 (initialized by InitializeTableV2 or
InitializeTableFromTextFileV2), MutableHashTableV2 and LookupTable{Find,Insert,Remove,Import,Export,Size}V2.
A case creates its table (a shared_name of its own), fills it and queries it in one Session.run,
each step under a control dependency on the one before. An export's order is the table's own, so
what is compared of it is order-free: its size and, for numbers, the sums of keys and values.
(Format: see diffsuite's docstring.)"""
import os
import tempfile

import numpy as np

from diffsuite import Case, Spec

SPECS = []
_N = [0]
KV = [("int64", "int64"), ("int64", "float32"), ("string", "int64"), ("string", "string"), ("int32", "float64")]


def _name():
    _N[0] += 1
    return "table_%d" % _N[0]


def _keys(kt, n, seed=0):
    if kt == "string":
        return np.array([("k%d" % i).encode() for i in range(n)], dtype=object)
    return (np.arange(n) * 7 - 5 + seed).astype(kt)


def _values(vt, n, seed=0):
    if vt == "string":
        return np.array([("v%d" % (i + seed)).encode() for i in range(n)], dtype=object)
    return (np.arange(n) * 3 + 1 + seed).astype(vt)


def _default(vt):
    return np.array(b"?" if vt == "string" else -1, dtype=object if vt == "string" else vt)


def _after(tf, deps, fn):
    with tf.control_dependencies(deps):
        return fn()


def _hash_table(kt, vt):
    def cases(dtype):
        out = []

        def find(tf, k, v, q, d):
            t = tf.raw_ops.HashTableV2(key_dtype=k.dtype, value_dtype=v.dtype, shared_name=_name())
            init = tf.raw_ops.InitializeTableV2(table_handle=t, keys=k, values=v)
            return [_after(tf, [init], lambda: tf.raw_ops.LookupTableFindV2(table_handle=t, keys=q, default_value=d)),
                    _after(tf, [init], lambda: tf.raw_ops.LookupTableSizeV2(table_handle=t))]
        q = np.concatenate([_keys(kt, 5)[::-1], _keys(kt, 2, seed=1000) if kt != "string" else
                            np.array([b"missing", b""], dtype=object)])
        out.append(Case("find", find, [_keys(kt, 5), _values(vt, 5), q, _default(vt)]))
        out.append(Case("find 2-D keys", find, [_keys(kt, 5), _values(vt, 5), q[:6].reshape(2, 3), _default(vt)]))
        out.append(Case("empty table", find, [_keys(kt, 0), _values(vt, 0), q, _default(vt)]))
        out.append(Case("keys and values differ in size", find, [_keys(kt, 5), _values(vt, 4), q, _default(vt)]))
        out.append(Case("duplicate keys", find, [np.concatenate([_keys(kt, 3), _keys(kt, 1)]), _values(vt, 4), q,
                                                 _default(vt)]))

        def uninitialized(tf, q, d):
            t = tf.raw_ops.HashTableV2(key_dtype=q.dtype, value_dtype=d.dtype, shared_name=_name())
            return tf.raw_ops.LookupTableFindV2(table_handle=t, keys=q, default_value=d)
        out.append(Case("not initialized", uninitialized, [q, _default(vt)]))
        return out
    return cases


def _text_file(dtype):
    path = os.path.join(tempfile.gettempdir(), "dflow_conformance_vocab_%d.txt" % os.getpid())
    with open(path, "w") as f:
        f.write("apple\t3\nbanana\t5\ncherry\t7\n")
    out = []
    for ki, vi, kt, vt in [(-2, -1, "string", "int64"), (0, 1, "string", "int64"), (-1, 0, "int64", "string"),
                           (0, -2, "string", "string")]:
        def fn(tf, q, ki=ki, vi=vi, kt=kt, vt=vt):
            t = tf.raw_ops.HashTableV2(key_dtype=tf.as_dtype(kt), value_dtype=tf.as_dtype(vt), shared_name=_name())
            init = tf.raw_ops.InitializeTableFromTextFileV2(table_handle=t, filename=path, key_index=ki, value_index=vi,
                                                            delimiter="\t")
            d = tf.constant("?" if vt == "string" else -1, tf.as_dtype(vt))
            return [_after(tf, [init], lambda: tf.raw_ops.LookupTableFindV2(table_handle=t, keys=q, default_value=d)),
                    _after(tf, [init], lambda: tf.raw_ops.LookupTableSizeV2(table_handle=t))]
        q = (np.array([b"banana", b"apple", b"kiwi", b"cherry"], dtype=object) if kt == "string" else
             np.array([0, 2, 1, 5], np.int64))
        out.append(Case("key_index=%d value_index=%d" % (ki, vi), fn, [q]))

    def missing(tf, q):
        t = tf.raw_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.int64, shared_name=_name())
        init = tf.raw_ops.InitializeTableFromTextFileV2(table_handle=t, filename=path + ".missing", key_index=-2,
                                                        value_index=-1)
        return _after(tf, [init], lambda: tf.raw_ops.LookupTableSizeV2(table_handle=t))
    out.append(Case("file missing", missing, [np.array([b"a"], dtype=object)]))
    return out


def _mutable(op, kt, vt):
    def cases(dtype):
        out = []

        def fn(tf, k, v, k2, v2, r, q, d):
            t = tf.raw_ops.MutableHashTableV2(key_dtype=k.dtype, value_dtype=v.dtype, shared_name=_name())
            a = tf.raw_ops.LookupTableInsertV2(table_handle=t, keys=k, values=v)
            b = _after(tf, [a], lambda: tf.raw_ops.LookupTableInsertV2(table_handle=t, keys=k2, values=v2))
            c = _after(tf, [b], lambda: tf.raw_ops.LookupTableRemoveV2(table_handle=t, keys=r))
            found = _after(tf, [c], lambda: tf.raw_ops.LookupTableFindV2(table_handle=t, keys=q, default_value=d))
            size = _after(tf, [c], lambda: tf.raw_ops.LookupTableSizeV2(table_handle=t))
            res = [found, size]
            ek, ev = _after(tf, [c], lambda: tf.raw_ops.LookupTableExportV2(table_handle=t, Tkeys=k.dtype,
                                                                             Tvalues=v.dtype))
            res.append(tf.size(ek))
            if kt != "string":
                res.append(tf.reduce_sum(tf.cast(ek, tf.float64)))
            if vt != "string":
                res.append(tf.reduce_sum(tf.cast(ev, tf.float64)))
            return res
        k, v = _keys(kt, 5), _values(vt, 5)
        k2, v2 = _keys(kt, 3)[1:], _values(vt, 2, seed=50)  # overwrites two keys
        q = _keys(kt, 6)
        out.append(Case("insert, overwrite, remove", fn, [k, v, k2, v2, _keys(kt, 2), q, _default(vt)]))
        out.append(Case("remove missing keys", fn, [k, v, k2, v2, _keys(kt, 8)[6:], q, _default(vt)]))
        out.append(Case("insert sizes differ", fn, [k, v[:4], k2, v2, _keys(kt, 1), q, _default(vt)]))

        def imported(tf, k, v, q, d):
            t = tf.raw_ops.MutableHashTableV2(key_dtype=k.dtype, value_dtype=v.dtype, shared_name=_name())
            a = tf.raw_ops.LookupTableInsertV2(table_handle=t, keys=k[:2], values=v[:2])
            b = _after(tf, [a], lambda: tf.raw_ops.LookupTableImportV2(table_handle=t, keys=k[2:], values=v[2:]))
            return [_after(tf, [b], lambda: tf.raw_ops.LookupTableFindV2(table_handle=t, keys=q, default_value=d)),
                    _after(tf, [b], lambda: tf.raw_ops.LookupTableSizeV2(table_handle=t))]
        out.append(Case("import replaces the contents", imported, [k, v, q, _default(vt)]))
        return out
    return cases


for _kt, _vt in KV:
    SPECS.append(Spec("HashTableV2", _hash_table(_kt, _vt), dtypes=[None], grad=False))
    SPECS.append(Spec("InitializeTableV2", _hash_table(_kt, _vt), dtypes=[None], grad=False))
    SPECS.append(Spec("LookupTableFindV2", _hash_table(_kt, _vt), dtypes=[None], grad=False))
    for _op in ("MutableHashTableV2", "LookupTableInsertV2", "LookupTableRemoveV2", "LookupTableExportV2",
                "LookupTableImportV2", "LookupTableSizeV2"):
        SPECS.append(Spec(_op, _mutable(_op, _kt, _vt), dtypes=[None], grad=False))
SPECS.append(Spec("InitializeTableFromTextFileV2", _text_file, dtypes=[None], grad=False))

EXCLUDED = {}
KNOWN = {}
