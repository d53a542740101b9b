"""README's table of TensorFlow APIs: every API that the tutorials of issue 24 use is there and in the table,
and the CNN APIs a lecture might reach for next say clearly that they are not part of the package."""
import pathlib
import re

import pytest

import autodiff_viz as tf

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"

# The tutorials' APIs (TF Core and customization tutorials, a textbook's TF chapters, a CNN lecture).
USED = ["meshgrid", "tensordot", "boolean_mask", "cumsum", "sinh", "cosh", "math.is_nan", "math.is_inf",
        "math.is_finite", "random.shuffle", "random_normal_initializer", "linalg.svd", "linalg.diag",
        "linalg.matvec", "map_fn", "image.resize_with_pad", "data.experimental.cardinality", "keras.layers.Flatten",
        "keras.losses.SparseCategoricalCrossentropy", "keras.losses.CategoricalCrossentropy",
        "keras.losses.BinaryCrossentropy", "keras.losses.MeanSquaredError", "keras.metrics.Mean",
        "keras.metrics.SparseCategoricalAccuracy", "keras.metrics.Accuracy", "keras.Sequential.summary", "function",
        "config.run_functions_eagerly", "nn.conv2d", "nn.max_pool2d", "nn.avg_pool2d", "keras.layers.Conv2D",
        "keras.layers.MaxPooling2D", "keras.layers.AveragePooling2D"]

NOT_HERE = ["nn.conv1d", "nn.depthwise_conv2d", "nn.conv2d_transpose", "nn.dropout", "keras.layers.Dropout",
            "keras.layers.GlobalAveragePooling2D", "image.resize"]


def _get(path):
    obj = tf
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _table() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Which TensorFlow APIs exist")
    return text[start:text.index("\n## ", start + 1)]


@pytest.mark.parametrize("path", USED)
def test_the_tutorials_apis_exist_and_the_readme_lists_them(path):
    assert callable(_get(path)) or _get(path) is not None
    last = path.split(".")[-1]
    assert re.search(rf"[`\s/.]{re.escape(last)}[`\s(,/]", _table()), f"README's API table does not list {path}"


@pytest.mark.parametrize("path", NOT_HERE)
def test_what_a_cnn_lecture_might_miss_says_so(path):
    with pytest.raises(AttributeError, match=re.escape(f"tf.{path} is not part of autodiff_viz")):
        _get(path)
    parts = path.split(".")
    named = [".".join(parts[i:]) for i in range(len(parts))]  # `tf.nn.dropout`, `layers.Dropout`, `conv1d`...
    assert any(f"`{n}`" in _table() or f"`tf.{n}`" in _table() for n in named), f"README does not say {path} is missing"
