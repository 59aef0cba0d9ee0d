"""tf.image resizing (TensorFlow 1.x's names and signatures): resize_bilinear,
resize_nearest_neighbor, resize_images (method=ResizeMethod.BILINEAR / NEAREST_NEIGHBOR) and
resize (TensorFlow 1.x's tf.image.resize is resize_images); resize_images_v2 has TensorFlow 2's
semantics (half-pixel centers). Bicubic and area resizing are not available in dflow."""
import numpy as np

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.ops import array_ops
from dflow.ops import math_ops


class ResizeMethod:
    """TensorFlow 1.x's resize methods (integers)."""
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


class ResizeMethodV2:
    """TensorFlow 2's resize methods (strings)."""
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Bilinear resizing of 4-D NHWC images to size [new_height, new_width]; float32 output."""
    return ops.apply_op("ResizeBilinear", name or "ResizeBilinear", [images, ops.convert_to_tensor(size, dtypes.int32)],
                        {"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)})


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Nearest-neighbour resizing of 4-D NHWC images to size [new_height, new_width]."""
    return ops.apply_op("ResizeNearestNeighbor", name or "ResizeNearestNeighbor",
                        [images, ops.convert_to_tensor(size, dtypes.int32)],
                        {"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)})


def _const_size(size):
    """(height, width) of `size` where they are known while building, else None each."""
    if isinstance(size, ops.Tensor):
        if size.op.type != "Const":
            return None, None
        try:
            v = np.asarray(size.op.get_attr("value")).reshape(-1)
        except Exception:  # noqa: BLE001 - an unreadable constant is an unknown one
            return None, None
    else:
        v = np.asarray(size).reshape(-1)
    if v.size != 2:
        return None, None
    return int(v[0]), int(v[1])


def _resize_common(images, resizer, size, preserve_aspect_ratio, name, skip_resize_if_same):
    with ops.name_scope(name, "resize", [images, size]):
        images = ops.convert_to_tensor(images, name="images")
        ndims = images.get_shape().ndims
        if ndims is None:
            raise ValueError("'images' contains no shape.")
        is_batch = True
        if ndims == 3:
            is_batch = False
            images = array_ops.expand_dims(images, 0)
        elif ndims != 4:
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        _, height, width, _ = images.get_shape().as_list()
        try:
            size = ops.convert_to_tensor(size, dtypes.int32, name="size")
        except (TypeError, ValueError) as e:
            raise ValueError("'size' must be a 1-D int32 Tensor") from e
        if not size.get_shape().is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        new_height, new_width = _const_size(size)
        if preserve_aspect_ratio:
            shape = array_ops.shape(images)
            cur_h = math_ops.cast(shape[1], dtypes.float32)
            cur_w = math_ops.cast(shape[2], dtypes.float32)
            factor = math_ops.minimum(math_ops.cast(size[0], dtypes.float32) / cur_h,
                                      math_ops.cast(size[1], dtypes.float32) / cur_w)
            scaled_h = math_ops.cast(math_ops.round(factor * cur_h), dtypes.int32)
            scaled_w = math_ops.cast(math_ops.round(factor * cur_w), dtypes.int32)
            size = array_ops.stack([scaled_h, scaled_w], name="size")
            if None not in (new_height, new_width, height, width):
                f = min(new_height / height, new_width / width)
                new_height, new_width = int(round(f * height)), int(round(f * width))
            else:
                new_height = new_width = None
        if (skip_resize_if_same and None not in (new_width, width, new_height, height) and width == new_width
                and height == new_height):
            if not is_batch:
                images = array_ops.squeeze(images, axis=[0])
            return images
        images = resizer(images, size)
        images.set_shape(tensor_shape.TensorShape([None, new_height, new_width, None]))
        if not is_batch:
            images = array_ops.squeeze(images, axis=[0])
        return images


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None):
    """TensorFlow 1.x's resize_images: 3-D or 4-D images to `size` with `method` (BILINEAR or
    NEAREST_NEIGHBOR); unchanged when the size is already the static one."""
    def resizer(images_t, new_size):
        if method in (ResizeMethod.BILINEAR, "bilinear"):
            return resize_bilinear(images_t, new_size, align_corners=align_corners)
        if method in (ResizeMethod.NEAREST_NEIGHBOR, "nearest"):
            return resize_nearest_neighbor(images_t, new_size, align_corners=align_corners)
        if method in (ResizeMethod.BICUBIC, ResizeMethod.AREA, "bicubic", "area"):
            raise NotImplementedError("dflow has no ResizeBicubic or ResizeArea op: resize_images supports the "
                                      "BILINEAR and NEAREST_NEIGHBOR methods")
        raise ValueError("Resize method is not implemented: %r" % (method,))
    return _resize_common(images, resizer, size, preserve_aspect_ratio, name, skip_resize_if_same=True)


def resize_images_v2(images, size, method=ResizeMethodV2.BILINEAR, preserve_aspect_ratio=False, antialias=False,
                     name=None):
    """TensorFlow 2's tf.image.resize: half-pixel centers, bilinear or nearest only."""
    if antialias and method != ResizeMethodV2.NEAREST_NEIGHBOR:
        raise NotImplementedError("dflow's resize_images_v2 does not antialias")

    def resizer(images_t, new_size):
        if method == ResizeMethodV2.BILINEAR:
            return resize_bilinear(images_t, new_size, half_pixel_centers=True)
        if method == ResizeMethodV2.NEAREST_NEIGHBOR:
            return resize_nearest_neighbor(images_t, new_size, half_pixel_centers=True)
        if method in (ResizeMethodV2.BICUBIC, ResizeMethodV2.AREA, ResizeMethodV2.LANCZOS3, ResizeMethodV2.LANCZOS5,
                      ResizeMethodV2.GAUSSIAN, ResizeMethodV2.MITCHELLCUBIC):
            raise NotImplementedError("dflow's resize_images_v2 supports the bilinear and nearest methods only")
        raise ValueError("Resize method is not implemented: %r" % (method,))
    return _resize_common(images, resizer, size, preserve_aspect_ratio, name, skip_resize_if_same=False)


# TensorFlow 1.x: tf.image.resize is resize_images.
resize = resize_images

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("np", "dtypes", "ops", "tensor_shape",
                                                                   "array_ops", "math_ops")]
