"""Lookup tables in the differential suite: their state lives in per-session resources, so a
run-for-run comparison of one op says little; python/tests/conformance/test_lookup.py compares them
(TensorFlow-built graphs with tables run in both, the tf.lookup API, an Estimator's SavedModel with
a vocabulary column loaded by TensorFlow) and src/ops/lookup/lookup_ops_test.cc checks the kernels."""

SPECS = []

_REASON = ("lookup tables (stateful resources): python/tests/conformance/test_lookup.py (TensorFlow-built graphs: "
           "values, defaults, OOV buckets, text files, error classes), src/ops/lookup/lookup_ops_test.cc")

EXCLUDED = {op: _REASON for op in (
    "HashTableV2 MutableHashTableV2 LookupTableFindV2 LookupTableImportV2 LookupTableInsertV2 LookupTableRemoveV2 "
    "LookupTableSizeV2 LookupTableExportV2 InitializeTableV2 InitializeTableFromTextFileV2").split()}
