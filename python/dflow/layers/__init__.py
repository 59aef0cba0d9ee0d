"""tf.layers (tf.compat.v1.layers): TensorFlow 1.x's layers over variable_scope/get_variable."""
from dflow.layers.base import InputSpec, Layer  # noqa: F401
from dflow.layers.convolutional import Conv2D, Conv2DTranspose, conv2d, conv2d_transpose  # noqa: F401
from dflow.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten  # noqa: F401
from dflow.layers.normalization import BatchNormalization, batch_normalization  # noqa: F401
from dflow.layers.pooling import (AveragePooling2D, MaxPooling2D, average_pooling2d,  # noqa: F401
                                  max_pooling2d)

Convolution2D = Conv2D
Convolution2DTranspose = Deconvolution2D = Deconv2D = Conv2DTranspose
MaxPool2D = MaxPooling2D
AveragePool2D = AvgPool2D = AveragePooling2D

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("base", "convolutional", "core", "normalization",
                                                                    "pooling")]
