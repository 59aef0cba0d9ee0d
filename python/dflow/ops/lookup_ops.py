"""tf.lookup (TensorFlow 1.x's lookup_ops): static hash tables filled by initializers, mutable
hash tables, and the index tables of vocabularies, over the ops HashTableV2, MutableHashTableV2,
LookupTableFindV2, InitializeTableV2, InitializeTableFromTextFileV2, ...

The graphs are TensorFlow 1.15's: a table's initializer is added to the TABLE_INITIALIZERS
collection, which tf.tables_initializer() groups (and the default local_init_op of a Scaffold
and the SavedModel main op run); index tables with num_oov_buckets map unknown keys to
size + StringToHashBucketFast(key) (Fingerprint64), as TensorFlow does.
"""
import uuid

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import sparse_tensor
from dflow.ops import gen_ops


def _gen():
    return gen_ops


class TextFileIndex:
    """Special column indices of a text file: the whole line, or the line number."""
    WHOLE_LINE = -2
    LINE_NUMBER = -1


class LookupInterface:
    """A lookup table: key and value dtypes, lookup and size."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype

    @property
    def name(self):
        return self._name

    def size(self, name=None):
        raise NotImplementedError

    def lookup(self, keys, name=None):
        raise NotImplementedError


def _check_key(table, keys):
    keys = ops.convert_to_tensor(keys, dtype=table._key_dtype if not isinstance(keys, ops.Tensor) else None,
                                 name="keys")
    if keys.dtype.base_dtype != table._key_dtype:
        raise TypeError("Signature mismatch. Keys must be dtype %s, got %s." % (table._key_dtype, keys.dtype))
    return keys


class InitializableLookupTableBase(LookupInterface):
    """A table filled once by its initializer (TensorFlow's InitializableLookupTableBaseV1)."""

    def __init__(self, default_value, initializer):
        super().__init__(initializer.key_dtype, initializer.value_dtype)
        self._default_value = ops.convert_to_tensor(default_value, dtype=self._value_dtype)
        self._initializer = initializer
        self._resource_handle = self._create_resource()
        self._init_op = initializer.initialize(self)

    @property
    def resource_handle(self):
        return self._resource_handle

    @property
    def initializer(self):
        return self._init_op

    @property
    def init(self):
        return self._init_op

    @property
    def default_value(self):
        return self._default_value

    def size(self, name=None):
        with ops.name_scope(name, "%s_Size" % self.name, [self.resource_handle]):
            return gen_ops.lookup_table_size_v2(self.resource_handle)

    def lookup(self, keys, name=None):
        values = keys
        if isinstance(keys, sparse_tensor.SparseTensor):
            values = keys.values
        with ops.name_scope(name, "%s_Lookup" % self.name, [self.resource_handle]):
            values = _check_key(self, values)
            out = gen_ops.lookup_table_find_v2(self.resource_handle, values, self._default_value)
        if isinstance(keys, sparse_tensor.SparseTensor):
            return sparse_tensor.SparseTensor(keys.indices, out, keys.dense_shape)
        return out


class StaticHashTable(InitializableLookupTableBase):
    """A hash table whose contents come from its initializer (HashTableV2)."""

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        self._name = name or "hash_table"
        self._shared_name = initializer._shared_name or "hash_table_%s" % (uuid.uuid4(),)
        super().__init__(default_value, initializer)

    def _create_resource(self):
        return gen_ops.hash_table_v2(shared_name=self._shared_name, key_dtype=self._initializer.key_dtype,
                                     value_dtype=self._initializer.value_dtype, name=self._name)

    def export(self, name=None):
        with ops.name_scope(name, "%s_Export" % self.name, [self.resource_handle]):
            return gen_ops.lookup_table_export_v2(self.resource_handle, self._key_dtype, self._value_dtype)


HashTable = StaticHashTable


class TableInitializerBase:
    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype

    @property
    def _shared_name(self):
        return None


class KeyValueTensorInitializer(TableInitializerBase):
    """Keys and values given as tensors (InitializeTableV2)."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        with ops.name_scope(name, "key_value_init", [keys, values]) as scope:
            self._keys = ops.convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = ops.convert_to_tensor(values, dtype=value_dtype, name="values")
            self._name = scope
        super().__init__(self._keys.dtype.base_dtype, self._values.dtype.base_dtype)

    def initialize(self, table):
        if table.key_dtype != self._key_dtype or table.value_dtype != self._value_dtype:
            raise TypeError("Signature mismatch. Keys must be dtype %s, got %s. Values must be dtype %s, got %s."
                            % (table.key_dtype, self._key_dtype, table.value_dtype, self._value_dtype))
        with ops.name_scope(self._name, values=(table.resource_handle, self._keys, self._values)):
            init_op = gen_ops.initialize_table_v2(table.resource_handle, self._keys, self._values)
        ops.add_to_collection(ops.GraphKeys.TABLE_INITIALIZERS, init_op)
        return init_op


class TextFileInitializer(TableInitializerBase):
    """Keys and values from the columns of a text file (InitializeTableFromTextFileV2)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None,
                 delimiter="\t", name=None, value_index_offset=0):
        if not isinstance(filename, ops.Tensor) and not filename:
            raise ValueError("Filename required for %s." % name)
        key_dtype = dtypes.as_dtype(key_dtype)
        value_dtype = dtypes.as_dtype(value_dtype)
        if key_index < -2:
            raise ValueError("Invalid key index %s." % key_index)
        if key_index == TextFileIndex.LINE_NUMBER and key_dtype != dtypes.int64:
            raise ValueError("Signature mismatch. Keys must be dtype %s, got %s." % (dtypes.int64, key_dtype))
        if key_index == TextFileIndex.WHOLE_LINE and not key_dtype.is_integer and key_dtype != dtypes.string:
            raise ValueError("Signature mismatch. Keys must be integer or string, got %s." % key_dtype)
        if value_index < -2:
            raise ValueError("Invalid value index %s." % value_index)
        if value_index == TextFileIndex.LINE_NUMBER and value_dtype != dtypes.int64:
            raise ValueError("Signature mismatch. Values must be dtype %s, got %s." % (dtypes.int64, value_dtype))
        if value_index == TextFileIndex.WHOLE_LINE and value_dtype != dtypes.string:
            raise ValueError("Signature mismatch. Values must be dtype %s, got %s." % (dtypes.string, value_dtype))
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError("Invalid vocab_size %s." % vocab_size)
        self._filename = filename
        self._key_index = key_index
        self._value_index = value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._name = name
        self._offset = value_index_offset
        super().__init__(key_dtype, value_dtype)

    def initialize(self, table):
        with ops.name_scope(self._name, "text_file_init", (table.resource_handle,)):
            filename = ops.convert_to_tensor(self._filename, dtypes.string, name="asset_filepath")
            init_op = gen_ops.initialize_table_from_text_file_v2(
                table.resource_handle, filename, self._key_index, self._value_index,
                -1 if self._vocab_size is None else self._vocab_size, self._delimiter, self._offset)
        ops.add_to_collection(ops.GraphKeys.TABLE_INITIALIZERS, init_op)
        if not isinstance(self._filename, ops.Tensor):  # a constant file name: an asset, as in TensorFlow
            ops.add_to_collection(ops.GraphKeys.ASSET_FILEPATHS, filename)
        return init_op

    @property
    def _shared_name(self):
        if isinstance(self._filename, ops.Tensor):
            return None
        fn = self._filename.decode() if isinstance(self._filename, bytes) else self._filename
        if self._vocab_size:
            name = "hash_table_%s_%d_%s_%s" % (fn, self._vocab_size, self._key_index, self._value_index)
        else:
            name = "hash_table_%s_%s_%s" % (fn, self._key_index, self._value_index)
        if self._offset:
            name += "_%s" % self._offset
        return name


class TextFileStringTableInitializer(TextFileInitializer):
    def __init__(self, filename, key_column_index=TextFileIndex.LINE_NUMBER,
                 value_column_index=TextFileIndex.WHOLE_LINE, vocab_size=None, delimiter="\t", name="text_file_string_table_init"):
        super().__init__(filename, dtypes.int64, key_column_index, dtypes.string, value_column_index,
                         vocab_size=vocab_size, delimiter=delimiter, name=name)


class TextFileIdTableInitializer(TextFileInitializer):
    def __init__(self, filename, key_column_index=TextFileIndex.WHOLE_LINE,
                 value_column_index=TextFileIndex.LINE_NUMBER, vocab_size=None, delimiter="\t",
                 name="text_file_id_table_init", key_dtype=dtypes.string):
        super().__init__(filename, key_dtype, key_column_index, dtypes.int64, value_column_index,
                         vocab_size=vocab_size, delimiter=delimiter, name=name)


class HasherSpec:
    def __init__(self, hasher, key):
        self.hasher = hasher
        self.key = key


FastHashSpec = HasherSpec("fasthash", None)


def _as_string(t):
    if t.dtype.base_dtype == dtypes.string:
        return t
    return gen_ops.as_string(t)


class IdTableWithHashBuckets(LookupInterface):
    """An id table whose unknown keys go to num_oov_buckets hash buckets after its ids."""

    def __init__(self, table, num_oov_buckets, hasher_spec=FastHashSpec, name=None, key_dtype=None):
        if not table and not key_dtype:
            raise ValueError("Must specify key_dtype if no table is specified.")
        if hasher_spec is not FastHashSpec and getattr(hasher_spec, "hasher", None) != "fasthash":
            raise ValueError("dflow supports only the fast (Fingerprint64) hasher of StringToHashBucketFast, "
                             "got %r" % (hasher_spec,))
        self._table = table
        self._num_oov_buckets = num_oov_buckets
        self._hasher_spec = hasher_spec
        if name:
            self._name = name
        elif table:
            self._name = table.name + "_hash_bucket"
        else:
            self._name = "hash_bucket"
        key_dtype = dtypes.as_dtype(key_dtype) if key_dtype else None
        if table:
            if key_dtype is None:
                key_dtype = table.key_dtype
            if table.key_dtype not in (dtypes.string, dtypes.int64) or \
                    (table.key_dtype == dtypes.int64 and key_dtype not in (dtypes.int32, dtypes.int64)) or \
                    (table.key_dtype == dtypes.string and key_dtype != dtypes.string):
                raise TypeError("Invalid key dtype %s for table key dtype %s" % (key_dtype, table.key_dtype))
        super().__init__(key_dtype, dtypes.int64)

    @property
    def init(self):
        return self._table.init if self._table else gen_ops.no_op()

    @property
    def initializer(self):
        return self.init

    @property
    def resource_handle(self):
        return self._table.resource_handle if self._table else None

    def size(self, name=None):
        with ops.name_scope(name, "%s_Size" % self.name):
            if self._table:
                return self._table.size() + self._num_oov_buckets
            return ops.convert_to_tensor(self._num_oov_buckets, dtypes.int64)

    def lookup(self, keys, name=None):
        from dflow.ops import array_ops, math_ops
        values = keys.values if isinstance(keys, sparse_tensor.SparseTensor) else keys
        values = ops.convert_to_tensor(values)
        if values.dtype.base_dtype != self._key_dtype:
            raise TypeError("Signature mismatch. Keys must be dtype %s, got %s." % (self._key_dtype, values.dtype))
        if self._table and self._table.key_dtype == dtypes.int64:
            values = math_ops.cast(values, dtypes.int64)
        if self._num_oov_buckets == 0:
            ids = self._table.lookup(values, name=name)
        else:
            with ops.name_scope(name, "%s_Lookup" % self.name):
                buckets = gen_ops.string_to_hash_bucket_fast(_as_string(values), num_buckets=self._num_oov_buckets,
                                                             name="hash_bucket")
                if self._table:
                    ids = self._table.lookup(values)
                    buckets = math_ops.add(buckets, self._table.size())
                    is_id_non_default = math_ops.not_equal(ids, self._table.default_value)
                    ids = array_ops.where_v2(is_id_non_default, ids, buckets)
                else:
                    ids = buckets
        if isinstance(keys, sparse_tensor.SparseTensor):
            return sparse_tensor.SparseTensor(keys.indices, ids, keys.dense_shape)
        return ids


class StaticVocabularyTable(IdTableWithHashBuckets):
    """A vocabulary table with OOV buckets (TensorFlow's StaticVocabularyTableV1)."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None):
        if num_oov_buckets <= 0:
            raise ValueError("oov_buckets must be > 0.")
        table = StaticHashTable(initializer, -1) if initializer else None
        super().__init__(table, num_oov_buckets, name=name, key_dtype=lookup_key_dtype)


def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1, hasher_spec=FastHashSpec,
                            dtype=dtypes.string, name=None):
    """A table of the ids of vocabulary_list's entries (their positions), unknown keys mapping to
    default_value or, with num_oov_buckets, to size + a hash bucket."""
    from dflow.ops import array_ops, math_ops
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    if num_oov_buckets < 0:
        raise ValueError("num_oov_buckets must be greater or equal than 0, got %d." % num_oov_buckets)
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_integer and dtype != dtypes.string:
        raise TypeError("Invalid key dtype, expected integer or string, got %s." % dtype)
    with ops.name_scope(name, "string_to_index"):
        keys = ops.convert_to_tensor(vocabulary_list)
        if keys.dtype.is_integer != dtype.is_integer:
            raise ValueError("Expected %s, got %s." % ("integer" if dtype.is_integer else "non-integer", keys.dtype))
        if (not dtype.is_integer) and (keys.dtype.base_dtype != dtype):
            raise ValueError("Expected %s, got %s." % (dtype, keys.dtype))
        num_elements = array_ops.size(keys)
        values = math_ops.cast(math_ops.range(num_elements), dtypes.int64)
        with ops.name_scope(None, "hash_table"):
            table_keys = math_ops.cast(keys, dtypes.int64) if keys.dtype.is_integer else keys
            init = KeyValueTensorInitializer(table_keys, values, table_keys.dtype.base_dtype, dtypes.int64,
                                             name="table_init")
            table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets=num_oov_buckets, hasher_spec=hasher_spec,
                                           key_dtype=dtype)
        return table


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None, default_value=-1,
                          hasher_spec=FastHashSpec, key_dtype=dtypes.string, name=None, key_column_index=-2,
                          value_column_index=-1, delimiter="\t"):
    """A table of the ids of a vocabulary file's lines (their line numbers)."""
    if vocabulary_file is None or (isinstance(vocabulary_file, (str, bytes)) and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    if num_oov_buckets < 0:
        raise ValueError("num_oov_buckets must be greater or equal than 0, got %d." % num_oov_buckets)
    if vocab_size is not None and vocab_size < 1:
        raise ValueError("vocab_size must be greater than 0, got %d." % vocab_size)
    key_dtype = dtypes.as_dtype(key_dtype)
    if not key_dtype.is_integer and key_dtype != dtypes.string:
        raise TypeError("Invalid key dtype, expected integer or string, got %s." % key_dtype)
    with ops.name_scope(name, "string_to_index"):
        table = None
        with ops.name_scope(None, "hash_table"):
            init = TextFileIdTableInitializer(
                vocabulary_file, vocab_size=vocab_size,
                key_dtype=dtypes.int64 if key_dtype.is_integer else key_dtype, name="table_init",
                key_column_index=key_column_index, value_column_index=value_column_index, delimiter=delimiter)
            table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets=num_oov_buckets, hasher_spec=hasher_spec,
                                           key_dtype=key_dtype)
        return table


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """A table of the strings of vocabulary_list by their positions."""
    from dflow.ops import array_ops, math_ops
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    with ops.name_scope(name, "index_to_string"):
        vocabulary_list = ops.convert_to_tensor(vocabulary_list, dtypes.string)
        num_elements = array_ops.size(vocabulary_list)
        keys = math_ops.cast(math_ops.range(num_elements), dtypes.int64)
        init = KeyValueTensorInitializer(keys, vocabulary_list, dtypes.int64, dtypes.string, name="table_init")
        return StaticHashTable(init, default_value)


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK", name=None,
                                    key_column_index=-1, value_column_index=-2, delimiter="\t"):
    """A table of a vocabulary file's lines by their line numbers."""
    if vocabulary_file is None or (isinstance(vocabulary_file, (str, bytes)) and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError("vocab_size must be greater than 0, got %d." % vocab_size)
    with ops.name_scope(name, "index_to_string"):
        init = TextFileStringTableInitializer(vocabulary_file, vocab_size=vocab_size, name="table_init",
                                              key_column_index=key_column_index,
                                              value_column_index=value_column_index, delimiter=delimiter)
        return StaticHashTable(init, default_value)


def index_to_string(tensor, mapping, default_value="UNK", name=None):
    table = index_to_string_table_from_tensor(vocabulary_list=mapping, default_value=default_value, name=name)
    return table.lookup(tensor)


class MutableHashTable(LookupInterface):
    """A table that takes inserts and removals (MutableHashTableV2); scalar values."""

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable", checkpoint=True):
        super().__init__(key_dtype, value_dtype)
        self._default_value = ops.convert_to_tensor(default_value, dtype=self._value_dtype)
        if self._default_value.shape.ndims not in (None, 0):
            raise ValueError("dflow's MutableHashTable holds scalar values only (default_value of shape %s)"
                             % self._default_value.shape)
        self._name = name
        self._resource_handle = gen_ops.mutable_hash_table_v2(
            key_dtype=self._key_dtype, value_dtype=self._value_dtype, use_node_name_sharing=True, name=name)

    @property
    def resource_handle(self):
        return self._resource_handle

    def size(self, name=None):
        with ops.name_scope(name, "%s_Size" % self.name):
            return gen_ops.lookup_table_size_v2(self._resource_handle)

    def lookup(self, keys, dynamic_default_values=None, name=None):
        with ops.name_scope(name, "%s_lookup_table_find" % self.name):
            keys = _check_key(self, keys)
            dflt = self._default_value if dynamic_default_values is None else dynamic_default_values
            return gen_ops.lookup_table_find_v2(self._resource_handle, keys, dflt)

    def insert(self, keys, values, name=None):
        with ops.name_scope(name, "%s_lookup_table_insert" % self.name):
            keys = _check_key(self, keys)
            values = ops.convert_to_tensor(values, self._value_dtype, name="values")
            return gen_ops.lookup_table_insert_v2(self._resource_handle, keys, values)

    def remove(self, keys, name=None):
        with ops.name_scope(name, "%s_lookup_table_remove" % self.name):
            keys = _check_key(self, keys)
            return gen_ops.lookup_table_remove_v2(self._resource_handle, keys)

    def export(self, name=None):
        with ops.name_scope(name, "%s_lookup_table_export_values" % self.name):
            return gen_ops.lookup_table_export_v2(self._resource_handle, self._key_dtype, self._value_dtype)


def table_initializer_ops(graph=None):
    """The graph's TABLE_INITIALIZERS collection, with the initializers of the tables that C++
    builders (feature columns) made in the graph."""
    from dflow import _dflow
    g = graph if graph is not None else ops.get_default_graph()
    out = list(g.get_collection(ops.GraphKeys.TABLE_INITIALIZERS))
    names = {getattr(o, "name", None) for o in out}
    scope = getattr(g, "_scope", None)
    if scope is not None:
        for n in _dflow.scope_collections(scope).get("table_initializers", []):
            op = g._wrap(n)
            if op.name not in names:
                names.add(op.name)
                out.append(op)
    return out


def tables_initializer(name="init_all_tables"):
    """Groups the initializers of the graph's tables (the TABLE_INITIALIZERS collection)."""
    from dflow.ops import control_flow_ops
    initializers = table_initializer_ops()
    if initializers:
        return control_flow_ops.group(*initializers, name=name)
    return gen_ops.no_op(name=name)


initialize_all_tables = tables_initializer
