"""Hook overhead per turn for a routed session, with 1 and with 100 concurrent sessions.

What one steady-state turn costs the host: the router's ``pre_llm_call`` on the sticky
path (bind the agent, resolve the profile's config, check the surface is still ours) plus
one ``post_api_request`` (count, look for pruned calls). Measured inside the real Hermes
0.19.0 (offline, temporary HERMES_HOME, the plugin installed as a directory plugin) on
real ``AIAgent`` objects: one fully built agent and shallow copies of it, each with its
own session id (building 100 agents costs ~30 s and changes nothing measured here).

The hooks are called the way the 0.19.0 gateway calls them: on the thread that runs the
agent, with the agent in a local of a calling frame. With 100 sessions, 100 threads run
turns at the same time: the wall-clock figures include waiting for the GIL (Python hands
it over every 5 ms, so with 100 runnable threads the tail is GIL queueing, not router
locks); the ``_cpu`` rows are the calling thread's own CPU time for the same turns.

    .venv/bin/python benchmarks/hooks_overhead.py [--turns 2000] [--sessions 100] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hermes_token_router.devtools import harness  # noqa: E402
from hermes_token_router.devtools.stub_llm import StubLLM  # noqa: E402

NO_CALLS = SimpleNamespace(tool_calls=[])


def setup():
    stub = StubLLM().start()
    home, router_cfg = harness.isolate_process("htr-bench-hooks-")
    harness.prepare_home(home, stub.base_url)
    harness.write_router_config(router_cfg, {"global": {"enabled": True}, "profiles": {}})

    import model_tools  # noqa: F401 - plugin discovery
    from hermes_cli.plugins import get_plugin_manager

    runtime = next(cb.__self__ for cb in get_plugin_manager()._hooks.get("pre_llm_call", [])
                   if type(getattr(cb, "__self__", None)).__name__ == "RouterRuntime")
    hooks = sys.modules[type(runtime).__module__]
    decision_mod = sys.modules[hooks.__name__.rsplit(".", 1)[0] + ".decision"]

    def decide(text, cfg, available=(), **_):  # deterministic: every session narrows to file
        return decision_mod.Decision(action="narrow", toolsets=("file",), intent="bench", confidence=1.0,
                                     source="rules", reason="bench")

    hooks.decide = decide
    base = harness.build_agent(stub.base_url)
    return stub, runtime, base


def first_turn(runtime, agent):
    started = time.perf_counter()
    runtime.pre_llm_call(session_id=agent.session_id, user_message="read notes.md", platform="telegram")
    return time.perf_counter() - started


def steady_turn(runtime, agent, cpu=None):
    started, cpu_started = time.perf_counter(), time.thread_time()
    runtime.pre_llm_call(session_id=agent.session_id, user_message="and then?", platform="telegram")
    runtime.recovery.post_api_request(session_id=agent.session_id, assistant_message=NO_CALLS, platform="telegram")
    if cpu is not None:
        cpu.append(time.thread_time() - cpu_started)
    return time.perf_counter() - started


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100.0 * (len(values) - 1))))]


def summary(samples):
    us = [s * 1e6 for s in samples]
    return {"n": len(us), "p50_us": round(pct(us, 50), 1), "p99_us": round(pct(us, 99), 1),
            "mean_us": round(statistics.fmean(us), 1)}


def run(turns: int, sessions: int) -> dict:
    stub, runtime, base = setup()
    try:
        one = harness.clone_agents(base, "bench-one", 1)
        routed = [first_turn(runtime, a) for a in one]
        for _ in range(50):  # warm-up
            steady_turn(runtime, one[0])
        single_cpu = []
        single = [steady_turn(runtime, one[0], single_cpu) for _ in range(turns)]

        many = harness.clone_agents(base, "bench-many", sessions)
        routed += [first_turn(runtime, a) for a in many]
        per_thread = max(1, turns // sessions) * 2
        gate = threading.Barrier(sessions)
        results = [[] for _ in range(sessions)]
        cpu = [[] for _ in range(sessions)]

        def serve(i, agent):  # one gateway executor thread per session, all at once
            gate.wait()
            for _ in range(per_thread):
                results[i].append(steady_turn(runtime, agent, cpu[i]))

        threads = [threading.Thread(target=serve, args=(i, a)) for i, a in enumerate(many)]
        wall = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - wall
        concurrent = [s for r in results for s in r]
        assert all(runtime.states.get(a.session_id).narrowed for a in one + many)
        for a in one + many:
            runtime.on_session_finalize(session_id=a.session_id)
        return {
            "hermes_agent": _hermes_version(),
            "python": sys.version.split()[0],
            "first_turn_route": summary(routed),
            "steady_turn_1_session": summary(single),
            "steady_turn_1_session_cpu": summary(single_cpu),
            f"steady_turn_{sessions}_sessions": {**summary(concurrent), "wall_s": round(wall, 3),
                                                 "turns_per_s": round(len(concurrent) / wall, 1)},
            f"steady_turn_{sessions}_sessions_cpu": summary([c for r in cpu for c in r]),
        }
    finally:
        stub.stop()


def _hermes_version() -> str:
    try:
        from importlib.metadata import version

        return version("hermes-agent")
    except Exception:
        return "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = run(args.turns, args.sessions)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"hermes-agent {out['hermes_agent']}, Python {out['python']}")
    for key, val in out.items():
        if isinstance(val, dict):
            extra = f"  ({val['turns_per_s']} turns/s over {val['wall_s']} s)" if "wall_s" in val else ""
            print(f"{key:<28} n={val['n']:<6} p50={val['p50_us']:>8.1f} us  p99={val['p99_us']:>8.1f} us{extra}")


if __name__ == "__main__":
    main()
