"""File datasets (TextLineDataset, TFRecordDataset, CsvDataset, make_csv_dataset), decode_csv and
TFRecord files (TFRecordWriter, tf_record_iterator), over the C++ readers.

TFRecord files may be compressed as TensorFlow's are (compression_type "ZLIB" or "GZIP"); the text
and CSV datasets read plain files. Errors while reading name the file (and the line for CSV).
"""
import collections
import csv
import glob
import os

import numpy as np

from dflow import _dflow
from dflow.data import nest
from dflow.data.dataset_ops import DatasetV1, _cc_call, _int_arg
from dflow.framework import dtypes
from dflow.framework import ops


def _no_compression(compression_type):
    if compression_type not in (None, "", b""):
        raise NotImplementedError("compression_type=%r: dflow's file datasets read uncompressed files only"
                                  % (compression_type,))


def _compression(compression_type):
    """TFRecord compression_type as a string: "", "ZLIB" or "GZIP" (others are InvalidArgument)."""
    if compression_type is None:
        return ""
    if isinstance(compression_type, bytes):
        return compression_type.decode()
    return str(compression_type)


def _filenames(filenames):
    t = ops.convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
    if t.shape.ndims not in (None, 0, 1):
        raise TypeError("`filenames` must be a `tf.Tensor` of dtype `tf.string` and rank 0 or 1, got shape %s" % t.shape)
    return t


class TextLineDataset(DatasetV1):
    """The lines of text files, without their line ends."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        _no_compression(compression_type)
        f = _filenames(filenames)
        cc = _cc_call(_dflow.Dataset.text_line, ops.get_default_graph()._scope, f._out)
        DatasetV1.__init__(self, cc, None, ops.get_default_graph())


class TFRecordDataset(DatasetV1):
    """The records of TFRecord files (a damaged record is DataLossError naming file and offset)."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        f = _filenames(filenames)
        cc = _cc_call(_dflow.Dataset.tf_record, ops.get_default_graph()._scope, f._out, _compression(compression_type))
        DatasetV1.__init__(self, cc, None, ops.get_default_graph())


_CSV_DTYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


def _record_defaults(record_defaults):
    """Each default as a tensor: a dtype (a required field) is an empty tensor of that dtype."""
    out = []
    for i, d in enumerate(record_defaults):
        if isinstance(d, dtypes.DType) or (isinstance(d, type) and issubclass(d, np.generic)):
            dt = dtypes.as_dtype(d)
            if dt not in _CSV_DTYPES:
                raise TypeError("Unsupported CSV field type %s" % dt.name)
            t = ops.convert_to_tensor(np.zeros([0], dtype=object if dt == dtypes.string else dt.as_numpy_dtype),
                                      dtype=dt, name="record_default_%d" % i)
        else:
            t = ops.convert_to_tensor(d, name="record_default_%d" % i)
            if t.dtype.base_dtype not in _CSV_DTYPES:
                raise TypeError("Unsupported CSV field type %s" % t.dtype.name)
        out.append(t)
    return out


class CsvDatasetV1(DatasetV1):
    """tf.data.experimental.CsvDataset: a tuple of scalars per CSV record."""

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None, header=False,
                 field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None,
                 name=None):
        _no_compression(compression_type)
        if exclude_cols is not None:
            raise NotImplementedError("CsvDataset(exclude_cols=...): give select_cols")
        f = _filenames(filenames)
        defaults = _record_defaults(record_defaults)
        if select_cols is not None and len(select_cols) != len(defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
        cc = _cc_call(_dflow.Dataset.csv, ops.get_default_graph()._scope, f._out, [d._out for d in defaults],
                      bool(header), field_delim, bool(use_quote_delim), na_value or "",
                      [int(c) for c in (select_cols or [])], int(buffer_size or 0))
        DatasetV1.__init__(self, cc, tuple(defaults), ops.get_default_graph())


CsvDataset = CsvDatasetV1


def _infer_type(values):
    """The narrowest of int32, int64, float32, float64, string that holds every value (TensorFlow's
    make_csv_dataset inference)."""
    kinds = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64, dtypes.string]
    best = 0
    for v in values:
        if v == "":
            continue
        while best < 4:
            k = kinds[best]
            try:
                if k in (dtypes.int32, dtypes.int64):
                    x = int(v)
                    if k == dtypes.int32 and not -2**31 <= x < 2**31:
                        raise ValueError
                else:
                    x = float(v)
                    if k == dtypes.float32 and abs(x) > np.finfo(np.float32).max and np.isfinite(x):
                        raise ValueError
                break
            except ValueError:
                best += 1
    return kinds[best]


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False,
                     num_rows_for_inference=100, compression_type=None, ignore_errors=False):
    """Batches of (features dict, label) or features dicts from CSV files, as TensorFlow's
    make_csv_dataset (files matched and column types inferred when it is called)."""
    _no_compression(compression_type)
    if ignore_errors:
        raise NotImplementedError("make_csv_dataset(ignore_errors=True): dflow's CSV reader stops at a bad record")
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    files = []
    for p in patterns:
        p = p.decode() if isinstance(p, bytes) else p
        files.extend(sorted(glob.glob(p)))
    if not files:
        raise ValueError("No files match `file_pattern` %s." % (file_pattern,))
    rows = []
    with open(files[0], newline="") as fh:
        reader = csv.reader(fh, delimiter=field_delim, quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE)
        first = next(reader, None)
        for r in reader:
            if len(rows) >= num_rows_for_inference:
                break
            rows.append(r)
    if column_names is None:
        if not header:
            raise ValueError("Cannot infer column names without a header line.")
        column_names = list(first)
    elif not header and first is not None:
        rows.insert(0, first)
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError("Cannot have duplicate column names.")
    select_idx = None
    if select_columns is not None:
        select_idx = []
        for c in select_columns:
            if isinstance(c, int):
                select_idx.append(c)
            else:
                if c not in column_names:
                    raise ValueError("Value '%s' in `select_columns` not found in `column_names`." % c)
                select_idx.append(column_names.index(c))
        select_idx = sorted(select_idx)
        column_names = [column_names[i] for i in select_idx]
    if label_name is not None and label_name not in column_names:
        raise ValueError("`label_name` provided must be one of the columns.")
    if column_defaults is None:
        idx = select_idx if select_idx is not None else list(range(len(column_names)))
        column_defaults = [_infer_type([r[i] for r in rows if i < len(r)]) for i in idx]
    if len(column_defaults) != len(column_names):
        raise ValueError("The length of `column_defaults` should match the number of columns.")

    ds = CsvDatasetV1(files, column_defaults, header=header, field_delim=field_delim,
                      use_quote_delim=use_quote_delim, na_value=na_value, select_cols=select_idx)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    ds = ds.batch(batch_size, drop_remainder=num_epochs is None)

    def to_features(*columns):
        features = collections.OrderedDict(zip(column_names, columns))
        if label_name is not None:
            label = features.pop(label_name)
            return features, label
        return features
    ds = ds.map(to_features)
    if prefetch_buffer_size is not None:
        ds = ds.prefetch(prefetch_buffer_size)
    return ds


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """tf.io.decode_csv: one tensor per column, shaped like `records`."""
    g = ops.get_default_graph()
    r = ops.convert_to_tensor(records, dtype=dtypes.string, name="records")
    defaults = _record_defaults(record_defaults)
    if select_cols is not None and len(select_cols) != len(defaults):
        raise ValueError("Length of select_cols and record_defaults do not match.")
    outs = _cc_call(_dflow.decode_csv, g._scope, r._out, [d._out for d in defaults], field_delim,
                    bool(use_quote_delim), na_value or "", [int(c) for c in (select_cols or [])])
    return [g._tensor_of(o) for o in outs]


class TFRecordCompressionType:
    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB", TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, **kwargs):
        if isinstance(compression_type, int):
            compression_type = self.compression_type_map[compression_type]
        self.compression_type = compression_type or ""

    @classmethod
    def get_compression_type_string(cls, options):
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return options.compression_type
        if isinstance(options, int):
            return cls.compression_type_map[options]
        return options


class TFRecordWriter:
    """Writes records to a TFRecord file (tf.io.TFRecordWriter / tf.python_io.TFRecordWriter)."""

    def __init__(self, path, options=None):
        self._w = _dflow.RecordFileWriter(os.fspath(path),
                                          _compression(TFRecordOptions.get_compression_type_string(options)))

    def write(self, record):
        if isinstance(record, str):
            record = record.encode()
        self._w.write(bytes(record))

    def flush(self):
        self._w.flush()

    def close(self):
        self._w.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def tf_record_iterator(path, options=None):
    """The records of a TFRecord file, read now (tf.python_io.tf_record_iterator)."""
    return iter(_dflow.read_records(os.fspath(path),
                                    _compression(TFRecordOptions.get_compression_type_string(options))))
