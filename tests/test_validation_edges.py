"""Edge cases of validation found in review: every one must give the
documented error or the documented value, never a raw exception or a
silently wrong result."""
import numpy as np
import pytest

import normops
from normops import InvalidInputError, UnsupportedError

X = np.arange(16, dtype=np.float32).reshape(2, 8) / 7
W = np.linspace(0.5, 2, 8, dtype=np.float32)


def test_longdouble_is_refused_not_computed_in_float32():
    x = (1 + np.arange(8, dtype=np.longdouble) * 1e-10)[None]
    if x.dtype.itemsize <= 8:
        pytest.skip("longdouble is float64 on this platform")
    with pytest.raises(InvalidInputError, match="LayerNormalization.*'X'.*dtype"):
        normops.layer_normalization(x, np.ones(8, np.longdouble))
    with pytest.raises(InvalidInputError, match="RMSNormalization.*'scale'"):
        normops.rms_normalization(X, np.ones(8, np.longdouble))
    with pytest.raises(InvalidInputError):
        normops.reference.run("LayerNormalization", [x, np.ones(8, np.longdouble)])


@pytest.mark.parametrize("opset", [17.0, "17", True])
def test_opset_must_be_an_integer_whatever_ran_before(opset):
    normops.run("LayerNormalization", [X, W], opset=17)  # fills the cache
    with pytest.raises(InvalidInputError, match="opset"):
        normops.run("LayerNormalization", [X, W], opset=opset)


def test_numpy_integer_opsets_work():
    a = normops.run("LayerNormalization", [X, W], opset=np.int64(17))[0]
    b = normops.run("LayerNormalization", [X, W], opset=17)[0]
    assert a.tobytes() == b.tobytes()


def test_opsets_newer_than_known_are_unsupported():
    with pytest.raises(UnsupportedError, match="newer"):
        normops.run("LayerNormalization", [X, W], opset=normops.MAX_OPSET + 1)
    normops.run("LayerNormalization", [X, W], opset=normops.MAX_OPSET)


@pytest.mark.parametrize("epsilon", [1e39, np.float64(1e39), 10**400])
def test_epsilon_beyond_float32_becomes_inf_on_every_path(epsilon):
    with np.errstate(all="raise"):  # no stray warning either
        via_run = normops.run("LayerNormalization", [X, W], {"epsilon": epsilon})[0]
    named = normops.layer_normalization(X, W, epsilon=epsilon)
    inf_eps = normops.layer_normalization(X, W, epsilon=float("inf"))
    assert via_run.tobytes() == named.tobytes() == inf_eps.tobytes()


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_matrix_inputs_are_plain_arrays():
    got = normops.layer_normalization(np.asmatrix(X), np.asmatrix(W))
    assert type(got) is np.ndarray
    assert got.tobytes() == normops.layer_normalization(X, W).tobytes()


def test_masked_arrays_are_refused():
    with pytest.raises(InvalidInputError, match="masked"):
        normops.layer_normalization(np.ma.masked_less(X, 0.5), W)


def test_reference_checks_n_threads_too():
    with pytest.raises(InvalidInputError, match="n_threads"):
        normops.reference.run("LayerNormalization", [X, W], n_threads="abc")


@pytest.mark.parametrize("inputs", [None, {"X": X, "Scale": W}, X, "XW", 3])
def test_run_inputs_must_be_a_sequence_of_arrays(inputs):
    # a dict would give its keys and an array its rows: both refused
    for run in (normops.run, normops.reference.run):
        with pytest.raises(InvalidInputError, match="LayerNormalization.*'inputs'"):
            run("LayerNormalization", inputs)
    same = normops.run("LayerNormalization", (v for v in (X, W)))[0]  # any other iterable is fine
    assert np.array_equal(same.view(np.uint32), normops.run("LayerNormalization", [X, W])[0].view(np.uint32))
