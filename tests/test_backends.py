"""Backends: NumPy by default, CuPy on a GPU, any Array-API library in between.

``array_api_strict`` stands in for CuPy on machines without a GPU: it rejects
everything the standard does not define, so an engine path that quietly
assumes NumPy fails here.  The CuPy tests are in ``test_cupy.py`` (they must
not be skipped with this module where ``array_api_strict`` is missing).
"""
import sys

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import _backend
from backend_cases import CASES, grads_on as _grads_on

xps = pytest.importorskip("array_api_strict", reason="array_api_strict is part of the dev extra")

STRICT = "array_api_strict"


@pytest.mark.parametrize("name,f,values", CASES, ids=[c[0] for c in CASES])
def test_strict_backend_gives_numpy_values_and_gradients(name, f, values):
    y_np, g_np = _grads_on("numpy", f, *values)
    y_st, g_st = _grads_on(STRICT, f, *values)
    assert isinstance(y_st, (np.ndarray, np.generic))
    np.testing.assert_allclose(y_st, y_np, rtol=1e-6, atol=1e-12)
    for a, b in zip(g_st, g_np):
        assert isinstance(a, np.ndarray)
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)


def test_strict_tensors_live_in_the_strict_namespace():
    with ad.backend(STRICT):
        t = ad.constant([1.0, 2.0]) * 2.0
        v = ad.Variable(ad.ones((2, 2)))
    assert _backend.namespace_of(t._value) is xps
    assert _backend.namespace_of(v._value) is xps
    assert t.dtype == ad.float32
    out = t.numpy()
    assert type(out) is np.ndarray and out.tolist() == [2.0, 4.0]


def test_repeated_indices_add_up_on_every_backend():
    for backend in ("numpy", STRICT):
        _, (g,) = _grads_on(backend, lambda x: ad.reduce_sum(x[[0, 0, 2, 0]] * ad.constant([1.0, 2.0, 3.0, 4.0],
                                                                                                 dtype=ad.float64)),
                             np.zeros(4))
        np.testing.assert_array_equal(g, [7.0, 0.0, 3.0, 0.0])


def test_second_derivative_and_jacobian_on_strict():
    with ad.backend(STRICT):
        x = ad.constant([0.5, 1.0, 2.0])
        with ad.GradientTape() as outer:
            outer.watch(x)
            with ad.GradientTape() as inner:
                inner.watch(x)
                y = ad.reduce_sum(ad.sin(x) * x ** 3)
            dy = inner.gradient(y, x)
        d2 = outer.gradient(dy, x)
        with ad.GradientTape() as tape:
            tape.watch(x)
            z = x * x
        jac = tape.jacobian(z, x)
    xn = np.array([0.5, 1.0, 2.0])
    want = -np.sin(xn) * xn ** 3 + 6 * np.cos(xn) * xn ** 2 + 6 * xn * np.sin(xn)
    np.testing.assert_allclose(d2.numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(jac.numpy(), np.diag(2 * xn), rtol=1e-6)


def test_compute_gradient_runs_on_strict():
    with ad.backend(STRICT):
        theoretical, numerical = ad.test.compute_gradient(lambda x: ad.reduce_prod(ad.tanh(x)),
                                                          [ad.constant([0.3, -0.7, 1.1], dtype=ad.float64)])
    np.testing.assert_allclose(theoretical[0], numerical[0], rtol=1e-6, atol=1e-9)


def test_creation_functions_on_strict():
    with ad.backend(STRICT):
        made = {
            "zeros": ad.zeros((2, 3), dtype=ad.float64), "ones": ad.ones(2, dtype=ad.int32),
            "eye": ad.eye(2), "fill": ad.fill((2,), 7.0), "range": ad.range(1, 7, 2),
            "linspace": ad.linspace(0.0, 1.0, 3), "zeros_like": ad.zeros_like(ad.constant([1.0]), dtype=ad.float64),
            "normal": ad.random.normal((3,), seed=1), "nonzero": ad.where(ad.constant([[True, False], [False, True]])),
        }
    for t in made.values():
        assert _backend.namespace_of(t._value) is xps
    assert made["zeros"].dtype == ad.float64 and made["ones"].dtype == ad.int32
    assert made["range"].numpy().tolist() == [1, 3, 5]
    assert made["linspace"].numpy().tolist() == [0.0, 0.5, 1.0]
    assert made["fill"].numpy().tolist() == [7.0, 7.0]
    assert made["nonzero"].numpy().tolist() == [[0, 0], [1, 1]]
    assert made["zeros_like"].dtype == ad.float64


def test_mixing_backends_in_one_op_is_an_error():
    with ad.backend("numpy"):
        a = ad.constant([1.0, 2.0])
    with ad.backend(STRICT):
        b = ad.constant([3.0, 4.0])
    with pytest.raises(ad.InvalidArgumentError, match="different backends"):
        a + b
    with pytest.raises(ad.InvalidArgumentError, match="different backends"):
        ad.matmul(ad.reshape(b, (1, 2)), ad.reshape(a, (2, 1)))


def test_python_numbers_join_the_tensors_backend():
    with ad.backend(STRICT):
        b = ad.constant([3.0, 4.0])
    c = b * 2.0 + 1  # outside the block: the numbers follow b, not the default
    assert _backend.namespace_of(c._value) is xps
    assert c.numpy().tolist() == [7.0, 9.0]


def test_backend_block_restores_on_error():
    before = _backend.current()
    with pytest.raises(RuntimeError):
        with ad.backend(STRICT):
            assert _backend.current() is xps
            raise RuntimeError("boom")
    assert _backend.current() is before


def test_set_backend_is_process_wide_and_blocks_are_per_thread(backend_name):
    import threading

    seen = {}

    def worker(key):
        seen[key] = _backend.namespace_of(ad.constant([1.0])._value)

    try:
        ad.set_backend(STRICT)
        t = threading.Thread(target=worker, args=("after set_backend",))
        t.start()
        t.join()
        with ad.backend("numpy"):
            assert _backend.namespace_of(ad.constant([1.0])._value) is np
            t = threading.Thread(target=worker, args=("during another thread's block",))
            t.start()
            t.join()
    finally:
        ad.set_backend(backend_name)
    assert seen == {"after set_backend": xps, "during another thread's block": xps}


def test_unknown_backend_is_rejected():
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        ad.set_backend("tpu")


def test_missing_cupy_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` fail, installed or not
    monkeypatch.delitem(_backend._known, "cupy", raising=False)
    with pytest.raises(ImportError, match=r'pip install "autodiff_viz\[gpu\]"'):
        ad.set_backend("cupy")
    with pytest.raises(ImportError, match=r'pip install "autodiff_viz\[gpu\]"'):
        with ad.backend("cupy"):
            pass


# -- the shims themselves ------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_strict_scatter_add_matches_numpy_add_at(seed):
    r = np.random.default_rng(seed)
    shape = (5, 3)
    index = (r.integers(0, 5, size=7),)
    g = r.normal(size=(7, 3))
    want = np.zeros(shape)
    np.add.at(want, index, g)
    s = _backend.shim(xps)
    got = s.scatter_add(xps.asarray(g), s.index(index), shape)
    np.testing.assert_allclose(_backend.to_numpy(got), want, rtol=1e-12)


def test_strict_scatter_add_with_two_index_arrays():
    index = (np.array([0, 1, 0]), np.array([2, 2, 2]))
    g = np.array([1.0, 2.0, 3.0])
    s = _backend.shim(xps)
    got = _backend.to_numpy(s.scatter_add(xps.asarray(g), s.index(index), (2, 3)))
    np.testing.assert_array_equal(got, [[0.0, 0.0, 4.0], [0.0, 0.0, 2.0]])


def test_dtype_shim_speaks_each_namespaces_dtypes():
    assert _backend.shim(np).dtype(ad.float32) is np.float32
    assert _backend.shim(xps).dtype("int64") == xps.int64
    assert _backend.shim(xps).dtype(np.float64) == xps.float64
    assert _backend.shim(xps).dtype(ad.bool) == xps.bool


# -- Python numbers as operands (converted once and reused on NumPy) --------------
def test_python_number_operands_keep_sign_nan_and_dtype():
    x = ad.constant([1.0, 2.0])
    assert np.signbit((x * -0.0).numpy()).all() and not np.signbit((x * 0.0).numpy()).any()
    assert np.isnan((x + float("nan")).numpy()).all()
    assert (ad.constant([2, 3]) * 3).numpy().tolist() == [6, 9]
    assert (ad.constant([2.0], dtype=ad.float64) * 0.1).numpy()[0] == 2.0 * 0.1  # float64 stays exact
    for _ in range(3):  # the same number again gives the same value, never a shared, changed one
        assert (x * 0.5).numpy().tolist() == [0.5, 1.0]
    for zero in (0.0, -0.0, 0.0, -0.0):  # 0.0 and -0.0 are equal keys: each keeps its own sign
        assert np.signbit((x * zero).numpy()).all() == (str(zero) == "-0.0")
