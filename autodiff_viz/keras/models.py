"""``Sequential``, layers applied one after another, and ``Model``, to subclass."""
from __future__ import annotations

import math

import numpy as _np

from .._function import save_refused
from .._missing import missing_api as _missing_api
from .layers import Layer


def _save(self, *args, **kwargs):
    raise save_refused("saving a model (SavedModel, .keras files and checkpoints)")


class Sequential(Layer):
    """Apply ``layers`` in order; its variables are theirs, layer by layer.

    >>> import autodiff_viz as ad
    >>> model = ad.keras.Sequential([ad.keras.layers.Dense(3), ad.keras.layers.Dense(1)])
    >>> y = model(ad.ones((1, 2)))
    >>> [v.shape for v in model.trainable_variables]
    [TensorShape([2, 3]), TensorShape([3]), TensorShape([3, 1]), TensorShape([1])]
    """

    def __init__(self, layers=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.layers = []
        for layer in layers or []:
            self.add(layer)

    def add(self, layer) -> None:
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential.add: expected a layer, got {layer!r:.60} ({type(layer).__name__})")
        self.layers.append(layer)
        first = self.layers[0]._input_shape
        if first is not None:  # as Keras: an input shape on the first layer builds the model now
            self.build(first)

    def build(self, input_shape) -> None:
        shape = tuple(input_shape)
        for layer in self.layers:
            if not layer.built:
                with layer.name_scope:
                    layer.build(shape)
                layer.built = True
            shape = layer.compute_output_shape(shape)
        self._input_shape = (None,) + tuple(input_shape)[1:]  # the batch size is any, as Keras shows it
        self.built = True

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        for layer in self.layers:
            shape = layer.compute_output_shape(shape)
        return shape

    def call(self, inputs, training=None):
        x = inputs
        for layer in self.layers:
            x = layer(x, training=training)
        return x

    save = save_weights = _save

    def summary(self, print_fn=None) -> None:
        """Print the layers, their output shapes and weight counts, as Keras does.

        >>> import autodiff_viz as ad
        >>> model = ad.keras.Sequential([ad.keras.layers.Dense(3, input_shape=(4,))], name="tiny")
        >>> model.summary()  # doctest: +ELLIPSIS
        Model: "tiny"
        ...
        │ dense... (Dense)...│ (None, 3)...│            15 │
        ...
         Total params: 15 (60.00 B)
        ...
        """
        shape = self._input_shape
        rows = []
        for layer in self.layers:
            shape = None if shape is None else layer.compute_output_shape(shape)
            rows.append((layer, "?" if shape is None else str(shape).replace(",)", ")")))
        _print_summary(self, rows, print_fn)


class Model(Layer):
    """Subclass it as in Keras: create layers in ``__init__``, use them in ``call``.

    Its variables are those of the layers and variables it holds, in the
    order they were assigned (trainable ones first).  The functional form
    ``Model(inputs, outputs)`` is not part of this package.

    >>> import autodiff_viz as ad
    >>> class TwoLayers(ad.keras.Model):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = ad.keras.layers.Dense(3, activation="relu")
    ...         self.out = ad.keras.layers.Dense(1)
    ...     def call(self, x):
    ...         return self.out(self.hidden(x))
    >>> model = TwoLayers()
    >>> model(ad.ones((2, 4))).shape
    TensorShape([2, 1])
    >>> [v.shape for v in model.trainable_variables]
    [TensorShape([4, 3]), TensorShape([3]), TensorShape([3, 1]), TensorShape([1])]
    """

    def __init__(self, *args, name=None, dtype="float32", trainable=True, **kwargs):
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise TypeError("keras.Model: the functional form Model(inputs, outputs) is not part of autodiff_viz; "
                            "subclass keras.Model (layers in __init__, the computation in call) or use Sequential")
        if kwargs:
            raise TypeError(f"keras.Model: unexpected arguments {sorted(kwargs)}")
        super().__init__(name=name, dtype=dtype, trainable=trainable)

    def call(self, inputs, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}: a keras.Model subclass defines call(self, inputs)")

    save = save_weights = _save

    def summary(self, print_fn=None) -> None:
        """Print the layers this model holds, with their weight counts, as Keras does (output shapes: "?")."""
        _print_summary(self, [(layer, "?") for layer in self.layers], print_fn)

    @property
    def layers(self) -> list:
        """The layers this model holds directly (in attributes or lists of them), in the order they were assigned."""
        found = []
        for v in vars(self).values():
            for item in (v if isinstance(v, (list, tuple)) else [v]):
                if isinstance(item, Layer) and all(item is not f for f in found):
                    found.append(item)
        return found


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.2f} {unit}"
        n /= 1024


def _print_summary(model, rows, print_fn) -> None:
    """Keras 3's table: one row per layer, then the totals (weights counted as 4 bytes each for float32)."""
    print_fn = print_fn or print
    cells = [(f"{layer.name} ({type(layer).__name__})", shape, f"{layer.count_params():,}") for layer, shape in rows]
    widths = [max([31] + [len(c[0]) for c in cells]), max([22] + [len(c[1]) for c in cells]), 13]

    def line(left, mid, right, fill):
        return left + mid.join(fill * (w + 2) for w in widths) + right

    out = [f'Model: "{model.name}"', line("┏", "┳", "┓", "━"),
           "┃ " + " ┃ ".join([f"{'Layer (type)':<{widths[0]}}", f"{'Output Shape':<{widths[1]}}",
                             f"{'Param #':>{widths[2]}}"]) + " ┃",
           line("┡", "╇", "┩", "━")]
    for i, (name, shape, count) in enumerate(cells):
        if i:
            out.append(line("├", "┼", "┤", "─"))
        out.append("│ " + " │ ".join([f"{name:<{widths[0]}}", f"{shape:<{widths[1]}}", f"{count:>{widths[2]}}"]) + " │")
    out.append(line("└", "┴", "┘", "─"))
    weights = model.variables
    sizes = [(math.prod(v.shape), _np.dtype(v.dtype.as_numpy_dtype).itemsize, v.trainable) for v in weights]
    total = sum(n for n, _, _ in sizes)
    trainable = sum(n for n, _, t in sizes if t)
    out.append(f" Total params: {total:,} ({_bytes(sum(n * b for n, b, _ in sizes))})")
    out.append(f" Trainable params: {trainable:,} ({_bytes(sum(n * b for n, b, t in sizes if t))})")
    out.append(f" Non-trainable params: {total - trainable:,} ({_bytes(sum(n * b for n, b, t in sizes if not t))})")
    print_fn("\n".join(out))


__getattr__ = _missing_api(__name__)
