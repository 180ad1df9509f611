"""The scaling section of the performance page (normops_tools.benchmark.scaling):
its tables, verdicts and figure from stored results."""
import pytest

from normops_tools.benchmark import scaling


def result(b2b, idle=None):
    entry = {"back_to_back": {"one_us": b2b[0], "two_us": b2b[1], "ratio": b2b[1] / b2b[0]}}
    if idle:
        entry["after_idle"] = {str(g): {"p50_ratio": p50, "p90_ratio": p90, "one_p50_us": 1, "one_p90_us": 1,
                                        "default_p50_us": p50, "default_p90_us": p90}
                               for g, (p50, p90) in zip(scaling.GAPS_S, idle)}
    return entry


def versus(one, two, ort_one, ort_two):
    return {"one_us": one, "two_us": two, "ort_one_us": ort_one, "ort_two_us": ort_two,
            "ratio_one": ort_one / one, "ratio_two": ort_two / two, "fall": 1 - (ort_two / two) / (ort_one / one)}


def stored():
    policy = {"default_threads": 2, "cases": {
        "Softmax exact 32x1024": result((8.0, 8.2)),
        "Softmax exact 1024x4096": result((1800.0, 950.0), [(1.0, 1.1), (1.02, 1.3), (0.99, 1.0)]),
        "ReduceSum 256x1024 axis 1": result((10.0, 6.0)),
    }}
    passive = {"default_threads": 2, "cases": {k: dict(v) for k, v in policy["cases"].items()}}
    passive["cases"]["Softmax exact 32x1024"]["onnxruntime"] = versus(8.0, 8.2, 12.0, 20.0)
    passive["cases"]["Softmax exact 1024x4096"]["onnxruntime"] = versus(1800.0, 950.0, 2000.0, 1000.0)
    passive["cases"]["ReduceSum 256x1024 axis 1"]["onnxruntime"] = versus(10.0, 6.0, 20.0, 9.0)
    return {"method": "m", "load_start": 0.1, "load_end": 0.2,
            "policies": {"default": policy, "passive": passive}}


def test_the_verdict_names_the_worst_case_of_each_target():
    lines = scaling.verdict_lines(stored()["policies"]["default"])
    assert lines[0].startswith("- back to back, worst 2T/1T: 1.02 (Softmax exact 32x1024")
    assert "speed-up at 2 threads 1.89x at least (Softmax exact 1024x4096" in lines[1]
    assert "worst p50 / p90 ratio: 1.02 / 1.30" in lines[2] and "100 ms gaps" in lines[2]


def test_the_tables_have_one_row_per_case_and_policy():
    text = "\n".join(scaling.lines(stored()))
    assert text.count("| Softmax exact 1024x4096 | 1800.0 | 950.0 | 0.53 | 1.00 / 1.10 | 1.02 / 1.30 | 0.99 / 1.00 |") == 2
    assert "**Wait policy: passive** (OMP_WAIT_POLICY=PASSIVE" in text


def test_the_figure_draws_a_bar_per_case_and_policy():
    plt = pytest.importorskip("matplotlib.pyplot")
    fig = scaling.draw(stored(), plt)
    bars = [p for p in fig.axes[0].patches]
    assert len(bars) == 6
    assert sorted(round(b.get_width(), 2) for b in bars)[-1] == round(1800 / 950, 2)
    plt.close(fig)


def test_the_comparison_with_onnxruntime_counts_the_cases_whose_ratio_falls_more_than_a_tenth():
    lines = scaling.verdict_lines(stored()["policies"]["passive"])
    # ratios 1T -> 2T: 1.50 -> 2.44 (rises), 1.11 -> 1.05 (5% lower), 2.00 -> 1.50 (25% lower)
    assert lines[3] == ("- against ONNX Runtime, 1 of 3 cases fall more than 10% from 1 thread to 2; the most: "
                        "ReduceSum 256x1024 axis 1, 2.00x to 1.50x (25%)")
    assert not any("ONNX Runtime" in line for line in scaling.verdict_lines(stored()["policies"]["default"]))
    text = "\n".join(scaling.lines(stored()))
    assert text.count("Against ONNX Runtime in the same process") == 1
    assert "| ReduceSum 256x1024 axis 1 | 10.0 | 20.0 | 2.00 | 6.0 | 9.0 | 1.50 | +25% |" in text


def test_a_quick_measurement_times_both_runtimes_at_both_thread_counts():
    pytest.importorskip("onnxruntime")
    res = scaling.measure(quick=True, rounds=1, calls=1, idle_calls=1, gaps=(0.001,), case="^Softmax exact 32x1024$",
                          onnxruntime=True)
    entry = res["cases"]["Softmax exact 32x1024"]
    assert set(entry) == {"back_to_back", "onnxruntime"}  # not in the after-idle set
    ort = entry["onnxruntime"]
    assert all(ort[k] > 0 for k in ("one_us", "two_us", "ort_one_us", "ort_two_us"))
    assert ort["fall"] == pytest.approx(1 - ort["ratio_two"] / ort["ratio_one"])


def test_the_calls_of_a_case_give_the_same_result_in_both_runtimes():
    pytest.importorskip("onnxruntime")
    case, mode, _ = scaling.cases(quick=True)["LayerNormalization 32x1024"]
    fns = scaling.case_calls(case, mode, onnxruntime=True)
    ours, theirs = fns[2](), fns["ort2"]()[0]
    assert ours.shape == theirs.shape == (32, 1024)
    assert float(abs(ours - theirs).max()) < 1e-4
