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


def stored():
    policy = {"default_threads": 2, "cases": {
        "Softmax exact 32x1024": result((8.0, 8.2)),
        "Softmax exact 1024x4096": result((1800.0, 950.0), [(1.0, 1.1), (1.02, 1.3), (0.99, 1.0)]),
        "ReduceSum 256x1024 axis 1": result((10.0, 6.0)),
    }}
    return {"method": "m", "load_start": 0.1, "load_end": 0.2,
            "policies": {"default": policy, "passive": policy}}


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
