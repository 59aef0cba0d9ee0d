"""tf.lookup / tf.compat.v1.lookup: lookup tables and their initializers."""
from dflow.ops.lookup_ops import (  # noqa: F401
    HashTable, IdTableWithHashBuckets, KeyValueTensorInitializer, MutableHashTable, StaticHashTable,
    StaticVocabularyTable, TextFileIdTableInitializer, TextFileIndex, TextFileInitializer,
    TextFileStringTableInitializer, index_table_from_file, index_table_from_tensor, index_to_string,
    index_to_string_table_from_file, index_to_string_table_from_tensor, tables_initializer)
from dflow.ops import lookup_ops as _lookup_ops

experimental = type(_lookup_ops)("dflow.lookup.experimental", "tf.lookup.experimental")
experimental.MutableHashTable = MutableHashTable
