"""tf.layers (tf.compat.v1.layers): TensorFlow 1.x's layers over variable_scope/get_variable."""
from dflow.layers.base import InputSpec, Layer  # noqa: F401
from dflow.layers.convolutional import (Conv1D, Conv2D, Conv2DTranspose, conv1d, conv2d,  # noqa: F401
                                        conv2d_transpose)
from dflow.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten  # noqa: F401
from dflow.layers.normalization import BatchNormalization, batch_normalization  # noqa: F401
from dflow.layers.pooling import (AveragePooling1D, AveragePooling2D, MaxPooling1D, MaxPooling2D,  # noqa: F401
                                  average_pooling1d, average_pooling2d, max_pooling1d, max_pooling2d)

Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution2DTranspose = Deconvolution2D = Deconv2D = Conv2DTranspose
MaxPool1D = MaxPooling1D
MaxPool2D = MaxPooling2D
AveragePool1D = AvgPool1D = AveragePooling1D
AveragePool2D = AvgPool2D = AveragePooling2D

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("base", "convolutional", "core", "normalization",
                                                                    "pooling")]
