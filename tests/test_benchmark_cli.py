"""Functional tests of `python -m normops bench` on a tiny time budget.

They check that the command runs, isolates runtimes in worker processes,
and writes JSON / CSV / Markdown with the expected columns. They assert
nothing about speed.
"""

import csv
import importlib.util
import json
import os
import re
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from normops_tools import benchmark
from normops_tools.benchmark import bandwidth, report, runner
from normops_tools.cases import measured as cases
from normops_tools.benchmark.runtimes import DEFAULT_RUNTIMES, RUNTIMES, build_onnx_model

ROOT = Path(__file__).resolve().parents[1]
SMALL = r"^LayerNormalization_32x64$|^RMSNormalization_2x8x16_axis1$"
HAVE_ORT = all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None
STORED = ROOT / "tests" / "data" / "bench_results_small.json"


def _env():
    env = os.environ.copy()
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """One quick run of the real command, shared by the tests below."""
    out = tmp_path_factory.mktemp("bench")
    cmd = [sys.executable, "-m", "normops", "bench", "--quick", "--case", SMALL,
           "--dtype", "float32", "--threads", "1",
           "--runtimes", "normops-exact,onnxruntime,numpy", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=120)
    return proc, out


# ---------------------------------------------------------------------------
# Case registry


def test_registry_holds_the_issue_cases():
    names = set(cases.CASES)
    for w in (64, 896, 1536, 2048, 3584, 4096):
        for rows in (32, 1024):
            assert f"LayerNormalization_{rows}x{w}" in names
            assert f"RMSNormalization_{rows}x{w}" in names
    for n in ("LayerNormalization_256x128", "LayerNormalization_1x4096",
              "LayerNormalization_128x4096", "LayerNormalization_4096x128",
              "LayerNormalization_8x16x512_axis2", "RMSNormalization_8x32",
              "RMSNormalization_1x64x512", "RMSNormalization_2x8x16_axis1"):
        assert n in names
    for shape in ("1x4096", "128x4096", "1x128x5120", "257x65"):
        c = cases.get_case(f"SimplifiedLayerNormalization_{shape}")
        assert c.dtypes == ("float32", "float16")
        assert (c.opset, c.opset_import) == (1, 17)
    for shape in ("1x4096", "128x4096"):
        assert "float16" in cases.get_case(f"RMSNormalization_{shape}").dtypes
    assert cases.get_case("LayerNormalization_32x64").opset == 17
    assert cases.get_case("RMSNormalization_32x64").opset == 23
    assert cases.get_case("RMSNormalization_2x8x16_axis1").attributes["axis"] == 1
    assert cases.get_case("RMSNormalization_2x8x16_axis1").width == 128


def test_select_cases_filters_and_hides_probe():
    pairs = cases.select_cases("^SimplifiedLayerNormalization_", ["float16"])
    assert len(pairs) == 4 and all(dt == "float16" for _, dt in pairs)
    assert all(not c.hidden for c, _ in cases.select_cases(None))
    assert cases.OVERHEAD_CASE not in [c for c, _ in cases.select_cases("LayerNormalization")]
    assert [c for c, _ in cases.select_cases("^LayerNormalization_1x8$")] == [cases.OVERHEAD_CASE]


def test_inputs_are_deterministic_and_shaped():
    c = cases.get_case("LayerNormalization_8x16x512_axis2")
    a, b = c.inputs("float32", seed=3), c.inputs("float32", seed=3)
    assert [x.shape for x in a] == [(8, 16, 512), (512,), (512,)]
    for x, y in zip(a, b):
        assert np.array_equal(x.view(np.uint32), y.view(np.uint32))
    assert not np.array_equal(a[0], c.inputs("float32", seed=4)[0])
    h = cases.get_case("RMSNormalization_1x4096").inputs("float16")
    assert all(x.dtype == np.float16 for x in h)
    assert c.bytes_moved("float32") == 2 * 8 * 16 * 512 * 4


def test_numpy_equivalents_normalise():
    c = cases.get_case("RMSNormalization_2x8x16_axis1")
    x, s = c.inputs("float32")
    y = c.numpy_fn([x, np.ones_like(s)], c.attributes, acc=np.float64)
    assert np.allclose(np.mean(y * y, axis=(1, 2)), 1.0, atol=1e-4)
    c = cases.get_case("LayerNormalization_32x64")
    x, s, b = c.inputs("float32")
    y = c.numpy_fn([x, np.ones_like(s), np.zeros_like(b)], c.attributes)
    assert y.dtype == np.float32
    assert np.allclose(y.mean(axis=-1), 0, atol=1e-5)
    assert np.allclose(y.std(axis=-1), 1, atol=1e-3)


@pytest.mark.skipif(not HAVE_ORT, reason="onnx / onnxruntime not installed")
@pytest.mark.parametrize("name,dtype", [
    ("LayerNormalization_8x16x512_axis2", "float32"),
    ("RMSNormalization_2x8x16_axis1", "float32"),
    ("RMSNormalization_1x4096", "float16"),
    ("SimplifiedLayerNormalization_257x65", "float16"),
])
def test_onnx_models_run_in_onnxruntime(name, dtype):
    import onnxruntime as ort

    c = cases.get_case(name)
    inputs = c.inputs(dtype)
    model = build_onnx_model(c, inputs)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"X": inputs[0]})
    ref = c.numpy_fn(inputs, c.attributes, acc=np.float64)
    tol = 1e-2 if dtype == "float16" else 1e-4
    assert y.dtype == np.dtype(dtype) and np.allclose(y, ref, atol=tol)


# ---------------------------------------------------------------------------
# The command


def test_cli_runs_and_prints_table(cli_run):
    proc, _ = cli_run
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = lines[0].split()
    for col in ("case", "dtype", "T", "numpy", "ORT", "el/ns", "ORT/exact"):
        assert col in header
    body = [ln for ln in lines if ln.startswith(("LayerNormalization_", "RMSNormalization_"))]
    assert [ln.split()[0] for ln in body] == ["LayerNormalization_32x64",
                                              "RMSNormalization_2x8x16_axis1"]
    assert "wrote results.json, results.csv, results.md" in proc.stdout


def test_cli_writes_json_with_expected_columns(cli_run):
    proc, out = cli_run
    data = json.loads((out / "results.json").read_text())
    meta, rows = data["meta"], data["rows"]
    assert meta["runtimes"] == ["normops-exact", "onnxruntime", "numpy"]
    assert meta["settings"]["quick"] is True and meta["threads"] == [1]
    assert meta["machine"]["logical_cpus"] == os.cpu_count()
    assert len(rows) == 2
    expected = set(report.columns(meta["runtimes"]))
    for row in rows:
        assert expected <= set(row)
        assert row["threads"] == 1 and row["dtype"] == "float32"
        # NumPy is always there: a real positive latency, two rounds.
        assert row["numpy_us"] > 0 and len(row["numpy_rounds_us"]) == 2
        assert row["numpy_elem_per_ns"] == pytest.approx(row["elements"] / (row["numpy_us"] * 1e3))
        assert row["numpy_max_abs_diff"] < 1e-4
    # every worker ran with OMP_NUM_THREADS = its thread count
    assert {m["threads"] for m in data["measurements"]} == {1}
    ran = {m["runtime"] for m in data["measurements"] if not m.get("error")}
    assert "numpy" in ran
    if "onnxruntime" in ran and "normops-exact" in ran:
        for row in rows:
            assert row["ort_over_exact"] == pytest.approx(
                row["onnxruntime_us"] / row["normops_exact_us"])
        assert "Per-call overhead" in proc.stdout
        assert meta["overhead"]["runtimes"]["normops-exact"]["median_us"] > 0
    else:
        assert meta["notes"], "a runtime that did not run must leave a note"


def test_cli_writes_csv_and_markdown(cli_run):
    _, out = cli_run
    with open(out / "results.csv", newline="") as f:
        table = list(csv.reader(f))
    assert table[0] == report.columns(["normops-exact", "onnxruntime", "numpy"])
    assert len(table) == 3
    row = dict(zip(table[0], table[1]))
    assert float(row["numpy_us"]) > 0 and row["case"] == "LayerNormalization_32x64"
    md = (out / "results.md").read_text()
    assert "## Method" in md and "## Machine" in md and "## Results" in md
    assert "| case | dtype | T |" in md
    assert "| LayerNormalization_32x64 | float32 | 1 |" in md
    # the headline chart needs ONNX Runtime ratios
    assert (out / "perf_vs_ort.png").exists() == (HAVE_MPL and HAVE_ORT)


def test_report_module_renders_page(cli_run, tmp_path):
    _, out = cli_run
    page, png = tmp_path / "docs" / "performance.md", tmp_path / "docs" / "perf_vs_ort.png"
    proc = subprocess.run(
        [sys.executable, "-m", "normops_tools.benchmark.report", str(out / "results.json"),
         "--page", str(page)],
        capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    text = page.read_text()
    for part in ("# Performance", "## Method", "## Machine", "## Summary", "### LayerNormalization",
                 "### RMSNormalization", "quick", "ISA level"):
        assert part in text
    assert ("](perf_vs_ort.png)" in text) == png.exists()


def test_cli_rejects_bad_arguments(capsys):
    assert benchmark.main(["--case", "NoSuchOperator"]) == 2
    assert "no benchmark case" in capsys.readouterr().err
    assert benchmark.main(["--runtimes", "numpy,bogus"]) == 2
    assert "unknown runtime" in capsys.readouterr().err
    assert benchmark.main(["--threads", "0"]) == 2
    assert benchmark.main(["--dtype", "fp17"]) == 2
    assert benchmark.main(["--case", "(unclosed"]) == 2


def test_cli_list(capsys):
    assert benchmark.main(["--list", "--case", "^SimplifiedLayerNormalization_"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 8 and all(ln.startswith("SimplifiedLayerNormalization_") for ln in out)


# ---------------------------------------------------------------------------
# Python API, workers, bandwidth


def test_bench_api_missing_runtime_is_a_note(monkeypatch):
    real = runner.missing_modules
    monkeypatch.setattr(runner, "missing_modules",
                        lambda rt: ["torch"] if rt == "torch" else real(rt))
    rows = benchmark.bench(cases="^RMSNormalization_8x32$", threads=(1, 2),
                           runtimes=["numpy", "torch"], quick=True, overhead=False,
                           bandwidth=True, bandwidth_mib=8)
    assert isinstance(rows, list) and len(rows) == 2
    assert [r["threads"] for r in rows] == [1, 2]
    assert all(r["torch_us"] is None and r["numpy_us"] > 0 for r in rows)
    assert any("torch skipped: torch not installed" in n for n in rows.meta["notes"])
    assert all(r["ort_over_exact"] is None for r in rows)
    # --bandwidth: limit and fraction per case
    bw = rows.meta["bandwidth"]
    assert set(bw["copy_gbs"]) == {1, 2} and all(v > 0 for v in bw["copy_gbs"].values())
    for r in rows:
        assert r["copy_limit_us"] > 0
        assert r["numpy_copy_frac"] == pytest.approx(r["copy_limit_us"] / r["numpy_us"])


def test_worker_protocol():
    spec = {"runtime": "numpy", "threads": 1, "warmup": 2, "repeat": 7, "budget": 0.001,
            "jobs": [{"case": "RMSNormalization_8x32", "dtype": "float32"}]}
    env = _env()
    env["OMP_NUM_THREADS"] = "1"
    proc = subprocess.run([sys.executable, "-m", "normops_tools.benchmark.worker"],
                          input=json.dumps(spec), capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["runtime"] == "numpy" and out["skipped"] is None
    assert out["omp_num_threads"] == "1"
    (res,) = out["results"]
    assert res["error"] is None and 5 <= res["samples"] <= 7
    assert res["q1_ns"] <= res["median_ns"] <= res["q3_ns"] and res["inner"] >= 1


def test_measure_batches_fast_calls():
    from normops_tools.benchmark.worker import measure

    calls = []
    r = measure(lambda: calls.append(1), warmup=3, repeat=20, budget=5.0)  # the samples, not the budget, end it
    assert r["inner"] > 1 and r["samples"] == 20
    assert len(calls) >= r["inner"] * 20


def test_bandwidth_small():
    bw = bandwidth.measure_bandwidth(threads=(1, 2), size_mib=8, repeats=1)
    assert set(bw["read_gbs"]) == {1, 2}
    assert all(v > 0 for v in list(bw["read_gbs"].values()) + list(bw["copy_gbs"].values()))
    assert "np.copyto" in bw["method"]


def test_runtime_names():
    assert set(DEFAULT_RUNTIMES) == {"normops-exact", "normops-fast", "onnxruntime",
                                     "numpy", "torch"}
    assert set(DEFAULT_RUNTIMES) <= set(RUNTIMES)


# ---------------------------------------------------------------------------
# --interleave, --busy-core


def test_interleave_alternates_calls():
    from normops_tools.benchmark.worker import interleave

    log = []

    def call(name):
        def fn():
            log.append(name)
            t = time.perf_counter_ns() + 30_000  # 30 µs: one call per sample
            while time.perf_counter_ns() < t:
                pass
        return fn

    got = interleave({n: call(n) for n in "ABC"}, warmup=2, repeat=4, budget=5.0)
    # warm-up (2 calls) and the batch-size probe (3 calls) of each, then
    # one sample of each per round, the order rotating
    assert log[:15] == ["A"] * 5 + ["B"] * 5 + ["C"] * 5
    assert log[15:] == list("ABC" "BCA" "CAB" "ABC")
    for stats in got.values():
        assert stats["samples"] == 4 and stats["inner"] == 1
        assert stats["q1_ns"] <= stats["median_ns"] <= stats["p90_ns"]


def test_busy_core_is_stopped_on_error():
    from normops_tools.benchmark.busy import busy_core

    with pytest.raises(KeyboardInterrupt):
        with busy_core() as info:
            pid = info["pid"]
            os.kill(pid, 0)  # running
            if hasattr(os, "sched_getaffinity"):
                assert os.sched_getaffinity(pid) == {info["cpu"]}
            raise KeyboardInterrupt
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_interleaved_run_routes_and_busy_core():
    names = ("^LayerNormalization_32x64$|^np_sum_4x8_axis1$|^run_ReduceMax_4x8_axis1$"
             "|^np_softmax_4x8_axis1$")
    rows = benchmark.bench(cases=names, threads=(1,), interleave=True, quick=True,
                           busy_core="^LayerNormalization_32x64$", overhead=False)
    meta = rows.meta
    assert meta["mode"] == "interleave" and meta["omp_wait_policy"] == "PASSIVE"
    busy = [r for r in rows if r["state"] == "busy"]
    assert [(r["case"], r["threads"]) for r in busy] == [("LayerNormalization_32x64", 1)]
    with pytest.raises(ProcessLookupError):  # the busy process is gone
        os.kill(meta["busy"]["pid"], 0)
    quiet = {(r["case"], r["threads"]): r for r in rows if r["state"] == "quiet"}
    assert len(quiet) == 4
    for t in (1,):
        ln = quiet[("LayerNormalization_32x64", t)]
        assert ln["group"] == "operator" and ln["normops_exact_us"] > 0
        assert ln["normops_exact_p90_us"] >= ln["normops_exact_us"]
        assert ln["numpy_over_exact"] == pytest.approx(ln["numpy_us"] / ln["normops_exact_us"])
        if HAVE_ORT:
            assert ln["ort_over_fast"] == pytest.approx(ln["onnxruntime_us"] / ln["normops_fast_us"])
        s = quiet[("np_sum_4x8_axis1", t)]
        assert s["numpy_us"] > 0 and s["onnxruntime_us"] is None and s["scipy_us"] is None
        assert s["normops_exact_max_abs_diff"] < 1e-5
        sm = quiet[("np_softmax_4x8_axis1", t)]
        assert sm["scipy_over_exact"] == pytest.approx(sm["scipy_us"] / sm["normops_exact_us"])
        r = quiet[("run_ReduceMax_4x8_axis1", t)]
        assert r["normops_exact_us"] is None and r["normops_run_us"] > 0
        assert r["run_minus_named_us"] == pytest.approx(r["normops_run_us"] - r["normops_named_us"])
    md = report.render_results_md(rows)
    assert "## One core busy" in md and "| LayerNormalization_32x64 | exact | 1 |" in md
    assert "NumPy/SciPy-style functions" in md


def test_busy_core_needs_a_selected_case():
    with pytest.raises(ValueError, match="busy_core"):
        benchmark.bench(cases="^LayerNormalization_32x64$", interleave=True, quick=True,
                        busy_core="^NoSuchCase$")


# ---------------------------------------------------------------------------
# Figures from a stored results file (a short real interleaved run)


def _png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def stored_page(tmp_path_factory):
    """The page and its figures rendered once from the stored results."""
    if not HAVE_MPL:
        pytest.skip("matplotlib not installed")
    from normops_tools.benchmark import figures

    out = tmp_path_factory.mktemp("page")
    data = report.load(STORED)
    drawn = figures.write_figures(data, out / "img")
    return report.render_page(data, list(drawn), "img/"), out / "img", drawn


def test_no_numpy_chart_without_numpy_among_the_runtimes(tmp_path):
    # a run without numpy and scipy has NumPy-style rows but nothing to
    # compare them with: the chart is left out, the others are drawn
    if not HAVE_MPL:
        pytest.skip("matplotlib not installed")
    from normops_tools.benchmark import figures

    data = report.load(STORED)
    for row in data["rows"]:
        for key in ("numpy_over_exact", "scipy_over_exact"):
            row.pop(key, None)
    drawn = figures.write_figures(data, tmp_path)
    assert figures.NUMPY_CHART not in drawn and figures.HEADLINE in drawn
    assert not (tmp_path / figures.NUMPY_CHART).exists()


def test_figures_from_stored_results(stored_page):
    from normops_tools.benchmark import figures

    _, tmp_path, drawn = stored_page
    data = report.load(STORED)
    assert _png_size(tmp_path / figures.HEADLINE) == (1000, 600)
    assert _png_size(tmp_path / figures.NUMPY_CHART) == (1000, 600)
    rows = [r for r in data["rows"] if r["state"] == "quiet"]
    # every operator family has its bar, every NumPy-style function its group
    head = set(drawn[figures.HEADLINE])
    for fam in {r["family"] for r in rows if r["group"] in ("operator", "session")}:
        assert figures.short_label(fam) in head, fam
    functions = {t.split(" vs ")[0] for t in drawn[figures.NUMPY_CHART] if " vs " in t}
    for fam in {r["family"] for r in rows if r["group"] == "numpy-style"}:
        assert fam.replace("normops.", "") in functions, fam
    # a throughput figure for each family measured at several sizes, only those
    curves = figures.curve_families(data["rows"])
    assert "LayerNormalization" in curves and "ReduceSum" not in curves
    for fam in curves:
        name = figures.family_file(fam)
        assert _png_size(tmp_path / name) == (1000, 450)
        assert any(fam in t for t in drawn[name])
        assert any("copy limit" in t for t in drawn[name])
    assert sorted(drawn) == sorted([figures.HEADLINE, figures.NUMPY_CHART]
                                   + [figures.family_file(f) for f in curves])
    assert sorted(p.name for p in tmp_path.glob("*.png")) == sorted(drawn)


def test_page_from_stored_results(stored_page):
    text = stored_page[0]
    head = text.split("## Method")[0]
    assert "](img/perf_vs_ort.png)" in head and "](img/perf_vs_numpy.png)" in head
    assert "](img/perf_layernormalization.png)" in text
    for part in ("## One core busy", "## One runtime per process", "## Small inputs",
                 "## NumPy/SciPy-style functions", "## ONNX sessions",
                 "`normops.run` against the named function", "OMP_WAIT_POLICY=PASSIVE"):
        assert part in text, part


def _cells(line):
    """A table line's cells ("|" escaped as "\\|" stays inside a cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def test_every_table_of_the_page_is_well_formed(stored_page):
    """Each Markdown table: a header, an alignment row of --- / ---: (labels
    left, figures right), then rows with exactly the header's cell count."""
    tables, current = [], []
    for line in stored_page[0].splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    assert len(tables) >= 8
    for t in tables:
        header, align, rows = _cells(t[0]), _cells(t[1]), t[2:]
        assert align and set(align) <= {"---", "---:"} and len(align) == len(header), t[:2]
        assert rows, t[0]
        for row in rows:
            assert len(_cells(row)) == len(header), (t[0], row)
    headers = [t[0] for t in tables]
    assert any(h.startswith("| operator | dtype | T | cases |") for h in headers)
    assert any(h == "| threads | read GB/s | copy GB/s |" for h in headers) or "## Memory bandwidth" not in stored_page[0]


def test_markdown_table_rows_must_match_the_header():
    from normops_tools._markdown import table

    assert table(["case", "µs"], [["a", "1.0"]]) == ["| case | µs |", "| --- | ---: |", "| a | 1.0 |"]
    assert table(["n", "x"], [], left=0)[1] == "| ---: | ---: |"
    with pytest.raises(ValueError, match="2 cells for 3 columns"):
        table(["a", "b", "c"], [["1", "2"]])


def test_call_as_written_makes_the_call_with_its_own_arguments():
    seen = []

    def fn(*args, **kwargs):
        seen.append((args, kwargs))
        return len(seen)

    x, y = np.zeros(3), np.ones(2)
    call = cases.call_as_written(fn, [x, y], {"axis": 1, "mode": "fast"})
    assert call() == 1 and call() == 2
    (args, kwargs), _ = seen
    assert args[0] is x and args[1] is y and kwargs == {"axis": 1, "mode": "fast"}
    assert cases.call_as_written(fn)() == 3 and seen[-1] == ((), {})
    with pytest.raises(ValueError, match="identifier"):
        cases.call_as_written(fn, (), {"not a name": 1})
