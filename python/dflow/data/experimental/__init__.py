"""tf.data.experimental: the parts dflow has."""
from dflow.data.dataset_ops import AUTOTUNE  # noqa: F401
from dflow.data.iterator_ops import get_structure  # noqa: F401
from dflow.data.readers import CsvDataset, make_csv_dataset  # noqa: F401


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """A transformation for Dataset.apply: shuffle, then repeat (reshuffling every epoch)."""
    def apply(dataset):
        return dataset.shuffle(buffer_size, seed=seed).repeat(count)
    return apply


def ignore_errors(*args, **kwargs):
    raise NotImplementedError("tf.data.experimental.ignore_errors: dflow has no IgnoreErrorsDataset op")
