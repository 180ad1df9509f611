"""The benchmark driver: plans the worker processes, runs them, and merges
their timings into one row per case x dtype x threads.

The driver itself imports no runtime (only NumPy, and normops for its
configuration report); every timing happens in a child process running
`normops_tools.benchmark.worker`, one runtime and one thread count per process.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import os
import platform
import shlex
import subprocess
import sys
import time

import numpy as np

from normops_tools.cases import measured as _cases
from normops_tools.cases.measured import Case, OVERHEAD_CASE
from .runtimes import DEFAULT_RUNTIMES, INTERLEAVE_RUNTIMES, RUNTIMES, missing_modules

__all__ = ["bench", "BenchResults", "DEFAULTS", "QUICK", "INTERLEAVE", "runtime_key", "machine_info",
           "BUSY_CASES", "SEPARATE"]

#: Default measurement settings, and those of ``quick=True`` (smoke tests).
DEFAULTS = {"repeat": 1000, "warmup": 50, "budget": 0.3, "rounds": 2, "per_process": "case"}
QUICK = {"repeat": 30, "warmup": 3, "budget": 0.01, "rounds": 2, "per_process": "all"}
#: Defaults of ``interleave=True``: `repeat` is the most rounds, `budget`
#: the sampling time of one case (all its runtimes together).
INTERLEAVE = {"repeat": 2000, "warmup": 30, "budget": 0.6, "rounds": 1, "per_process": "all"}
#: The separate-process table that comes with ``separate=True``.
SEPARATE = {"repeat": 1000, "warmup": 20, "budget": 0.1, "rounds": 2, "per_process": "all",
            "runtimes": ("normops-exact", "normops-fast", "onnxruntime")}
#: The cases measured again with one core busy (``--busy-core`` alone).
BUSY_CASES = r"^LayerNormalization_1024x4096$|^Softmax_256x1024$|^ReduceSum_1024x4096_axis-1$"
#: The runtimes and the budget factor of the busy pass.
BUSY_RUNTIMES = ("normops-exact", "normops-fast", "onnxruntime")
BUSY_BUDGET_FACTOR = 5
#: Cases per interleaved worker process.
JOBS_PER_PROCESS = 40

#: ONNX Runtime paths compared with normops: runtime -> ratio column prefix
#: (``ort_over_exact`` = onnxruntime latency / normops-exact latency). The
#: ``onnxruntime`` ratios are always present, the others when measured.
RATIO_RUNTIMES = {"onnxruntime": "ort", "onnxruntime-iobinding": "ort_iob"}

_ENV_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


class BenchResults(list):
    """The rows returned by `bench` (a list of dicts), with `meta` (options,
    machine, versions, bandwidth, overhead, notes) and `measurements` (every
    round of every worker) attached."""

    def __init__(self, rows=(), meta=None, measurements=None):
        super().__init__(rows)
        self.meta = meta or {}
        self.measurements = measurements or []

    def to_dict(self) -> dict:
        return {"meta": self.meta, "rows": list(self), "measurements": self.measurements}


def runtime_key(runtime: str) -> str:
    """Column prefix of a runtime: ``normops-exact`` -> ``normops_exact``."""
    return runtime.replace("-", "_")


# ---------------------------------------------------------------------------
# Arguments


def _split(value) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split(",")
    return [str(v).strip() for v in value if str(v).strip()]


def _resolve_cases(cases, dtypes) -> list[tuple[Case, str]]:
    wanted = _split(dtypes)
    if cases is None or isinstance(cases, str):
        return _cases.select_cases(cases, wanted)
    pairs = []
    for c in cases:
        if isinstance(c, str):
            c = _cases.get_case(c)
        for dt in c.dtypes:
            if wanted is None or dt in [np.dtype(w).name for w in wanted]:
                pairs.append((c, dt))
    return pairs


def _resolve_threads(threads) -> list[int]:
    if isinstance(threads, (int, np.integer)):
        threads = [threads]
    out = [int(t) for t in (_split(threads) if isinstance(threads, str) else threads)]
    if not out or min(out) < 1:
        raise ValueError(f"thread counts must be positive integers, got {threads!r}")
    return list(dict.fromkeys(out))


def _resolve_runtimes(runtimes) -> list[str]:
    names = list(DEFAULT_RUNTIMES) if runtimes is None else _split(runtimes)
    for n in names:
        if n not in RUNTIMES:
            raise ValueError(f"unknown runtime {n!r}; known: {', '.join(RUNTIMES)}")
    return list(dict.fromkeys(names))


# ---------------------------------------------------------------------------
# Machine


def _isa_level(flags: set[str]) -> str:
    """The x86-64 micro-architecture level the CPU flags allow."""
    if not flags:
        return "unknown"
    v2 = {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"}
    v3 = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "abm", "xsave"}
    v4 = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}
    level = "x86-64"
    for name, need in (("x86-64-v2", v2), ("x86-64-v3", v3), ("x86-64-v4", v4)):
        if not need <= flags:
            break
        level = name
    return level


def _normops_config() -> dict:
    """normops' own view of the build: version, show_config() text and dict."""
    try:
        import normops
    except Exception as exc:
        return {"normops_config": f"normops does not import: {exc}"}
    got = {"normops": str(getattr(normops, "__version__", "?"))}
    show = getattr(normops, "show_config", None)
    if show is None:
        got["normops_config"] = "normops.show_config() is not available"
        return got
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            ret = show()
    except Exception as exc:
        got["normops_config"] = f"normops.show_config() failed: {exc}"
        return got
    text = buf.getvalue().strip()
    if isinstance(ret, dict):
        got["normops_build"] = json.loads(json.dumps(ret, default=str))
        got["normops_isa"] = str(ret.get("isa", "?"))
    elif ret is not None and not text:
        text = str(ret)
    got["normops_config"] = text
    return got


def _caches() -> str | None:
    """Per-core cache sizes as Linux reports them, e.g. 'L1d 48K, L2 2048K'."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    out = []
    try:
        for entry in sorted(os.listdir(base)):
            if not entry.startswith("index"):
                continue

            def read(name, entry=entry):
                with open(os.path.join(base, entry, name)) as f:
                    return f.read().strip()

            kind = {"Data": "d", "Instruction": "i"}.get(read("type"), "")
            out.append(f"L{read('level')}{kind} {read('size')}")
    except OSError:
        return None
    return ", ".join(out) or None


def machine_info() -> dict:
    """CPU model, core count, ISA level, OS, Python, and normops' view."""
    model, flags, ident = None, set(), {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, val = line.partition(":")
                key = key.strip()
                if key == "model name" and model is None:
                    model = val.strip()
                elif key == "flags" and not flags:
                    flags = set(val.split())
                elif key in ("cpu family", "model", "stepping") and key not in ident:
                    ident[key] = val.strip()
    except OSError:
        pass
    if model and ident:
        model += " (" + ", ".join(f"{k} {v}" for k, v in ident.items()) + ")"
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = None
    return {
        "cpu_model": model or platform.processor() or platform.machine(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": affinity,
        "isa_level": _isa_level(flags),
        "caches": _caches(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "normops": None,
        "normops_isa": None,
        "normops_config": None,
        **_normops_config(),
    }


def _command_line() -> str:
    """This process's command line, ``python -m pkg`` spelled as such."""
    argv = list(sys.argv)
    if argv and argv[0].endswith("__main__.py"):
        pkg = os.path.dirname(os.path.abspath(argv[0]))
        parts = [os.path.basename(pkg)]
        while os.path.exists(os.path.join(os.path.dirname(pkg), "__init__.py")):
            pkg = os.path.dirname(pkg)
            parts.insert(0, os.path.basename(pkg))
        argv[0:1] = ["python", "-m", ".".join(parts)]
    return shlex.join(argv)


def _loadavg():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


# ---------------------------------------------------------------------------
# Progress


class _Progress:
    """tqdm on stderr when installed, else a one-line counter."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.n, self.enabled, self.bar = total, 0, enabled, None
        self.tty = enabled and sys.stderr.isatty()
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, file=sys.stderr, unit="proc", dynamic_ncols=True)
            except ImportError:
                self.bar = None

    def update(self, label: str) -> None:
        self.n += 1
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_description_str(label[:48], refresh=False)
            self.bar.update(1)
        elif self.tty:
            sys.stderr.write(f"\r[{self.n}/{self.total}] {label[:70]:<70}")
            sys.stderr.flush()
        elif self.n == self.total or self.n % max(1, self.total // 20) == 0:
            sys.stderr.write(f"[{self.n}/{self.total}] {label}\n")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled and self.tty:
            sys.stderr.write("\n")


# ---------------------------------------------------------------------------
# Workers


def _package_root() -> str:
    import normops_tools.benchmark as pkg

    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(pkg.__file__))))


def _run_worker(spec: dict, python: str, timeout: float) -> dict:
    """Run one worker process; a failure becomes an error per job."""
    env = os.environ.copy()
    for var in _ENV_THREAD_VARS:
        env[var] = str(spec["threads"])
    if spec.get("interleave"):
        # OpenMP threads sleep when idle instead of spinning (libgomp reads
        # this when it loads, hence in the environment of a fresh process),
        # as ONNX Runtime's do with allow_spinning = 0.
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    root = _package_root()
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        proc = subprocess.run(
            [python, "-m", "normops_tools.benchmark.worker"],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
        lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
        if proc.returncode == 0 and lines:
            return json.loads(lines[-1])
        reason = f"worker exited with code {proc.returncode}: {proc.stderr.strip()[-600:]}"
    except subprocess.TimeoutExpired:
        reason = f"worker timed out after {timeout:.0f} s"
    except (OSError, ValueError) as exc:
        reason = f"worker failed: {exc}"
    if spec.get("interleave"):
        return {"mode": "interleave", "threads": spec["threads"], "versions": {}, "skipped": {},
                "failed": reason, "runtimes": spec["runtimes"],
                "results": [{"case": j["case"], "dtype": j["dtype"], "error": reason, "runtimes": {}}
                            for j in spec["jobs"]]}
    return {
        "runtime": spec["runtime"],
        "threads": spec["threads"],
        "versions": {},
        "skipped": None,
        "failed": reason,
        "results": [{"case": j["case"], "dtype": j["dtype"], "error": reason} for j in spec["jobs"]],
    }


# ---------------------------------------------------------------------------
# The benchmark


def bench(
    cases=None,
    dtypes=None,
    threads=(1, 2),
    runtimes=None,
    repeat: int | None = None,
    warmup: int | None = None,
    budget: float | None = None,
    quick: bool = False,
    bandwidth: bool = False,
    *,
    rounds: int | None = None,
    per_process: str | None = None,
    seed: int = 0,
    overhead: bool = True,
    progress: bool = False,
    out: str | os.PathLike | None = None,
    python: str | None = None,
    bandwidth_mib: int = 512,
    batch: bool = False,
    scaling: bool = False,
    interleave: bool = False,
    busy_core: str | bool | None = None,
    separate: bool = False,
) -> BenchResults:
    """Time normalisation nodes in normops and the other runtimes.

    Parameters
    ----------
    cases : None, str or sequence
        None for every registered case, a regular expression searched in the
        case names, or a sequence of names / `Case` objects. Workers are fresh
        processes that look cases up by name in `normops_tools.cases.measured`, so a
        case must be registered there (in that module) to be measured.
    dtypes : None, str or sequence of str
        Restrict to these dtypes ("float32,float16" or a list).
    threads : int or sequence of int
        Thread counts; each runs in its own processes.
    runtimes : None, str or sequence of str
        Runtime names (default `DEFAULT_RUNTIMES`); one missing from the
        environment is skipped with a note in ``results.meta["notes"]``.
    repeat, warmup, budget : int, int, float
        Most samples, warm-up calls, and sampling seconds for each case in
        each process. Defaults: `DEFAULTS`, or `QUICK` when `quick`.
    quick : bool
        Tiny budget and all cases of a runtime in one process: a smoke test,
        not a measurement.
    bandwidth : bool
        Measure read/copy bandwidth first and report each case's fraction
        of the copy limit (see `normops_tools.benchmark.bandwidth`).
    rounds : int
        Processes per runtime per case; the runtime order is reversed every
        other round (A B C, C B A, ...). Default 2.
    per_process : "case" or "all"
        One case per process (default), or every case of a thread count in
        one process per runtime and round (the `quick` default).
    overhead : bool
        Also time a 1x8 LayerNormalization in normops-exact (and ONNX
        Runtime) at 1 thread: the per-call overhead.
    progress : bool
        Progress bar on stderr.
    out : path, optional
        Write results.json, results.csv, results.md and the figures
        (`normops_tools.benchmark.figures`) there.
    batch : bool
        Also measure ``normops.map_batch`` throughput at 1 and 2 workers,
        and calls from 2 and 4 Python threads against serial calls (see
        `normops_tools.benchmark.batch`), in ``meta["batch"]`` (``["pool"]``).
    scaling : bool
        Also measure 1 thread against 2 per case, back to back and after
        idle gaps, under both OpenMP wait policies (one process each:
        `normops_tools.benchmark.scaling`), in ``meta["scaling"]``.
    interleave : bool
        Every runtime in ONE process per thread count, their calls
        alternated (A B C, B C A, ...) with idle threads sleeping on both
        sides (ONNX Runtime ``allow_spinning`` 0, ``OMP_WAIT_POLICY`` =
        PASSIVE); see `normops_tools.benchmark.worker.interleave`. Rows gain
        ``<rt>_p90_us``, ``state`` ("quiet"), ``group`` and ``family``;
        `repeat` counts rounds and `budget` is per case (`INTERLEAVE`).
    busy_core : None, True or str
        With `interleave`: measure again, with another process spinning on
        one core (`normops_tools.benchmark.busy.busy_core`), the selected cases
        matching this regular expression (True: those of `BUSY_CASES`, if
        any is selected); those rows have ``state`` "busy". The busy process
        is stopped in every case.
    separate : bool
        With `interleave`: also run the separate-process protocol
        (`SEPARATE`) on the "operator" cases, in ``meta["separate"]``
        (its own rows and settings), the second table of the page.

    Returns
    -------
    BenchResults
        A list with one dict per case x dtype x threads (see
        `normops_tools.benchmark.report.columns`), plus `.meta`.
    """
    if interleave:
        return _bench_interleaved(
            cases, dtypes, threads, runtimes, repeat, warmup, budget, quick, bandwidth,
            seed=seed, progress=progress, out=out, python=python, bandwidth_mib=bandwidth_mib,
            batch=batch, busy_core=busy_core, separate=separate, overhead=overhead, scaling=scaling)
    if busy_core or separate:
        raise ValueError("busy_core and separate go with interleave=True")
    settings = dict(QUICK if quick else DEFAULTS)
    for k, v in (("repeat", repeat), ("warmup", warmup), ("budget", budget),
                 ("rounds", rounds), ("per_process", per_process)):
        if v is not None:
            settings[k] = v
    if settings["per_process"] not in ("case", "all"):
        raise ValueError("per_process must be 'case' or 'all'")
    if int(settings["rounds"]) < 1 or int(settings["repeat"]) < 1 or float(settings["budget"]) <= 0:
        raise ValueError("rounds and repeat must be >= 1 and budget > 0")
    thread_list = _resolve_threads(threads)
    rt_names = _resolve_runtimes(runtimes)
    # a case none of whose runtimes is measured is left out
    pairs = [(c, dt) for c, dt in _resolve_cases(cases, dtypes)
             if c.contenders is None or set(c.contenders) & set(rt_names)]
    if not pairs:
        raise ValueError(f"no benchmark case matches cases={cases!r} dtypes={dtypes!r}"
                         f" runtimes={rt_names!r}")
    python = python or sys.executable

    meta, skipped = _start(settings, seed, quick, thread_list, rt_names, bandwidth, bandwidth_mib, batch,
                           scaling=scaling)

    if settings["per_process"] == "case":
        units = [(t, [pair]) for pair in pairs for t in thread_list]
    else:
        units = [(t, pairs) for t in thread_list]
    n_rounds = int(settings["rounds"])
    bar = _Progress(len(units) * n_rounds * len(rt_names), progress)
    measurements: list[dict] = []
    errors: dict[tuple, str] = {}

    def spec_for(rt, t, jobs, **over):
        spec = {
            "runtime": rt, "threads": t, "seed": seed,
            "warmup": int(settings["warmup"]), "repeat": int(settings["repeat"]),
            "budget": float(settings["budget"]), "min_samples": 5,
            "jobs": [{"case": c.name, "dtype": dt} for c, dt in jobs],
        }
        spec.update(over)
        return spec

    def run(rt, t, jobs, rnd, **over):
        jobs = [(c, dt) for c, dt in jobs if c.contenders is None or rt in c.contenders]
        if not jobs:
            return []
        spec = spec_for(rt, t, jobs, **over)
        timeout = 120 + len(jobs) * (10 * spec["budget"] + 30)
        res = _run_worker(spec, python, timeout)
        if res.get("skipped"):
            skipped.setdefault(rt, res["skipped"])
            return []
        meta["versions"].update(res.get("versions", {}))
        rows = []
        for r in res["results"]:
            r = dict(r, runtime=rt, threads=t, round=rnd)
            if r.get("error"):
                errors.setdefault((r["case"], r["dtype"], t, rt), r["error"])
            rows.append(r)
        return rows

    try:
        for t, jobs in units:
            for rnd in range(n_rounds):
                order = rt_names if rnd % 2 == 0 else rt_names[::-1]
                for rt in order:
                    label = f"{jobs[0][0].name} {jobs[0][1]} T={t} {rt}" if len(jobs) == 1 \
                        else f"{len(jobs)} cases T={t} {rt}"
                    if rt not in skipped:
                        measurements.extend(run(rt, t, jobs, rnd))
                    bar.update(label)
        if overhead and "normops-exact" in rt_names and "normops-exact" not in skipped:
            over = {}
            for rt in ("normops-exact", "onnxruntime", "onnxruntime-iobinding"):
                if rt in rt_names and rt not in skipped:
                    got = [m for m in run(rt, 1, [(OVERHEAD_CASE, "float32")], 0,
                                          repeat=max(int(settings["repeat"]), 2000))
                           if not m.get("error")]
                    if got:
                        over[rt] = {"median_us": got[0]["median_ns"] / 1e3,
                                    "samples": got[0]["samples"], "inner": got[0]["inner"]}
            if over:
                meta["overhead"] = {"case": OVERHEAD_CASE.name, "dtype": "float32",
                                    "threads": 1, "runtimes": over}
    finally:
        bar.close()

    _finish(meta, skipped, errors)

    rows = _merge(pairs, thread_list, rt_names, measurements, meta)
    return _results(rows, meta, measurements, out)


def _start(settings, seed, quick, thread_list, rt_names, bandwidth, bandwidth_mib, batch, **extra):
    """The run's meta (settings, machine, load, bandwidth, map_batch and
    Python-thread figures when asked) and {runtime: why} for the runtimes not installed."""
    skipped = {}
    for rt in rt_names:
        miss = missing_modules(rt)
        if miss:
            skipped[rt] = f"{', '.join(miss)} not installed"
    meta = {
        "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": _command_line(),
        **{k: v for k, v in extra.items() if k == "mode"},
        "settings": dict(settings, seed=seed, quick=quick),
        "threads": thread_list,
        "runtimes": rt_names,
        "machine": machine_info(),
        "loadavg_start": _loadavg(),
        "versions": {},
        "bandwidth": None,
        "batch": None,
        "overhead": None,
        **{k: v for k, v in extra.items() if k != "mode"},
        "notes": [],
    }
    if bandwidth:
        from .bandwidth import measure_bandwidth

        meta["bandwidth"] = measure_bandwidth(thread_list, size_mib=bandwidth_mib)
    if batch:
        from .batch import measure_batch, measure_pool

        meta["batch"] = measure_batch(arrays=8 if quick else 32, repeats=2 if quick else 5)
        meta["batch"]["pool"] = (measure_pool(rounds=2, calls=4, rows=64) if quick
                                 else measure_pool(rounds=15))
    if extra.get("scaling"):
        from .scaling import run_policies

        meta["scaling"] = run_policies(quick=quick)
    else:
        meta["scaling"] = None
    return meta, skipped


def _finish(meta, skipped, errors) -> None:
    """Notes (busy machine, skipped runtimes, one per distinct error) and the
    end time and load."""
    notes = meta["notes"]
    load = meta["loadavg_start"]
    if load and load[0] > 0.5:
        notes.append(
            f"the machine was already busy when the benchmark started (1-minute load "
            f"average {load[0]}): timings may be disturbed, multi-thread ones most, since "
            f"a thread that must wait for a busy core delays the whole call")
    for rt, why in skipped.items():
        notes.append(f"{rt} skipped: {why}")
    seen = set()
    for (case, dt, t, rt), why in errors.items():
        if (rt, why) not in seen:
            seen.add((rt, why))
            notes.append(f"{rt} could not run {case} {dt} (T={t}): {why}")
    meta["loadavg_end"] = _loadavg()
    meta["finished"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def _results(rows, meta, measurements, out) -> BenchResults:
    results = BenchResults(rows, meta, measurements)
    if out is not None:
        from .report import write_outputs

        written = write_outputs(results, out)
        meta["outputs"] = {k: (None if p is None else str(p)) for k, p in written.items()}
    return results


def _row_head(case, dt, t, bw):
    """A row's description of the case, with its copy limit when the
    bandwidth was measured; and the copy bandwidth at `t` threads (or None)."""
    row = {"case": case.name, "op_type": case.op_type, "opset": case.opset, "shape": case.shape_str,
           "axis": case.attributes.get("axis"), "width": case.width, "elements": case.elements,
           "dtype": dt, "threads": t, "bytes_moved": case.bytes_moved(dt)}
    copy_gbs = None
    if bw:
        avail = [k for k in bw["copy_gbs"] if int(k) <= t] or list(bw["copy_gbs"])
        copy_gbs = bw["copy_gbs"][max(avail, key=int)]
        row["copy_limit_us"] = case.bytes_moved(dt) / copy_gbs / 1e3
    return row, copy_gbs


def _merge(pairs, thread_list, rt_names, measurements, meta) -> list[dict]:
    """One row per case x dtype x threads: median of the round medians."""
    from .bandwidth import copy_limit_fraction

    by_key: dict[tuple, list[dict]] = {}
    for m in measurements:
        if not m.get("error") and m.get("median_ns") is not None:
            by_key.setdefault((m["case"], m["dtype"], m["threads"], m["runtime"]), []).append(m)
    bw = meta.get("bandwidth")
    rows = []
    for case, dt in pairs:
        for t in thread_list:
            row, copy_gbs = _row_head(case, dt, t, bw)
            row.update(family=case.family, group=case.group)
            for rt in rt_names:
                key = runtime_key(rt)
                ms = by_key.get((case.name, dt, t, rt), [])
                med = float(np.median([m["median_ns"] for m in ms])) if ms else None
                row[f"{key}_us"] = None if med is None else med / 1e3
                row[f"{key}_rounds_us"] = [m["median_ns"] / 1e3 for m in ms]
                row[f"{key}_samples"] = sum(m["samples"] for m in ms) if ms else 0
                row[f"{key}_elem_per_ns"] = None if med is None else case.elements / med
                diffs = [m.get("max_abs_diff") for m in ms if m.get("max_abs_diff") is not None]
                row[f"{key}_max_abs_diff"] = max(diffs) if diffs else None
                if bw:
                    row[f"{key}_copy_frac"] = (
                        None if med is None
                        else copy_limit_fraction(case.bytes_moved(dt), med, copy_gbs))
            for ort_rt, prefix in RATIO_RUNTIMES.items():
                if ort_rt != "onnxruntime" and ort_rt not in rt_names:
                    continue
                ort = row.get(f"{runtime_key(ort_rt)}_us")
                for mode in ("exact", "fast"):
                    mine = row.get(f"normops_{mode}_us")
                    row[f"{prefix}_over_{mode}"] = (ort / mine) if (ort and mine) else None
            rows.append(row)
    return rows



# ---------------------------------------------------------------------------
# The interleaved benchmark


def _interleave_units(pairs, thread_list):
    """(threads, jobs) per worker process: a thread count's cases in chunks."""
    units = []
    for t in thread_list:
        for i in range(0, len(pairs), JOBS_PER_PROCESS):
            units.append((t, pairs[i:i + JOBS_PER_PROCESS]))
    return units


def _bench_interleaved(cases, dtypes, threads, runtimes, repeat, warmup, budget, quick, bandwidth, *,
                       seed, progress, out, python, bandwidth_mib, batch, busy_core, separate,
                       overhead, scaling=False) -> BenchResults:
    settings = dict(INTERLEAVE)
    if quick:
        settings.update(repeat=QUICK["repeat"], warmup=QUICK["warmup"], budget=QUICK["budget"])
    for k, v in (("repeat", repeat), ("warmup", warmup), ("budget", budget)):
        if v is not None:
            settings[k] = v
    if int(settings["repeat"]) < 1 or float(settings["budget"]) <= 0:
        raise ValueError("repeat must be >= 1 and budget > 0")
    pairs = _resolve_cases(cases, dtypes)
    if not pairs:
        raise ValueError(f"no benchmark case matches cases={cases!r} dtypes={dtypes!r}")
    busy_pairs = []
    if busy_core:
        import re

        rx = re.compile(BUSY_CASES if busy_core is True else str(busy_core))
        busy_pairs = [(c, dt) for c, dt in pairs if rx.search(c.name)]
        if not busy_pairs and busy_core is not True:  # the default set may simply not be selected
            raise ValueError(f"busy_core={busy_core!r} matches none of the selected cases")
    thread_list = _resolve_threads(threads)
    rt_names = list(INTERLEAVE_RUNTIMES) if runtimes is None else _resolve_runtimes(runtimes)
    python = python or sys.executable
    meta, skipped = _start(settings, seed, quick, thread_list, rt_names, bandwidth, bandwidth_mib, batch,
                           mode="interleave", busy=None, separate=None, scaling=scaling)
    live = [rt for rt in rt_names if rt not in skipped]
    if busy_core and not busy_pairs:
        meta["notes"].append("--busy-core: none of its cases (" + BUSY_CASES + ") is selected; "
                             "no busy-core pass")

    units = [(t, jobs, "quiet") for t, jobs in _interleave_units(pairs, thread_list)]
    units += [(t, jobs, "busy") for t, jobs in _interleave_units(busy_pairs, thread_list)]
    bar = _Progress(len(units), progress)
    measurements: list[dict] = []
    errors: dict[tuple, str] = {}

    def run(t, jobs, state):
        # the busy pass: the threaded runtimes only, and more samples for the p90
        rts = live if state == "quiet" else [rt for rt in live if rt in BUSY_RUNTIMES]
        spec = {"interleave": True, "runtimes": rts, "threads": t, "seed": seed, "spinning": False,
                "warmup": int(settings["warmup"]), "repeat": int(settings["repeat"]),
                "budget": float(settings["budget"]) * (1 if state == "quiet" else BUSY_BUDGET_FACTOR),
                "min_samples": 5,
                "jobs": [{"case": c.name, "dtype": dt} for c, dt in jobs]}
        timeout = 120 + len(jobs) * (2 * spec["budget"] + 30)
        res = _run_worker(spec, python, timeout)
        meta["versions"].update(res.get("versions", {}))
        if res.get("pid"):
            meta["omp_wait_policy"] = res.get("omp_wait_policy")
        for rt, why in res.get("skipped", {}).items():
            skipped.setdefault(rt, why)
        for r in res["results"]:
            if r.get("error"):
                errors.setdefault((r["case"], r["dtype"], t, "all"), r["error"])
            for rt, got in r.get("runtimes", {}).items():
                if got.get("error") and not got.get("unsupported"):
                    errors.setdefault((r["case"], r["dtype"], t, rt), got["error"])
                measurements.append(dict(got, case=r["case"], dtype=r["dtype"], runtime=rt, threads=t,
                                         state=state))

    seconds = meta["seconds"] = {}  # wall time of each part, for planning runs
    try:
        busy_ctx = None
        for t, jobs, state in units:
            if state == "busy" and busy_ctx is None:
                from .busy import busy_core as _busy_core

                busy_ctx = _busy_core(python=python)
                meta["busy"] = dict(busy_ctx.__enter__(), cases=[c.name for c, _ in busy_pairs])
            start = time.monotonic()
            run(t, jobs, state)
            seconds[state] = round(seconds.get(state, 0.0) + time.monotonic() - start, 1)
            bar.update(f"{len(jobs)} cases T={t} {state}")
    finally:
        if busy_ctx is not None:
            busy_ctx.__exit__(None, None, None)
        bar.close()

    if separate:
        sep_pairs = [(c, dt) for c, dt in pairs if c.group == "operator"]
        sep_rts = [rt for rt in SEPARATE["runtimes"] if rt in rt_names]
        if sep_pairs and sep_rts:
            start = time.monotonic()
            sep = bench(
                cases=list(dict.fromkeys(c.name for c, _ in sep_pairs)),
                dtypes=dtypes, threads=thread_list, runtimes=sep_rts,
                repeat=QUICK["repeat"] if quick else SEPARATE["repeat"],
                warmup=QUICK["warmup"] if quick else SEPARATE["warmup"],
                budget=QUICK["budget"] if quick else SEPARATE["budget"],
                rounds=SEPARATE["rounds"], per_process=SEPARATE["per_process"], seed=seed,
                overhead=overhead, progress=progress, python=python)
            meta["separate"] = {"settings": sep.meta["settings"], "runtimes": sep_rts,
                                "rows": list(sep), "notes": sep.meta["notes"]}
            meta["overhead"] = sep.meta.get("overhead")
            seconds["separate"] = round(time.monotonic() - start, 1)

    _finish(meta, skipped, errors)
    rows = _merge_interleaved(pairs, busy_pairs, thread_list, rt_names, measurements, meta)
    return _results(rows, meta, measurements, out)


#: (numerator runtime, denominator runtime, column): peer time / normops time
INTERLEAVE_RATIOS = (
    ("onnxruntime", "normops-exact", "ort_over_exact"),
    ("onnxruntime", "normops-fast", "ort_over_fast"),
    ("onnxruntime-iobinding", "normops-exact", "ort_iob_over_exact"),
    ("onnxruntime-iobinding", "normops-fast", "ort_iob_over_fast"),
    ("numpy", "normops-exact", "numpy_over_exact"),
    ("numpy", "normops-fast", "numpy_over_fast"),
    ("scipy", "normops-exact", "scipy_over_exact"),
    ("scipy", "normops-fast", "scipy_over_fast"),
    ("torch", "normops-exact", "torch_over_exact"),
    ("normops-named", "normops-run", "named_over_run"),
)


def _merge_interleaved(pairs, busy_pairs, thread_list, rt_names, measurements, meta) -> list[dict]:
    """One row per state x case x dtype x threads, from the medians of the
    interleaved samples; ratios are ratios of those medians."""
    from .bandwidth import copy_limit_fraction

    got = {(m["state"], m["case"], m["dtype"], m["threads"], m["runtime"]): m
           for m in measurements if not m.get("error") and m.get("median_ns") is not None}
    bw = meta.get("bandwidth")
    rows = []
    for state, sel in (("quiet", pairs), ("busy", busy_pairs)):
        for case, dt in sel:
            for t in thread_list:
                row, copy_gbs = _row_head(case, dt, t, bw)
                row.update(family=case.family, group=case.group, state=state)
                for rt in rt_names:
                    k = runtime_key(rt)
                    m = got.get((state, case.name, dt, t, rt))
                    med = None if m is None else m["median_ns"]
                    row[f"{k}_us"] = None if m is None else med / 1e3
                    row[f"{k}_p90_us"] = None if m is None else m["p90_ns"] / 1e3
                    row[f"{k}_rounds_us"] = [] if m is None else [med / 1e3]
                    row[f"{k}_samples"] = 0 if m is None else m["samples"]
                    row[f"{k}_elem_per_ns"] = None if m is None else case.elements / med
                    row[f"{k}_max_abs_diff"] = None if m is None else m.get("max_abs_diff")
                    if bw:
                        row[f"{k}_copy_frac"] = (None if m is None else copy_limit_fraction(
                            case.bytes_moved(dt), med, copy_gbs))
                for num, den, col in INTERLEAVE_RATIOS:
                    a, b = row.get(f"{runtime_key(num)}_us"), row.get(f"{runtime_key(den)}_us")
                    row[col] = (a / b) if (a and b) else None
                run_us, named_us = row.get("normops_run_us"), row.get("normops_named_us")
                row["run_minus_named_us"] = (run_us - named_us) if (run_us and named_us) else None
                rows.append(row)
    return rows
