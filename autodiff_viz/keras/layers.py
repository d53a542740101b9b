"""Keras-style layers: modules that create their weights on the first call."""
from __future__ import annotations

import contextlib
import functools
import inspect
import math
import numbers
import re

from .. import _nn_ops, _ops, nn
from .._dtypes import as_dtype
from .._missing import missing_api as _missing_api
from .._module import Module, unique_name
from .._tensor import ResourceVariable, Tensor, as_tensor
from . import activations, initializers


def _keras_snake_case(name: str) -> str:
    """Keras's layer names: ``Conv2D`` -> ``conv2d``, ``MaxPooling2D`` -> ``max_pooling2d`` (tf.Module's differ)."""
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


class Layer(Module):
    """A module whose weights are created by ``build(input_shape)`` on the first call.

    Subclasses implement ``build`` (calling ``add_weight``) and ``call``.
    Calling a layer runs ``call`` inside ``ad.name_scope(layer.name)``, so
    graphs fold the layer's ops into one box.  ``variables`` lists the
    layer's own weights in creation order, then those of its sub-layers.
    """

    def __init__(self, name=None, dtype="float32", trainable=True, input_shape=None, input_dim=None):
        # Keras keeps name='' as given (a tutorial's ``super().__init__(name='')``); its ops get no scope.
        super().__init__(name=name if name else unique_name(_keras_snake_case(type(self).__name__)))
        if name == "":
            self._name = ""
        self._weights: list = []
        self._dtype = as_dtype(dtype)
        self.trainable = bool(trainable)
        self.built = False
        # ``Dense(4, input_shape=(3,))``: the shape of one example, as in Keras; a Sequential whose
        # first layer has one builds all its layers at once.
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        self._input_shape = None if input_shape is None else (None,) + tuple(_dims(input_shape, type(self).__name__))

    @property
    def name_scope(self):
        return super().name_scope if self.name else contextlib.nullcontext()

    def compute_output_shape(self, input_shape):
        """The output's shape for inputs of ``input_shape`` (``None`` for the batch), without running the layer."""
        return tuple(input_shape)

    def get_weights(self) -> list:
        """The weights' values as NumPy arrays, in ``weights`` order."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights) -> None:
        """Assign each weight the array at its place in ``weights`` (as many, of the same shapes, as ``get_weights``)."""
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(f"{type(self).__name__} {self.name!r}.set_weights: expected {len(mine)} arrays "
                             f"(one per weight), got {len(weights)}")
        for var, value in zip(mine, weights):
            if tuple(getattr(value, "shape", ())) != tuple(var.shape):
                raise ValueError(f"{type(self).__name__} {self.name!r}.set_weights: weight {var.name!r} has shape "
                                 f"{tuple(var.shape)}, got an array of shape {tuple(getattr(value, 'shape', ()))}")
        for var, value in zip(mine, weights):
            var.assign(value)

    def count_params(self) -> int:
        """How many numbers the layer's weights hold."""
        return sum(math.prod(v.shape) for v in self.variables)

    def _check_name(self, name) -> None:
        """As Keras: any string without ``/`` (Keras names layers more freely than ``tf.Module``).

        The empty name is allowed: the customization tutorial's ``Model.__init__(name='')``.
        """
        if not isinstance(name, str) or "/" in name:
            raise ValueError(f"{type(self).__name__}: the name must be a string and cannot contain "
                             f"the character '/', got {name!r}")

    @property
    def dtype(self):
        return self._dtype

    def add_weight(self, name, shape, initializer="glorot_uniform", dtype=None, trainable=True):
        """Create a variable owned by this layer; its ``name`` is exactly ``name`` (``'kernel'``)."""
        dtype = as_dtype(dtype or self._dtype)
        value = initializers.get(initializer)(tuple(shape), dtype)
        var = ResourceVariable(value, trainable=trainable and self.trainable, dtype=dtype)
        # Keras names a layer's weights by their own name alone ('kernel', not
        # 'dense/kernel:0'); that is what the guides print from var.name.
        var._name = name
        self._weights.append(var)
        return var

    def build(self, input_shape) -> None:
        self.built = True

    def call(self, inputs):
        return inputs

    def __call__(self, inputs, *args, **kwargs):
        if not isinstance(inputs, Tensor):
            inputs = as_tensor(inputs, None, f"{type(self).__name__} {self.name!r}")
        if "training" in kwargs and not _takes(type(self).call, "training"):
            del kwargs["training"]  # as Keras: passed on only to a call that names it
        with self.name_scope:
            if not self.built:
                self.build(inputs.shape)
                self.built = True
            return self.call(inputs, *args, **kwargs)

    def _tracked_values(self) -> list:
        # As Keras: the layer's own weights, then its attributes in the order they were set
        # (tf.Module sorts attributes by name; Keras tracks them as they are assigned).
        return [self._weights] + list(vars(self).values())

    # Keras gives lists where tf.Module gives tuples, trainable weights first, then the others.
    @property
    def variables(self) -> list:
        found = list(super().variables)
        return [v for v in found if v.trainable] + [v for v in found if not v.trainable]

    weights = variables

    @property
    def trainable_variables(self) -> list:
        return list(super().trainable_variables)

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        return [v for v in self.variables if not v.trainable]

    non_trainable_weights = non_trainable_variables


def _dims(shape, who) -> tuple:
    if isinstance(shape, int):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"{who}: input_shape must be a tuple of sizes, got {shape!r}") from None
    for d in dims:
        if d is not None and (isinstance(d, bool) or not isinstance(d, numbers.Integral) or d <= 0):
            raise ValueError(f"{who}: input_shape must hold positive sizes (or None), got {shape!r}")
    return dims


@functools.lru_cache(maxsize=None)
def _takes(call, argument) -> bool:
    params = inspect.signature(call).parameters
    return argument in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class Dense(Layer):
    """A fully connected layer: ``activation(inputs @ kernel + bias)``.

    ``kernel`` has shape ``(input_dim, units)`` and ``bias`` ``(units,)``;
    both are created on the first call, so ``variables`` is empty before it.

    >>> import autodiff_viz as ad
    >>> layer = ad.keras.layers.Dense(2, activation="relu")
    >>> layer.variables
    []
    >>> y = layer(ad.constant([[1.0, 2.0, 3.0]]))
    >>> [(v.name, v.shape) for v in layer.trainable_variables]
    [('kernel', TensorShape([3, 2])), ('bias', TensorShape([2]))]
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", name=None, dtype="float32", trainable=True, **kwargs):
        super().__init__(name=name, dtype=dtype, trainable=trainable, **kwargs)
        if isinstance(units, bool) or not isinstance(units, numbers.Real) or int(units) != units:
            raise TypeError(f"Dense: units must be a positive integer, got {units!r}")
        if units <= 0:
            raise ValueError(f"Dense: units must be a positive integer, got {units!r}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)

    def build(self, input_shape) -> None:
        if len(input_shape) < 2:
            raise ValueError(f"Dense {self.name!r}: inputs need shape (batch, features), got {tuple(input_shape)}")
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units), self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), self.bias_initializer)
        else:
            self.bias = None
        self.built = True

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)[:-1] + (self.units,)

    def call(self, inputs):
        x = inputs if inputs.dtype == self._dtype else _ops.cast(inputs, self._dtype)
        if x.shape[-1] != self.kernel.shape[0]:
            raise ValueError(f"Dense {self.name!r} was built for {self.kernel.shape[0]} input features, "
                             f"got inputs of shape {x.shape}")
        if x.ndim == 2:
            y = _ops.matmul(x, self.kernel)
        else:  # (..., features): one matrix product over the flattened leading axes
            flat = _ops.reshape(x, (-1, x.shape[-1]))
            y = _ops.reshape(_ops.matmul(flat, self.kernel), x.shape[:-1] + (self.units,))
        if self.use_bias:
            y = y + self.bias
        if self.activation is not None:
            y = self.activation(y)
        return y

    def __getattr__(self, name):
        # Only reached when normal lookup fails: explain the unbuilt layer.
        if name in ("kernel", "bias"):
            raise AttributeError(f"Dense layer {self.__dict__.get('_name')!r} has no {name} yet: "
                                 "weights are created on the first call")
        raise AttributeError(name)


class Flatten(Layer):
    """Each example as one vector: ``(batch, a, b, ...)`` to ``(batch, a·b·...)``.

    >>> import autodiff_viz as ad
    >>> ad.keras.layers.Flatten()(ad.ones((2, 3, 4))).shape
    TensorShape([2, 12])
    """

    def __init__(self, data_format=None, name=None, dtype="float32", trainable=True, **kwargs):
        super().__init__(name=name, dtype=dtype, trainable=trainable, **kwargs)
        _channels_last(data_format, "Flatten")

    def compute_output_shape(self, input_shape):
        rest = tuple(input_shape)[1:]
        return (input_shape[0], math.prod(rest) if None not in rest else None)

    def call(self, inputs):
        if inputs.ndim == 0:
            raise ValueError(f"Flatten {self.name!r}: inputs need a batch axis, got a scalar")
        return _ops.reshape(inputs, (inputs.shape[0], -1) if inputs.ndim > 1 else (inputs.shape[0], 1))


def _window_out(size, k, stride, dilation, padding):
    if size is None:
        return None
    if padding == "same":
        return -(-size // stride)
    return (size - ((k - 1) * dilation + 1)) // stride + 1


def _padding_arg(padding, who):
    p = padding.lower() if isinstance(padding, str) else padding
    if p not in ("valid", "same"):
        raise ValueError(f"{who}: padding must be 'valid' or 'same', got {padding!r}")
    return p


def _channels_last(data_format, who):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{who}: only data_format='channels_last' (NHWC) is part of autodiff_viz, "
                         f"got {data_format!r}")


class Conv2D(Layer):
    """A 2-D convolution layer: ``activation(conv2d(inputs, kernel) + bias)`` on [batch, height, width, channels].

    ``kernel`` has shape ``(kh, kw, in_channels, filters)``, created on the first call.

    >>> import autodiff_viz as ad
    >>> conv = ad.keras.layers.Conv2D(4, 3, padding="same")
    >>> conv(ad.ones((1, 8, 8, 2))).shape
    TensorShape([1, 8, 8, 4])
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", name=None, dtype="float32", trainable=True, **kwargs):
        super().__init__(name=name, dtype=dtype, trainable=trainable, **kwargs)
        if isinstance(filters, bool) or not isinstance(filters, numbers.Integral) or filters <= 0:
            raise ValueError(f"Conv2D: filters must be a positive integer, got {filters!r}")
        _channels_last(data_format, "Conv2D")
        self.filters = int(filters)
        self.kernel_size = _nn_ops._pair(kernel_size, "Conv2D", "kernel_size", allow_four=False)
        self.strides = _nn_ops._pair(strides, "Conv2D", "strides", allow_four=False)
        self.dilation_rate = _nn_ops._pair(dilation_rate, "Conv2D", "dilation_rate", allow_four=False)
        self.padding = _padding_arg(padding, "Conv2D")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)

    def build(self, input_shape) -> None:
        if len(input_shape) != 4:
            raise ValueError(f"Conv2D {self.name!r}: inputs need shape (batch, height, width, channels), "
                             f"got {tuple(input_shape)}")
        self.kernel = self.add_weight("kernel", self.kernel_size + (input_shape[-1], self.filters),
                                      self.kernel_initializer)
        self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer) if self.use_bias else None
        self.built = True

    def compute_output_shape(self, input_shape):
        n, h, w, _ = tuple(input_shape)
        return (n,) + tuple(_window_out(d, k, s, r, self.padding) for d, k, s, r in
                            zip((h, w), self.kernel_size, self.strides, self.dilation_rate)) + (self.filters,)

    def call(self, inputs):
        x = inputs if inputs.dtype == self._dtype else _ops.cast(inputs, self._dtype)
        y = nn.conv2d(x, self.kernel, self.strides, self.padding.upper(), dilations=self.dilation_rate)
        if self.use_bias:
            y = y + self.bias
        return self.activation(y) if self.activation is not None else y

    def __getattr__(self, name):
        if name in ("kernel", "bias"):
            raise AttributeError(f"Conv2D layer {self.__dict__.get('_name')!r} has no {name} yet: "
                                 "weights are created on the first call")
        raise AttributeError(name)


class _Pooling2D(Layer):
    _pool = None  # the nn function

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, name=None,
                 dtype="float32", trainable=True, **kwargs):
        super().__init__(name=name, dtype=dtype, trainable=trainable, **kwargs)
        who = type(self).__name__
        _channels_last(data_format, who)
        self.pool_size = _nn_ops._pair(pool_size, who, "pool_size", allow_four=False)
        self.strides = self.pool_size if strides is None else _nn_ops._pair(strides, who, "strides",
                                                                             allow_four=False)
        self.padding = _padding_arg(padding, who)

    def compute_output_shape(self, input_shape):
        n, h, w, c = tuple(input_shape)
        return (n,) + tuple(_window_out(d, k, s, 1, self.padding)
                            for d, k, s in zip((h, w), self.pool_size, self.strides)) + (c,)

    def call(self, inputs):
        return type(self)._pool(inputs, self.pool_size, self.strides, self.padding.upper())


class MaxPooling2D(_Pooling2D):
    """The largest value of each ``pool_size`` window (strides default to the pool size).

    >>> import autodiff_viz as ad
    >>> ad.keras.layers.MaxPooling2D()(ad.ones((1, 4, 4, 3))).shape
    TensorShape([1, 2, 2, 3])
    """

    _pool = staticmethod(nn.max_pool2d)


class AveragePooling2D(_Pooling2D):
    """The mean of each ``pool_size`` window (strides default to the pool size)."""

    _pool = staticmethod(nn.avg_pool2d)


MaxPool2D, AvgPool2D = MaxPooling2D, AveragePooling2D


class BatchNormalization(Layer):
    """Normalize each feature by batch statistics while training, by moving averages otherwise.

    ``y = gamma * (x - mean) / sqrt(variance + epsilon) + beta`` along ``axis``
    (the features).  With ``training=True`` the mean and variance are the
    batch's, and the non-trainable ``moving_mean``/``moving_variance`` move
    toward them by ``1 - momentum``; without it (Keras's default outside
    ``fit``) the moving ones are used.

    >>> import autodiff_viz as ad
    >>> bn = ad.keras.layers.BatchNormalization()
    >>> y = bn(ad.constant([[1.0], [3.0]]), training=True)
    >>> [round(v, 4) for v in y.numpy().ravel().tolist()], [v.name for v in bn.variables]
    ([-0.9995, 0.9995], ['gamma', 'beta', 'moving_mean', 'moving_variance'])
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", moving_mean_initializer="zeros",
                 moving_variance_initializer="ones", name=None, dtype="float32", trainable=True, **kwargs):
        super().__init__(name=name, dtype=dtype, trainable=trainable, **kwargs)
        for what, v in (("momentum", momentum), ("epsilon", epsilon)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise TypeError(f"BatchNormalization: {what} must be a number, got {v!r}")
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise TypeError(f"BatchNormalization: axis must be an integer, got {axis!r}")
        self.axis, self.momentum, self.epsilon = int(axis), float(momentum), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self._inits = (gamma_initializer, beta_initializer, moving_mean_initializer, moving_variance_initializer)

    def build(self, input_shape) -> None:
        rank = len(input_shape)
        if not -rank <= self.axis < rank:
            raise ValueError(f"BatchNormalization {self.name!r}: axis {self.axis} is out of range for inputs of "
                             f"shape {tuple(input_shape)}")
        self._axis = self.axis % rank
        dim = (input_shape[self._axis],)
        g, b, mm, mv = self._inits
        self.gamma = self.add_weight("gamma", dim, g) if self.scale else None
        self.beta = self.add_weight("beta", dim, b) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", dim, mm, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", dim, mv, trainable=False)
        self.built = True

    def call(self, inputs, training=None):
        x = inputs if inputs.dtype == self._dtype else _ops.cast(inputs, self._dtype)
        if x.ndim != len(self.moving_mean.shape) and x.shape[self._axis] != self.moving_mean.shape[0]:
            raise ValueError(f"BatchNormalization {self.name!r} was built for {self.moving_mean.shape[0]} features, "
                             f"got inputs of shape {x.shape}")
        reduce = [i for i in range(x.ndim) if i != self._axis]
        shape = tuple(d if i == self._axis else 1 for i, d in enumerate(x.shape))
        if training:
            mean, variance = nn.moments(x, reduce)
            keep = 1.0 - self.momentum
            self.moving_mean.assign(self.moving_mean * self.momentum + _ops.stop_gradient(mean) * keep)
            self.moving_variance.assign(self.moving_variance * self.momentum + _ops.stop_gradient(variance) * keep)
        else:
            mean, variance = self.moving_mean, self.moving_variance
        scale = None if self.gamma is None else _ops.reshape(self.gamma, shape)
        offset = None if self.beta is None else _ops.reshape(self.beta, shape)
        return nn.batch_normalization(x, _ops.reshape(mean, shape), _ops.reshape(variance, shape), offset, scale,
                                      self.epsilon)


__getattr__ = _missing_api(__name__)
