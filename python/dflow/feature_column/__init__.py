"""tf.feature_column: how raw features become a model's dense input (dflow's C++ columns)."""
from dflow.feature_column.feature_column import (  # noqa: F401
    bucketized_column, categorical_column_with_hash_bucket, categorical_column_with_identity,
    categorical_column_with_vocabulary_file, categorical_column_with_vocabulary_list, crossed_column,
    embedding_column, indicator_column, input_layer, linear_model, make_parse_example_spec, numeric_column,
    shared_embedding_columns, weighted_categorical_column)
