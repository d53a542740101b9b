"""``ad.nn``: activations and losses (as ``tf.nn``)."""
from __future__ import annotations

from . import _ops as o, _xent_ops
from ._missing import missing_api as _missing_api
from ._ops import relu, sigmoid, softplus, tanh  # noqa: F401
from ._nn_ops import avg_pool2d, conv2d, max_pool2d  # noqa: F401
from .extend import InvalidArgumentError, as_tensor, execute, numeric
from .extend import PRIMITIVES as _P
from ._context import name_scope
from ._custom import custom_gradient


def _one_axis(axis, x, op):
    if not -x.ndim <= axis < x.ndim:
        raise InvalidArgumentError(f"{op}: axis {axis} is out of range for a tensor of rank {x.ndim} (shape {x.shape})")
    return axis % x.ndim


def softmax(logits, axis=-1, name=None):
    logits = numeric(logits, "Softmax", "real")
    return execute(_P["Softmax"], (logits,), {"axis": _one_axis(axis, logits, "Softmax")})


def log_softmax(logits, axis=-1, name=None):
    logits = numeric(logits, "LogSoftmax", "real")
    return execute(_P["LogSoftmax"], (logits,), {"axis": _one_axis(axis, logits, "LogSoftmax")})


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """``-sum(labels * log_softmax(logits))`` along ``axis``, one fused op with TF's gradient ``softmax − labels``."""
    logits = as_tensor(logits)
    labels = as_tensor(labels, logits, "softmax_cross_entropy_with_logits")
    if labels.shape != logits.shape:
        raise ValueError(f"softmax_cross_entropy_with_logits: labels {labels.shape} and logits {logits.shape} differ")
    logits = numeric(logits, "SoftmaxCrossEntropyWithLogits", "real")
    with name_scope("softmax_cross_entropy"):
        return _xent_ops.softmax_xent(logits, labels, _one_axis(axis, logits, "SoftmaxCrossEntropyWithLogits"))


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Stable ``max(x, 0) - x * z + log(1 + exp(-|x|))``."""
    logits = as_tensor(logits)
    labels = as_tensor(labels, logits, "sigmoid_cross_entropy_with_logits")
    if labels.shape != logits.shape:
        raise ValueError(f"sigmoid_cross_entropy_with_logits: labels {labels.shape} and logits {logits.shape} differ")
    with name_scope("logistic_loss"):
        # As TF: selects rather than relu/abs, so x = 0 gets sigmoid(0) - z, not -z.
        cond = o.greater_equal(logits, 0.0)
        relu_logits = o.where(cond, logits, o.zeros_like(logits))
        neg_abs_logits = o.where(cond, -logits, logits)
        return relu_logits - logits * labels + o.log1p(o.exp(neg_abs_logits))


# -- more activations ---------------------------------------------------------
def relu6(features, name=None):
    """``min(max(x, 0), 6)``."""
    return execute(_P["Relu6"], (numeric(features, "Relu6"),))


def leaky_relu(features, alpha=0.2, name=None):
    """``x`` where ``x > 0``, else ``alpha * x`` (TF's default alpha is 0.2).

    >>> leaky_relu(as_tensor([-1.0, 2.0])).numpy().tolist()
    [-0.20000000298023224, 2.0]
    """
    x = numeric(features, "LeakyRelu")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise TypeError(f"LeakyRelu: alpha must be a number, got {alpha!r}")
    return execute(_P["LeakyRelu"], (x,), {"alpha": float(alpha)})


def elu(features, name=None):
    """``x`` where ``x > 0``, else ``exp(x) - 1``."""
    return execute(_P["Elu"], (numeric(features, "Elu", "real"),))


def selu(features, name=None):
    """Scaled ELU: ``scale * elu``-like with TF's constants (scale 1.0507..., alpha 1.6733...)."""
    return execute(_P["Selu"], (numeric(features, "Selu", "real"),))


def softsign(features, name=None):
    """``x / (1 + |x|)``."""
    return execute(_P["Softsign"], (numeric(features, "Softsign", "real"),))


def gelu(features, approximate=False, name=None):
    """Gaussian error linear unit, as TF computes it: ``0.5·x·(1 + erf(x/√2))``, or the tanh approximation.

    >>> round(float(gelu(as_tensor(1.0))), 6)
    0.841345
    """
    x = numeric(features, "gelu", "real")
    with name_scope("Gelu"):
        # TF's nn_ops.gelu, op for op (pow(x, 3), not x·x·x; x / √2, not x · (1/√2)): its bits and its gradient's
        if approximate:
            return 0.5 * x * (1.0 + o.tanh(0.7978845608028654 * (x + 0.044715 * o.pow(x, 3.0))))
        return 0.5 * x * (1.0 + o.erf(x / 1.4142135623730951))


def swish(features, beta=1.0, name=None):
    """``x * sigmoid(beta * x)`` (also ``silu``), with TF's own gradient (a custom gradient in TF too).

    For ``x``: ``dy · σ(βx)·(1 + βx·(1 − σ(βx)))``; for ``beta``:
    ``Σ dy·x²·σ(βx)·(1 − σ(βx))``.  As TF, ``beta`` becomes a tensor and then
    takes ``x``'s dtype (a Python float is float32 first).

    >>> round(float(swish(as_tensor(1.0))), 6)
    0.731059
    """
    x = numeric(features, "swish", "real")
    beta = o.cast(as_tensor(beta), x.dtype)
    with name_scope("swish"):
        return _swish(x, beta)


@custom_gradient
def _swish(features, beta):
    def grad(dy):
        # nn_impl.py's rule, op for op, so the bits are TF's (not the chain rule through Mul and Sigmoid)
        s = o.sigmoid(beta * features)
        activation_grad = s * (1.0 + (beta * features) * (1.0 - s))
        return dy * activation_grad, o.reduce_sum(dy * o.square(features) * s * (1.0 - s))
    return features * o.sigmoid(beta * features), grad


silu = swish


# -- more losses and statistics --------------------------------------------------
def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """``-log_softmax(logits)[label]`` per example: labels are class indices, shape ``logits.shape[:-1]``.

    As TF, a label outside ``[0, num_classes)`` is an InvalidArgumentError.

    >>> loss = sparse_softmax_cross_entropy_with_logits(as_tensor([1]), as_tensor([[0.0, 0.0]]))
    >>> round(float(loss[0]), 6)  # log 2
    0.693147
    """
    logits = numeric(logits, "SparseSoftmaxCrossEntropyWithLogits", "real")
    labels = as_tensor(labels)
    if not labels.dtype.is_integer:
        raise TypeError(f"SparseSoftmaxCrossEntropyWithLogits: labels must be class indices (integers), got dtype "
                        f"{labels.dtype.name}")
    if logits.ndim < 1 or labels.shape != logits.shape[:-1]:
        raise InvalidArgumentError(f"SparseSoftmaxCrossEntropyWithLogits: labels of shape {labels.shape} need the "
                                   f"logits' shape without its last axis, {logits.shape[:-1]} (logits {logits.shape})")
    n = logits.shape[-1]
    values = labels.numpy()
    if values.size and (values.min() < 0 or values.max() >= n):
        bad = values[(values < 0) | (values >= n)].reshape(-1)[0]
        raise InvalidArgumentError(f"SparseSoftmaxCrossEntropyWithLogits: received a label value of {bad} which is "
                                   f"outside the valid range of [0, {n})")
    with name_scope("sparse_softmax_cross_entropy"):
        return _xent_ops.sparse_softmax_xent(logits, labels)


def moments(x, axes, shift=None, keepdims=False, name=None):
    """``(mean, variance)`` over ``axes``, as ``tf.nn.moments``."""
    x = numeric(x, "moments", "real")
    with name_scope("moments"):
        mean = o.reduce_mean(x, axis=axes, keepdims=True)
        variance = o.reduce_mean(o.squared_difference(x, o.stop_gradient(mean)), axis=axes, keepdims=True)
        if not keepdims:
            mean, variance = o.squeeze(mean, axis=axes), o.squeeze(variance, axis=axes)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``(x - mean) / sqrt(variance + epsilon) * scale + offset`` (``offset``/``scale`` may be None)."""
    x = numeric(x, "batch_normalization", "real")
    with name_scope("batchnorm"):
        inv = o.sqrt(variance + variance_epsilon)
        inv = 1.0 / inv
        if scale is not None:
            inv = inv * scale
        y = x * inv + ((offset - mean * inv) if offset is not None else -mean * inv)
        return y


def l2_loss(t, name=None):
    """``sum(t²) / 2``."""
    t = numeric(t, "L2Loss", "real")
    with name_scope("l2_loss"):
        return o.reduce_sum(t * t) * 0.5


__getattr__ = _missing_api(__name__)
