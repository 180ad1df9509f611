"""``normops.show_config()``: what this build is and what it uses."""
import os
import platform
import sys

import numpy as np

from . import _config, _isa, _threads
from ._version import __version__

_FTZ = 1 << 15
_DAZ = 1 << 6


def build_info():
    """The facts show_config prints, as a dict."""
    routes = _isa.routes
    mxcsr = routes.mxcsr()
    return {
        "version": __version__,
        "isa": _isa.kernels.ISA_LEVEL if _isa.X86_64 else "generic",
        "isa_available": _isa.available_levels() if _isa.X86_64 else ["generic"],
        "isa_forced": os.environ.get(_isa.ENV_VAR) or None,
        "openmp": routes.openmp_enabled(),
        "max_threads": routes.max_threads(),
        "omp_wait_policy": _isa.wait_policy,
        "n_threads": _config.get_num_threads(),
        "mode": _config.get_config()["mode"],
        "flush_to_zero": bool(mxcsr & _FTZ),
        "denormals_are_zero": bool(mxcsr & _DAZ),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "thread_costs": _threads.figures(),
    }


def show_config(print_out=True):
    """Print (unless ``print_out`` is false) and return the build facts:
    version, the ISA level in use and those available, OpenMP, thread
    counts, and whether subnormals are being flushed (which would break
    exactness: some library built with -ffast-math set FTZ/DAZ)."""
    info = build_info()
    if print_out:
        width = max(map(len, info))
        for key, value in info.items():
            if key == "thread_costs":
                continue
            if isinstance(value, list):
                value = ", ".join(value)
            print(f"{key:<{width}} : {value}")
        _print_thread_costs(info["thread_costs"])
        if info["flush_to_zero"] or info["denormals_are_zero"]:
            print("WARNING: FTZ/DAZ is set in this thread; subnormal results will not be exact.")
    return info


def _print_thread_costs(costs):
    """The figures that decide thread counts, and what they give."""
    def state(family):
        return "pinned" if costs["pinned"][family] else ("measured" if costs["measured"][family] else "prior")
    print("threads: a loop takes a team where it saves time after the team's wake-up (docs/design.md, 'Threads')")
    print("  ns per element, 1 thread, 64Ki-128Ki elements: " + ", ".join(
        f"{family} {ns:.3g} ({state(family)})" for family, ns in costs["ns_per_element"].items()))
    by_size = {family: ", ".join(f"{size} {ns:.3g}" for size, ns in sizes.items() if ns is not None)
               for family, sizes in costs["ns_per_element_by_size"].items()}
    if any(by_size.values()):
        print("  by input size: " + "; ".join(f"{family}: {text}" for family, text in by_size.items() if text))
    stretch = {family: ", ".join(f"{size} {s:.3g}" for size, s in sizes.items() if s is not None)
               for family, sizes in costs["stretch_by_size"].items()}
    cache = costs.get("core_cache_bytes") or 0
    print(f"  loops of {costs['stretch_from_elements']} elements or more teach the stretch, smaller ones the"
          f" wake-up (one core's cache: {f'{cache >> 10} KiB' if cache else 'not reported, 1 MiB assumed'})")
    print("  team stretch (1: the work shared perfectly) by input size: "
          + ("; ".join(f"{family}{' (pinned)' if costs['stretch_pinned'][family] else ''}: {text}"
                       for family, text in stretch.items() if text) or "not measured yet (1)"))
    for kind, key in (("busy", "wake_us"), ("idle", "wake_us_idle")):
        wake = [(gap, us) for gap, us in costs[key].items() if us is not None]
        print(f"  team wake-up by gap since the last team, caller {kind}: "
              + (", ".join(f">= {gap} us: {us:.3g} us" for gap, us in wake) or "not measured yet")
              + (" (pinned)" if costs["wake_pinned"] else ""))
    for label, by_family in costs["two_threads_from_elements"].items():
        print(f"  2 threads from (elements), {label}: " + ", ".join(
            f"{family} {'never' if n is None else n}" for family, n in by_family.items()))
