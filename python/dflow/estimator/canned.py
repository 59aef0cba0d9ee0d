"""The canned estimators: DNNClassifier, DNNRegressor, LinearClassifier, LinearRegressor.

Each is the C++ canned model function (dflow/canned.h: the network, TensorFlow's heads, variable
names and default optimizers) run by the C++ estimator loop; the Python classes take
TensorFlow 1.x's arguments and defaults (loss_reduction=SUM, Adagrad(0.05) for DNNs, FTRL for
linear models).

Predictions per example: "logits", "probabilities", "class_ids", "classes" (and "logistic" for
two classes), plus "all_class_ids" and "all_classes" as TensorFlow 1.15 gives them; regressors
give "predictions". Evaluation: "accuracy", "average_loss", "loss", "global_step" for several
classes (two classes add "accuracy_baseline", "label/mean", "prediction/mean"; dflow has no
"auc", "precision" or "recall" there); regressors "average_loss", "loss", "label/mean",
"prediction/mean", "global_step".
"""
import math

import numpy as np

from dflow import _dflow
from dflow.estimator.estimator import Estimator
from dflow.feature_column.feature_column import _FeatureColumn

_DNN_LEARNING_RATE = 0.05
_LINEAR_LEARNING_RATE = 0.2

SUM = "weighted_sum"
SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"


def _reduction(loss_reduction):
    r = getattr(loss_reduction, "value", loss_reduction)
    if r not in (SUM, SUM_OVER_BATCH_SIZE):
        raise ValueError("Invalid loss_reduction: %s. dflow's canned estimators take SUM or SUM_OVER_BATCH_SIZE."
                         % (loss_reduction,))
    return r


def _columns(feature_columns):
    if feature_columns is None:
        raise ValueError("feature_columns must be set")
    cols = list(feature_columns) if not isinstance(feature_columns, _FeatureColumn) else [feature_columns]
    if not cols:
        raise ValueError("feature_columns must not be empty")
    for c in cols:
        if not isinstance(c, _FeatureColumn):
            raise ValueError("Items of feature_columns must be a FeatureColumn. Given (type %s): %s." % (type(c), c))
    return cols


def _optimizer(optimizer):
    """A short name ('Adagrad', ...), or a factory making a fresh C++ optimizer for each graph (the
    estimator builds one graph per call) from a tf.train optimizer or a function returning one."""
    if isinstance(optimizer, str):
        return optimizer
    if hasattr(optimizer, "minimize"):
        return lambda: _cc_optimizer_of(optimizer)
    if callable(optimizer):
        return lambda: _cc_optimizer_of(optimizer())
    raise ValueError("The given object is not an Optimizer instance. Given: %s" % (optimizer,))


def _cc_optimizer_of(opt):
    make = getattr(opt, "_make_cpp", None)
    if make is None:
        raise ValueError("The given object is not an Optimizer instance. Given: %s" % (opt,))
    return make()


def _activation(activation_fn):
    if activation_fn is None:
        return None
    try:
        from dflow import nn
        if activation_fn is getattr(nn, "relu", None):
            return None  # the C++ default
    except ImportError:  # pragma: no cover
        pass
    from dflow.feature_column.feature_column import _unary_in_scope
    return _unary_in_scope(activation_fn)


def _unsupported(**kwargs):
    for name, value in kwargs.items():
        if value is not None and value is not False:
            raise NotImplementedError("%s=%r: not supported by dflow's canned estimators" % (name, value))


class _Canned(Estimator):
    def __init__(self, make_cc, model_dir, config):
        self._make = make_cc
        Estimator.__init__(self, None, model_dir=model_dir, config=config)

    def _make_cc(self, cc_config):
        return self._make(cc_config)


class _Classifier(_Canned):
    def _extend_prediction(self, row, keys):
        if keys and "all_class_ids" not in keys and "all_classes" not in keys:
            return row
        n = self._n_classes
        if not keys or "all_class_ids" in keys:
            row["all_class_ids"] = np.arange(n, dtype=np.int32)
        if not keys or "all_classes" in keys:
            row["all_classes"] = np.array([str(i).encode() for i in range(n)], dtype=object)
        return row

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True):
        if isinstance(predict_keys, str):
            predict_keys = [predict_keys]
        keys = None
        if predict_keys:
            keys = [k for k in predict_keys if k not in ("all_class_ids", "all_classes")]
            if not keys:  # only the class lists: still read the input
                keys = ["class_ids"]
        gen = Estimator.predict(self, input_fn, keys, hooks, checkpoint_path, yield_single_examples)
        for row in gen:
            if predict_keys:
                row = {k: v for k, v in row.items() if k in predict_keys}
                self._extend_prediction(row, predict_keys)
            yield row


class DNNClassifier(_Classifier):
    """A classifier for TensorFlow DNN models."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Adagrad", activation_fn="relu", dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None, loss_reduction=SUM,
                 batch_norm=False):
        _unsupported(weight_column=weight_column, label_vocabulary=label_vocabulary,
                     input_layer_partitioner=input_layer_partitioner, warm_start_from=warm_start_from,
                     batch_norm=batch_norm)
        if n_classes < 2:
            raise ValueError("n_classes must be > 1. Given: {}".format(n_classes))
        self._n_classes = n_classes
        _Canned.__init__(self, _dnn_estimator(True, n_classes, hidden_units, feature_columns, activation_fn, dropout,
                                              optimizer, loss_reduction), model_dir, config)


def _dnn_estimator(classifier, n, hidden_units, feature_columns, activation_fn, dropout, optimizer,
                   loss_reduction):
    """What builds the C++ DNN estimator of a DNNClassifier (n classes) or DNNRegressor (n: the label
    dimension), given its RunConfig."""
    cols = _columns(feature_columns)
    act = None if activation_fn == "relu" else _activation(activation_fn)
    opt, red = _optimizer(optimizer), _reduction(loss_reduction)
    units = [int(u) for u in hidden_units]
    return lambda c: _dflow.dnn_estimator(classifier, int(n), units, [x._cc for x in cols], act,
                                          float(dropout or 0.0), opt, _DNN_LEARNING_RATE, red, c)


class DNNRegressor(_Canned):
    """A regressor for TensorFlow DNN models."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Adagrad", activation_fn="relu", dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=SUM, batch_norm=False):
        _unsupported(weight_column=weight_column, input_layer_partitioner=input_layer_partitioner,
                     warm_start_from=warm_start_from, batch_norm=batch_norm)
        if label_dimension < 1:
            raise ValueError("Invalid label_dimension {}.".format(label_dimension))
        _Canned.__init__(self, _dnn_estimator(False, label_dimension, hidden_units, feature_columns, activation_fn,
                                              dropout, optimizer, loss_reduction), model_dir, config)


def _linear_lr(cols):
    return min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(len(cols)))


class LinearClassifier(_Classifier):
    """Linear classifier model."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None, label_vocabulary=None,
                 optimizer="Ftrl", config=None, partitioner=None, warm_start_from=None, loss_reduction=SUM,
                 sparse_combiner="sum"):
        _unsupported(weight_column=weight_column, label_vocabulary=label_vocabulary, partitioner=partitioner,
                     warm_start_from=warm_start_from)
        if n_classes < 2:
            raise ValueError("n_classes must be > 1. Given: {}".format(n_classes))
        cols = _columns(feature_columns)
        self._n_classes = n_classes
        opt = None if optimizer == "Ftrl" else _optimizer(optimizer)
        red = _reduction(loss_reduction)
        _Canned.__init__(self, lambda c: _dflow.linear_estimator(
            True, int(n_classes), [x._cc for x in cols], sparse_combiner, opt, _linear_lr(cols), red, c),
            model_dir, config)


class LinearRegressor(_Canned):
    """An estimator for TensorFlow Linear regression problems."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None, optimizer="Ftrl",
                 config=None, partitioner=None, warm_start_from=None, loss_reduction=SUM, sparse_combiner="sum"):
        _unsupported(weight_column=weight_column, partitioner=partitioner, warm_start_from=warm_start_from)
        if label_dimension < 1:
            raise ValueError("Invalid label_dimension {}.".format(label_dimension))
        cols = _columns(feature_columns)
        opt = None if optimizer == "Ftrl" else _optimizer(optimizer)
        red = _reduction(loss_reduction)
        _Canned.__init__(self, lambda c: _dflow.linear_estimator(
            False, int(label_dimension), [x._cc for x in cols], sparse_combiner, opt, _linear_lr(cols), red, c),
            model_dir, config)

