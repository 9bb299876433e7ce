"""Worst-case hook time over the hostile corpus (issue 17).

Each case is one hostile input from the probes in ``tests/test_hostile.py`` (a malformed
classifier reply, a broken or blocking config file, a huge skill, a backtracking rule, a
huge or strange user message, a flood of requested names) fed to the router inside the
real Hermes 0.19.0 (offline, temporary HERMES_HOME, the plugin installed as a directory
plugin, the classifier talking to the local stub). What is timed is what the host waits
for: the router's hook calls for the turn(s) of that case (``pre_llm_call``, and the
``request_toolset`` handler where the case is a tool call), not the set-up.

Every case runs in its own process so a hang cannot hide the next case. A watchdog in the
child reports ``>cap`` when the hooks have not returned within ``--cap`` seconds (default
20) and ends the child; the parent gives up on a child after ``cap + 180`` s of set-up.
The ``/dev/zero`` case runs with an address-space limit so a read that never ends cannot
take the machine's memory.

    .venv/bin/python benchmarks/hostile.py [--cap 20] [--case NAME ...] [--json]

Before the measured turn each case runs one ordinary first turn on another session, so
one-time loads (rules, catalog, SDK imports) are not counted as the hostile input's cost.

The bound checked here (``--bound``, default 2.5 s, the classifier's hard deadline plus
margin): the worst case must stay under it; the script exits 1 when it does not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

VAGUE = "can you look at this"  # the rules abstain, so the classifier decides

CASES = (
    "classifier_braces_400k", "classifier_braces_3m", "classifier_nested_64k", "classifier_huge_valid_json",
    "config_non_utf8", "config_deep_nesting", "config_fifo", "config_dev_zero", "config_huge",
    "skill_5mb", "skill_54mb",
    "rule_redos_28", "rule_redos_36",
    "message_1mb", "message_unicode_soup", "message_multimodal",
    "request_toolset_10k_names", "request_toolset_non_list",
    "fuzz_rules", "fuzz_config",
)


# ----------------------------------------------------------------------------- child side

def _setup(router_cfg: dict):
    from hermes_token_router.devtools import harness
    from hermes_token_router.devtools.stub_llm import StubLLM

    stub = StubLLM().start()
    home, cfg_path = harness.isolate_process("htr-bench-hostile-")
    harness.prepare_home(home, stub.base_url)
    harness.write_router_config(cfg_path, router_cfg)

    import model_tools  # noqa: F401 - plugin discovery
    from hermes_cli.plugins import get_plugin_manager

    runtime = next(cb.__self__ for cb in get_plugin_manager()._hooks.get("pre_llm_call", [])
                   if type(getattr(cb, "__self__", None)).__name__ == "RouterRuntime")
    agent = harness.build_agent(stub.base_url)
    pkg = type(runtime).__module__.rsplit(".", 1)[0]
    return SimpleNamespace(stub=stub, home=home, cfg_path=cfg_path, runtime=runtime, agent=agent, pkg=pkg,
                           harness=harness)


def _turn(env, text, session_id=None, agent=None):
    agent = agent or env.agent  # the hook finds the agent in a calling frame, as in the host
    started = time.perf_counter()
    env.runtime.pre_llm_call(session_id=session_id or agent.session_id, user_message=text,
                             is_first_turn=True, platform="cli")
    return time.perf_counter() - started


def warm_up(env) -> None:
    """One ordinary first turn on another session, so the measured turn pays for the
    hostile input, not for this process's one-time loads (rules, catalog, SDK imports)."""
    other = env.harness.clone_agents(env.agent, "warm-up", 1)[0]
    _turn(env, "read ./notes.md and summarise it", agent=other)


def _classifier_case(content: str):
    def prepare():
        from hermes_token_router.devtools.stub_llm import Reply

        env = _setup({"global": {"enabled": True, "router_hard_timeout_ms": 2000}})
        env.harness.write_router_config(env.cfg_path, {"global": {
            "enabled": True, "router_hard_timeout_ms": 2000,
            "classifier": {"enabled": True, "provider": "custom", "base_url": env.stub.base_url,
                           "model": "tiny-router", "api_key_env": None}}})
        env.stub.responder = lambda body: Reply(content=content)  # every classifier call, warm-up included
        return env, lambda: [_turn(env, VAGUE)]
    return prepare


def _config_case(write):
    def prepare():
        env = _setup({"global": {"enabled": True}})
        warm_up(env)  # before the file breaks: its load is what is measured
        env.warmed = True
        write(env.cfg_path)

        def run():
            first = _turn(env, "read ./notes.md and summarise it")
            second = _turn(env, "read ./notes.md and summarise it", session_id=env.agent.session_id + "-2")
            return [first, second]
        return env, run
    return prepare


def _non_utf8(path):
    path.write_bytes(b"global:\n  enabled: true\n  floor_toolsets: ['\xff\xfe']\n")


def _deep(path):
    path.write_text("global:\n  skills: " + "[" * 50_000 + "]" * 50_000 + "\n")


def _fifo(path):
    path.unlink()
    os.mkfifo(path)


def _dev_zero(path):
    path.unlink()
    os.environ["HERMES_TOKEN_ROUTER_CONFIG"] = "/dev/zero"
    try:
        import resource

        with open("/proc/self/status") as fh:
            vm = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), vm + (1 << 30)))
    except Exception:
        pass


def _huge_config(path):
    path.write_text("global:\n  enabled: true\n  floor_toolsets:\n" + "    - file\n" * 3_000_000)


def _skill_case(megabytes: float):
    def prepare():
        env = _setup({"global": {"enabled": True}})
        root = env.home / "bench-skills"
        skill = root / "ops" / "big-runbook" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        line = "Check the service log, then restart the unit and watch the health endpoint.\n"
        with open(skill, "w") as fh:
            fh.write("---\nname: big-runbook\ndescription: Restart the service.\n---\n# Runbook\n")
            fh.write(line * int(megabytes * 1_000_000 / len(line)))
        env.harness.write_router_config(env.cfg_path, {"global": {"enabled": True, "skills": {
            "enabled": True, "backend": "none", "skills_dirs": [str(root)],
            "index_dir": str(env.home / "no-index"), "nicknames": {"the big runbook": "big-runbook"}}}})
        return env, lambda: [_turn(env, "follow the big runbook please")]
    return prepare


def _rule_case(n: int):
    def prepare():
        env = _setup({"global": {"enabled": True}})
        warm_up(env)  # the good rules load here; the hostile file's reload is measured
        env.warmed = True
        paths = sys.modules[env.pkg + ".paths"]
        rules = paths.shipped("policy") / "rules"
        (rules / "zz-hostile.yaml").write_text(
            "version: 1\nintents:\n  - name: hostile_redos\n    toolsets: [file]\n    confidence: 0.95\n"
            "    en: ['(a+)+$']\n")
        return env, lambda: [_turn(env, "a" * n + "!")]
    return prepare


def _message_case(text):
    def prepare():
        env = _setup({"global": {"enabled": True, "skills": {"enabled": True, "backend": "none",
                                                               "nicknames": {"the runbook": "runbook"}}}})
        return env, lambda: [_turn(env, text() if callable(text) else text)]
    return prepare


def _soup() -> str:
    import random

    rnd = random.Random(17)
    pool = [chr(c) for c in list(range(0x20, 0x7f)) + [0x200b, 0x200d, 0xfeff, 0x2019, 0x0430, 0x043e, 0xff41,
                                                        0x1d400, 0x0301, 0x202e, 0x4e0d, 0x8981]]
    return "".join(rnd.choice(pool) for _ in range(200_000))


def _request_toolset_case(args):
    def prepare():
        env = _setup({"global": {"enabled": True}})
        _turn(env, "read ./notes.md and summarise it")  # a narrowed session

        def run():
            agent = env.agent  # noqa: F841
            started = time.perf_counter()
            env.runtime.recovery.request_toolset(args() if callable(args) else args, session_id=env.agent.session_id)
            return [time.perf_counter() - started]
        return env, run
    return prepare


FUZZ_BUDGET_S = 10.0  # sampling time per fuzz case (the reported figure is the worst single call)


def _fuzz_inputs(n: int, seed: int):
    import random

    rnd = random.Random(seed)
    pool = "a{}[]:'\"’ʼ\u200b\u043e\u00a0 -\n\t\\x9中文" + "".join(chr(rnd.randrange(32, 0x2fff)) for _ in range(200))
    for i in range(n):
        size = rnd.choice((10, 100, 1000, 2000, 5000, 100_000))
        yield "".join(rnd.choice(pool) for _ in range(size))


def _fuzz_rules():
    """Worst single ``classify`` over random Unicode of every size (the rules run inside
    ``pre_llm_call``); no Hermes needed."""
    from hermes_token_router.rules import default_rules

    rules = default_rules()

    def run():
        worst, begun = 0.0, time.perf_counter()
        for text in _fuzz_inputs(150, 17):
            started = time.perf_counter()
            rules.classify(text)
            worst = max(worst, time.perf_counter() - started)
            if started - begun > FUZZ_BUDGET_S:  # the cap is for one call; the run only samples
                break
        return [worst]
    return None, run


def _fuzz_config():
    """Worst single config load (read, parse, validate) over random YAML shapes and bytes."""
    import random

    import yaml

    from hermes_token_router.config import ConfigStore

    rnd = random.Random(18)
    keys = ["global", "profiles", "enabled", "classifier", "skills", "floor_toolsets", "api_key", "nicknames", "x"]

    def shape(depth=0):
        roll = rnd.random()
        if depth > 6 or roll < 0.4:
            return rnd.choice([None, True, 3, 2.5, "text", "é" * rnd.randrange(50), [], {}])
        if roll < 0.7:
            return [shape(depth + 1) for _ in range(rnd.randrange(5))]
        return {rnd.choice(keys): shape(depth + 1) for _ in range(rnd.randrange(5))}

    docs = [yaml.safe_dump(shape()).encode() for _ in range(300)]
    docs += [text.encode("utf-8", "surrogatepass") for text in _fuzz_inputs(100, 19)]
    docs += [bytes(rnd.randrange(256) for _ in range(rnd.randrange(4000))) for _ in range(100)]
    folder = Path(tempfile.mkdtemp(prefix="htr-bench-fuzz-"))

    def run():
        worst, begun = 0.0, time.perf_counter()
        for i, data in enumerate(docs):
            if time.perf_counter() - begun > FUZZ_BUDGET_S:
                break
            path = folder / f"c{i}.yaml"
            path.write_bytes(data)
            started = time.perf_counter()
            try:
                ConfigStore(path_fn=lambda: path).for_profile("default")
            except Exception:  # an escaping exception is a finding of the tests, not of this timing
                pass
            worst = max(worst, time.perf_counter() - started)
        return [worst]
    return None, run


PREPARE = {
    "classifier_braces_400k": _classifier_case("{" * 400_000),
    "classifier_braces_3m": _classifier_case("{" * 3_000_000),
    "classifier_nested_64k": _classifier_case('{"a":' * 64_000),
    "classifier_huge_valid_json": _classifier_case(json.dumps({"toolsets": ["file"], "intent": "x" * 2_000_000,
                                                               "confidence": 0.99})),
    "config_non_utf8": _config_case(_non_utf8),
    "config_deep_nesting": _config_case(_deep),
    "config_fifo": _config_case(_fifo),
    "config_dev_zero": _config_case(_dev_zero),
    "config_huge": _config_case(_huge_config),
    "skill_5mb": _skill_case(5.4),
    "skill_54mb": _skill_case(54),
    "rule_redos_28": _rule_case(28),
    "rule_redos_36": _rule_case(36),
    "message_1mb": _message_case("read the runbook " * 60_000),
    "message_unicode_soup": _message_case(_soup),
    "message_multimodal": _message_case([{"type": "text", "text": "what is this picture?"},
                                         {"type": "image_url",
                                          "image_url": {"url": "data:image/png;base64," + "QUJD" * 250_000}}]),
    "request_toolset_10k_names": _request_toolset_case(lambda: {"toolsets": [f"nope{i}" for i in range(10_000)]}),
    "request_toolset_non_list": _request_toolset_case(["terminal"]),
    "fuzz_rules": _fuzz_rules,
    "fuzz_config": _fuzz_config,
}


def child(case: str, cap: float) -> None:
    env, run = PREPARE[case]()
    if env is not None and not getattr(env, "warmed", False):
        warm_up(env)
    result = {}

    def watchdog():
        if not finished.wait(cap):
            print(json.dumps({"case": case, "over_cap": True}), flush=True)
            os._exit(0)

    finished = threading.Event()
    threading.Thread(target=watchdog, daemon=True).start()
    try:
        times = run()
        result = {"case": case, "over_cap": False, "hook_s": max(times), "turns_s": times}
    except BaseException as exc:  # a hook that raises into the host is a finding too
        result = {"case": case, "over_cap": False, "error": f"{type(exc).__name__}: {exc}"[:200]}
    finished.set()
    print(json.dumps(result), flush=True)
    os._exit(0)


# ----------------------------------------------------------------------------- parent side

def run_case(case: str, cap: float) -> dict:
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", case, "--cap", str(cap)], capture_output=True,
                              text=True, timeout=cap + 180, cwd=str(ROOT))
    except subprocess.TimeoutExpired:
        return {"case": case, "over_cap": True, "note": "set-up did not finish"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"case": case, "error": f"child exited {proc.returncode}: {proc.stderr.strip()[-300:]}"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cap", type=float, default=20.0)
    ap.add_argument("--bound", type=float, default=2.5)
    ap.add_argument("--case", action="append")
    ap.add_argument("--child")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.cap)
        return 0
    results = [run_case(c, args.cap) for c in (args.case or CASES)]
    worst = 0.0
    for r in results:
        if r.get("over_cap"):
            shown, worst = f">{args.cap:g} s (cap)", max(worst, float("inf"))
        elif "hook_s" in r:
            shown, worst = f"{r['hook_s'] * 1000:.1f} ms", max(worst, r["hook_s"])
        else:
            shown = "error: " + r.get("error", "?")
        r["shown"] = shown
        if not args.json:
            print(f"{r['case']:<28} {shown}", flush=True)
    worst_shown = f">{args.cap:g} s (cap)" if worst == float("inf") else f"{worst * 1000:.1f} ms"
    if args.json:
        print(json.dumps({"cases": results, "worst": worst_shown}, indent=1))
    else:
        print(f"{'worst case':<28} {worst_shown}  (bound {args.bound:g} s)")
    return 0 if worst <= args.bound else 1


if __name__ == "__main__":
    sys.exit(main())
