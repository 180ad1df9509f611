"""How many threads a call takes: the figures the kernels decide with.

The kernels (``_kernels/team.h``) size each parallel loop from costs
measured in this process: what an element of each kernel family costs at
the loaded ISA level (learned from serial loops), and how long a woken
OpenMP team takes to start work after a given idle gap (learned from
parallel loops). This module shows those figures and the thresholds they
give (``normops.show_config()``), and pins them: ``normops.set_config(
thread_costs=...)``, ``normops.config(thread_costs=...)`` for a block, or
the environment variable ``NORMOPS_THREAD_COSTS`` read at import.

A pin is a dict with any of:

- ``"ns_per_element"``: ``{family: ns}`` for the families in
  ``FAMILIES``;
- ``"wake_us"``: a number (the delay for every gap) or ``{gap_us: us}``,
  a step function of the time since the calling thread's last team;
- ``"join_us"``: the cost of each thread beyond the second;
- ``"stretch"``: ``{family: s}``, how much longer than the ideal a team
  takes over the work it shares (1: perfectly shared; 2 on two threads:
  no gain, the memory bus), for every input size.

``NORMOPS_THREAD_COSTS`` holds the same as ``key=value`` pairs separated
by commas: ``rows=0.2,softmax_exact=0.25,wake_us=40`` or, for a step function,
``wake_us=0:2;1000:6000`` (2 µs below 1 ms of idle, 6 ms from there), and
``stretch=reduce:1.8;rows:1.2``.

Thread counts never change a result's bits: the figures only move time.
"""
import math
import os

from . import _isa
from ._errors import InvalidInputError
from ._spec import ROW_CHUNK_ELEMENTS

ENV_VAR = "NORMOPS_THREAD_COSTS"
FAMILIES = _isa.routes.FAMILY_NAMES  # team.h's cost families
KEYS = ("ns_per_element", "wake_us", "join_us", "stretch")
#: what show_config reports thresholds for: the gaps of a call in a loop
#: and of one after idle time
THRESHOLD_GAPS_US = {"in a loop": (1, False), "after 100 ms idle": (100_000, True)}


def _number(value, what, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise InvalidInputError(f"{where}: {what} must be a finite number >= 0, not {value!r}")
    return float(value)


def _per_family(per, key, least, unit, where):
    """thread_costs[key], a dict of families to numbers >= least, checked
    (a stretch below 1 would be a team faster than its threads' share)."""
    if not isinstance(per, dict) or set(per) - set(FAMILIES):
        raise InvalidInputError(f"{where}: thread_costs[{key!r}] must map families of "
                                f"{', '.join(FAMILIES)} to {unit}, not {per!r}")
    checked = {f: _number(v, f"{key}[{f!r}]", where) for f, v in per.items()}
    low = {f: v for f, v in checked.items() if v < least}
    if low:
        raise InvalidInputError(f"{where}: thread_costs[{key!r}] values must be >= {least}, not {low!r}")
    return checked


def check_thread_costs(costs, where):
    """A pin dict, checked (see the module's text); None unpins everything."""
    if costs is None:
        return None
    if not isinstance(costs, dict):
        raise InvalidInputError(f"{where}: argument 'thread_costs' must be a dict or None, not {costs!r}")
    unknown = set(costs) - set(KEYS)
    if unknown:
        raise InvalidInputError(f"{where}: argument 'thread_costs' has unknown keys {sorted(map(str, unknown))}; "
                                f"known: {', '.join(KEYS)}")
    checked = {}
    for key, least, unit in (("ns_per_element", 0, "ns"), ("stretch", 1, "a number >= 1")):
        if key in costs:
            checked[key] = _per_family(costs[key], key, least, unit, where)
    if "wake_us" in costs:
        wake = costs["wake_us"]
        if not isinstance(wake, dict):
            wake = {0: wake}
        checked["wake_us"] = {_number(g, "a wake_us gap", where): _number(v, "wake_us", where)
                              for g, v in wake.items()}
    if "join_us" in costs:
        checked["join_us"] = _number(costs["join_us"], "join_us", where)
    return checked


def parse_env(text, where=ENV_VAR):
    """NORMOPS_THREAD_COSTS's text as a pin dict."""
    costs = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep:
            raise InvalidInputError(f"{where}: expected key=value, not {item!r}")
        try:
            if key == "stretch":
                costs["stretch"] = {f.strip(): float(v) for f, v in
                                    (step.split(":") for step in value.split(";") if step.strip())}
            elif key == "wake_us" and ":" in value:
                costs["wake_us"] = {float(g): float(v) for g, v in
                                    (step.split(":") for step in value.split(";") if step.strip())}
            elif key in ("wake_us", "join_us"):
                costs[key] = float(value)
            elif key in FAMILIES:
                costs.setdefault("ns_per_element", {})[key] = float(value)
            else:
                raise InvalidInputError(f"{where}: unknown key {key!r}; known: "
                                        f"{', '.join(FAMILIES + ('wake_us', 'join_us', 'stretch'))}")
        except ValueError:
            raise InvalidInputError(f"{where}: {item!r} does not hold numbers") from None
    return check_thread_costs(costs, where)


_pinned = {}


def pinned():
    """The figures pinned now (a dict; empty: all measured)."""
    return {key: (dict(value) if isinstance(value, dict) else value) for key, value in _pinned.items()}


def pin(costs):
    """Pin these figures (checked), replacing the previous pin: a figure
    pinned before and not now is learned again from scratch; None or {}
    unpins everything."""
    global _pinned
    costs = costs or {}
    unpin = {"ns_per_element": {}, "wake_us": {}, "join_us": (), "stretch": {}}
    changes = {key: costs[key] if key in costs else unpin[key] for key in KEYS if key in costs or key in _pinned}
    _isa.routes.pin_thread_costs(**changes)
    _pinned = dict(costs)


def figures():
    """The figures in force for the loaded ISA level, and the smallest
    inputs that take 2 threads by family, in a loop and after idle time."""
    info = _isa.routes.thread_costs()
    info["core_cache_bytes"] = _core_cache
    info["two_threads_from_elements"] = {
        label: {family: smallest_parallel(family, gap, idle) for family in FAMILIES}
        for label, (gap, idle) in THRESHOLD_GAPS_US.items()}
    return info


def smallest_parallel(family, gap_us, idle=False, limit=1 << 40):
    """The fewest elements (in chunks of ROW_CHUNK_ELEMENTS) for which a
    loop of the family takes 2 threads gap_us after the calling thread's
    last team (a gap it spent idle, or busy), by bisection on the kernels'
    own rule; None when none up to ``limit`` does."""
    def takes_two(elements):
        chunks = max(2, -(-elements // ROW_CHUNK_ELEMENTS))
        return _isa.routes.planned_threads(2, chunks, -(-elements // chunks), elements, family, gap_us, idle)[0] > 1
    if not takes_two(limit):
        return None
    low, high = 1, limit
    while high - low > max(1, low // 64):
        middle = (low + high) // 2
        if takes_two(middle):
            high = middle
        else:
            low = middle
    return high


def core_cache_bytes():
    """One core's own cache (its L2, where a core has one) in bytes, as the
    system reports it: glibc's sysconf, else Linux's sysfs; 0 if neither
    says."""
    try:
        size = os.sysconf("SC_LEVEL2_CACHE_SIZE")
        if size > 0:
            return int(size)
    except (AttributeError, ValueError, OSError):
        pass
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for index in sorted(os.listdir(base)):
            with open(os.path.join(base, index, "level")) as fh:
                if fh.read().strip() != "2":
                    continue
            with open(os.path.join(base, index, "size")) as fh:
                text = fh.read().strip().upper()
            scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
            return int(text.rstrip("KM")) * scale
    except (OSError, ValueError):
        pass
    return 0


#: one core's cache size as read at import (read_core_cache)
_core_cache = 0


def read_core_cache():
    """Tell the kernels one core's cache size (where large loops begin)."""
    global _core_cache
    _core_cache = core_cache_bytes()
    _isa.routes.set_core_cache_bytes(_core_cache)


def pin_from_environment():
    text = os.environ.get(ENV_VAR, "").strip()
    if text:
        pin(parse_env(text))
