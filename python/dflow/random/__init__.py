"""tf.random: random tensors with TensorFlow's seed rule."""
from dflow.framework.ops import set_random_seed  # noqa: F401
from dflow.ops.random_ops import (categorical, get_seed, multinomial, random_crop as crop,  # noqa: F401
                                  random_normal as normal, random_shuffle as shuffle,
                                  random_uniform as uniform, truncated_normal)
