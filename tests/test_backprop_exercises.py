"""The backprop-by-hand exercises (ex4-ex6): a typical slip run through the exercise's own cells is named.

Each wrong answer replaces one solution block; the cell must show the verdict with the slip in words and the
marked graph before its assert stops the notebook.
"""
import pytest

import test_notebooks

jupyter_home = test_notebooks.jupyter_home   # the fixture: kernels write under a temporary HOME
_shows = test_notebooks.test_a_wrong_answer_shows_the_marked_graph_and_names_the_mistake

SLIPS = [
    ("ex4_backprop_by_hand", 0, "return softmax(v.logits) - np.eye(3)[v.y]", "you forgot the 1/n of a mean (n = 4)"),
    ("ex4_backprop_by_hand", 1, "dW2 = dlogits.T @ v.h\ndb2 = dlogits.sum(axis=0)",
     "Missing transpose: your dW2 has shape (3, 5), the transpose of W2 (5, 3)"),
    ("ex4_backprop_by_hand", 1, "dW2 = v.h.T @ dlogits\ndb2 = dlogits", "No sum over the batch: your db2 has shape (4, 3)"),
    ("ex4_backprop_by_hand", 4, "dW1 = v.X.T @ dz1\ndb1 = dz1.sum(axis=1)",
     "Wrong axis: your db1 sums the upstream gradient over axis 1; b1 is broadcast over axis 0"),
    ("ex4_backprop_by_hand", 3, "return dh * (v.h >= 0)", "dz1 is not right"),
    ("ex5_matrix_rules", 1, 'dY = 2 * v.Y\nreturn {"Y": dY, "b": dY.sum(axis=0), "W": v.X.T @ dY}',
     "you forgot the 1/n of a mean (n = 8)"),
    ("ex5_matrix_rules", 3, 'return {"Z": v.S * (C2 - (C2 * v.S).sum(axis=0))}', "dZ is not right"),
    ("ex6_modes_and_depth", 0, 'return {"u": 1.0, "s": 1.0, "x1": v.x2, "x2": v.x1}',
     "x1 is used 2 times; the tape adds the gradients of its uses"),
]


@pytest.mark.parametrize("name, block, code, words", SLIPS, ids=[f"{s[0][:3]}-{i}" for i, s in enumerate(SLIPS)])
def test_a_backprop_slip_shows_the_marked_graph_and_is_named(name, block, code, words, tmp_path, jupyter_home):
    _shows(name, block, code, words, tmp_path, jupyter_home)
