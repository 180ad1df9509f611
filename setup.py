"""Build the normops kernels once per instruction-set level.

The kernels' nogil loops (``normops/_kernels/kernels.pxi`` and what it
includes) are compiled into one extension module per ISA level
(``isa_baseline``, ``isa_avx2``, ``isa_avx512``); ``normops._isa`` picks one
at import time. The routes to them (``routes.pyx``: every entry point, its
checks and outputs), which depend on no instruction set, are compiled
once. Every build uses
``-ffp-contract=off`` (no fused multiply-add) and never ``-ffast-math``: the
exact kernels depend on IEEE rounding of each operation.
"""
import glob
import os
import platform
import shutil
import sys
import tempfile

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# Value-preserving flags only. -fno-math-errno lets sqrt become the
# instruction (no libm fallback); -fno-trapping-math allows if-conversion of
# the NaN canonicalisation; neither changes a result.
COMMON_FLAGS = [
    "-O3",
    "-ffp-contract=off",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-fno-strict-aliasing",
    # no debug information (Python's own CFLAGS carry -g): it took a quarter
    # of each ISA build's compile time, and wheels ship without it; the
    # sanitizer build below puts -g back
    "-g0",
    # every `cdef inline` kernel helper is inlined, so the constant arguments
    # (rows per group, term kind, NaN check) specialise the loops
    "-DCYTHON_INLINE=__inline__ __attribute__((always_inline))",
]

IS_X86_64 = platform.machine().lower() in ("x86_64", "amd64")

# level -> extra flags. Other CPUs get one generic build named "baseline".
if IS_X86_64:
    ISA_LEVELS = {
        "baseline": ["-march=x86-64", "-mtune=generic"],
        "avx2": ["-march=x86-64-v3", "-mtune=generic", "-mprefer-vector-width=256"],
        "avx512": ["-march=x86-64-v4", "-mtune=generic", "-mprefer-vector-width=512"],
    }
else:
    ISA_LEVELS = {"baseline": []}

# NORMOPS_ISA_BUILDS=avx512 (comma-separated) builds baseline plus the listed
# levels only: a shorter edit-build-test loop for development. Unset, every
# level is built.
_wanted = os.environ.get("NORMOPS_ISA_BUILDS", "").strip()
if _wanted:
    _keep = {"baseline"} | {w.strip() for w in _wanted.split(",") if w.strip()}
    ISA_LEVELS = {k: v for k, v in ISA_LEVELS.items() if k in _keep}

# NORMOPS_SANITIZE=address,undefined (any -fsanitize= list) builds the
# kernels for the sanitizers: -O1 keeps the reports' stacks readable and the
# build quick, and a runtime error of UBSan stops the process instead of
# printing and going on. How to run the tests under it: CONTRIBUTING.md,
# "Sanitizer build".
SANITIZE = os.environ.get("NORMOPS_SANITIZE", "").strip()
if SANITIZE:
    _sanitize = [f"-fsanitize={SANITIZE}", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all", "-g"]
    COMMON_FLAGS = [f for f in COMMON_FLAGS if f != "-O3"] + ["-O1"] + _sanitize
    SANITIZE_LINK_FLAGS = _sanitize
else:
    SANITIZE_LINK_FLAGS = []

CYTHON_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,  # IEEE division by zero, no Python exception checks
    "initializedcheck": False,
    "nonecheck": False,
    "embedsignature": True,
}

OPENMP_PROBE = r"""
#include <omp.h>
int main(void) { return omp_get_max_threads() > 0 ? 0 : 1; }
"""


def _openmp_flags(compiler):
    """Return the OpenMP compile/link flags if the compiler has OpenMP."""
    if os.environ.get("NORMOPS_DISABLE_OPENMP", "") not in ("", "0"):
        return []
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as fh:
            fh.write(OPENMP_PROBE)
        try:
            objs = compiler.compile([src], output_dir=tmp, extra_postargs=["-fopenmp"])
            compiler.link_executable(objs, "probe", output_dir=tmp, extra_postargs=["-fopenmp"])
        except Exception:  # noqa: BLE001 - any failure means "no OpenMP"
            print("normops: the compiler has no OpenMP; building serial kernels", file=sys.stderr)
            return []
    return ["-fopenmp"]


class BuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        # the ISA builds are independent modules: compile them side by side
        # when no -j was given (pip's build passes none); serially they take
        # about 9 minutes on two cores
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        omp = _openmp_flags(self.compiler)
        for ext in self.extensions:
            ext.extra_compile_args = ext.extra_compile_args + omp
            ext.extra_link_args = ext.extra_link_args + omp  # libgomp, linked dynamically
        super().build_extensions()

    # pip builds an editable install in a new temporary directory every
    # time, so a second `pip install -e` would compile the three ISA levels
    # again (~5 minutes on 2 cores). Instead, a module already in the source
    # tree that is newer than every kernel source and was built with the same
    # flags (its ".build" stamp) is copied. Any change rebuilds.
    def build_extension(self, ext):
        kept = self._in_place(ext)
        if self.editable_mode and _up_to_date(kept, _build_stamp(ext)):
            built = self.get_ext_fullpath(ext.name)
            os.makedirs(os.path.dirname(built), exist_ok=True)
            shutil.copy2(kept, built)
            print(f"normops: reusing {kept} (up to date, same flags)")
            return
        if os.path.exists(kept + ".build"):
            os.remove(kept + ".build")  # replaced below, once the new module is in place
        # setuptools keeps a module in build/ that is newer than its C source
        # whatever flags built it: after a NORMOPS_SANITIZE build, a plain one
        # would copy the sanitizer's module back (and the other way round)
        built = self._in_build(ext)
        if os.path.exists(built) and not _same_flags(built, _build_stamp(ext)):
            os.remove(built)
        super().build_extension(ext)

    def run(self):
        in_place = self.inplace or self.editable_mode
        super().run()
        # record how the modules were built, in build/ and in the source tree
        for ext in self.extensions:
            for module in (self._in_build(ext),) + ((self._in_place(ext),) if in_place else ()):
                if os.path.exists(module):
                    with open(module + ".build", "w") as fh:
                        fh.write(_build_stamp(ext))

    def _in_place(self, ext):
        return self._get_inplace_equivalent(self.get_finalized_command("build_py"), ext)[0]

    def _in_build(self, ext):
        return self._get_inplace_equivalent(self.get_finalized_command("build_py"), ext)[1]


def _kernel_sources():
    patterns = ("*.pyx", "*.pxi", "*.pxd", "*.h")
    return [f for p in patterns for f in glob.glob(os.path.join("normops", "_kernels", p))] + ["setup.py"]


def _build_stamp(ext):
    """What a module's bits depend on besides its sources."""
    return "\n".join([sys.version, np.__version__, " ".join(ext.extra_compile_args),
                      " ".join(ext.extra_link_args)]) + "\n"


def _same_flags(module, stamp):
    try:
        with open(module + ".build") as fh:
            return fh.read() == stamp
    except OSError:
        return False


def _up_to_date(module, stamp):
    try:
        newest = max(os.path.getmtime(f) for f in _kernel_sources())
        return _same_flags(module, stamp) and os.path.getmtime(module) >= newest
    except OSError:
        return False


def _extension(name, flags):
    return Extension(
        f"normops._kernels.{name}",
        [f"normops/_kernels/{name}.pyx"],
        include_dirs=[np.get_include(), "normops/_kernels"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=COMMON_FLAGS + flags,
        extra_link_args=SANITIZE_LINK_FLAGS,
        # every kernel header: Cython tracks only the ones named in a
        # `cdef extern from`, and a header they include (erf_tanh.h
        # through gelu.h) changed without a rebuild
        depends=_kernel_sources(),
    )


def _extensions():
    # the kernels once per ISA level; the routes to them (no kernel) once
    exts = [_extension(f"isa_{level}", flags) for level, flags in ISA_LEVELS.items()]
    exts.append(_extension("routes", ISA_LEVELS["baseline"]))
    return cythonize(
        exts,
        compiler_directives=CYTHON_DIRECTIVES,
        include_path=["normops/_kernels"],
        # the ISA modules are translated side by side too (one process each)
        nthreads=int(os.environ.get("NORMOPS_CYTHON_JOBS", "0")) or min(len(exts), os.cpu_count() or 1),
    )


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
