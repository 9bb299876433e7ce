#!/usr/bin/env python3
"""Measure which toolsets are needed together and write ``policy/companions.yaml``.

For every pair of toolsets (A, B) in the labels (dev corpus plus the blind batches already
scored), P(B | A) is the share of requests requiring A that also require B. A companion
"when the router routes A, add B" is written when the labels say B is needed often enough to
be worth its tokens: P(B | A) >= --min-share, at least --min-count co-occurrences, and B's
schema cost on the bare CLI surface at most --max-cost tokens (a toolset that costs nothing
there, such as a platform the bare profile does not offer, always qualifies on cost).

    python benchmarks/companions.py [--data corpus/routing.jsonl corpus/blind] [--write]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, List, Sequence

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))
from train_learned import read  # noqa: E402
from hermes_token_router.decision import Decision  # noqa: E402


def toolset_costs(names: Sequence[str]) -> Dict[str, int]:
    """Each toolset's schema tokens on the bare CLI surface, over the floor."""
    from run import load_baselines  # benchmarks/run.py puts benchmarks/ on the path for offline_surface

    base = load_baselines()
    floor = base.narrowed_tokens(Decision("narrow", (), "x", 1.0, "rules", "floor"), "bare")
    return {ts: base.narrowed_tokens(Decision("narrow", (ts,), "x", 1.0, "rules", ts), "bare") - floor
            for ts in names}


def main(argv: Sequence[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, nargs="+", default=[ROOT / "corpus" / "routing.jsonl", ROOT / "corpus" / "blind"])
    ap.add_argument("--min-share", type=float, default=0.35)
    ap.add_argument("--min-count", type=int, default=4)
    ap.add_argument("--max-cost", type=int, default=1700)
    ap.add_argument("--write", action="store_true", help="write policy/companions.yaml")
    args = ap.parse_args(argv)

    records, digests = read(args.data)
    alone: Counter = Counter()
    pair: Counter = Counter()
    for r in records:
        req = sorted(set(r["required"]))
        alone.update(req)
        pair.update((a, b) for a in req for b in req if a != b)
    costs = toolset_costs(sorted(alone))
    rows: List[tuple] = []
    for (a, b), n in sorted(pair.items()):
        share = n / alone[a]
        keep = share >= args.min_share and n >= args.min_count and costs[b] <= args.max_cost
        rows.append((a, b, n, alone[a], share, costs[b], keep))
    print(f"{len(records)} records; pairs with P(B|A) >= 0.2 (cost = bare-surface tokens of B):")
    print(f"{'A':<16}{'B':<16}{'n(A,B)':>7}{'n(A)':>6}{'P(B|A)':>8}{'cost B':>8}  companion")
    for a, b, n, na, share, cost, keep in rows:
        if share >= 0.2:
            print(f"{a:<16}{b:<16}{n:>7}{na:>6}{share:>8.2f}{cost:>8}  {'yes' if keep else ''}")
    if args.write:
        lines = ["# Written by benchmarks/companions.py from the labels; see docs/rules.md#companions.",
                 f"# Rule: P(B|A) >= {args.min_share}, n(A,B) >= {args.min_count}, cost(B) <= {args.max_cost} "
                 "tokens on the bare CLI surface.",
                 "# Data: " + ", ".join(f"{p} sha256:{h[:12]}" for p, h in digests),
                 "version: 1", "companions:"]
        kept = [r for r in rows if r[6]]
        for a, b, n, na, share, cost, _ in kept:
            lines.append(f"  - {{when: {a}, add: [{b}], share: {share:.2f}, count: {n}, of: {na}, cost: {cost}}}")
        if not kept:
            lines[-1] = "companions: []"
        (ROOT / "policy" / "companions.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {len(kept)} companions to policy/companions.yaml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
