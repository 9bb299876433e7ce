#!/usr/bin/env python3
"""Train the learned second opinion (``policy/learned.json``) from labelled requests.

Data: the dev corpus plus every blind batch already scored at first contact
(``corpus/blind/*.jsonl``); a batch must be scored before it is trained on (see
benchmarks/HISTORY.md). Model: one-vs-rest logistic regression with an L1 penalty over
hashed features (``hermes_token_router.learned.features``), fitted by FISTA (accelerated
proximal gradient) in numpy. numpy is a training-time tool only: the router reads the sparse
weights in pure Python. The file records the command, the data's sha256 and the settings.

    python benchmarks/train_learned.py [--data corpus/routing.jsonl corpus/blind] [--out policy/learned.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402  (training only)

from hermes_token_router.learned import CHITCHAT, NO_TOOLS, bucket, features  # noqa: E402
from hermes_token_router.rules import normalize  # noqa: E402

BUCKETS = 1 << 18
# The NO_TOOLS output learns "this message needs no toolset" from every record so labelled,
# except the ambiguous ones (there, an empty label means "cannot tell", not "none").
NO_TOOL_KINDS = {"task", "compound", "negated", "chitchat", "capability"}


def read(paths: Sequence[Path]) -> Tuple[List[dict], List[Tuple[str, str]]]:
    files: List[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(p.glob("*.jsonl")))
        elif p.exists():
            files.append(p)
    records, digests = [], []
    for f in files:
        raw = f.read_bytes()
        digests.append((str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else str(f), hashlib.sha256(raw).hexdigest()))
        for line in raw.decode("utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                if "required" in rec:
                    records.append(rec)
    return records, digests


class Binary:
    """A 0/1 design matrix kept as its non-zero positions (rows of a few hundred features out
    of tens of thousands): ``X @ Z`` and ``X.T @ G`` by gathering and summing rows, numpy only.
    The dense matrix made each FISTA step cost minutes-long matmuls over mostly zeros."""

    def __init__(self, rows: List[List[int]], width: int):
        self.shape = (len(rows), width)
        self.indices = np.fromiter((j for row in rows for j in row), dtype=np.int64)
        lengths = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))
        self.row_of = np.repeat(np.arange(len(rows)), lengths)
        self.by_column = np.argsort(self.indices, kind="stable")
        self.column_ids, self.column_starts = np.unique(self.indices[self.by_column], return_index=True)

    def __matmul__(self, Z: np.ndarray) -> np.ndarray:
        out = np.zeros((self.shape[0],) + Z.shape[1:], dtype=np.float32)
        np.add.at(out, self.row_of, Z[self.indices])
        return out

    @property
    def T(self) -> "_Transposed":
        return _Transposed(self)

    def dense(self) -> np.ndarray:
        X = np.zeros(self.shape, dtype=np.float32)
        X[self.row_of, self.indices] = 1.0
        return X


class _Transposed:
    def __init__(self, X: Binary):
        self.X = X

    def __matmul__(self, G: np.ndarray) -> np.ndarray:
        X = self.X
        out = np.zeros((X.shape[1],) + G.shape[1:], dtype=np.float32)
        if len(X.indices):
            out[X.column_ids] = np.add.reduceat(G[X.row_of[X.by_column]], X.column_starts, axis=0)
        return out


def design(records: List[dict], labels: List[str]) -> Tuple[Binary, np.ndarray, List[int]]:
    rows = [sorted({bucket(f, BUCKETS) for f in features(normalize(r["text"]))}) for r in records]
    cols = sorted({b for row in rows for b in row})
    index = {b: j for j, b in enumerate(cols)}
    X = Binary([[index[b] for b in row] for row in rows], len(cols))
    Y = np.zeros((len(records), len(labels)), dtype=np.float32)
    li = {lab: k for k, lab in enumerate(labels)}
    for i, r in enumerate(records):
        for ts in r["required"]:
            Y[i, li[ts]] = 1.0
        if CHITCHAT in li and r.get("kind") == "chitchat":
            Y[i, li[CHITCHAT]] = 1.0
        if NO_TOOLS in li and not r["required"] and r.get("kind") in NO_TOOL_KINDS:
            Y[i, li[NO_TOOLS]] = 1.0
    return X, Y, cols


def fit(X, Y: np.ndarray, lam: float, pos_weight: float, iters: int) -> Tuple[np.ndarray, np.ndarray]:
    """FISTA on mean weighted logistic loss + lam * |W|_1 (the bias is not penalised)."""
    n, d = X.shape
    L = Y.shape[1]
    v = np.ones(d, dtype=np.float32) / np.sqrt(d)
    for _ in range(30):  # power iteration: the largest singular value bounds the step
        v = X.T @ (X @ v)
        v /= np.linalg.norm(v) + 1e-12
    lip = float(np.linalg.norm(X @ v) ** 2) * pos_weight / (4 * n) + 1e-6
    step = 1.0 / lip
    sw = np.where(Y > 0, pos_weight, 1.0).astype(np.float32)
    W = np.zeros((d, L), dtype=np.float32)
    b = np.zeros(L, dtype=np.float32)
    Z, zb, t = W.copy(), b.copy(), 1.0
    for _ in range(iters):
        P = 1.0 / (1.0 + np.exp(-(X @ Z + zb)))
        G = sw * (P - Y) / n
        W_new = Z - step * (X.T @ G)
        W_new = np.sign(W_new) * np.maximum(np.abs(W_new) - step * lam, 0.0)
        b_new = zb - step * G.sum(axis=0)
        t_new = (1 + np.sqrt(1 + 4 * t * t)) / 2
        Z = W_new + ((t - 1) / t_new) * (W_new - W)
        zb = b_new + ((t - 1) / t_new) * (b_new - b)
        W, b, t = W_new, b_new, t_new
    return W, b


def export(W: np.ndarray, cols: List[int], records: List[dict]) -> Tuple[Dict[str, list], int]:
    """The non-zero buckets, keyed by the training features that hash into them: inference
    then looks features up directly (no hashing at run time) and gets exactly the trained
    model, minus collisions with features never seen in training."""
    by_bucket: Dict[int, list] = {}
    for j, col in enumerate(cols):
        nz = [(int(k), round(float(W[j, k]), 3)) for k in np.nonzero(np.abs(W[j]) >= 5e-4)[0]]
        nz = [(k, w) for k, w in nz if w != 0.0]
        if nz:
            by_bucket[col] = nz
    weights: Dict[str, list] = {}
    for r in records:
        for f in features(normalize(r["text"])):
            row = by_bucket.get(bucket(f, BUCKETS))
            if row is not None:
                weights[f] = row
    return dict(sorted(weights.items())), len(by_bucket)


def typical_shares(labels: Sequence[str]) -> Dict[str, float]:
    """Each label's share of schema tokens on the bare CLI surface, or on the forced surface
    (every toolset enabled) for one the bare profile lacks: the price of adding it where it
    exists. The live router replaces these with the session's own surface."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from offline_surface import Baselines  # noqa: E402  (needs the Hermes test venv)

    from hermes_token_router import host

    base = Baselines.load()
    bare, forced = (base.surfaces[n].shares(host.estimate_tokens) for n in ("bare", "forced"))
    return {lab: round(bare.get(lab, forced.get(lab, 0.0)), 4) for lab in labels if lab in bare or lab in forced}


def main(argv: Sequence[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, nargs="+", default=[ROOT / "corpus" / "routing.jsonl", ROOT / "corpus" / "blind"])
    ap.add_argument("--out", type=Path, default=ROOT / "policy" / "learned.json")
    ap.add_argument("--lam", type=float, default=0.002, help="L1 strength (larger: sparser)")
    ap.add_argument("--pos-weight", type=float, default=3.0, help="weight of positive labels (recall over precision)")
    ap.add_argument("--iters", type=int, default=400)
    ap.add_argument("--union-at", type=float, default=0.9)
    ap.add_argument("--disagree-at", type=float, default=0.02)
    ap.add_argument("--miss-share", type=float, default=0.1,
                    help="price of a miss as a share of the full surface (0: one threshold for all)")
    ap.add_argument("--floor-p", type=float, default=0.3, help="never add a toolset below this probability")
    ap.add_argument("--chitchat-at", type=float, default=1.01,
                    help="train the chit-chat output and read a message as small talk at this probability (> 1: off)")
    ap.add_argument("--notools-at", type=float, default=1.01,
                    help="train the no-toolset output and read a message as needing none at this probability (> 1: off)")
    ap.add_argument("--primary-at", type=float, default=1.01,
                    help="a message no rule explains narrows to the model's toolsets when one reaches this (> 1: off)")
    ap.add_argument("--primary-keep", type=float, default=0.15,
                    help="... keeping every toolset at or above this probability (or its priced threshold, if lower)")
    args = ap.parse_args(argv)

    records, digests = read([p if p.is_absolute() else ROOT / p for p in args.data])
    labels = sorted({ts for r in records for ts in r["required"]})
    if args.chitchat_at <= 1.0:
        labels.append(CHITCHAT)
    if args.notools_at <= 1.0:
        labels.append(NO_TOOLS)
    X, Y, cols = design(records, labels)
    W, b = fit(X, Y, args.lam, args.pos_weight, args.iters)
    weights, nonzero = export(W, cols, records)
    combined = hashlib.sha256("\n".join(f"{p} {h}" for p, h in digests).encode()).hexdigest()
    payload = {
        "version": 1,
        "labels": labels,
        "bias": [round(float(x), 4) for x in b],
        "union_at": args.union_at,
        "disagree_at": args.disagree_at,
        "max_chars": 1000,
        "miss_share": args.miss_share,
        "floor_p": args.floor_p,
        "chitchat_at": args.chitchat_at,
        "notools_at": args.notools_at,
        "primary_at": args.primary_at,
        "primary_keep": args.primary_keep,
        "shares": typical_shares(labels),
        "training": {
            "command": "python benchmarks/train_learned.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "data": [{"file": p, "sha256": h} for p, h in digests],
            "data_sha256": combined,
            "records": len(records),
            "lambda": args.lam, "pos_weight": args.pos_weight, "iterations": args.iters,
            "buckets": BUCKETS, "nonzero_buckets": nonzero, "features": len(weights),
        },
        "weights": weights,
    }
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    args.out.write_text(text + "\n", encoding="utf-8")
    P = 1.0 / (1.0 + np.exp(-(X @ W + b)))
    train_recall = float(((P >= 0.5) * Y).sum() / max(1.0, Y.sum()))
    print(f"{len(records)} records, {len(labels)} labels, {X.shape[1]} seen buckets -> {nonzero} non-zero "
          f"({len(weights)} features); "
          f"{len(text) / 1024:.0f} KiB written to {args.out}; training label recall at 0.5: {train_recall:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
