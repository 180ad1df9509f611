"""The exact flavour on another CPU: an aarch64 build of the kernels, run
under user-mode emulation, must give the host's bits.

``python -m normops verify-platform [--setup] [--quick] [--workdir DIR]``

What it does, from a source checkout (it needs ``setup.py`` and the kernel
sources beside the package):

1. **Sysroot** (``--setup``, once): Debian's arm64 packages of Python 3.11
   and the C libraries it loads are downloaded with ``apt-get download`` and
   unpacked with ``dpkg -x`` into ``WORKDIR/sysroot`` (nothing is installed);
   NumPy's aarch64 wheel of the host's NumPy version (``pip download
   --platform manylinux..._aarch64``) and the host's pure-Python
   threadpoolctl go to ``WORKDIR/pylib``.
2. **Build**: the package is copied to ``WORKDIR/stage``, the generic kernel
   module (``isa_baseline.pyx``) is cythonized on the host with the
   directives of ``setup.py`` (the same C file the host builds) and
   compiled with ``aarch64-linux-gnu-gcc`` using ``setup.py``'s
   value-preserving flags (``-O3 -ffp-contract=off -fno-math-errno ...``;
   gcc contracts to fused multiply-add by default on aarch64), NEON through
   the same vector-extension code, with OpenMP (the cross compiler's
   libgomp at link time, the arm64 ``libgomp1`` package's at run time).
   The build is cached under the hash of its sources, flags and compiler.
3. **Digest suite** (:func:`digest_suite`): one fixed list of cases, every
   operator's exact flavour (shapes, axes, opsets, float32/float64/float16
   and integer dtypes, NaN, infinities, signed zeros, subnormals, huge
   values, long reductions; each at 1 and 3 threads), run by this same
   module on the host (in one process per ISA level the CPU runs) and
   under ``qemu-aarch64``; each case prints the SHA-256 of its
   inputs and of its outputs' bytes (dtype, shape, little-endian data; the
   exact flavour's NaNs are canonical, so the raw bytes are compared). A
   case whose digest differs is named.
4. **Transcendentals**: exp32 and log32 (and erf32, tanh32, the exact
   Gelu's) on all 2^32 float32 inputs under emulation, in PASSES
   interleaved passes, each pass's digest compared with the host's as it
   arrives (the host's outputs are proven by ``python -m normops
   verify-transcendentals``); pass 0 is that command's ``--quick`` sample
   and is compared with its recorded digest too. ``--quick`` runs pass 0
   only, ``--passes FIRST:STOP`` a range.

Exit status 0 only when every case and every digest matches.

Prerequisites (Debian 12, as root)::

    apt-get update
    apt-get install gcc-aarch64-linux-gnu qemu-user qemu-user-static
    dpkg --add-architecture arm64 && apt-get update   # --setup does this if needed

and network access to Debian's archive and PyPI for ``--setup``.
"""
import argparse
import ast
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

from . import verify_transcendentals

TRIPLET = "aarch64-linux-gnu"
CROSS_CC = f"{TRIPLET}-gcc"
QEMU = "qemu-aarch64"
PYTHON = "python3.11"
#: Debian arm64 packages unpacked into the sysroot: Python 3.11, its
#: headers, and the shared libraries the interpreter, its standard
#: extension modules and the kernels (libgomp) load.
SYSROOT_PACKAGES = (
    "python3.11-minimal", "libpython3.11-minimal", "libpython3.11-stdlib", "libpython3.11-dev",
    "libpython3.11", "libc6", "libgcc-s1", "libstdc++6", "libgomp1", "zlib1g", "libexpat1",
    "libffi8", "libbz2-1.0", "liblzma5", "libssl3", "libuuid1", "libcrypt1",
    "libtinfo6", "libncursesw6", "libreadline8", "libsqlite3-0",
)
#: manylinux tags pip may pick NumPy's aarch64 wheel from (Debian 12: glibc 2.36)
WHEEL_PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_28_aarch64", "manylinux_2_27_aarch64")
DEFAULT_WORKDIR = Path(os.environ.get("NORMOPS_AARCH64_WORKDIR", Path.home() / ".cache" / "normops-aarch64"))
QUICK_STRIDE = verify_transcendentals.QUICK_STRIDE  # its --quick sample is pass 0 here
TRANSCENDENTALS = ("exp", "log", "erf", "tanh")


class PlatformError(RuntimeError):
    """A step of the setup or the build failed (the message says which)."""


def _run(cmd, **kwargs):
    print("  $ " + " ".join(str(c) for c in cmd), flush=True)
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise PlatformError(f"{cmd[0]} failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done.stdout


def _need_tool(name, package):
    if shutil.which(name) is None:
        raise PlatformError(f"{name} not found: apt-get install {package} (see "
                            f"python -m normops verify-platform --help)")


# ---------------------------------------------------------------- paths

class Workdir:
    """The cache: sysroot, NumPy wheel, staged package, built module."""

    def __init__(self, root):
        self.root = Path(root).expanduser().resolve()
        self.sysroot = self.root / "sysroot"
        self.debs = self.root / "debs"
        self.pylib = self.root / "pylib"
        self.builds = self.root / "builds"
        self.stage = None  # set by build(): the staged package of that build

    @property
    def python(self):
        return self.sysroot / "usr" / "bin" / PYTHON

    def python_includes(self):
        return [self.sysroot / "usr" / "include" / PYTHON,
                self.sysroot / "usr" / "include" / TRIPLET / PYTHON]

    def numpy_include(self):
        return self.pylib / "numpy" / "_core" / "include"

    def ready(self):
        return (self.python.exists() and (self.sysroot / "usr" / "include" / PYTHON / "Python.h").exists()
                and self.numpy_include().exists() and (self.root / "sysroot.ok").exists())


def source_root():
    """The checkout holding setup.py and the kernel sources."""
    root = Path(__file__).resolve().parent.parent
    if not (root / "setup.py").exists() or not (root / "normops" / "_kernels" / "isa_baseline.pyx").exists():
        raise PlatformError("verify-platform needs a source checkout of normops (setup.py and "
                            f"normops/_kernels/*.pyx), not found in {root}")
    return root


def setup_constants(root):
    """COMMON_FLAGS and CYTHON_DIRECTIVES as setup.py defines them (read from
    its source, so that the flags live in one place)."""
    wanted = {"COMMON_FLAGS", "CYTHON_DIRECTIVES"}
    found = {}
    for node in ast.parse((root / "setup.py").read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and getattr(node.targets[0], "id", None) in wanted:
            found[node.targets[0].id] = ast.literal_eval(node.value)
    missing = wanted - set(found)
    if missing:
        raise PlatformError(f"setup.py no longer defines {', '.join(sorted(missing))} as literals")
    return found["COMMON_FLAGS"], found["CYTHON_DIRECTIVES"]


# ---------------------------------------------------------------- setup

def setup_sysroot(work):
    """Download and unpack the arm64 Python and NumPy (see the module doc)."""
    _need_tool("apt-get", "apt")
    _need_tool("dpkg", "dpkg")
    work.root.mkdir(parents=True, exist_ok=True)
    if "arm64" not in _run(["dpkg", "--print-foreign-architectures"]).split():
        _run(["dpkg", "--add-architecture", "arm64"])
        _run(["apt-get", "update"])
    if work.debs.exists():
        shutil.rmtree(work.debs)
    work.debs.mkdir(parents=True)
    try:
        _run(["apt-get", "download"] + [f"{p}:arm64" for p in SYSROOT_PACKAGES], cwd=work.debs)
    except PlatformError:
        _run(["apt-get", "update"])
        _run(["apt-get", "download"] + [f"{p}:arm64" for p in SYSROOT_PACKAGES], cwd=work.debs)
    if work.sysroot.exists():
        shutil.rmtree(work.sysroot)
    work.sysroot.mkdir()
    for deb in sorted(work.debs.glob("*.deb")):
        _run(["dpkg", "-x", deb, work.sysroot])
    # NumPy: the aarch64 wheel of the host's version, unpacked (a wheel is a zip)
    wheels = work.root / "wheels"
    if wheels.exists():
        shutil.rmtree(wheels)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.11",
           "--implementation", "cp", "-d", wheels, f"numpy=={np.__version__}"]
    for tag in WHEEL_PLATFORMS:
        cmd += ["--platform", tag]
    _run(cmd)
    if work.pylib.exists():
        shutil.rmtree(work.pylib)
    work.pylib.mkdir()
    import zipfile
    for wheel in wheels.glob("numpy-*.whl"):
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(work.pylib)
    try:  # pure Python, version-matched: the host's own copy
        import threadpoolctl
        shutil.copy(threadpoolctl.__file__, work.pylib)
    except ImportError:
        pass
    if not work.numpy_include().exists():
        raise PlatformError(f"no NumPy headers under {work.numpy_include()} after unpacking the wheel")
    (work.root / "sysroot.ok").write_text(json.dumps({"packages": SYSROOT_PACKAGES, "numpy": np.__version__}))


# ---------------------------------------------------------------- build

def _cross_compiler_version():
    return _run([CROSS_CC, "--version"]).splitlines()[0]


# the generic kernel build and the routes to it (compiled once in any build)
MODULES = ("isa_baseline", "routes")


def _kernel_sources(pkg):
    kernels = pkg / "_kernels"
    return sorted([kernels / f"{name}.pyx" for name in MODULES] + [p for ext in ("*.pxi", "*.pxd", "*.h")
                                                                 for p in kernels.glob(ext)])


def build(work, *, openmp=True, extra_flags=()):
    """Cross-compile the generic kernel module for aarch64 (cached) and stage
    the package with it (``work.stage``); returns the path of the .so.
    ``extra_flags`` are appended to setup.py's (experiments only: e.g.
    ``-ffp-contract=fast`` shows what the suite catches)."""
    _need_tool(CROSS_CC, "gcc-aarch64-linux-gnu")
    if not work.ready():
        raise PlatformError(f"no sysroot in {work.root}: run python -m normops verify-platform --setup")
    root = source_root()
    pkg = root / "normops"
    flags, directives = setup_constants(root)
    flags = flags + list(extra_flags)
    try:
        import Cython
    except ImportError:
        raise PlatformError("Cython is not installed: pip install 'normops[verify]' "
                            "(verify-platform compiles the kernels)") from None
    key = hashlib.sha256()
    for path in _kernel_sources(pkg):
        key.update(path.name.encode() + b"\0" + path.read_bytes())
    key.update(json.dumps([flags, directives, openmp, Cython.__version__, np.__version__,
                           _cross_compiler_version()]).encode())
    build_dir = work.builds / key.hexdigest()[:16]
    suffix = f".cpython-311-{TRIPLET}.so"
    targets = [build_dir / f"{name}{suffix}" for name in MODULES]
    target = targets[0]
    if not all(t.exists() for t in targets):
        from Cython.Build import cythonize
        src = build_dir / "src"
        if build_dir.exists():
            shutil.rmtree(build_dir)
        shutil.copytree(pkg / "_kernels", src / "normops" / "_kernels",
                        ignore=shutil.ignore_patterns("*.so", "*.c", "__pycache__"))
        (src / "normops" / "__init__.py").write_text("")
        started = time.perf_counter()
        for name, built in zip(MODULES, targets):
            pyx = src / "normops" / "_kernels" / f"{name}.pyx"
            print(f"verify-platform: cythonizing {pyx.name} (Cython {Cython.__version__})", flush=True)
            cythonize([str(pyx)], compiler_directives=directives,
                      include_path=[str(src / "normops" / "_kernels")], quiet=True)
            c_file = pyx.with_suffix(".c")
            includes = work.python_includes() + [work.numpy_include(), src / "normops" / "_kernels"]
            cmd = ([CROSS_CC, "-shared", "-fPIC"] + flags + (["-fopenmp"] if openmp else [])
                   + [f"-I{p}" for p in includes]
                   # pyconfig.h includes <aarch64-linux-gnu/python3.11/pyconfig.h>; searched after the
                   # cross compiler's own C library headers
                   + ["-idirafter", work.sysroot / "usr" / "include"]
                   + ["-DNPY_NO_DEPRECATED_API=NPY_1_7_API_VERSION", c_file, "-o", built])
            print(f"verify-platform: compiling {name} for aarch64 ({'OpenMP' if openmp else 'serial'})", flush=True)
            _run(cmd)
        print(f"verify-platform: built {', '.join(t.name for t in targets)} in "
              f"{time.perf_counter() - started:.0f} s", flush=True)
    # the staged package: this checkout's Python files and the aarch64 module
    # (copied over, not removed first: a run still going keeps its files)
    work.stage = build_dir / "stage"
    for name in ("normops", "normops_tools"):  # the library and this tool, run there too
        shutil.copytree(root / name, work.stage / name, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.so", "*.c", "__pycache__", "*.pyx", "*.pxi", "*.h", "*.pxd"))
    for built in targets:
        staged = work.stage / "normops" / "_kernels" / built.name
        if not staged.exists() or staged.read_bytes() != built.read_bytes():
            # a new file renamed into place: a run still going has the old one mapped
            shutil.copy(built, staged.with_suffix(".tmp"))
            os.replace(staged.with_suffix(".tmp"), staged)
    return target


def emulated_command(work, args):
    """The command line running ``python3.11 args...`` under qemu, its
    environment and its directory (not the checkout, whose x86-64 package
    ``-m`` would import first)."""
    _need_tool(QEMU, "qemu-user")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(work.stage), str(work.pylib)])
    env["PYTHONNOUSERSITE"] = "1"
    env.pop("PYTHONHOME", None)
    env.pop("NORMOPS_ISA", None)
    return [QEMU, "-L", str(work.sysroot), str(work.python)] + list(args), env, str(work.root)


# ------------------------------------------------- transcendental digests
# All 2^32 inputs in PASSES interleaved passes: pass o takes the patterns
# o, o + PASSES, o + 2 PASSES, ... below 2^32, so every pass samples the
# whole range (signs, exponents, subnormals, NaNs) and pass 0 is
# verify-transcendentals' --quick sample. Each pass's outputs are digested
# on both sides and compared as they come: a run stopped early has proven
# the passes it finished, and a difference names its pass.

PASSES = QUICK_STRIDE


def pass_outputs(function, offset, n_threads=0):
    """``function``32 (exp, log, erf, tanh) on pass ``offset``'s inputs, as
    uint32 patterns, by the kernels this process imports."""
    from normops import _config, _isa
    kernels = _isa.kernels
    n_threads = n_threads or _config.resolve_threads(None, "verify-platform")
    count = (ALL_PATTERNS - 1 - offset) // PASSES + 1
    out = np.empty(count, np.uint32)
    if function in ("exp", "log"):
        getattr(kernels, f"{function}32_range")(offset, count, out, PASSES, n_threads)
    else:
        x = (np.arange(count, dtype=np.uint64) * PASSES + offset).astype(np.uint32).view(np.float32)
        getattr(kernels, f"{function}32_into")(x, out.view(np.float32), n_threads)
    return out


def pass_digest(function, offset, n_threads=0):
    """SHA-256 of pass ``offset``'s outputs (little-endian uint32, pattern
    order: for pass 0 the digest verify-transcendentals records for
    --quick)."""
    return hashlib.sha256(pass_outputs(function, offset, n_threads).astype("<u4").tobytes()).hexdigest()


ALL_PATTERNS = 1 << 32


# ------------------------------------------------------------ digest suite
# Inputs come from NumPy's PCG64 through integer draws and exact float64
# arithmetic only (no libm, no NumPy transcendental, whose SIMD code
# differs between CPUs), so both sides build the same arrays; the digest
# of the inputs is printed too, to prove it.

#: special values mixed into the "special" inputs (float64, then rounded to the dtype)
_SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 1e-310, 1.4e-45, -1.2e-38, 6e-8,
             3.0e38, -3.0e38, 65504.0, 1e300, -1e300, 88.72, -103.9, 1.0, -1.0)
#: the thread counts each case runs at
SUITE_THREADS = (1, 3)


def _values(seed, shape, dtype, kind="normal"):
    """Deterministic test data: uniform in [-1, 1) times 2^k (k in -6..5);
    "special" replaces about 3% of the elements with the values above (and
    a few whole rows, for row-wise operators, with one of them); "positive"
    is |normal|; integer dtypes draw from a small range (so sums wrap only
    where the case wants) or the whole range ("wide")."""
    rng = np.random.Generator(np.random.PCG64(seed))
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = (info.min, info.max) if kind == "wide" else (max(info.min, -100), min(info.max, 100))
        return rng.integers(low, high, size=size, endpoint=True, dtype=dtype).reshape(shape)
    v = (rng.random(size) * 2.0 - 1.0) * np.ldexp(1.0, rng.integers(-6, 6, size=size))
    if kind == "positive":
        v = np.abs(v)
    if kind == "special":
        picks = rng.integers(0, size, size=max(1, size // 32))
        v[picks] = np.array(_SPECIALS)[rng.integers(0, len(_SPECIALS), size=picks.size)]
        if len(shape) >= 2 and shape[-1] > 1:
            rows = v.reshape(-1, shape[-1])
            for r, value in zip(rng.integers(0, rows.shape[0], size=3), (np.nan, np.inf, -np.inf)):
                rows[r] = value          # a NaN row, an +inf row, an all -inf row
    with np.errstate(over="ignore"):
        return v.astype(dtype).reshape(shape)


def _case_list():
    """(name, function of n_threads returning the outputs, inputs) for every case."""
    cases = []

    def add(name, inputs, call):
        cases.append((name, call, inputs))

    def onnx(name, op, inputs, attributes=None, opset=None, domain=""):
        from normops import _registry
        add(f"{op}/{name}", inputs,
            lambda t: _registry.run(op, inputs, attributes, opset=opset, domain=domain, mode="exact", n_threads=t))

    seed = iter(range(1000, 100000))
    floats = ("float32", "float64", "float16")

    # LayerNormalization / RMSNormalization / SimplifiedLayerNormalization
    for dt in floats:
        for shape, axis, kind in (((64, 1000), -1, "special"), ((3, 5, 7, 300), 2, "normal"),
                                  ((20000, 3), 1, "special"), ((3, 40001), 1, "normal")):
            x = _values(next(seed), shape, dt, kind)
            ns = shape[axis:]
            w, b = _values(next(seed), ns, dt), _values(next(seed), ns, dt)
            tag = f"{dt}/{'x'.join(map(str, shape))}/axis{axis}/{kind}"
            onnx(tag, "LayerNormalization", [x, w, b], {"axis": axis, "epsilon": 1e-5}, 17)
            onnx(tag + "/nobias", "LayerNormalization", [x, w], {"axis": axis}, 17)
            onnx(tag, "RMSNormalization", [x, w], {"axis": axis, "epsilon": 1e-6}, 23)
            onnx(tag, "SimplifiedLayerNormalization", [x, w], {"axis": axis})
    x = _values(next(seed), (50, 999), "float16", "special")
    onnx("float16-x-float32-scale", "SimplifiedLayerNormalization", [x, _values(next(seed), (999,), "float32")],
         {"axis": -1})
    # Instance, Group, Batch normalization
    for dt in floats:
        x = _values(next(seed), (4, 12, 33, 35), dt, "special")
        c = lambda: _values(next(seed), (12,), dt)  # noqa: E731
        onnx(dt, "InstanceNormalization", [x, c(), c()], {"epsilon": 1e-5}, 22)
        onnx(dt, "GroupNormalization", [x, _values(next(seed), (3,), dt), _values(next(seed), (3,), dt)],
             {"num_groups": 3}, 18)
        onnx(dt, "GroupNormalization", [x, c(), c()], {"num_groups": 4}, 21)
        var = np.abs(c())
        onnx(dt + "/inference", "BatchNormalization", [x, c(), c(), c(), var], {"epsilon": 1e-5}, 15)
        onnx(dt + "/training", "BatchNormalization", [x, c(), c(), c(), var],
             {"epsilon": 1e-5, "momentum": 0.9, "training_mode": 1}, 15)
        xs = _values(next(seed), (64, 40, 3, 3), dt)  # short planes: the per-sample walk
        cs = lambda: _values(next(seed), (40,), dt)  # noqa: E731
        onnx(dt + "/inference/short-planes", "BatchNormalization", [xs, cs(), cs(), cs(), np.abs(cs())], {}, 15)
    # MeanVarianceNormalization, LpNormalization
    for dt in floats:
        x = _values(next(seed), (6, 10, 30, 40), dt, "special")
        onnx(dt + "/axes0,2,3", "MeanVarianceNormalization", [x], {}, 13)
        onnx(dt + "/axes1,3", "MeanVarianceNormalization", [x], {"axes": [1, 3]}, 13)
        for p in (1, 2):
            onnx(f"{dt}/p{p}/axis-1", "LpNormalization", [x], {"p": p, "axis": -1}, 22)
            onnx(f"{dt}/p{p}/axis1", "LpNormalization", [x], {"p": p, "axis": 1}, 22)
    # Softmax family, Sigmoid, Gelu, BiasGelu
    for dt in floats:
        for shape, axis, opset in (((100, 700), -1, 13), ((10, 300, 20), 1, 13), ((6, 7, 800), 1, 11),
                                   ((3000, 12), -1, 13)):
            x = _values(next(seed), shape, dt, "special")
            tag = f"{dt}/{'x'.join(map(str, shape))}/axis{axis}/opset{opset}"
            for op in ("Softmax", "LogSoftmax", "Hardmax"):
                onnx(tag, op, [x], {"axis": axis}, opset)
        x = _values(next(seed), (70001,), dt, "special")
        onnx(dt, "Sigmoid", [x], {}, 13)
        for approximate in ("none", "tanh"):
            onnx(f"{dt}/{approximate}", "Gelu", [x], {"approximate": approximate}, 20)
        a, bias = _values(next(seed), (90, 777), dt, "special"), _values(next(seed), (777,), dt)
        onnx(dt, "BiasGelu", [a, bias], {}, 1, "com.microsoft")
    # Reductions: row, column and alternating layouts, every axis, long sequences
    reduce_ops = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                  "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp")
    for dt in floats + ("int32", "int64", "uint8", "int8"):
        kind = "special" if dt in floats else "normal"
        x = _values(next(seed), (300, 257), dt, kind)
        xp = _values(next(seed), (300, 257), dt, "positive" if dt in floats else "normal")
        x4 = _values(next(seed), (5, 6, 70, 9), dt, kind)
        for op in reduce_ops if dt[-4:] != "int8" else ("ReduceMax", "ReduceMin"):  # 8-bit: max/min only
            opset = 13 if op == "ReduceSum" else 18
            data = xp if op == "ReduceLogSum" else x
            for axes, keepdims in (([1], 1), ([0], 0), (None, 0)):
                ax = [] if axes is None else [np.array(axes, np.int64)]
                onnx(f"{dt}/300x257/axes{axes}/keep{keepdims}", op, [data] + ax, {"keepdims": keepdims}, opset)
            onnx(f"{dt}/5x6x70x9/axes1,3", op, [x4, np.array([1, 3], np.int64)], {"keepdims": 1}, opset)
    for dt in ("float32", "float64"):
        long = _values(next(seed), ((1 << 20) + 4099,), dt, "normal")
        for op in ("ReduceSum", "ReduceMax", "ReduceLogSumExp", "ReduceSumSquare"):
            onnx(f"{dt}/long", op, [long], {"keepdims": 0}, 13 if op == "ReduceSum" else 18)
        onnx(f"{dt}/long-columns", "ReduceSum",
             [_values(next(seed), ((1 << 20) + 5, 3), dt), np.array([0], np.int64)], {"keepdims": 0}, 13)
    # ArgMax, ArgMin
    for dt in floats + ("int32", "uint8"):
        x = _values(next(seed), (300, 257), dt, "special" if dt in floats else "normal")
        for op in ("ArgMax", "ArgMin"):
            for axis in (0, 1):
                for last in (0, 1):
                    onnx(f"{dt}/axis{axis}/last{last}", op, [x], {"axis": axis, "select_last_index": last}, 13)
    long = _values(next(seed), ((1 << 20) + 3,), "float32", "special")
    for op in ("ArgMax", "ArgMin"):
        onnx("float32/long", op, [long], {"axis": 0, "keepdims": 0}, 13)
    # CumSum, CumProd
    for dt in floats + ("int32", "int64"):
        x = _values(next(seed), (200, 301), dt, "special" if dt in floats else "normal")
        for axis in (0, 1):
            for exclusive in (0, 1):
                for reverse in (0, 1):
                    attrs = {"exclusive": exclusive, "reverse": reverse}
                    axis_in = np.array(axis, np.int64)
                    onnx(f"{dt}/axis{axis}/excl{exclusive}/rev{reverse}", "CumSum", [x, axis_in], attrs, 14)
                    xp = _values(next(seed), (200, 301), dt, "positive" if dt in floats else "normal")
                    xp = xp / 32 + 1 if dt in floats else xp  # products of values near 1: few overflow
                    onnx(f"{dt}/axis{axis}/excl{exclusive}/rev{reverse}", "CumProd", [xp.astype(dt), axis_in],
                         attrs, 26)
    # exp32, log32 and the NumPy/SciPy-style functions
    import normops
    x = _values(next(seed), (120001,), "float32", "special")
    for fn in ("exp32", "log32"):
        add(f"{fn}/float32", [x], lambda t, fn=fn, x=x: [getattr(normops, fn)(x)])
    for dt in floats:
        x = _values(next(seed), (300, 257), dt, "special")
        for fn in ("sum", "mean", "max", "min", "prod", "logsumexp", "softmax", "log_softmax"):
            add(f"numpy-style/{fn}/{dt}", [x],
                lambda t, fn=fn, x=x: [getattr(normops, fn)(x, axis=-1) if fn in ("softmax", "log_softmax")
                                       else getattr(normops, fn)(x, axis=1)])
    return cases


def _digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        if a is None:
            h.update(b"None;")
            continue
        a = np.asarray(a)
        le = a.dtype.newbyteorder("<") if a.dtype.byteorder not in ("|",) else a.dtype
        h.update(f"{le.str}{a.shape};".encode())
        h.update(np.ascontiguousarray(a, dtype=le).tobytes())
    return h.hexdigest()


def digest_suite(threads=SUITE_THREADS, only=None, report=None):
    """Run every case at every thread count: {case name: (inputs digest,
    outputs digest)}. A case that raises digests its error's type and text
    (both sides must raise the same)."""
    from normops import _config
    results = {}
    for name, call, inputs in _case_list():
        if only and only not in name:
            continue
        inputs_digest = _digest(inputs)
        for t in threads:
            try:
                with np.errstate(all="ignore"), _config.config(mode="exact", n_threads=t):
                    outputs = call(t)
                digest = _digest(outputs)
            except Exception as exc:  # noqa: BLE001 - recorded and compared
                digest = "error:" + hashlib.sha256(f"{type(exc).__name__}: {exc}".encode()).hexdigest()[:16]
            key = f"{name}/threads{t}"
            results[key] = (inputs_digest, digest)
            if report:
                report(f"case {key} {inputs_digest} {digest}")
    return results


# ------------------------------------------------------------- commands

def _print_suite(args):
    """(the child process of each side) print the suite's digests"""
    from normops import _info
    info = _info.build_info()
    print(f"platform {info['machine']} isa={info['isa']} openmp={info['openmp']} numpy={info['numpy']} "
          f"python={info['python']}", flush=True)
    digest_suite(only=args.only, report=lambda line: print(line, flush=True))
    return 0


def _emulated_transcendentals(args):
    """(runs under emulation) print the digest of each pass of each function"""
    first, stop = args.passes
    for function in args.functions.split(","):
        for offset in range(first, stop):
            started = time.perf_counter()
            digest = pass_digest(function, offset)
            print(f"pass {function} {offset} {digest} {time.perf_counter() - started:.2f}", flush=True)
    return 0


def _stream(cmd, env, cwd, on_line):
    """Run cmd in cwd, passing each stdout line to on_line; stderr is kept
    for errors."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:
        on_line(line.rstrip("\n"))
    err = proc.stderr.read()
    if proc.wait() != 0:
        raise PlatformError(f"the emulated run failed ({proc.returncode}):\n{err[-4000:]}")


def run_suite(cmd, env, cwd):
    """Run the digest suite in a process (``--print-suite``): {case: (inputs
    digest, outputs digest)}."""
    suite = {}
    started = time.perf_counter()

    def on_line(line):
        parts = line.split()
        if parts[:1] == ["case"] and len(parts) == 4:
            suite[parts[1]] = (parts[2], parts[3])
        elif parts[:1] == ["platform"]:
            print("verify-platform: " + line, flush=True)

    _stream(cmd, env, cwd, on_line)
    print(f"verify-platform:   {len(suite)} cases in {time.perf_counter() - started:.0f} s", flush=True)
    return suite


def compare_suites(a, b, a_name="host", b_name="aarch64", report=print):
    """Print the cases that differ; returns their number (a case missing on
    either side counts)."""
    differing = 0
    for key in list(a) + [k for k in b if k not in a]:
        x, y = a.get(key), b.get(key)
        if x == y:
            continue
        differing += 1
        if x is None or y is None:
            report(f"  MISSING {key}: only on {a_name if y is None else b_name}")
        elif x[0] != y[0]:
            report(f"  INPUTS DIFFER {key}: the two sides generated different data")
        else:
            report(f"  DIFFERS {key}: {a_name} {x[1][:16]}..., {b_name} {y[1][:16]}...")
    return differing


def _pass_range(text):
    first, _, stop = text.partition(":")
    first, stop = int(first), int(stop or int(first) + 1)
    if not 0 <= first < stop <= PASSES:
        raise argparse.ArgumentTypeError(f"need 0 <= FIRST < STOP <= {PASSES}")
    return first, stop


def _compare_suites_on_all(work, only):
    """The digest suite at each host ISA level and on aarch64, compared
    with the first host level; True when a case differs, None on a failed
    run."""
    from normops import _isa
    args = ["-m", "normops_tools.verify_platform", "--print-suite"] + (["--only", only] if only else [])
    suites = {}
    try:
        for level in _isa.available_levels():  # each level in its own process, as the emulated one
            env = dict(os.environ, NORMOPS_ISA=level)
            env["PYTHONPATH"] = os.pathsep.join([str(source_root())] + [p for p in [env.get("PYTHONPATH")] if p])
            suites[f"{platform.machine()} {level}"] = run_suite([sys.executable] + args, env, str(source_root()))
        suites["aarch64"] = run_suite(*emulated_command(work, args))
    except PlatformError as exc:
        print(f"verify-platform: {exc}", file=sys.stderr)
        return None
    names = list(suites)
    host = suites[names[0]]
    failed = not host
    for name in names[1:]:
        differing = compare_suites(host, suites[name], names[0], name)
        total = len(set(host) | set(suites[name]))
        print(f"digest suite: {total - differing} of {total} cases identical on {names[0]} and {name}"
              + (f"; {differing} DIFFER" if differing else ""), flush=True)
        failed = failed or differing > 0
    return failed


def _compare_transcendentals(work, functions, passes):
    """Each pass of each function on aarch64 against the host's (and pass
    0 against the recorded --quick digest); True when one differs or the
    run fails."""
    from normops import _isa
    from . import verify_transcendentals as vt
    first, stop = passes
    total = stop - first
    print(f"verify-platform: {', '.join(f + '32' for f in functions)} on aarch64, passes {first}..{stop - 1} of "
          f"{PASSES} (each every {PASSES}th input pattern; all {PASSES} cover the 2^32 inputs)", flush=True)
    state = {f: {"same": 0, "differ": [], "seconds": 0.0} for f in functions}

    def on_line(line):
        parts = line.split()
        if parts[:1] != ["pass"] or len(parts) != 5:
            return
        function, offset, digest, seconds = parts[1], int(parts[2]), parts[3], float(parts[4])
        st = state[function]
        st["seconds"] += seconds
        host = pass_digest(function, offset)
        recorded = vt.GOLDEN_DIGESTS[QUICK_STRIDE].get(function) if offset == 0 else None
        if digest == host and recorded in (None, digest):
            st["same"] += 1
        else:
            st["differ"].append(offset)
            print(f"  {function}32 pass {offset} DIFFERS: aarch64 {digest[:16]}..., {_isa.current_level()} "
                  f"{host[:16]}..." + (f", recorded {recorded[:16]}..." if recorded else ""), flush=True)
        done = st["same"] + len(st["differ"])
        if done == total or done % 64 == 0:
            print(f"  {function}32: {done} / {total} passes, {st['same']} identical, "
                  f"{len(st['differ'])} differ ({st['seconds']:.0f} s under emulation)", flush=True)

    try:
        _stream(*emulated_command(work, ["-m", "normops_tools.verify_platform", "--emulated-transcendentals",
                                         "--functions", ",".join(functions), "--passes", f"{first}:{stop}"]),
                on_line=on_line)
    except PlatformError as exc:
        print(f"verify-platform: {exc}", file=sys.stderr)
        return True
    failed = False
    for function, st in state.items():
        done = st["same"] + len(st["differ"])
        ok = not st["differ"] and done == total
        failed = failed or not ok
        cover = "all 2^32 inputs" if (first, stop) == (0, PASSES) else f"{done} of {PASSES} passes"
        print(f"{function}32 on aarch64: {cover} {'identical to' if ok else 'NOT identical to'} "
              f"{platform.machine()} {_isa.current_level()}" + (" and to the recorded --quick digest" if first == 0 else "")
              + (f"; differing passes {st['differ'][:20]}" if st["differ"] else ""), flush=True)
    return failed


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m normops verify-platform",
        description="Cross-build the kernels for aarch64, run them under qemu-user and compare the exact "
                    "flavour's bits with this machine's (digest suite, then exp32/log32/erf32/tanh32 on all "
                    "2^32 inputs). Needs: apt-get install gcc-aarch64-linux-gnu qemu-user qemu-user-static.",
        epilog="Run from a source checkout. --setup downloads Debian's arm64 Python 3.11 and NumPy's aarch64 "
               "wheel into the work directory (once).")
    parser.add_argument("--setup", action="store_true", help="download and unpack the arm64 sysroot first")
    parser.add_argument("--quick", action="store_true",
                        help=f"transcendentals on every {QUICK_STRIDE}th input pattern only (minutes, not hours)")
    parser.add_argument("--workdir", default=str(DEFAULT_WORKDIR),
                        help="cache of the sysroot and the build (default ~/.cache/normops-aarch64, or "
                             "$NORMOPS_AARCH64_WORKDIR)")
    parser.add_argument("--serial", action="store_true", help="build the aarch64 kernels without OpenMP")
    parser.add_argument("--cflags", default="",
                        help="flags appended to setup.py's for the aarch64 build (experiments: "
                             "'-ffp-contract=fast' must make the suite fail)")
    parser.add_argument("--only", help="run the suite's cases whose name contains this text")
    parser.add_argument("--functions", default=",".join(TRANSCENDENTALS),
                        help="float32 functions to digest on aarch64 (default exp,log,erf,tanh; '' for none)")
    parser.add_argument("--passes", type=_pass_range, default=None,
                        help=f"passes FIRST:STOP of the {PASSES} interleaved passes over the 2^32 inputs "
                             f"(default: all; --quick: 0:1, the verify-transcendentals --quick sample)")
    parser.add_argument("--no-suite", action="store_true", help="skip the digest suite")
    parser.add_argument("--print-suite", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--emulated-transcendentals", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--list", action="store_true", help="list the suite's cases and exit")
    args = parser.parse_args(argv)
    if args.print_suite:
        return _print_suite(args)
    if args.emulated_transcendentals:
        return _emulated_transcendentals(args)
    if args.list:
        for name, _, _ in _case_list():
            print(name)
        return 0
    if args.passes is None:
        args.passes = (0, 1) if args.quick else (0, PASSES)
    work = Workdir(args.workdir)
    started = time.perf_counter()
    try:
        if args.setup:
            print(f"verify-platform: setting up {work.root}", flush=True)
            setup_sysroot(work)
        build(work, openmp=not args.serial, extra_flags=args.cflags.split())
    except PlatformError as exc:
        print(f"verify-platform: {exc}", file=sys.stderr)
        return 2
    from normops import _isa
    print(f"verify-platform: host {platform.machine()} (ISA levels {', '.join(_isa.available_levels())}), "
          f"aarch64 build in {work.root}", flush=True)
    failed = False
    if not args.no_suite:
        failed = _compare_suites_on_all(work, args.only)
        if failed is None:
            return 2
    functions = [f for f in args.functions.split(",") if f]
    if functions:
        failed = _compare_transcendentals(work, functions, args.passes) or failed
    print(f"verify-platform: {'FAILED' if failed else 'OK'} in {time.perf_counter() - started:.0f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
