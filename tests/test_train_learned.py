"""The training script's sparse design matrix computes exactly what the dense one did, so a
model trained with it is the model the dense fit gave (checked once against the shipped
weights: same biases, 1,133 of 1,134 weights equal to the file's three decimals)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import train_learned  # noqa: E402

rows = st.lists(st.lists(st.integers(0, 39), max_size=9).map(lambda r: sorted(set(r))), min_size=1, max_size=25)


@settings(max_examples=60, deadline=None)
@given(rows=rows, seed=st.integers(0, 2**16))
def test_binary_products_equal_the_dense_ones(rows, seed):
    X = train_learned.Binary(rows, 40)
    D = X.dense()
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(40, 3)).astype(np.float32)
    G = rng.normal(size=(len(rows), 3)).astype(np.float32)
    assert np.allclose(X @ Z, D @ Z, atol=1e-5)
    assert np.allclose(X.T @ G, D.T @ G, atol=1e-5)
    assert np.allclose(X @ Z[:, 0], D @ Z[:, 0], atol=1e-5)
    assert np.allclose(X.T @ G[:, 0], D.T @ G[:, 0], atol=1e-5)


def test_a_fit_on_the_sparse_matrix_equals_the_dense_fit():
    rng = np.random.default_rng(1)
    rows = [sorted(set(rng.integers(0, 30, size=6).tolist())) for _ in range(40)]
    X = train_learned.Binary(rows, 30)
    Y = (rng.random((40, 2)) < 0.3).astype(np.float32)
    Ws, bs = train_learned.fit(X, Y, 0.002, 3.0, 50)
    Wd, bd = train_learned.fit(X.dense(), Y, 0.002, 3.0, 50)
    assert np.allclose(Ws, Wd, atol=1e-4) and np.allclose(bs, bd, atol=1e-4)


def test_the_non_toolset_outputs_learn_from_their_kinds_of_record():
    from hermes_token_router.learned import CHITCHAT, NO_TOOLS

    records = [{"text": "thanks!", "required": [], "kind": "chitchat"},
               {"text": "draft a leaflet on old medicines", "required": [], "kind": "task"},
               {"text": "sort it out", "required": [], "kind": "ambiguous"},   # empty means "cannot tell"
               {"text": "read notes.md", "required": ["file"], "kind": "task"}]
    labels = ["file", CHITCHAT, NO_TOOLS]
    _, Y, _ = train_learned.design(records, labels)
    assert Y.tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 0], [1, 0, 0]]
