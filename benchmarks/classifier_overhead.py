"""How much time the model-classifier path itself adds per call, outside the server
(and, second, how far past its deadline a call against a hung server returns).

Why paired: the server's own time (Python's http.server parsing, scripted reply) is not
ours to optimise, and varies with the box. Each iteration therefore times one
``classify()`` call and, right after, one bare keep-alive POST of the very same JSON body
to the same StubLLM with ``http.client`` -- the transport-plus-server floor. The
difference is what the classifier path costs by itself: prompt building, the SDK, the
worker thread and deadline wait, retries machinery, envelope and contract parsing.

Run:  /work/main/.venv/bin/python benchmarks/classifier_overhead.py [--calls 500] [--json]
Nothing leaves 127.0.0.1 (proxies point at a dead loopback port, as in the tests).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_token_router.classifier.call import classify, request_body, warm_up  # noqa: E402
from hermes_token_router.classifier.config import ClassifierConfig  # noqa: E402
from hermes_token_router.devtools.harness import offline_env  # noqa: E402
from hermes_token_router.devtools.stub_llm import Reply, StubLLM  # noqa: E402

TOOLSETS = [("file", "Read, write, patch and search files"), ("web", "Search the web and extract pages"),
            ("terminal", "Run shell commands and manage processes"), ("browser", "Drive a headless browser"),
            ("vision", "Look at images"), ("memory", "Remember facts across sessions"),
            ("delegation", "Spawn sub-agents"), ("code_execution", "Run Python in a sandbox")]
TEXT = "Find the latest release notes for httpx and summarise what changed in the transport layer."
ANSWER = json.dumps({"toolsets": ["web"], "intent": "summarise release notes", "confidence": 0.96})


def pct(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--hung", type=int, default=40, help="calls against a hung server (deadline overshoot)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    os.environ.update(offline_env())

    with StubLLM(responder=lambda body: Reply(content=ANSWER)) as stub:
        cfg = ClassifierConfig(enabled=True, provider="custom", base_url=stub.base_url, model="router-small",
                               api_key_env=None, disable_thinking=True)
        t0 = time.perf_counter()
        warm_up(cfg)
        cold_ms = (time.perf_counter() - t0) * 1000
        raw_body = json.dumps(request_body(TEXT, TOOLSETS, cfg)).encode()
        conn = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=5)

        def bare() -> float:
            start = time.perf_counter()
            conn.request("POST", "/v1/chat/completions", body=raw_body,
                         headers={"Content-Type": "application/json", "Accept": "application/json"})
            resp = conn.getresponse()
            resp.read()
            assert resp.status == 200
            return (time.perf_counter() - start) * 1000

        def routed() -> float:
            start = time.perf_counter()
            d = classify(TEXT, TOOLSETS, cfg, hard_timeout_ms=2000, confidence_threshold=0.9)
            assert d.action == "narrow", d.reason
            return (time.perf_counter() - start) * 1000

        for _ in range(args.warmup):
            routed()
            bare()
        full, floor, overhead = [], [], []
        for _ in range(args.calls):
            a = routed()
            b = bare()
            full.append(a)
            floor.append(b)
            overhead.append(a - b)
        conn.close()

        # Deadline overshoot: half the hung calls sleep before answering, half stall mid-body.
        deadline_ms = 200
        overshoot = []
        for i in range(args.hung):
            stub.script(Reply(content=ANSWER, delay_s=1.0) if i % 2 else Reply(content=ANSWER, stall_mid_body_s=1.0))
            start = time.perf_counter()
            d = classify(TEXT, TOOLSETS, cfg, hard_timeout_ms=deadline_ms, confidence_threshold=0.9)
            overshoot.append((time.perf_counter() - start) * 1000 - deadline_ms)
            assert d.reason == "classifier:timeout", d.reason
            time.sleep(0.05)  # let the abandoned worker's socket timeout fire before the next

    report = {
        "calls": args.calls,
        "warm_up_ms": round(cold_ms, 1),
        "classify_ms": {"p50": round(pct(full, 50), 3), "p99": round(pct(full, 99), 3)},
        "bare_http_ms": {"p50": round(pct(floor, 50), 3), "p99": round(pct(floor, 99), 3)},
        "overhead_ms": {"p50": round(pct(overhead, 50), 3), "p99": round(pct(overhead, 99), 3),
                        "mean": round(statistics.fmean(overhead), 3)},
        "deadline_overshoot_ms": {"deadline_ms": 200, "calls": args.hung, "p50": round(pct(overshoot, 50), 3),
                                  "max": round(max(overshoot), 3)} if overshoot else None,
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(f"classifier overhead over {args.calls} calls against StubLLM (127.0.0.1)")
        print(f"  warm_up (SDK import + client): {report['warm_up_ms']} ms, once per process")
        for key, label in (("classify_ms", "classify() total"), ("bare_http_ms", "bare HTTP round trip"),
                           ("overhead_ms", "classifier's own overhead")):
            print(f"  {label:28s} p50 {report[key]['p50']:8.3f} ms   p99 {report[key]['p99']:8.3f} ms")
        if report["deadline_overshoot_ms"]:
            o = report["deadline_overshoot_ms"]
            print(f"  hung server, {o['calls']} calls at a {o['deadline_ms']} ms deadline: "
                  f"overshoot p50 {o['p50']:.3f} ms, max {o['max']:.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
