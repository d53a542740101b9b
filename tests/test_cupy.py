"""The CuPy backend, on a machine with a CUDA GPU (skipped, with the reason, elsewhere).

Values and gradients of every kind of op must equal NumPy's; tensors stay on
the GPU until ``.numpy()``; mixing backends in one op is an error, not a copy.
"""
import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import _backend
from backend_cases import CASES, grads_on as _grads_on


def _cupy():
    try:
        import cupy
        cupy.zeros(1)  # a CUDA device must be usable too
    except Exception as e:  # noqa: BLE001  (ImportError, or CUDA errors on machines without a GPU)
        pytest.skip(f"CuPy backend needs cupy and a CUDA GPU ({type(e).__name__}: {e})")
    return cupy


def test_cupy_tensors_live_on_the_gpu_and_numpy_returns_host_arrays():
    cp = _cupy()
    with ad.backend("cupy"):
        t = ad.constant([1.0, 2.0]) * 3.0
        v = ad.Variable(ad.random.normal((2, 2), seed=0))
    assert isinstance(t._value, cp.ndarray) and isinstance(v._value, cp.ndarray)
    assert type(t.numpy()) is np.ndarray and t.numpy().tolist() == [3.0, 6.0]
    assert "ad.Tensor([3. 6.]" in str(t)


@pytest.mark.parametrize("name,f,values", CASES, ids=[c[0] for c in CASES])
def test_cupy_gives_numpy_values_and_gradients(name, f, values):
    _cupy()
    y_np, g_np = _grads_on("numpy", f, *values)
    y_cp, g_cp = _grads_on("cupy", f, *values)
    np.testing.assert_allclose(y_cp, y_np, rtol=1e-6, atol=1e-12)
    for a, b in zip(g_cp, g_np):
        assert isinstance(a, np.ndarray)
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)


def test_cupy_mixed_with_numpy_is_an_error_not_a_copy():
    _cupy()
    with ad.backend("numpy"):
        a = ad.constant([1.0, 2.0])
    with ad.backend("cupy"):
        b = ad.constant([3.0, 4.0])
    with pytest.raises(ad.InvalidArgumentError, match="different backends"):
        a * b


def test_cupy_arrays_are_recognised_and_stay_on_the_gpu():
    # CuPy arrays have no __array_namespace__: the backend must know them by type.
    cp = _cupy()
    a = cp.asarray([1.0, 2.0], dtype=cp.float32)
    assert _backend.namespace_of(a) is cp and _backend.array_namespace(a) is cp
    with ad.backend("numpy"):
        t = ad.constant(a)
        u = ad.convert_to_tensor(a, dtype=ad.float64)
    assert isinstance(t._value, cp.ndarray) and t.dtype == ad.float32
    assert isinstance(u._value, cp.ndarray) and u.dtype == ad.float64
    c = t * 2.0 + 1  # outside a cupy block: the numbers follow t onto the GPU
    assert isinstance(c._value, cp.ndarray) and c.numpy().tolist() == [3.0, 5.0]


def test_cupy_keeps_the_sign_of_negative_zero():
    cp = _cupy()
    with ad.backend("cupy"):
        z = ad.constant(-0.0)
        f = ad.fill((3,), -0.0)
        x = ad.constant([1.0, 2.0])
    assert isinstance(z._value, cp.ndarray) and isinstance(f._value, cp.ndarray)
    assert np.signbit(z.numpy()) and np.signbit(f.numpy()).all()
    assert np.signbit((x * -0.0).numpy()).all()  # outside the block: the number joins x's backend
