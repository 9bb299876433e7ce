"""benchmarks/skills.py gates regressions: a report under a floor fails (non-zero exit), the
issue's targets stay goals, and the leave-one-out near misses remove exactly the relevant skills."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("bench_skills", ROOT / "benchmarks" / "skills.py")
bench = importlib.util.module_from_spec(spec)
sys.modules["bench_skills"] = bench
spec.loader.exec_module(bench)


def at_floors():
    """A synthetic report whose every gated figure sits exactly on its floor."""
    rows = []
    for row, bounds in bench.FLOORS.items():
        r = {"row": row, "reach@5": 1.0, "hit@1": 1.0, "inj_prec": 1.0, "false_inj": 0.0, "chat_hint": 0.0}
        r.update({metric: bound for metric, (_op, bound) in bounds.items()})
        rows.append(r)
    return {"rows": rows}


def test_floors_cover_every_set_in_set_and_cross():
    assert {"A shipped weighted", "B shipped weighted", "cal A -> B (CROSS)", "cal B -> A (CROSS)"} <= set(bench.FLOORS)
    assert {"C shipped weighted", "C shipped weighted [zh]", "C shipped leave-one-out", "cal A -> C (CROSS)",
            "cal B -> C (CROSS)", "cal C -> A (CROSS)", "cal C -> B (CROSS)"} <= set(bench.FLOORS)
    assert {"D shipped weighted", "D shipped weighted [zh]", "cal B -> D (CROSS)"} <= set(bench.FLOORS)
    assert bench.regressions(at_floors()) == []


def test_the_default_run_scores_every_set():
    assert bench.parser().parse_args([]).sets == "A,B,C,D,E,F,G,H,I,J,K,L,M,N,O,P,Q,R,S,T,U,V"
    assert set(bench.SETS) == {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q", "R", "S", "T", "U", "V"} and all(q.is_file() for q, _ in bench.SETS.values())
    line = next(x for x in (ROOT / ".ci" / "run").read_text().splitlines() if "benchmarks/skills.py" in x)
    assert "--sets" not in line  # CI runs the default, so every set's floors are gated


def test_a_summary_below_a_floor_fails_loudly(capsys):
    report = at_floors()
    cross = next(r for r in report["rows"] if r["row"] == "cal A -> B (CROSS)")
    cross["false_inj"] = bench.FLOORS["cal A -> B (CROSS)"]["false_inj"][1] + 0.01  # worse: more false injections
    shipped = next(r for r in report["rows"] if r["row"] == "B shipped weighted [zh]")
    shipped["reach@5"] -= 0.01
    failures = bench.regressions(report)
    assert len(failures) == 2 and any("cal A -> B (CROSS): false_inj" in f for f in failures)
    assert bench.exit_code(failures) == 1
    err = capsys.readouterr().err
    assert "REGRESSION: B shipped weighted [zh]: reach@5" in err and "2 regression floor(s) broken" in err
    assert bench.exit_code([]) == 0


def test_a_missing_row_is_a_regression_not_a_pass():
    report = at_floors()
    report["rows"] = [r for r in report["rows"] if r["row"] != "cal B -> A (CROSS)"]
    assert bench.regressions(report) == ["cal B -> A (CROSS): row missing from the report"]


def test_ci_runs_the_gate_and_stops_on_its_exit_code():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in ci and "benchmarks/skills.py" in ci
    line = next(x for x in ci.splitlines() if "benchmarks/skills.py" in x)
    assert "||" not in line


def test_leave_one_out_turns_each_task_into_a_near_miss():
    data = {"queries": [{"id": "q1", "text": "t", "expect": ["a"]}, {"id": "q2", "text": "hi", "expect": []}],
            "signals": {"q1": ([("a", 0.9, 3.0, 0.9), ("b", 0.5, 0.0, 0.5), ("c", 0.1, 0.0, 0.1)], 0.2, False, 1),
                        "q2": ([("a", 0.1, 0.0, 0.1)], 0.8, True, 2)}, "chinese": set()}
    loo = bench.leave_one_out(data)
    assert [q["id"] for q in loo["queries"]] == ["q1~loo"] and loo["queries"][0]["expect"] == []
    assert [r[0] for r in loo["signals"]["q1~loo"][0]] == ["b", "c"]
    # The near miss is scored by the real tiers: "b" does not stand out enough to be injected.
    cfg = bench.SkillRouterConfig(enabled=True)
    r = bench.evaluate(loo, cfg)["all"]
    assert r["none"] == 1 and r["false_inj"] == 0.0


def test_goals_are_reported_not_gated_including_the_language_gap():
    good = {"reach@5": 0.97, "hit@1": 0.85, "inj_prec": 0.96, "false_inj": 0.01, "chat_hint": 0.0}
    rows = [{"row": "cal A -> B (CROSS)", **good},
            {"row": "cal A -> B (CROSS) [en]", **good, "reach@5": 0.99},
            {"row": "cal A -> B (CROSS) [zh]", **good, "reach@5": 0.94}]
    unmet = bench.unmet_goals(rows, "cal A -> B (CROSS)")
    assert unmet == ["zh reach@5 94.0% vs en 99.0% (goal: within 3 points)"]
    rows[0]["chat_hint"] = 0.067
    assert any(u.startswith("chat_hint 6.7%") for u in bench.unmet_goals(rows, "cal A -> B (CROSS)"))
    assert "cal A -> B (CROSS)" in bench.FLOORS  # gated by its floor, not by the goal
    line = bench.fmt_row("A shipped leave-one-out", {"n": 0, "reach@5": 0.0, "hit@1": 0.0, "inj_prec": 1.0,
                                                      "injected": 0, "none": 230, "false_inj": 0.026,
                                                      "chat": 0, "chat_hint": 0.0})
    assert "0.0%" not in line and "2.6%" in line


def test_smaller_libraries_keep_each_requests_relevant_skills():
    data = {"queries": [{"id": "q1", "text": "t", "expect": ["a"], "lang": "en"},
                        {"id": "q2", "text": "hi", "expect": [], "kind": "none", "lang": "en"}],
            "signals": {"q1": ([("a", 0.9, 0.0, 0.9)] + [(f"s{i}", 0.1 + 0.001 * i, 0.0, 0.1 + 0.001 * i)
                                                         for i in range(30)], 0.1, False, 1),
                        "q2": ([("a", 0.1, 0.0, 0.1)] + [(f"s{i}", 0.1, 0.0, 0.1) for i in range(30)], 0.9, False, 2)},
            "chinese": set()}
    cfg = bench.SkillRouterConfig(enabled=True)
    full = bench.evaluate(data, cfg)["all"]
    same = bench.smaller_libraries(data, cfg, size=1000, draws=2)
    assert same["reach@5"] == full["reach@5"] == 1.0 and same["injected"] == full["injected"] == 1
    small = bench.smaller_libraries(data, cfg, size=3, draws=3)
    assert small["reach@5"] == 1.0  # "a" is always kept for the request it serves
    assert small["loo_false_inj"] == 0.0 and not bench._SORTED


def test_cached_routing_ranks_on_centred_scores_and_gates_on_raw_leads():
    """The benchmark replays the matcher: order by the language-centred cosine, inject on the
    raw cosine's lead (a centred lead that only the correction made must not inject)."""
    rows = [("a", 0.9, 0.0, 0.4)] + [(f"s{i}", 0.1 + 0.001 * i, 0.0, 0.1 + 0.001 * i) for i in range(30)]
    cfg = bench.SkillRouterConfig(enabled=True)
    inject, hints = bench.route((rows, 0.0, False, 10), cfg, "en")
    assert inject == [] and hints[0] == "a"
    raw_lead = [("a", 0.9, 0.0, 0.9)] + rows[1:]
    assert bench.route((raw_lead, 0.0, False, 10), cfg, "en")[0] == ["a"]
    bench._SORTED.clear()


def test_smaller_libraries_redo_the_language_correction_over_what_is_left():
    import numpy as np

    rows = [("en1", 0.0, 1.0, 0.40), ("en2", 0.0, 0.0, 0.30), ("zh1", 0.0, 0.0, 0.50), ("zh2", 0.0, 0.0, 0.45)]
    out = bench.recentre(rows, {"zh1", "zh2"})
    expected = bench.centre_languages(np.asarray([r[3] for r in rows]), np.asarray([False, False, True, True]))
    assert [r[0] for r in out] == ["en1", "en2", "zh1", "zh2"] and [r[2] for r in out] == [1.0, 0.0, 0.0, 0.0]
    assert np.allclose([r[1] for r in out], expected) and [r[3] for r in out] == [r[3] for r in rows]
    assert out[2][1] < 0.50 and out[0][1] > 0.40  # the Chinese-text group moved down towards the mean
    assert bench.recentre([], set()) == []
