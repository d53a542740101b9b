"""``Sequential``, layers applied one after another, and ``Model``, to subclass."""
from __future__ import annotations

from .._missing import missing_api as _missing_api
from .layers import Layer


class Sequential(Layer):
    """Apply ``layers`` in order; its variables are theirs, layer by layer.

    >>> import autodiff_viz as ad
    >>> model = ad.keras.Sequential([ad.keras.layers.Dense(3), ad.keras.layers.Dense(1)])
    >>> y = model(ad.ones((1, 2)))
    >>> [v.shape for v in model.trainable_variables]
    [TensorShape([2, 3]), TensorShape([3]), TensorShape([3, 1]), TensorShape([1])]
    """

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self.layers = list(layers or [])

    def add(self, layer) -> None:
        self.layers.append(layer)

    def call(self, inputs):
        x = inputs
        for layer in self.layers:
            x = layer(x)
        return x


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

    @property
    def layers(self) -> list:
        """The layers this model holds directly (in attributes or lists of them), in the order they were assigned."""
        found = []
        for v in vars(self).values():
            for item in (v if isinstance(v, (list, tuple)) else [v]):
                if isinstance(item, Layer) and all(item is not f for f in found):
                    found.append(item)
        return found


__getattr__ = _missing_api(__name__)
