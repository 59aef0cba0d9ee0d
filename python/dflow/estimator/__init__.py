"""tf.estimator: TensorFlow's estimators over dflow's C++ estimator loop (see estimator.py)."""
from dflow.estimator import export  # noqa: F401
from dflow.estimator import inputs  # noqa: F401
from dflow.estimator.canned import DNNClassifier, DNNRegressor, LinearClassifier, LinearRegressor  # noqa: F401
from dflow.estimator.estimator import Estimator, EstimatorSpec, ModeKeys  # noqa: F401
from dflow.estimator.run_config import RunConfig  # noqa: F401
from dflow.estimator.training import EvalSpec, TrainSpec, train_and_evaluate  # noqa: F401
