"""tf.initializers: the initializer classes under their short names, and the initializer ops of
variable collections."""
from dflow.ops.init_ops import (Constant as constant, GlorotNormal as glorot_normal,  # noqa: F401
                                GlorotUniform as glorot_uniform, Identity as identity, Initializer,
                                Ones as ones, Orthogonal as orthogonal, RandomNormal as random_normal,
                                RandomUniform as random_uniform, TruncatedNormal as truncated_normal,
                                UniformUnitScaling as uniform_unit_scaling, VarianceScaling as variance_scaling,
                                Zeros as zeros, he_normal, he_uniform, lecun_normal, lecun_uniform)
from dflow.ops.variables import global_variables_initializer as global_variables  # noqa: F401
from dflow.ops.variables import local_variables_initializer as local_variables  # noqa: F401
from dflow.ops.variables import variables_initializer as variables  # noqa: F401
