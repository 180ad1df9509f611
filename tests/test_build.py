"""The build: show_config, ISA selection, the Sum16 building block in every
ISA build, and a build without OpenMP giving the same bits."""
import importlib
import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import normops
import normops._isa as isa
from normops import reference

ROOT = Path(__file__).resolve().parents[1]


def test_show_config_prints_and_returns(capsys):
    info = normops.show_config()
    printed = capsys.readouterr().out
    for key in ("version", "isa", "isa_available", "openmp", "max_threads"):
        assert key in info
        assert key in printed
    assert info["version"] == normops.__version__
    assert info["isa"] in info["isa_available"]
    assert info["max_threads"] >= 1
    # exactness needs IEEE subnormals: nobody may have set FTZ/DAZ
    assert not info["flush_to_zero"] and not info["denormals_are_zero"]


def test_best_level_is_the_default():
    if os.environ.get(isa.ENV_VAR):
        pytest.skip("NORMOPS_ISA is set for this run")
    assert isa.kernels.ISA_LEVEL == isa.available_levels()[-1]


def test_an_isa_build_exports_only_its_table_of_loops():
    """An ISA module holds the nogil loops and hands them over in one
    table: no Python entry point of its own (they are in the routes
    module, compiled once)."""
    for level in isa.available_levels():
        module = importlib.import_module(f"normops._kernels.isa_{level}")
        public = {name for name in vars(module) if not name.startswith("__")}
        assert public == {"ISA_LEVEL", "KERNEL_TABLE"}, (level, sorted(public))


def test_every_entry_point_is_a_method_of_every_build():
    """Each function the <family>_entry.pxi files define with a build as
    first argument is listed in KernelBuild, and runs that build's loops."""
    names = set()
    for path in (ROOT / "normops" / "_kernels").glob("*_entry.pxi"):
        for line in path.read_text(encoding="utf-8").splitlines():
            words = line.replace("(", " ").split()
            if words[:1] in (["def"], ["cpdef"]) and "KernelBuild build" in line:
                names.add(words[1] if words[0] == "def" else words[2])
    assert len(names) > 50
    for name in sorted(names):
        assert getattr(isa.routes.KernelBuild, name) is getattr(isa.routes, name), name
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    results = []
    for level in isa.available_levels():
        y = np.empty_like(x)
        isa.load(level).exp32_into(x, y)
        results.append(y.view(np.uint32))
    assert all(np.array_equal(r, results[0]) for r in results)


def _run_child(code, **env):
    full_env = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env)


@pytest.mark.parametrize("level", isa.available_levels())
def test_forced_level_is_used(level):
    out = _run_child("import normops; print(normops.show_config(print_out=False)['isa'])", NORMOPS_ISA=level)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (level if isa.X86_64 else "generic")


def test_unknown_level_is_a_clear_error():
    out = _run_child("import normops", NORMOPS_ISA="avx1024")
    assert out.returncode != 0
    assert "NORMOPS_ISA" in out.stderr and "avx1024" in out.stderr


def test_load_refuses_unknown_levels():
    with pytest.raises(normops.InvalidInputError, match="NORMOPS_ISA"):
        isa.load("sse9")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("level", isa.available_levels())
def test_sum16_building_block(level, dtype):
    """The kernels' Sum16 equals the reference Sum16 bit for bit, including
    orders where a plain left-to-right sum would differ."""
    rng = np.random.default_rng(16)
    kernels = isa.load(level)
    uint = np.uint32 if dtype == np.float32 else np.uint64
    for cols in (1, 2, 15, 16, 17, 31, 32, 33, 100, 1023, 4097):
        rows = 7
        x = (rng.standard_normal((rows, cols)) * 10.0 ** rng.integers(-8, 9, (rows, cols))).astype(dtype)
        out = np.empty(rows, dtype)
        kernels.sum16_rows(x, out, rows, cols)
        want = reference.sum16(x)
        assert np.array_equal(out.view(uint), want.view(uint)), (level, cols)
    # cancellation makes the order visible: 1e8 + 1 - 1e8 differs by grouping
    x = np.zeros((1, 32), dtype)
    x[0, 0], x[0, 1], x[0, 16] = 1e8, 1.0, -1e8
    out = np.empty(1, dtype)
    kernels.sum16_rows(x, out, 1, 32)
    # partial 0 holds (1e8 + -1e8) = 0, partial 1 holds 1: the sum is 1
    assert out[0] == 1.0


def test_kernels_refuse_bad_arguments():
    k = isa.kernels
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError):
        k.row_normalize(x.astype(np.int32), x[0], None, x.copy(), None, None, 2, 3, 1e-5, True, 1)
    with pytest.raises(ValueError):
        k.row_normalize(x, x[0, :2], None, x.copy(), None, None, 2, 3, 1e-5, True, 1)
    with pytest.raises(ValueError):
        k.row_normalize(x, x[0], None, np.ones((3, 2), np.float32).T, None, None, 2, 3, 1e-5, True, 1)


@pytest.mark.slow
def test_build_without_openmp_gives_the_same_bits(tmp_path):
    """NORMOPS_DISABLE_OPENMP=1 builds serial kernels that still run (and
    give the bits of the OpenMP build)."""
    src = tmp_path / "src"
    # what the build reads, not the checkout's other contents (a venv, the
    # aarch64 work directory with its sysroot's dangling links, caches)
    shutil.copytree(ROOT / "normops", src / "normops", ignore=shutil.ignore_patterns(
        "*.so", "*.so.build", "*.c", "*.html", "__pycache__"))
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    env = dict(os.environ, NORMOPS_DISABLE_OPENMP="1")
    build = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-j", "2"],
                           cwd=src, capture_output=True, text=True, env=env)
    if build.returncode != 0:
        pytest.fail(build.stdout[-2000:] + build.stderr[-2000:])
    code = (
        "import numpy as np, normops, hashlib, json;"
        "rng = np.random.default_rng(3);"
        "x = rng.standard_normal((300, 999)).astype(np.float32);"
        "w = rng.standard_normal(999).astype(np.float32);"
        "ys = normops.layer_normalization(x, w, w, n_threads=2, full_output=True);"
        "print(json.dumps([normops.show_config(print_out=False)['openmp'],"
        " hashlib.sha256(b''.join(y.tobytes() for y in ys)).hexdigest()]))"
    )
    serial = subprocess.run([sys.executable, "-c", code], cwd=src, capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(src)))
    assert serial.returncode == 0, serial.stderr
    here = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert here.returncode == 0, here.stderr
    import json
    openmp_serial, digest_serial = json.loads(serial.stdout)
    openmp_here, digest_here = json.loads(here.stdout)
    assert openmp_serial is False
    assert digest_serial == digest_here


@pytest.mark.parametrize("in_cache", [0, 1 << 30])
@pytest.mark.parametrize("budget", [0, 16384, 32768, 1 << 30])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_row_grouping_never_changes_bits(budget, in_cache, dtype):
    """Rows are summed 1, 2 or 4 side by side depending on a cache budget,
    and the last step runs one of two loops depending on the range's size;
    every grouping (and the group tails) and both loops give the reference
    bits, at every ISA level, NaN rows (canonical) and a Scale holding an
    infinity (every element checked) included."""
    old = [(level, isa.load(level).set_side_by_side_bytes(budget),
            isa.load(level).set_apply_in_cache_bytes(in_cache)) for level in isa.available_levels()]
    try:
        rng = np.random.default_rng(budget % 97 + in_cache % 89)
        for rows, cols in ((7, 1500), (9, 3000), (5, 33), (3, 5000), (6, 257)):
            x = rng.standard_normal((rows, cols)).astype(dtype)
            x[1, cols // 2] = np.nan
            w = rng.standard_normal(cols).astype(dtype)
            b = rng.standard_normal(cols).astype(dtype)
            w_inf = w.copy()
            w_inf[3] = np.inf
            for op, inputs in (("LayerNormalization", [x, w, b]), ("RMSNormalization", [x, w]),
                               ("LayerNormalization", [x, w_inf, b]), ("RMSNormalization", [x, w_inf])):
                want = reference.run(op, inputs)
                for level in isa.available_levels():
                    with isa.use(level):
                        got = normops.run(op, inputs, n_threads=1)
                    for g, w_ in zip(got, want):
                        assert g.tobytes() == w_.tobytes(), (op, rows, cols, budget, level)
    finally:
        for level, side, cache in old:
            isa.load(level).set_side_by_side_bytes(side)
            isa.load(level).set_apply_in_cache_bytes(cache)


_FAKE_CC = '''import os, sys
args = sys.argv[1:]
out = args[args.index("-o") + 1]
text = " ".join(args)
for a in args:  # linking: the objects' text too
    if a.endswith(".o") and a != out:
        with open(a) as fh:
            text += "\\n" + fh.read()
os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
with open(out, "w") as fh:
    fh.write(text)
'''


def test_rebuild_follows_the_flags(tmp_path):
    """Switching NORMOPS_SANITIZE on and off rebuilds the kernels: setuptools
    alone copies back whatever module in build/ is newer than its C source,
    whatever flags made it. A stand-in compiler writes its arguments as the
    module, so the builds take seconds."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "normops", src / "normops",
                    ignore=shutil.ignore_patterns("*.so", "*.so.build", "__pycache__"))
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    if not (src / "normops" / "_kernels" / "isa_baseline.c").exists():
        pytest.skip("no C source generated by Cython here (generating it takes minutes)")
    fake = tmp_path / "fakecc"
    fake.write_text(f"#!{sys.executable}\n" + _FAKE_CC)
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("NORMOPS_SANITIZE", "LD_PRELOAD", "CFLAGS", "LDFLAGS")}
    env.update(CC=str(fake), LDSHARED=f"{fake} -shared", NORMOPS_ISA_BUILDS="baseline")
    module = next((src / "normops" / "_kernels").glob("isa_baseline.pyx")).with_suffix(
        importlib.machinery.EXTENSION_SUFFIXES[0])

    def build(**extra):
        done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=src,
                              capture_output=True, text=True, env=dict(env, **extra))
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return module.read_text()

    assert "-fsanitize" not in build()
    assert "-fsanitize=address" in build(NORMOPS_SANITIZE="address")
    assert "-fsanitize" not in build()
