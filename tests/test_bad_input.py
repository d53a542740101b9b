"""Bad input, one row each: the error TensorFlow raises (or the builtin this package raised before, which its
TF class also is), and a message that names the op.  Never a bare NumPy or Python traceback, never a
silently wrong result.
"""
import re

import numpy as np
import pytest

import autodiff_viz as ad

E = ad.errors
x23 = ad.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
i3 = ad.constant([1, 2, 3])
b2 = ad.constant([True, False])
sq = ad.constant([[2.0, 1.0], [1.0, 3.0]])


def _tape_with(y_of_x, persistent=False, x=None):
    x = ad.constant([1.0, 2.0]) if x is None else x
    tape = ad.GradientTape(persistent=persistent)
    with tape:
        tape.watch(x)
        y = y_of_x(x)
    return tape, x, y


def _gradient(**kw):
    tape, x, y = _tape_with(lambda x: x * x)
    return tape.gradient(y, x, **kw)


def _twice():
    tape, x, y = _tape_with(lambda x: x * x)
    tape.gradient(y, x)
    return tape.gradient(y, x)


def _stop_recording_outside():
    tape, _, _ = _tape_with(lambda x: x * x)
    with tape.stop_recording():
        pass


def _custom(grad_fn, x=None):
    x = ad.constant([1.0, 2.0]) if x is None else x

    @ad.custom_gradient
    def f(v):
        return v * 2.0, grad_fn

    with ad.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x)


def _custom_two_inputs(grad_fn):
    @ad.custom_gradient
    def f(a, b):
        return a * b, grad_fn

    a, b = ad.constant(1.0), ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch([a, b])
        y = f(a, b)
    return tape.gradient(y, [a, b])


def _apply(opt, var, grad):
    return opt.apply_gradients([(grad, var)])


def _dense_then(shape_first, shape_then):
    layer = ad.keras.layers.Dense(2)
    layer(ad.ones(shape_first))
    return layer(ad.ones(shape_then))


def _register(op_type, rule):
    return ad.RegisterGradient(op_type)(rule)


def _override(op_type):
    with ad.extend.gradient_override(op_type, lambda op, g: g):
        pass


def _device(name):
    with ad.device(name):
        pass


def _sin():
    return ad.extend.lookup("Sin")


# (id, call, expected error type, a pattern the message must contain: the op's name)
CASES = [
    # -- conversion and creation ----------------------------------------------------------------
    ("constant float list into int32", lambda: ad.constant([1.5, 2.7], dtype=ad.int32), TypeError, "constant"),
    ("constant float into int32", lambda: ad.constant(2.5, dtype="int32"), TypeError, "constant"),
    ("constant float into bool", lambda: ad.constant([1.0], dtype=ad.bool), TypeError, "constant"),
    ("constant wrong element count for shape", lambda: ad.constant([1.0, 2.0, 3.0], shape=(2, 2)), TypeError, "constant"),
    ("constant shape of floats", lambda: ad.constant(1.0, shape=(2.5,)), TypeError, "constant"),
    ("constant int out of range", lambda: ad.constant(300, dtype=ad.uint8), TypeError, "constant"),
    ("constant of text", lambda: ad.constant("abc"), TypeError, "constant"),
    ("constant non-rectangular", lambda: ad.constant([[1, 2], [3]]), ValueError, "constant"),
    ("constant unknown dtype", lambda: ad.constant(1.0, dtype="float128"), TypeError, "constant"),
    ("convert_to_tensor dtype of a tensor", lambda: ad.convert_to_tensor(x23, dtype=ad.int32), TypeError, "convert_to_tensor"),
    ("convert_to_tensor mixed dtypes", lambda: ad.convert_to_tensor([ad.constant(1.0), ad.constant(1)]), TypeError, "convert_to_tensor"),
    ("Variable without value", lambda: ad.Variable(None), ValueError, "Variable"),
    ("Variable declared shape differs", lambda: ad.Variable([1.0], shape=(2,)), ValueError, "Variable"),
    ("Variable float into int on assign", lambda: ad.Variable([1, 2]).assign([1.5, 2.7]), TypeError, "assign"),
    ("Variable assign shape", lambda: ad.Variable([2.0, 3.0]).assign([1.0, 2.0, 3.0]), ValueError, "assign"),
    ("Variable assign_add float into int", lambda: ad.Variable([1, 2]).assign_add([0.5, 0.5]), TypeError, "assign_add"),
    ("Variable assign_add broadcast", lambda: ad.Variable([1.0, 2.0]).assign_add([1.0]), E.InvalidArgumentError,
     "assign_add of 'Variable:0': cannot update a variable of shape (2,) with a tensor of shape (1,)"),
    ("Variable assign_sub of a scalar", lambda: ad.Variable([1.0, 2.0]).assign_sub(1.0), E.InvalidArgumentError,
     "assign_sub of 'Variable:0': cannot update a variable of shape (2,) with a tensor of shape ()"),
    ("Variable assign tensor of another dtype", lambda: ad.Variable([1.0]).assign(ad.constant([1])), TypeError, "assign"),
    ("zeros negative dimension", lambda: ad.zeros((-1, 2)), E.InvalidArgumentError, "zeros"),
    ("zeros float dimension", lambda: ad.zeros((2.5, 2)), TypeError, "zeros"),
    ("zeros shape text", lambda: ad.zeros("ab"), TypeError, "zeros"),
    ("ones None dimension", lambda: ad.ones([2, None]), TypeError, "ones"),
    ("fill non-scalar value", lambda: ad.fill([2], [1.0, 2.0]), E.InvalidArgumentError, "Fill"),
    ("eye float rows", lambda: ad.eye(2.5), TypeError, "eye"),
    ("eye negative", lambda: ad.eye(-1), E.InvalidArgumentError, "eye"),
    ("range delta 0", lambda: ad.range(0, 10, 0), E.InvalidArgumentError, "Range"),
    ("range wrong direction", lambda: ad.range(10, 0, 1), E.InvalidArgumentError, "Range"),
    ("range of text", lambda: ad.range("a"), TypeError, "Range"),
    ("linspace num 0", lambda: ad.linspace(0.0, 1.0, 0), E.InvalidArgumentError, "LinSpace"),
    ("linspace float num", lambda: ad.linspace(0.0, 1.0, 2.5), TypeError, "LinSpace"),
    ("linspace shapes differ", lambda: ad.linspace([0.0, 1.0], [1.0], 3), E.InvalidArgumentError, "LinSpace"),
    ("one_hot float indices", lambda: ad.one_hot([0.5], 3), TypeError, "OneHot"),
    ("one_hot negative depth", lambda: ad.one_hot([0], -1), E.InvalidArgumentError, "OneHot"),
    ("one_hot axis", lambda: ad.one_hot([0, 1], 3, axis=5), E.InvalidArgumentError, "OneHot"),
    ("random.normal negative shape", lambda: ad.random.normal([-1]), E.InvalidArgumentError, "random.normal"),
    ("random.uniform float shape", lambda: ad.random.uniform([1.5]), TypeError, "random.uniform"),
    ("random.uniform int without maxval", lambda: ad.random.uniform([2], dtype=ad.int32), ValueError, "random.uniform"),
    ("TensorShape of floats", lambda: ad.TensorShape([2.5]), TypeError, "TensorShape"),
    ("convert_to_tensor None into float32", lambda: ad.convert_to_tensor(None, dtype=ad.float32), ValueError,
     "convert_to_tensor: cannot convert None"),
    ("constant with a None inside", lambda: ad.constant([1.0, None]), ValueError, "constant: cannot convert [1.0, None]"),
    ("zeros of 1e6 by 1e6", lambda: ad.zeros([1e6, 1e6]), TypeError, "zeros: every dimension"),
    ("zeros too large to allocate", lambda: ad.zeros([10**6, 10**6]), E.ResourceExhaustedError,
     "zeros: OOM when allocating a tensor of shape (1000000, 1000000) and dtype float32"),
    ("zeros past any array's size", lambda: ad.zeros([10**10, 10**10]), E.ResourceExhaustedError, "zeros: OOM"),
    ("ones too large to allocate", lambda: ad.ones([10**6, 10**6], dtype=ad.float64), E.ResourceExhaustedError,
     "ones: OOM when allocating a tensor of shape (1000000, 1000000) and dtype float64"),
    ("fill too large to allocate", lambda: ad.fill([10**6, 10**6], 1.0), E.ResourceExhaustedError, "Fill: OOM"),
    ("random.normal too large to allocate", lambda: ad.random.normal([10**6, 10**6]), E.ResourceExhaustedError,
     "random.normal: OOM"),
    ("random.set_seed of text", lambda: ad.random.set_seed("x"), TypeError,
     "random.set_seed: seed must be an integer or None, got 'x'"),
    ("random.uniform float seed", lambda: ad.random.uniform([2], seed=1.5), TypeError, "random.uniform: seed"),
    ("TensorShape negative", lambda: ad.TensorShape([-3]), ValueError, "TensorShape"),
    # -- shapes and axes ----------------------------------------------------------------------------
    ("reshape float shape", lambda: ad.reshape(x23, (2.9, 3.1)), TypeError, "Reshape"),
    ("reshape text shape", lambda: ad.reshape(x23, "ab"), TypeError, "Reshape"),
    ("reshape wrong count", lambda: ad.reshape(x23, [4, 2]), E.InvalidArgumentError, "Reshape"),
    ("reshape two -1", lambda: ad.reshape(x23, [-1, -1]), E.InvalidArgumentError, "Reshape"),
    ("reshape -2", lambda: ad.reshape(x23, [-2, 3]), E.InvalidArgumentError, "Reshape"),
    ("reshape float tensor shape", lambda: ad.reshape(x23, ad.constant([3.0, 2.0])), TypeError, "Reshape"),
    ("transpose float perm", lambda: ad.transpose(x23, perm=[0.5, 1]), TypeError, "Transpose"),
    ("transpose repeated perm", lambda: ad.transpose(x23, perm=[0, 0]), E.InvalidArgumentError, "Transpose"),
    ("transpose short perm", lambda: ad.transpose(x23, perm=[0]), E.InvalidArgumentError, "Transpose"),
    ("concat float axis", lambda: ad.concat([x23, x23], axis=0.5), TypeError, "ConcatV2"),
    ("concat axis out of range", lambda: ad.concat([x23, x23], axis=5), E.InvalidArgumentError, "ConcatV2"),
    ("concat nothing", lambda: ad.concat([], 0), E.InvalidArgumentError, "ConcatV2"),
    ("concat shapes differ", lambda: ad.concat([x23, ad.ones((2, 2))], 0), E.InvalidArgumentError, "ConcatV2"),
    ("concat dtypes differ", lambda: ad.concat([x23, ad.ones((2, 3), dtype=ad.int32)], 0), TypeError, "ConcatV2"),
    ("concat scalars", lambda: ad.concat([ad.constant(1.0), ad.constant(2.0)], 0), E.InvalidArgumentError, "ConcatV2"),
    ("stack shapes differ", lambda: ad.stack([x23, ad.ones((3, 2))]), E.InvalidArgumentError, "Pack"),
    ("stack nothing", lambda: ad.stack([]), E.InvalidArgumentError, "Pack"),
    ("stack bool axis", lambda: ad.stack([x23, x23], axis=True), TypeError, "Pack"),
    ("unstack scalar", lambda: ad.unstack(ad.constant(1.0)), E.InvalidArgumentError, "unstack"),
    ("unstack axis", lambda: ad.unstack(x23, axis=3), E.InvalidArgumentError, "unstack"),
    ("unstack num", lambda: ad.unstack(x23, num=5), E.InvalidArgumentError, "unstack"),
    ("expand_dims float axis", lambda: ad.expand_dims(x23, 1.5), TypeError, "ExpandDims"),
    ("expand_dims axis", lambda: ad.expand_dims(x23, 5), E.InvalidArgumentError, "ExpandDims"),
    ("squeeze a non-1 axis", lambda: ad.squeeze(x23, axis=0), E.InvalidArgumentError, "Squeeze"),
    ("squeeze float axis", lambda: ad.squeeze(ad.ones((1, 2)), axis=0.0), TypeError, "Squeeze"),
    ("broadcast_to incompatible", lambda: ad.broadcast_to(x23, [3, 5]), E.InvalidArgumentError, "BroadcastTo"),
    ("broadcast_to float shape", lambda: ad.broadcast_to(x23, [2.5]), TypeError, "BroadcastTo"),
    ("reduce_sum float axis", lambda: ad.reduce_sum(x23, axis=1.9), TypeError, "Sum"),
    ("reduce_sum axis out of range", lambda: ad.reduce_sum(x23, axis=5), E.InvalidArgumentError, "Sum"),
    ("reduce_mean text axis", lambda: ad.reduce_mean(x23, axis="a"), TypeError, "Mean"),
    ("reduce_max axis list", lambda: ad.reduce_max(x23, axis=[0, 7]), E.InvalidArgumentError, "Max"),
    ("reduce_sum of bools", lambda: ad.reduce_sum(b2), E.InvalidArgumentError, "Sum"),
    ("reduce_sum axis twice", lambda: ad.reduce_sum(x23, axis=[0, 0]), E.InvalidArgumentError,
     "Sum: axis [0, 0] names dimension 0 more than once"),
    ("reduce_mean axis twice by a negative index", lambda: ad.reduce_mean(x23, axis=[0, -2]), E.InvalidArgumentError,
     "Mean: axis [0, -2] names dimension 0 more than once"),
    ("norm axis twice", lambda: ad.norm(x23, axis=[1, 1]), E.InvalidArgumentError, "norm: axis [1, 1]"),
    ("reduce_prod float tensor axis", lambda: ad.reduce_prod(x23, axis=ad.constant(1.0)), TypeError, "Prod"),
    ("argmax float axis", lambda: ad.argmax(x23, axis=2.0), TypeError, "ArgMax"),
    ("argmax axis out of range", lambda: ad.argmax(x23, axis=9), E.InvalidArgumentError, "ArgMax"),
    ("index out of range", lambda: x23[5], E.InvalidArgumentError, "StridedSlice"),
    ("index by text", lambda: x23["a"], E.InvalidArgumentError, "StridedSlice"),
    ("pad negative", lambda: ad.pad(x23, [[-1, 0], [0, 0]]), E.InvalidArgumentError, "Pad"),
    ("pad paddings per axis", lambda: ad.pad(x23, [[1, 1]]), E.InvalidArgumentError, "Pad"),
    ("pad float padding", lambda: ad.pad(x23, [[1.5, 0], [0, 0]]), TypeError, "Pad"),
    ("pad mode", lambda: ad.pad(x23, [[1, 1], [0, 0]], mode="WRAP"), E.InvalidArgumentError, "Pad"),
    ("pad reflect too far", lambda: ad.pad(x23, [[2, 0], [0, 0]], mode="REFLECT"), E.InvalidArgumentError, "Pad"),
    ("pad constant_values vector", lambda: ad.pad(x23, [[1, 0], [0, 0]], constant_values=[1.0, 2.0]),
     E.InvalidArgumentError, "Pad"),
    # -- dtypes -----------------------------------------------------------------------------------------
    ("add bools", lambda: ad.add(b2, b2), E.InvalidArgumentError, "Add"),
    ("multiply bools", lambda: ad.multiply(b2, b2), E.InvalidArgumentError, "Mul"),
    ("subtract bools", lambda: ad.subtract(b2, b2), E.InvalidArgumentError, "Sub"),
    ("pow bools", lambda: ad.pow(b2, b2), E.InvalidArgumentError, "Pow"),
    ("maximum bools", lambda: ad.maximum(b2, b2), E.InvalidArgumentError, "Maximum"),
    ("matmul bools", lambda: ad.matmul(ad.constant([[True]]), ad.constant([[False]])), E.InvalidArgumentError, "MatMul"),
    ("negative bool", lambda: ad.negative(b2), E.InvalidArgumentError, "Neg"),
    ("sqrt int32", lambda: ad.sqrt(i3), E.InvalidArgumentError, "Sqrt"),
    ("log int32", lambda: ad.math.log(i3), E.InvalidArgumentError, "Log"),
    ("exp int32", lambda: ad.exp(i3), E.InvalidArgumentError, "Exp"),
    ("sin int32", lambda: ad.sin(i3), E.InvalidArgumentError, "Sin"),
    ("tanh int32", lambda: ad.tanh(i3), E.InvalidArgumentError, "Tanh"),
    ("sigmoid int32", lambda: ad.sigmoid(i3), E.InvalidArgumentError, "Sigmoid"),
    ("softmax int32", lambda: ad.nn.softmax(i3), E.InvalidArgumentError, "Softmax"),
    ("log_softmax int32", lambda: ad.nn.log_softmax(i3), E.InvalidArgumentError, "LogSoftmax"),
    ("relu bool", lambda: ad.nn.relu(b2), E.InvalidArgumentError, "Relu"),
    ("elu int32", lambda: ad.nn.elu(i3), E.InvalidArgumentError, "Elu"),
    ("erf int32", lambda: ad.math.erf(i3), E.InvalidArgumentError, "Erf"),
    ("reduce_std int32", lambda: ad.math.reduce_std(i3), E.InvalidArgumentError, "reduce_std"),
    ("float32 plus int32", lambda: ad.constant(1.0) + ad.constant(1), TypeError, "Add"),
    ("matmul float32 and float64", lambda: ad.matmul(x23, ad.ones((3, 1), dtype=ad.float64)), E.DTypeMismatchError, "MatMul"),
    ("int32 tensor times 1.5", lambda: i3 * 1.5, TypeError, "Mul"),
    ("divide bools", lambda: b2 / b2, TypeError, "truediv"),
    ("divide int32 by float32", lambda: ad.divide(i3, ad.constant([1.0, 2.0, 3.0])), E.DTypeMismatchError, "truediv"),
    ("integer division by zero", lambda: i3 // 0, E.InvalidArgumentError, "FloorDiv"),
    ("cast to an unknown dtype", lambda: ad.cast(x23, "float128"), TypeError, "Cast"),
    ("where int condition", lambda: ad.where(i3, i3, i3), TypeError, "SelectV2"),
    ("where with x only", lambda: ad.where(b2, b2), ValueError, "SelectV2"),
    ("where shapes", lambda: ad.where(b2, x23, x23), E.InvalidArgumentError, "SelectV2"),
    ("clip_by_value bools", lambda: ad.clip_by_value(b2, False, True), E.InvalidArgumentError, "ClipByValue"),
    ("add_n empty", lambda: ad.add_n([]), E.InvalidArgumentError, "AddN"),
    ("add_n shapes", lambda: ad.add_n([x23, ad.ones((3,))]), E.InvalidArgumentError, "AddN"),
    ("add_n of a tensor", lambda: ad.add_n(x23), TypeError, "AddN"),
    ("reciprocal bool", lambda: ad.math.reciprocal(b2), E.InvalidArgumentError, "Reciprocal"),
    ("logical_and of floats", lambda: ad.logical_and(ad.constant([1.0]), ad.constant([0.0])), E.InvalidArgumentError,
     "LogicalAnd: input 0 must be a bool tensor, got dtype float32"),
    ("logical_or with an int", lambda: ad.logical_or(b2, ad.constant([1, 0])), E.InvalidArgumentError,
     "LogicalOr: input 1 must be a bool tensor, got dtype int32"),
    ("logical_not of a number", lambda: ad.logical_not(1.0), E.InvalidArgumentError, "LogicalNot: input 0"),
    # -- text where a number belongs: the op is named, not the conversion inside it -----------------------
    ("exp of text", lambda: ad.exp("abc"), TypeError, "Exp: cannot make a tensor of numbers from 'abc'"),
    ("relu of text", lambda: ad.nn.relu("x"), TypeError, "Relu: cannot make a tensor of numbers from 'x'"),
    ("sign of text", lambda: ad.sign("a"), TypeError, "Sign: cannot make a tensor of numbers from 'a'"),
    ("cast of text", lambda: ad.cast("1.0", ad.float32), TypeError, "Cast: cannot make a tensor of numbers from '1.0'"),
    ("multiply by text", lambda: ad.multiply(x23, "a"), TypeError, "Mul: cannot make a tensor of numbers from 'a'"),
    ("Dense called on text", lambda: ad.keras.layers.Dense(2)("abc"), TypeError,
     "Dense 'dense"),
    # -- linear algebra --------------------------------------------------------------------------------
    ("matmul inner dimensions", lambda: ad.matmul(x23, x23), E.InvalidArgumentError, "MatMul"),
    ("matmul of a vector", lambda: ad.matmul(ad.ones((3,)), x23), E.InvalidArgumentError, "MatMul"),
    ("inv not square", lambda: ad.linalg.inv(x23), E.InvalidArgumentError, "MatrixInverse"),
    ("inv singular", lambda: ad.linalg.inv(ad.ones((2, 2))), E.InvalidArgumentError, "MatrixInverse"),
    ("det of ints", lambda: ad.linalg.det(ad.constant([[1, 2], [3, 4]])), E.InvalidArgumentError, "MatrixDeterminant"),
    ("solve shapes", lambda: ad.linalg.solve(sq, ad.ones((3, 1))), E.InvalidArgumentError, "MatrixSolve"),
    ("solve vector rhs", lambda: ad.linalg.solve(sq, ad.ones((2,))), E.InvalidArgumentError, "MatrixSolve"),
    ("diag_part of a vector", lambda: ad.linalg.diag_part(ad.ones((3,))), E.InvalidArgumentError, "MatrixDiagPartV3"),
    ("einsum bad character", lambda: ad.einsum("ij*jk", x23, x23), E.InvalidArgumentError, "Einsum"),
    ("einsum operand count", lambda: ad.einsum("ij,jk->ik", x23), E.InvalidArgumentError, "Einsum"),
    ("einsum sizes", lambda: ad.einsum("ij,jk->ik", x23, x23), E.InvalidArgumentError, "Einsum"),
    ("einsum unknown output letter", lambda: ad.einsum("ij->iz", x23), E.InvalidArgumentError, "Einsum"),
    ("einsum rank", lambda: ad.einsum("ijk->i", x23), E.InvalidArgumentError, "Einsum"),
    ("einsum equation not text", lambda: ad.einsum(3, x23), TypeError, "Einsum"),
    ("norm negative ord", lambda: ad.norm(x23, ord=-1), E.InvalidArgumentError, "norm"),
    ("norm three axes", lambda: ad.norm(ad.ones((2, 2, 2)), axis=[0, 1, 2]), E.InvalidArgumentError, "norm"),
    ("norm of ints", lambda: ad.norm(i3), E.InvalidArgumentError, "norm"),
    # -- neural-network ops ------------------------------------------------------------------------------
    ("sparse cross entropy label out of range",
     lambda: ad.nn.sparse_softmax_cross_entropy_with_logits(ad.constant([3]), ad.ones((1, 3))),
     E.InvalidArgumentError, "SparseSoftmaxCrossEntropyWithLogits"),
    ("sparse cross entropy float labels",
     lambda: ad.nn.sparse_softmax_cross_entropy_with_logits(ad.constant([1.0]), ad.ones((1, 3))),
     TypeError, "SparseSoftmaxCrossEntropyWithLogits"),
    ("sparse cross entropy label shape",
     lambda: ad.nn.sparse_softmax_cross_entropy_with_logits(ad.constant([0, 1]), ad.ones((1, 3))),
     E.InvalidArgumentError, "SparseSoftmaxCrossEntropyWithLogits"),
    ("softmax cross entropy shapes",
     lambda: ad.nn.softmax_cross_entropy_with_logits(ad.ones((2, 2)), ad.ones((2, 3))), ValueError,
     "softmax_cross_entropy_with_logits"),
    ("sigmoid cross entropy shapes",
     lambda: ad.nn.sigmoid_cross_entropy_with_logits(ad.ones((2,)), ad.ones((3,))), ValueError,
     "sigmoid_cross_entropy_with_logits"),
    ("softmax axis", lambda: ad.nn.softmax(x23, axis=4), E.InvalidArgumentError, "Softmax"),
    ("leaky_relu text alpha", lambda: ad.nn.leaky_relu(x23, alpha="a"), TypeError, "LeakyRelu"),
    ("adjust_contrast of a matrix", lambda: ad.image.adjust_contrast(x23, 2.0), ValueError, "adjust_contrast"),
    # -- tapes and gradients -------------------------------------------------------------------------------
    ("watch a NumPy array", lambda: ad.GradientTape().watch(np.array(1.0)), ValueError, "watch"),
    ("int output_gradients", lambda: _gradient(output_gradients=ad.constant([1, 1])), TypeError, "output_gradients"),
    ("output_gradients shape", lambda: _gradient(output_gradients=ad.ones((3,))), ValueError, "output_gradients"),
    ("output_gradients count", lambda: _gradient(output_gradients=[ad.ones((2,)), ad.ones((2,))]), ValueError,
     "output_gradients"),
    ("unconnected_gradients value", lambda: _gradient(unconnected_gradients="maybe"), ValueError, "unconnected_gradients"),
    ("gradient of None", lambda: _tape_with(lambda x: x)[0].gradient(None, ad.constant(1.0)), ValueError, "GradientTape"),
    ("second gradient of a non-persistent tape", _twice, RuntimeError, "GradientTape.gradient"),
    ("stop_recording of a stopped tape", _stop_recording_outside, RuntimeError, "stop_recording"),
    ("jacobian of a list", lambda: (lambda t, x, y: t.jacobian([y, y], x))(*_tape_with(lambda x: x * x)), TypeError,
     "jacobian"),
    ("batch_jacobian of a vector", lambda: (lambda t, x, y: t.batch_jacobian(y, x))(*_tape_with(lambda x: x * x)),
     ValueError, "batch_jacobian"),
    ("loop jacobian on a non-persistent tape",
     lambda: (lambda t, x, y: t.jacobian(y, x, experimental_use_pfor=False))(*_tape_with(lambda x: x * x)),
     RuntimeError, "jacobian"),
    ("custom_gradient wrong count", lambda: _custom_two_inputs(lambda dy: dy), ValueError, "custom_gradient"),
    ("custom_gradient wrong shape", lambda: _custom(lambda dy: ad.reduce_sum(dy)), E.InvalidArgumentError,
     "custom_gradient"),
    ("custom_gradient wrong dtype", lambda: _custom(lambda dy: ad.cast(dy, ad.float64)), TypeError, "custom_gradient"),
    ("custom_gradient too many for one input", lambda: _custom(lambda dy: (dy, dy)), ValueError, "custom_gradient"),
    ("custom_gradient function without grad_fn",
     lambda: ad.custom_gradient(lambda v: v * 2.0)(ad.constant(1.0)), TypeError, "custom_gradient"),
    ("RegisterGradient of a built-in op", lambda: _register("Sin", lambda op, g: g), KeyError, "RegisterGradient"),
    ("RegisterGradient of a number", lambda: ad.RegisterGradient(5), TypeError, "RegisterGradient"),
    ("RegisterGradient of a non-function", lambda: _register("MyOpWithoutRule", 3), TypeError, "RegisterGradient"),
    ("no_gradient of a differentiable op", lambda: ad.no_gradient("Mul"), KeyError, "no_gradient"),
    ("no_gradient of no op", lambda: ad.no_gradient("NoSuchOp"), LookupError, "no_gradient"),
    ("gradient_override of no op", lambda: _override("NoSuchOp"), LookupError, "gradient_override"),
    ("ForwardAccumulator int primal", lambda: ad.autodiff.ForwardAccumulator(i3, i3), ValueError, "ForwardAccumulator"),
    ("ForwardAccumulator None tangent", lambda: ad.autodiff.ForwardAccumulator(ad.constant(3.0), None), ValueError,
     "ForwardAccumulator: the tangent for the primal of shape () is None"),
    ("GradientTape persistent text", lambda: ad.GradientTape(persistent="no"), TypeError,
     "GradientTape: persistent must be True or False, got 'no'"),
    ("GradientTape watch_accessed_variables number", lambda: ad.GradientTape(watch_accessed_variables=2), TypeError,
     "GradientTape: watch_accessed_variables must be True or False, got 2"),
    ("compute_gradient of an int32 argument", lambda: ad.test.compute_gradient(lambda v: v * v, [ad.constant(2)]),
     AssertionError, "compute_gradient: cannot compute a gradient for argument 0 of dtype int32"),
    ("compute_gradient of an int32 result",
     lambda: ad.test.compute_gradient(lambda v: ad.cast(v, ad.int32), [ad.constant(2.0)]), AssertionError,
     "compute_gradient: cannot compute a gradient for y"),
    ("execute of one tensor", lambda: ad.extend.execute(_sin(), ad.constant([1.0, 2.0])), TypeError,
     "Sin: execute takes a tuple of tensors"),
    ("execute of an op name", lambda: ad.extend.execute("Sin", (ad.constant(1.0),)), TypeError,
     "taken with ad.extend.lookup('Sin'); got str 'Sin'"),
    ("defop without functions", lambda: ad.extend.defop("BadInputNoForward", None, None), TypeError,
     "defop('BadInputNoForward'): forward must be a function"),
    ("defop with a None rule", lambda: ad.extend.defop("BadInputNoneRule", lambda xp, x: x, None), TypeError,
     "defop('BadInputNoneRule'): grad must be a function"),
    ("defop with a number for jvp", lambda: ad.extend.defop("BadInputJvp", lambda xp, x: x, jvp=3), TypeError,
     "defop('BadInputJvp'): jvp must be a function"),
    ("defop unnamed", lambda: ad.extend.defop("", lambda xp, x: x), TypeError, "defop: the op type"),
    ("defop with a direct rule but no gradient rule", lambda: ad.extend.defop("BadInputDirect", lambda xp, x: x,
                                                                            direct=lambda rec, g, reach: (g,)),
     TypeError, "defop('BadInputDirect'): direct must be a function direct(record, upstream, reach) beside a "
                "gradient function"),
    ("check_rule with a number as rule", lambda: ad.classroom.check_rule("Sin", 5, ad.sin, 0.5), TypeError,
     "check_rule('Sin', rule, f, inputs): rule must be a function rule(op, grad), or None"),
    ("check_rule with a number as f", lambda: ad.classroom.check_rule("Sin", None, 3, 0.5), TypeError,
     "check_rule('Sin', rule, f, inputs): f must be a function"),
    ("check_prediction of None", lambda: ad.classroom.check_prediction(None, 1.0, 2.0), TypeError,
     "check_prediction(f, inputs, predicted): f must be the function whose gradient is predicted, got NoneType"),
    ("ForwardAccumulator tangent shape",
     lambda: ad.autodiff.ForwardAccumulator(x23, ad.ones((3,))), ValueError, "ForwardAccumulator"),
    # -- models and optimizers -------------------------------------------------------------------------
    ("Dense text units", lambda: ad.keras.layers.Dense("abc"), TypeError, "Dense"),
    ("Dense zero units", lambda: ad.keras.layers.Dense(0), ValueError, "Dense"),
    ("Dense fractional units", lambda: ad.keras.layers.Dense(2.5), TypeError, "Dense"),
    ("Dense unknown activation", lambda: ad.keras.layers.Dense(2, activation="nope"), ValueError, "activation"),
    ("Dense inputs changed", lambda: _dense_then((2, 3), (2, 4)), ValueError, "Dense"),
    ("Dense rank-1 inputs", lambda: ad.keras.layers.Dense(2)(ad.ones((3,))), ValueError, "Dense"),
    ("SGD text learning rate", lambda: ad.keras.optimizers.SGD("fast"), TypeError, "SGD"),
    ("Adam text beta", lambda: ad.keras.optimizers.Adam(beta_1="x"), TypeError, "Adam"),
    ("SGD step on an int variable", lambda: _apply(ad.keras.optimizers.SGD(0.1), ad.Variable([1, 2]), ad.constant([1, 1])),
     TypeError, "SGD"),
    ("SGD gradient shape", lambda: _apply(ad.keras.optimizers.SGD(0.1), ad.Variable([1.0]), ad.ones((2,))), ValueError,
     "SGD"),
    ("apply_gradients to a tensor", lambda: _apply(ad.keras.optimizers.SGD(0.1), ad.ones((1,)), ad.ones((1,))),
     TypeError, "apply_gradients"),
    ("BatchNormalization text momentum", lambda: ad.keras.layers.BatchNormalization(momentum="x"), TypeError,
     "BatchNormalization"),
    ("keras.Model functional form", lambda: ad.keras.Model(ad.ones((1,)), ad.ones((1,))), TypeError, "keras.Model"),
    ("initializer unknown", lambda: ad.keras.layers.Dense(2, kernel_initializer="nope"), ValueError, "initializer"),
    # -- everything else ------------------------------------------------------------------------------------
    ("name_scope empty", lambda: ad.name_scope("").__enter__(), ValueError, "name_scope"),
    ("set_backend unknown", lambda: ad.set_backend("jax"), ValueError, "backend"),
    ("device name", lambda: _device("TPU please"), ValueError, "device"),
    ("device type", lambda: ad.config.list_physical_devices("TPU"), ValueError, "list_physical_devices"),
    ("format a vector with a spec", lambda: format(ad.constant([1.0, 2.0]), ".2f"), TypeError, "format"),
    ("float of a vector", lambda: float(ad.constant([1.0, 2.0])), ValueError, "float"),
    ("len of a scalar", lambda: len(ad.constant(1.0)), TypeError, "len"),
    ("Dataset batch 0", lambda: ad.data.Dataset.from_tensor_slices(ad.ones((4,))).batch(0), ValueError, "batch"),
    ("Dataset batch 2.5", lambda: ad.data.Dataset.from_tensor_slices(ad.ones((4,))).batch(2.5), TypeError,
     "Dataset.batch: batch_size must be an integer, got 2.5"),
    ("Dataset take 1.5", lambda: ad.data.Dataset.from_tensor_slices(ad.ones((4,))).take(1.5), TypeError,
     "Dataset.take: count must be an integer, got 1.5"),
    ("Dataset shuffle 1.5", lambda: ad.data.Dataset.from_tensor_slices(ad.ones((4,))).shuffle(1.5), TypeError,
     "Dataset.shuffle: buffer_size must be an integer, got 1.5"),
    ("Dataset shuffle seed 0.5", lambda: ad.data.Dataset.from_tensor_slices(ad.ones((4,))).shuffle(4, seed=0.5),
     TypeError, "Dataset.shuffle: seed must be an integer, got 0.5"),
    ("Module name with a space", lambda: ad.Module(name="bad name"), ValueError, "'bad name' is not a valid module name"),
    ("Module name a number", lambda: ad.Module(name=5), TypeError, "Module: name must be a string, got 5"),
    ("Layer name with a slash", lambda: ad.keras.layers.Dense(2, name="a/b"), ValueError, "cannot contain the character '/'"),
    ("Dataset lengths differ",
     lambda: ad.data.Dataset.from_tensor_slices((ad.ones((4,)), ad.ones((3,)))), ValueError, "from_tensor_slices"),
    ("clip_by_norm of ints", lambda: ad.clip_by_norm(i3, 1.0), E.InvalidArgumentError, "clip_by_norm"),
]

# Through Python's operators: the checks live in the op core (_tensor.binary, unary, as_tensor).
OPERATOR_CASES = [
    ("operator + on bools", lambda: b2 + b2, E.InvalidArgumentError, "Add"),
    ("operator * on bools", lambda: b2 * b2, E.InvalidArgumentError, "Mul"),
    ("operator ** on bools", lambda: b2 ** b2, E.InvalidArgumentError, "Pow"),
    ("abs() of bools", lambda: abs(b2), E.InvalidArgumentError, "Abs"),
    ("uint8 tensor plus 256", lambda: ad.constant([1], dtype=ad.uint8) + 256, TypeError, "Add"),
    ("tensor plus None", lambda: x23 + None, TypeError, "Add"),
]


@pytest.mark.parametrize("what, call, error, op", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_with_a_message_naming_the_op(what, call, error, op):
    with pytest.raises(error) as info:
        call()
    message = str(info.value.args[0]) if isinstance(info.value, KeyError) else str(info.value)
    assert re.search(re.escape(op), message), f"{what}: the message does not name {op!r}: {message}"


@pytest.mark.parametrize("what, call, error, op", OPERATOR_CASES, ids=[c[0] for c in OPERATOR_CASES])
def test_bad_input_through_operators(what, call, error, op):
    test_bad_input_is_refused_with_a_message_naming_the_op(what, call, error, op)


def test_the_table_is_large():
    assert len(CASES) >= 100
    assert len({c[0] for c in CASES}) == len(CASES)


def test_extension_ops_get_clear_errors_for_numbers_and_unsaved_inputs():
    from autodiff_viz.extend import PRIMITIVES
    try:
        _extension_op_errors()
    finally:
        PRIMITIVES.pop("BadInputCube", None)  # the table-wide tests must not see it


def _extension_op_errors():
    from autodiff_viz.extend import defop, execute
    cube = defop("BadInputCube", lambda xp, x: x ** 3, lambda op, g: (g * 3.0 * op.inputs[0] ** 2,))  # no save=
    with pytest.raises(ValueError, match=r"'BadInputCube' is already defined .*ad.extend.lookup\('BadInputCube'\)"):
        defop("BadInputCube", lambda xp, x: x, lambda op, g: (g,))  # a notebook cell run twice
    assert ad.extend.lookup("BadInputCube") is cube
    for bad in [(2.0,), 2.0, (ad.constant(1.0), 2.0), (ad.constant(1.0), ad.constant(1.0), 3)]:
        with pytest.raises(TypeError, match=r"BadInputCube: execute takes a tuple of tensors"):
            execute(cube, bad)
    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = execute(cube, (x,))
    assert float(y) == 8.0
    with pytest.raises(TypeError, match=r"gradient rule for BadInputCube: .*None for input 0, the output: .*save="):
        tape.gradient(y, x)
    # A rule's own error that is not about an unsaved value is raised as it was.
    with ad.extend.gradient_override("BadInputCube", lambda op, g: g + "text"):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = execute(cube, (x,))
        with pytest.raises(TypeError) as caught:
            tape.gradient(y, x)
    assert "save=" not in str(caught.value)
