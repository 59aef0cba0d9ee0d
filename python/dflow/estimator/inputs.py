"""tf.estimator.inputs: input functions over numpy arrays.

numpy_input_fn returns an input_fn whose tensors come from a dataset's one-shot iterator
(TensorFlow's come from a queue); an estimator reads that dataset to its end, as TensorFlow
reads the queue until it is exhausted.
"""
import collections

import numpy as np

from dflow.data.dataset_ops import DatasetV1


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """An input_fn that feeds dict of numpy arrays (and labels) in batches."""
    if shuffle is None or not isinstance(shuffle, bool):
        raise ValueError("shuffle must be provided explicitly as a boolean, got {}".format(shuffle))
    if not isinstance(x, dict):
        raise TypeError("x must be a dict or array; got {}".format(type(x).__name__))
    if not x:
        raise ValueError("x cannot be empty")
    if isinstance(y, dict):
        raise NotImplementedError("numpy_input_fn(y=dict): dflow's estimators take one label array")
    lengths = {k: len(v) for k, v in x.items()}
    if y is not None:
        lengths["__y__"] = len(y)
    if len(set(lengths.values())) != 1:
        raise ValueError("Length of tensors in x and y is mismatched. All elements in x and y must have the same "
                         "length.")
    features = collections.OrderedDict((k, np.asarray(v)) for k, v in sorted(x.items()))

    def input_fn():
        data = (dict(features), np.asarray(y)) if y is not None else dict(features)
        ds = DatasetV1.from_tensor_slices(data)
        if shuffle:
            ds = ds.shuffle(queue_capacity)
        ds = ds.repeat(num_epochs)
        ds = ds.batch(batch_size)
        return ds.make_one_shot_iterator().get_next()
    return input_fn
