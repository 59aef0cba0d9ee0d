"""tf.data: input pipelines (TensorFlow 1.x's API over dflow's C++ datasets)."""
from dflow.data import experimental  # noqa: F401
from dflow.data.dataset_ops import (AUTOTUNE, Dataset, DatasetV1, DatasetV2, Options,  # noqa: F401
                                    TensorSpec)
from dflow.data.iterator_ops import (Iterator, get_output_classes, get_output_shapes,  # noqa: F401
                                     get_output_types, make_initializable_iterator, make_one_shot_iterator)
from dflow.data.readers import TextLineDataset, TFRecordDataset  # noqa: F401

IteratorV1 = Iterator
