"""verify-platform's host side: the digest suite's inputs are fixed, its
digests are the same at every ISA level here, a differing case is named,
and the build flags are setup.py's. The emulated run itself (minutes under
qemu, needing root for its Debian packages) is a step of .ci/run:
``python -m normops verify-platform --setup --quick``."""

import os
import sys
from pathlib import Path

import numpy as np

import normops._isa
from normops_tools import verify_platform as vp

ROOT = Path(__file__).resolve().parent.parent


def test_build_flags_are_setup_pys_and_preserve_values():
    flags, directives = vp.setup_constants(ROOT)
    assert "-ffp-contract=off" in flags
    assert not any("fast-math" in f or f.startswith("-march") for f in flags)
    assert directives["cdivision"] is True


def test_inputs_use_integer_draws_and_exact_arithmetic():
    """The same arrays on every platform: a changed generator or a NumPy
    whose random stream moved would show here before it shows as an
    'INPUTS DIFFER' under emulation."""
    a = vp._values(1, (5, 7), "float32", "special")
    b = vp._values(1, (5, 7), "float32", "special")
    assert a.tobytes() == b.tobytes()
    assert np.isnan(a).any() and np.isinf(a).any()
    n = vp._values(3, (1000,), "float64")
    # (2r - 1) * 2^k with r a multiple of 2^-53: every value is a multiple of 2^-59
    assert np.all(np.ldexp(n, 59) == np.round(np.ldexp(n, 59)))
    assert vp._values(2, (4,), "int8", "wide").dtype == np.int8


def test_digest_names_dtype_shape_and_bytes():
    x = np.arange(6, dtype=np.float32)
    assert vp._digest([x]) != vp._digest([x.reshape(2, 3)])
    assert vp._digest([x]) != vp._digest([x.astype(np.float64)])
    assert vp._digest([x]) == vp._digest([x.astype(">f4")])   # byte order does not matter
    y = x.copy()
    y[3] = np.nextafter(y[3], np.float32(9))
    assert vp._digest([x]) != vp._digest([y])


def test_suite_covers_every_served_operator():
    from normops import _registry
    names = {name.split("/")[0] for name, _, _ in vp._case_list()}
    served = {op.op_type for op in _registry._REGISTRY.values()}
    assert served <= names, sorted(served - names)


def test_suite_is_the_same_at_every_isa_level():
    """A slice of the suite (the normalisations, every dtype, threads 1 and
    3) digested at each level this CPU runs, each in its own process as
    verify-platform runs it."""
    digests = {}
    for level in normops._isa.available_levels():
        env = dict(os.environ, NORMOPS_ISA=level, PYTHONPATH=str(ROOT))
        digests[level] = vp.run_suite([sys.executable, "-m", "normops_tools.verify_platform", "--print-suite",
                                       "--only", "ormalization/float"], env, str(ROOT))
    first = next(iter(digests.values()))
    assert first
    for level, d in digests.items():
        assert vp.compare_suites(first, d, "first", level, report=lambda s: None) == 0, level


def test_compare_names_the_differing_case():
    a = {"x/threads1": ("i", "o1"), "y/threads1": ("i", "o")}
    b = {"x/threads1": ("i", "o2"), "y/threads1": ("j", "o"), "z/threads1": ("i", "o")}
    lines = []
    assert vp.compare_suites(a, b, report=lines.append) == 3
    assert any("DIFFERS x/threads1" in s for s in lines)
    assert any("INPUTS DIFFER y/threads1" in s for s in lines)
    assert any("MISSING z/threads1" in s for s in lines)

