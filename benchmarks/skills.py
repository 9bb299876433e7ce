"""Skill-router quality and latency, per skill set, cross-set and per language.

Why two sets: set A (tests/fixtures/skill_table.txt + corpus/skill_queries.jsonl) was written
by the people who wrote the router; set B (tests/fixtures/skills_b + corpus/skill_queries_b.jsonl)
was written blind by independent writers. A threshold that only fits the set it was tuned on
shows up in the cross-set rows: calibrate on one set, measure on the other, both directions.
Metrics (requests that a skill serves):
* reach@5: a relevant skill among the first five names of inject + hints;
* Hit@1: the first name offered (injected, else first hint) is relevant;
* inj-prec: share of injected names that are relevant (all requests);
* falseInj: no-skill requests (near misses and chit-chat) that got a full injection;
* chatHint: chit-chat requests that got any hint or injection;
* leave-one-out rows: every request a skill serves, asked of the library without its relevant
  skills (a near miss any labelled set can make); falseInj there is the only figure that counts.
Only the two gates (inject_z, smalltalk_z) are calibrated, with the leave-one-out near misses
as a constraint; the ranking weights are fixed. TARGETS are the issue's goals, printed, not
gated; FLOORS are regression gates: breaking one exits 1 (CI runs this file in .ci/run).
Run: python benchmarks/skills.py [--json] [--cache FILE] [--sets A,B,C,D,E,F,G]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

from make_skills import write_fixture  # noqa: E402

from hermes_token_router.skill_router.inject import no_skill_work  # noqa: E402
from hermes_token_router.skill_router.config import SkillRouterConfig  # noqa: E402
from hermes_token_router.skill_router.embedding import semantic_status  # noqa: E402
from hermes_token_router.skill_router.index import IndexStore, build_index  # noqa: E402
from hermes_token_router.skill_router.lexical import saturate  # noqa: E402
from hermes_token_router.skill_router.matcher import (Candidate, Matcher, SmallTalk,  # noqa: E402
                                                       centre_languages, language, standardize)

SET_B_SKILLS = ROOT / "tests" / "fixtures" / "skills_b"
# Sets C to V: new blind queries over set B's skills (written from the skill names alone,
# after the gates were calibrated; D to V are half Chinese), each scored once at first
# contact; see benchmarks/HISTORY.md.
SETS = {"A": (ROOT / "corpus" / "skill_queries.jsonl", None),
        "B": (ROOT / "corpus" / "skill_queries_b.jsonl", SET_B_SKILLS),
        "C": (ROOT / "corpus" / "skill_queries_c.jsonl", SET_B_SKILLS),
        "D": (ROOT / "corpus" / "skill_queries_d.jsonl", SET_B_SKILLS),
        "E": (ROOT / "corpus" / "skill_queries_e.jsonl", SET_B_SKILLS),
        "F": (ROOT / "corpus" / "skill_queries_f.jsonl", SET_B_SKILLS),
        "G": (ROOT / "corpus" / "skill_queries_g.jsonl", SET_B_SKILLS),
        "H": (ROOT / "corpus" / "skill_queries_h.jsonl", SET_B_SKILLS),
        "I": (ROOT / "corpus" / "skill_queries_i.jsonl", SET_B_SKILLS),
        "J": (ROOT / "corpus" / "skill_queries_j.jsonl", SET_B_SKILLS),
        "K": (ROOT / "corpus" / "skill_queries_k.jsonl", SET_B_SKILLS),
        "L": (ROOT / "corpus" / "skill_queries_l.jsonl", SET_B_SKILLS),
        "M": (ROOT / "corpus" / "skill_queries_m.jsonl", SET_B_SKILLS),
        "N": (ROOT / "corpus" / "skill_queries_n.jsonl", SET_B_SKILLS),
        "O": (ROOT / "corpus" / "skill_queries_o.jsonl", SET_B_SKILLS),
        "P": (ROOT / "corpus" / "skill_queries_p.jsonl", SET_B_SKILLS),
        "Q": (ROOT / "corpus" / "skill_queries_q.jsonl", SET_B_SKILLS),
        "R": (ROOT / "corpus" / "skill_queries_r.jsonl", SET_B_SKILLS),
        "S": (ROOT / "corpus" / "skill_queries_s.jsonl", SET_B_SKILLS),
        "T": (ROOT / "corpus" / "skill_queries_t.jsonl", SET_B_SKILLS),
        "U": (ROOT / "corpus" / "skill_queries_u.jsonl", SET_B_SKILLS),
        "V": (ROOT / "corpus" / "skill_queries_v.jsonl", SET_B_SKILLS)}


def bounds(reach5, hit1, inj_prec, false_inj, chat_hint):
    """One row's five bounds: the first three at least, the last two at most."""
    return {"reach@5": (">=", reach5), "hit@1": (">=", hit1), "inj_prec": (">=", inj_prec),
            "false_inj": ("<=", false_inj), "chat_hint": ("<=", chat_hint)}


TARGETS = bounds(0.95, 0.75, 0.90, 0.05, 0.05)
# Regression floors (gates, unlike TARGETS): each just under what the shipped defaults reached
# on 2026-12-01 (inject_z 7.0, smalltalk_z 1.75, lexical_weight 0.15 / zh 0; use-m3), about one
# request of slack. Figures then, in-set: A reach@5 96.1% Hit@1 91.7% inj-prec 99.1% falseInj
# 0.0% chatHint 4.4% (en/zh reach 96.5/93.8), leave-one-out falseInj 2.6%; B 97.1 / 84.7 /
# 96.6 / 1.4 / 0.0 (en/zh reach 99.0/94.1), leave-one-out 0.6%. Cross: cal A -> B equals the
# shipped B row; cal B -> A 96.1 / 91.7 / 98.5 / 2.2 / 6.7. A change that breaks one fails CI
# (.ci/run); moving a floor down needs a reason in benchmarks/HISTORY.md.
# 2026-12-01 08:10, language-centred ranking (matcher.centre_languages): zh reach@5 A 96.9%,
# B 98.5%, so the zh floors rose; B's English reach@5 fell one request to 98.0% (bq158, a
# Chinese-text skill asked for in English), so its floor moved down to keep one request of
# slack (HISTORY.md). Set C rows (seen since 07:58), just under that run: C shipped (= cal A
# -> C) 97.9 / 87.1 / 100 (15) / 0.0 / 0.0 (en/zh reach 98.8/96.4), leave-one-out 0.0%;
# cal B -> C 97.9 / 87.1 / 96.6 / 1.7 / 0.0; cal C -> A 96.1 / 91.7 / 100 / 0.0 / 4.4;
# cal C -> B 98.2 / 86.5 / 95.7 / 2.9 / 0.0.
FLOORS = {
    "A shipped weighted": bounds(0.95, 0.905, 0.98, 0.03, 0.07),
    "A shipped weighted [en]": {"reach@5": (">=", 0.955)},
    "A shipped weighted [zh]": {"reach@5": (">=", 0.93)},
    "A shipped leave-one-out": {"false_inj": ("<=", 0.035)},
    "B shipped weighted": bounds(0.96, 0.835, 0.93, 0.03, 0.05),
    "B shipped weighted [en]": {"reach@5": (">=", 0.97)},
    "B shipped weighted [zh]": {"reach@5": (">=", 0.965)},
    "B shipped leave-one-out": {"false_inj": ("<=", 0.015)},
    "cal A -> B (CROSS)": bounds(0.96, 0.835, 0.93, 0.03, 0.05),
    "cal B -> A (CROSS)": bounds(0.95, 0.905, 0.97, 0.03, 0.08),
    "C shipped weighted": bounds(0.965, 0.86, 0.93, 0.02, 0.05),
    "C shipped weighted [en]": {"reach@5": (">=", 0.975)},
    "C shipped weighted [zh]": {"reach@5": (">=", 0.945)},
    "C shipped leave-one-out": {"false_inj": ("<=", 0.01)},
    "cal A -> C (CROSS)": bounds(0.965, 0.86, 0.93, 0.02, 0.05),
    "cal B -> C (CROSS)": bounds(0.965, 0.86, 0.93, 0.035, 0.05),
    "cal C -> A (CROSS)": bounds(0.955, 0.91, 0.99, 0.03, 0.07),
    "cal C -> B (CROSS)": bounds(0.975, 0.855, 0.93, 0.045, 0.05),
    # Set D (2026-12-01, after its first contact at 9a8aad9: reach@5 94.5%, Hit@1 76.4%,
    # inj-prec 93.8%, falseInj 2.0%, chatHint 10.0%; en and zh reach@5 94.5%): about one
    # request under each figure.
    "D shipped weighted": bounds(0.935, 0.75, 0.875, 0.04, 0.15),
    "D shipped weighted [en]": {"reach@5": (">=", 0.925)},
    "D shipped weighted [zh]": {"reach@5": (">=", 0.925)},
    "cal B -> D (CROSS)": bounds(0.935, 0.75, 0.9, 0.04, 0.15),
    # Set E (2026-12-01, after its first contact at a041ed6: reach@5 96.7%, Hit@1 84.2%,
    # inj-prec 100% of 16, falseInj 0.0%, chatHint 5.0%; en 98.3% / zh 95.0% reach@5): about
    # one request under each figure.
    "E shipped weighted": bounds(0.955, 0.83, 0.93, 0.02, 0.10),
    "E shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "E shipped weighted [zh]": {"reach@5": (">=", 0.93)},
    # Set F (2026-12-01, after its first contact at 4194559: reach@5 91.6%, Hit@1 76.5%,
    # inj-prec 100% of 14, falseInj 0.0%, chatHint 15.0%; en 93.2% / zh 90.0% reach@5).
    "F shipped weighted": bounds(0.90, 0.75, 0.92, 0.02, 0.15),
    "F shipped weighted [en]": {"reach@5": (">=", 0.915)},
    "F shipped weighted [zh]": {"reach@5": (">=", 0.88)},
    # Set G (2026-12-01, after its first contact at 4213796: reach@5 97.5%, Hit@1 84.2%,
    # inj-prec 100% of 16, falseInj 0.0%, chatHint 20.0%; en 98.3% / zh 96.7% reach@5).
    "G shipped weighted": bounds(0.965, 0.83, 0.93, 0.02, 0.15),
    "G shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "G shipped weighted [zh]": {"reach@5": (">=", 0.95)},
    # Set H (2026-12-02, after its two first-contact rows at 65f88b9 and 0af8023: reach@5 95.8%,
    # Hit@1 82.5%, inj-prec 100% of 18, falseInj 0.0%, chatHint 7.5%; en 98.3% / zh 93.3%).
    # Chit-chat hints are held at 10%: the tool router's chit-chat output (chitchat_at 0.85)
    # brought D-H's hinted chit-chat from 12 of 140 lines to 9; F's and G's floors followed.
    "H shipped weighted": bounds(0.95, 0.81, 0.93, 0.02, 0.10),
    "H shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "H shipped weighted [zh]": {"reach@5": (">=", 0.915)},
    # Sets I and J (2026-12-02, after their first contact rows at af9baa9 and 20c9399: I reach@5
    # 95.0%, Hit@1 85.8%, inj-prec 100% of 14, falseInj 0.0%, chatHint 12.5%, en 98.3% / zh
    # 91.7%; J 97.5 / 79.2 / 100 of 11 / 0.0 / 5.0, en 98.3% / zh 96.7%): about one request under.
    "I shipped weighted": bounds(0.94, 0.85, 0.93, 0.02, 0.15),
    "I shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "I shipped weighted [zh]": {"reach@5": (">=", 0.90)},
    # J's reach floors moved down on 2026-12-02 with the glossary and the Chinese lexical weight
    # (HISTORY.md): J lost two Chinese requests (96.7% -> 93.3%) while D-J's Chinese reach@5
    # rose from 93.7% to 96.1% on average.
    "J shipped weighted": bounds(0.95, 0.78, 0.93, 0.02, 0.075),
    "J shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "J shipped weighted [zh]": {"reach@5": (">=", 0.92)},
    # Sets K and L (2026-12-02, after their first-contact rows at 517ec00 / 9c92d5b: K reach@5
    # 99.2%, Hit@1 85.8%, inj-prec 75.0% of 12, falseInj 3.8%, chatHint 22.5%, en 100% / zh
    # 98.3%; L 97.5 / 82.5 / 80.0 of 10 / 2.5 / 10.0, en 98.3% / zh 96.7%): about one request under.
    "K shipped weighted": bounds(0.98, 0.84, 0.70, 0.05, 0.25),
    "K shipped weighted [en]": {"reach@5": (">=", 0.98)},
    "K shipped weighted [zh]": {"reach@5": (">=", 0.965)},
    "L shipped weighted": bounds(0.965, 0.81, 0.75, 0.035, 0.125),
    "L shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "L shipped weighted [zh]": {"reach@5": (">=", 0.95)},
    # Set M (2026-12-02, after its first-contact row at 38a81d5: reach@5 98.3%, Hit@1 80.0%,
    # inj-prec 100% of 6, falseInj 0.0%, chatHint 2.5%, en 98.3% / zh 98.3%): about one request under.
    "M shipped weighted": bounds(0.975, 0.79, 0.85, 0.0125, 0.05),
    "M shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "M shipped weighted [zh]": {"reach@5": (">=", 0.965)},
    # Set N (2026-12-02, after its first-contact row at cece45a: reach@5 94.2%, Hit@1 81.7%,
    # inj-prec 100% of 9, falseInj 0.0%, chatHint 0.0%, en 93.3% / zh 95.0%): about one request under.
    "N shipped weighted": bounds(0.935, 0.80, 0.85, 0.0125, 0.025),
    "N shipped weighted [en]": {"reach@5": (">=", 0.925)},
    "N shipped weighted [zh]": {"reach@5": (">=", 0.94)},
    # Set O (2026-12-02, after its first-contact row at cd3aaa4: reach@5 97.5%, Hit@1 89.2%,
    # inj-prec 91.7% of 12, falseInj 1.2%, chatHint 0.0%, en 98.3% / zh 96.7%): about one request under.
    "O shipped weighted": bounds(0.965, 0.88, 0.83, 0.025, 0.025),
    "O shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "O shipped weighted [zh]": {"reach@5": (">=", 0.945)},
    # Set P (2026-12-02, after its first-contact row at d3ea465: reach@5 95.0%, Hit@1 83.3%,
    # inj-prec 100% of 10, falseInj 0.0%, chatHint 0.0%, en 96.7% / zh 93.3%): about one request under.
    "P shipped weighted": bounds(0.94, 0.825, 0.85, 0.0125, 0.025),
    "P shipped weighted [en]": {"reach@5": (">=", 0.95)},
    "P shipped weighted [zh]": {"reach@5": (">=", 0.915)},
    # Set Q (2026-12-02, after its first-contact row at 950a519: reach@5 98.3%, Hit@1 95.8%,
    # inj-prec 100% of 16, falseInj 0.0%, chatHint 0.0%, en 98.3% / zh 98.3%): about one request under.
    "Q shipped weighted": bounds(0.975, 0.95, 0.93, 0.0125, 0.025),
    "Q shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "Q shipped weighted [zh]": {"reach@5": (">=", 0.965)},
    # Set R (2026-12-02, after its first-contact row at 6569c1c: reach@5 95.8%, Hit@1 81.7%,
    # inj-prec 90.0% of 10, falseInj 1.2%, chatHint 5.0%, en 98.3% / zh 93.3%): about one request under.
    "R shipped weighted": bounds(0.95, 0.80, 0.80, 0.025, 0.075),
    "R shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "R shipped weighted [zh]": {"reach@5": (">=", 0.915)},
    # Set S (2026-12-02, after its first-contact row at e841302: reach@5 95.8%, Hit@1 78.3%,
    # inj-prec 66.7% of 6, falseInj 2.5%, chatHint 5.0%, en 93.3% / zh 98.3%): about one request under.
    "S shipped weighted": bounds(0.95, 0.775, 0.55, 0.0375, 0.075),
    "S shipped weighted [en]": {"reach@5": (">=", 0.915)},
    "S shipped weighted [zh]": {"reach@5": (">=", 0.965)},
    # Set T (2026-12-02, after its first-contact row at da8d353: reach@5 99.2%, Hit@1 88.3%,
    # inj-prec 100% of 7, falseInj 0.0%, chatHint 10.0%, en 98.3% / zh 100%): about one request under.
    "T shipped weighted": bounds(0.98, 0.87, 0.85, 0.0125, 0.125),
    "T shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "T shipped weighted [zh]": {"reach@5": (">=", 0.98)},
    # Set U (2026-12-02, after its first-contact row at 1421b22: reach@5 99.2%, Hit@1 90.0%,
    # inj-prec 100% of 12, falseInj 0.0%, chatHint 25.0%, en 100% / zh 98.3%): about one request under.
    "U shipped weighted": bounds(0.98, 0.89, 0.90, 0.0125, 0.275),
    "U shipped weighted [en]": {"reach@5": (">=", 0.98)},
    "U shipped weighted [zh]": {"reach@5": (">=", 0.965)},
    # Set V (2026-12-02, after its first-contact row at 75eb928: reach@5 97.5%, Hit@1 91.7%,
    # inj-prec 100% of 12, falseInj 0.0%, chatHint 0.0%, en 98.3% / zh 96.7%): about one request under.
    "V shipped weighted": bounds(0.965, 0.905, 0.90, 0.0125, 0.025),
    "V shipped weighted [en]": {"reach@5": (">=", 0.965)},
    "V shipped weighted [zh]": {"reach@5": (">=", 0.95)},
}

# Only the two gates are calibrated; both are in standard deviations of the request's scores
# over the library, which is what lets them transfer. The ranking weights are not fitted.
GRID = {"inject_z": tuple(x / 4 for x in range(16, 41)), "smalltalk_z": tuple(x / 4 for x in range(0, 17))}


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))] if values else 0.0


def load_queries(path: Path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def is_chitchat(q, kinds) -> bool:
    """Set B marks chit-chat as kind ``chitchat`` (its ``none`` are near misses: tasks no skill
    serves, where hints are fine); set A has no such kind and its ``none`` are all chit-chat."""
    return q.get("kind") == "chitchat" or (q.get("kind") == "none" and "chitchat" not in kinds)


def collect(name: str, tmp: Path, backend: str):
    """Raw signals per query (semantic and BM25 per skill, small-talk score, rules verdict)
    so calibration re-scores thousands of settings without re-embedding."""
    queries_file, skills = SETS[name]
    if skills is None:
        skills = tmp / f"skills_{name}"
        write_fixture(skills)
    t0 = time.perf_counter()
    meta = build_index(tmp / f"index_{name}", [skills], backend=backend)
    build_s = time.perf_counter() - t0
    matcher = Matcher(SkillRouterConfig(enabled=True, backend=backend, lexical_weight=0.0),
                      IndexStore(tmp / f"index_{name}"))
    index = matcher.store.get()
    queries = load_queries(queries_file)
    for q in queries[:20]:  # warm-up: BLAS buffers, tokenizer caches
        matcher.candidates(q["text"], index)
    costs = token_costs(tmp / f"index_{name}", skills, queries, backend)
    signals, sem_ms = {}, []
    for q in queries:
        t = time.perf_counter()
        raw = {e.name: r for e, _, r in matcher.scores(q["text"], index)[0]}
        sem_ms.append((time.perf_counter() - t) * 1000)
        cands, small = matcher.candidates(q["text"], index)
        signals[q["id"]] = ([(c.entry.name, c.semantic, c.lexical, raw[c.entry.name]) for c in cands], small.score,
                            no_skill_work(q["text"]), len(q["text"]))
    chinese = {e.name for e in index.entries if language(e.description) == "zh"}
    return {"name": name, "queries": queries, "signals": signals, "meta": meta, "build_s": build_s,
            "sem_ms": sem_ms, "skills": meta["count"], "costs": costs, "chinese": chinese}


def relex(data) -> None:
    """Re-score the lexical signal and the rules verdict of cached data with the current code
    (no embedding needed): the cache then only freezes what the model computed."""
    from hermes_token_router.skill_router.lexical import Bm25
    from hermes_token_router.skill_router.scan import scan_skills

    for name, d in data.items():
        with tempfile.TemporaryDirectory() as tmp:
            skills = SETS[name][1]
            if skills is None:
                skills = Path(tmp) / "skills"
                write_fixture(skills)
            entries = scan_skills([skills])
        bm25 = Bm25.for_entries(entries)
        for q in d["queries"]:
            rows, chat = d["signals"][q["id"]][:2]
            lex = dict(zip((e.name for e in entries), bm25.scores(q["text"][:2000])))
            no_work = no_skill_work(q["text"])
            d["signals"][q["id"]] = ([(n, sem, lex.get(n, 0.0), raw) for n, sem, _, raw in rows], chat, no_work,
                                     len(q["text"]))


def token_costs(index_dir: Path, skills: Path, queries, backend: str):
    """What the shipped router adds to a turn, in Hermes's chars/4 tokens: the hint block per
    hinted turn, the full injection per injected turn (the real SkillRouter, fresh sessions)."""
    from hermes_token_router.skill_router.hints import estimate_tokens
    from hermes_token_router.skill_router.inject import SkillRouter

    router = SkillRouter(SkillRouterConfig(enabled=True, backend=backend, skills_dirs=[str(skills)]),
                         index_dir=index_dir)
    router._disabled = (None, frozenset())  # measure without the host's config
    hint, inject, per_turn = [], [], []
    for i, q in enumerate(queries):
        inj = router.context_for_turn(f"cost-{i}", q["text"], no_skill_work=no_skill_work(q["text"]))
        total = estimate_tokens(inj.text) if inj else 0
        per_turn.append(total)
        if inj and inj.hint_chars:
            hint.append(estimate_tokens("x" * inj.hint_chars))
        if inj and inj.skills:
            inject.append(total - (estimate_tokens("x" * inj.hint_chars) if inj.hint_chars else 0))
    return {"hint_tokens_p50": pct(hint, 50), "hint_tokens_max": max(hint, default=0), "hinted_turns": len(hint),
            "inject_tokens_p50": pct(inject, 50), "inject_tokens_max": max(inject, default=0),
            "injected_turns": len(inject), "added_tokens_per_turn_mean": round(sum(per_turn) / max(len(per_turn), 1), 1),
            "turns": len(per_turn)}


def route(signal, cfg: SkillRouterConfig, lang: str, fusion: str = "weighted", matcher=None):
    """The matcher's tiers on cached signals (same code path: standardize over the raw cosines,
    Matcher.tiers on the language-centred ones). ``lexical`` is the router without embeddings
    (no semantic score, so hints only). Rows: (name, centred cosine, BM25, raw cosine)."""
    rows, chat, no_work, text_len = signal
    w = cfg.lexical_weight_zh if lang == "zh" and cfg.lexical_weight_zh is not None else cfg.lexical_weight
    half = cfg.lexical_half
    key = (id(signal), fusion, w, half)
    cached = _SORTED.get(key)
    if cached is None or cached[0] is not signal:  # an id can be reused once its signal is gone
        zs, chat_z = standardize([r[3] for r in rows], chat)
        z = {r[0]: v for r, v in zip(rows, zs)}
        small = SmallTalk(chat, chat_z, True)
        if fusion == "rrf":
            sem_rank = {r[0]: i for i, r in enumerate(sorted(rows, key=lambda r: -r[1]))}
            lex_rank = {r[0]: i for i, r in enumerate(sorted(rows, key=lambda r: -r[2]))}
            rrf = {r[0]: 1 / (60 + sem_rank[r[0]]) + 1 / (60 + lex_rank[r[0]]) for r in rows}
            cands = [Candidate(_Named(n), s, lx, s, z[n]) for n, s, lx, _ in sorted(rows, key=lambda r: -rrf[r[0]])]
        elif fusion == "lexical":
            cands = [Candidate(_Named(n), 0.0, lx, saturate(lx, half)) for n, _, lx, _ in rows]
            small = SmallTalk()
        else:
            wt = 0.0 if fusion == "semantic" else w
            cands = [Candidate(_Named(n), s, lx, s + wt * saturate(lx, half), z[n]) for n, s, lx, _ in rows]
        if fusion != "rrf":
            cands.sort(key=lambda c: -c.score)
        cached = _SORTED[key] = (signal, cands[:12], small)
    _, cands, small = cached
    matcher = matcher or Matcher(cfg, None)
    inject, hints = matcher.tiers(cands, small, lang, no_skill_work=no_work, text_len=text_len)
    return [m.entry.name for m in inject], [m.entry.name for m in hints][: max(cfg.hint_top_k - len(inject), 0)]


_SORTED: dict = {}


class _Named:
    """Just enough of a SkillEntry for Matcher.tiers on cached signals."""

    def __init__(self, name: str) -> None:
        self.name = self.qualified_name = name
        self.threshold = None


def smaller_libraries(data, cfg: SkillRouterConfig, size: int, draws: int = 5):
    """The same requests against random libraries of ``size`` skills (each request keeps its
    relevant skills), averaged over ``draws`` seeded draws. A gate that means the same on any
    library keeps its precision and injection count as the library shrinks."""
    import random

    names = sorted({r[0] for sig in data["signals"].values() for r in sig[0]})
    keys = ("reach@5", "hit@1", "inj_prec", "false_inj", "chat_hint", "injected")
    total = {k: 0.0 for k in keys}
    loo_false = 0.0
    for seed in range(draws):
        keep = set(random.Random(seed).sample(names, min(size, len(names))))
        signals = {}
        for q in data["queries"]:
            rows, chat, no_work, text_len = data["signals"][q["id"]]
            wanted = keep | set(q.get("expect") or [])
            signals[q["id"]] = (recentre([r for r in rows if r[0] in wanted], data["chinese"]), chat, no_work,
                                text_len)
        sub = {"queries": data["queries"], "signals": signals, "chinese": data["chinese"]}
        r = evaluate(sub, cfg)["all"]
        loo_false += evaluate(leave_one_out(sub), cfg)["all"]["false_inj"] / draws
        for k in keys:
            total[k] += r[k] / draws
        _SORTED.clear()  # these signals die here; their entries would only hold memory
    return {**r, **total, "injected": round(total["injected"]), "loo_false_inj": loo_false}


def recentre(rows, chinese):
    """Rows of a smaller library with the language correction redone over that library (the
    matcher centres over the library it is given; the raw cosines do not change)."""
    import numpy as np

    if not rows:
        return rows
    centred = centre_languages(np.asarray([r[3] for r in rows], dtype=np.float64),
                               np.asarray([r[0] in chinese for r in rows], dtype=bool))
    return [(n, float(c), lx, raw) for (n, _, lx, raw), c in zip(rows, centred)]


def leave_one_out(data):
    """Near misses made from any labelled set: each request that a skill serves, asked of the
    library with its relevant skills removed. The closest skill left is a sibling, not the
    service asked for, so every injection is false. Set A has no near misses of its own; this
    gives every set the same test, which is what lets a gate calibrated on one set transfer."""
    queries, signals = [], {}
    for q in data["queries"]:
        expect = set(q.get("expect") or [])
        if not expect:
            continue
        rows, chat, no_work, text_len = data["signals"][q["id"]]
        qid = f"{q['id']}~loo"
        queries.append({**q, "id": qid, "expect": [], "kind": "loo", "_chat": False})
        signals[qid] = (recentre([r for r in rows if r[0] not in expect], data["chinese"]), chat, no_work, text_len)
    return {"queries": queries, "signals": signals, "kinds": {"loo"}}


def evaluate(data, cfg: SkillRouterConfig, fusion: str = "weighted", queries=None):
    groups = {}
    matcher = Matcher(cfg, None)
    kinds = {q.get("kind") for q in data["queries"]} if "kinds" not in data else data["kinds"]
    for q in queries or data["queries"]:
        lang = q.get("lang") or language(q["text"])
        inject, hints = route(data["signals"][q["id"]], cfg, lang, fusion, matcher)
        names = (inject + hints)[:5]
        expect = set(q.get("expect") or [])
        for g in ("all", lang):
            d = groups.setdefault(g, {"n": 0, "reach5": 0, "hit1": 0, "injected": 0, "inj_ok": 0, "none": 0,
                                      "false": 0, "chat": 0, "chat_hint": 0, "hinted": 0, "task": 0})
            d["injected"] += len(inject)
            d["inj_ok"] += len(set(inject) & expect)
            if expect:
                d["n"] += 1
                d["reach5"] += bool(set(names) & expect)
                d["hit1"] += bool(names) and names[0] in expect
            else:
                d["none"] += 1
                d["false"] += bool(inject)
                if q["_chat"] if "_chat" in q else is_chitchat(q, kinds):
                    d["chat"] += 1
                    d["chat_hint"] += bool(names)
    out = {}
    for g, d in groups.items():
        out[g] = {"n": d["n"], "reach@5": d["reach5"] / max(d["n"], 1), "hit@1": d["hit1"] / max(d["n"], 1),
                  "inj_prec": d["inj_ok"] / d["injected"] if d["injected"] else 1.0, "injected": d["injected"],
                  "none": d["none"], "false_inj": d["false"] / max(d["none"], 1), "chat": d["chat"],
                  "chat_hint": d["chat_hint"] / max(d["chat"], 1)}
    return out


def regressions(report) -> list:
    """Every FLOORS bound the report breaks, as one line each (empty: no regression). A row
    that is missing counts as broken: a floor that silently stops being measured gates nothing."""
    by_row = {r["row"]: r for r in report["rows"]}
    out = []
    for row, bounds in FLOORS.items():
        r = by_row.get(row)
        if r is None:
            out.append(f"{row}: row missing from the report")
            continue
        for metric, (op, bound) in bounds.items():
            value = r[metric]
            if (value < bound) if op == ">=" else (value > bound):
                out.append(f"{row}: {metric} {value:.1%} (floor {op} {bound:.1%})")
    return out


def calibrate(data, base: SkillRouterConfig):
    """Fit the two gates on one set; the ranking (lexical weight) stays at the shipped value.
    Constraints, with headroom: injected precision >= 93%, false injections <= 3% on the set's
    no-skill requests and on its leave-one-out near misses alike, chit-chat hints <= 5%. Then
    the most reach@5, the most correct injections; ties go to the stricter gate (higher
    inject_z, lower smalltalk_z: silence and restraint that cost nothing on this set).
    Returns (cfg, figures)."""
    loo = data.get("loo") or leave_one_out(data)
    best = None
    for values in itertools.product(*GRID.values()):
        cfg = base.model_copy(update=dict(zip(GRID, values)))
        r = evaluate(data, cfg)["all"]
        lr = evaluate(loo, cfg)["all"]
        ok = r["inj_prec"] >= 0.93 and r["false_inj"] <= 0.03 and lr["false_inj"] <= 0.03 and r["chat_hint"] <= 0.05
        k = (ok, round(r["reach@5"], 3), round(r["inj_prec"] * r["injected"]), cfg.inject_z, -cfg.smalltalk_z)
        if best is None or k > best[0]:
            best = (k, cfg, r)
    return best[1], best[2]


def params(cfg: SkillRouterConfig):
    return {k: getattr(cfg, k) for k in ("inject_z", "smalltalk_z", "lexical_weight", "lexical_weight_zh",
                                         "lexical_half", "lexical_task", "margin", "top_k", "hint_top_k",
                                         "inject_threshold", "smalltalk_gap", "inject_lead")}


def fmt_row(label, r):
    """One table line; rows without tasks (leave-one-out) or chit-chat show '-' there, not 0%."""
    def cell(key, width, count):
        return f"{r[key]:>{width}.1%}" if r[count] else f"{'-':>{width}}"

    return (f"{label:<34}{r['n']:>5}{cell('reach@5', 9, 'n')}{cell('hit@1', 8, 'n')}"
            f"{cell('inj_prec', 9, 'injected')}{r['injected']:>5}{r['none']:>6}{cell('false_inj', 9, 'none')}"
            f"{r['chat']:>5}{cell('chat_hint', 9, 'chat')}")


def unmet_goals(rows, label: str) -> list:
    """The issue's goals (not gates) a cross row misses, including Chinese reach@5 within
    3 points of English on its per-language rows."""
    by_row = {r["row"]: r for r in rows}
    r = by_row[label]
    out = [f"{k} {r[k]:.1%} (goal {op} {v:.0%})" for k, (op, v) in TARGETS.items()
           if not ((r[k] >= v) if op == ">=" else (r[k] <= v))]
    en, zh = by_row.get(f"{label} [en]"), by_row.get(f"{label} [zh]")
    if en and zh and en["reach@5"] - zh["reach@5"] > 0.03:
        out.append(f"zh reach@5 {zh['reach@5']:.1%} vs en {en['reach@5']:.1%} (goal: within 3 points)")
    return out


HEADER = (f"{'row':<34}{'n':>5}{'reach@5':>9}{'Hit@1':>8}{'inj-prec':>9}{'inj':>5}{'none':>6}{'falseInj':>9}"
          f"{'chat':>5}{'chatHint':>9}")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--backend", default="use-m3")
    every = ",".join(SETS)  # a new set is gated by CI as soon as it is in SETS
    ap.add_argument("--sets", default=every, help=f"which sets to run (default {every})")
    ap.add_argument("--cache", help="pickle of the collected signals: read if present, else written "
                                    "(re-scoring without re-embedding; latency and token figures are kept)")
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    ok, detail = semantic_status(args.backend)
    if not ok:
        print(f"semantic routing unavailable: {detail}", file=sys.stderr)
        return 2
    wanted = [s for s in args.sets.split(",") if s in SETS and SETS[s][0].is_file()]
    shipped = SkillRouterConfig(enabled=True, backend=args.backend)
    report = {"backend": args.backend, "shipped": params(shipped), "sets": {}, "rows": []}
    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.is_file():
        import pickle

        data = {s: d for s, d in pickle.loads(cache.read_bytes()).items() if s in wanted}
        if any("chinese" not in d for d in data.values()):
            print(f"{cache} was written by an older benchmark (no raw cosines); delete it", file=sys.stderr)
            return 2
        relex(data)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            data = {s: collect(s, Path(tmp), args.backend) for s in wanted}
        if cache is not None:
            import pickle

            cache.write_bytes(pickle.dumps(data))
    rows = report["rows"]
    for d in data.values():
        kinds = {q.get("kind") for q in d["queries"]}
        for q in d["queries"]:
            q["_chat"] = is_chitchat(q, kinds)
        d["loo"] = leave_one_out(d)
    for s, d in data.items():
        report["sets"][s] = {"skills": d["skills"], "queries": len(d["queries"]), "build_s": round(d["build_s"], 2),
                             "semantic_p50_ms": round(pct(d["sem_ms"], 50), 2),
                             "semantic_p99_ms": round(pct(d["sem_ms"], 99), 2), "tokens": d["costs"]}
        for fusion in ("semantic", "lexical", "rrf", "weighted"):
            r = evaluate(d, shipped, fusion)
            rows.append({"row": f"{s} shipped {fusion}", **r["all"]})
            for lang in ("en", "zh"):
                if lang in r:
                    rows.append({"row": f"{s} shipped {fusion} [{lang}]", **r[lang]})
        rows.append({"row": f"{s} shipped leave-one-out", **evaluate(d["loo"], shipped)["all"]})
        for size in (20, 60):
            r = smaller_libraries(d, shipped, size)
            rows.append({"row": f"{s} shipped, {size}-skill libs", **r})
            rows.append({"row": f"{s} {size}-skill libs leave-one-out", **r, "false_inj": r["loo_false_inj"],
                         "none": r["n"], "n": 0, "chat": 0, "injected": 0})
    calibrated = {s: calibrate(d, shipped) for s, d in data.items()}
    for s, (cfg, _) in calibrated.items():
        report.setdefault("calibrated", {})[s] = params(cfg)
        for t in data:
            r = evaluate(data[t], cfg)
            tag = "in-set" if t == s else "CROSS"
            rows.append({"row": f"cal {s} -> {t} ({tag})", **r["all"]})
            for lang in ("en", "zh"):
                if lang in r:
                    rows.append({"row": f"cal {s} -> {t} ({tag}) [{lang}]", **r[lang]})
            rows.append({"row": f"cal {s} -> {t} ({tag}) leave-one-out", **evaluate(data[t]["loo"], cfg)["all"]})
    failures = regressions(report)
    report["regressions"] = failures
    if args.json:
        print(json.dumps(report, indent=1, ensure_ascii=False, default=float))
    else:
        print(f"backend={args.backend} shipped={report['shipped']}")
        for s, info in report["sets"].items():
            print(f"set {s}: {info}")
        for s, p in report.get("calibrated", {}).items():
            print(f"calibrated on {s}: {p}")
        print(HEADER)
        for r in rows:
            print(fmt_row(r["row"], r))
        print("goals, not gates (cross rows): " + ", ".join(f"{k} {op} {v:.0%}" for k, (op, v) in TARGETS.items())
              + "; zh within 3 points of en on reach@5; semantic p50 <= 5 ms")
        for r in rows:
            if "CROSS" in r["row"] and "[" not in r["row"] and "leave" not in r["row"]:
                unmet = unmet_goals(rows, r["row"])
                print(f"  {r['row']}: " + ("meets the goals" if not unmet else "goals not met: " + "; ".join(unmet)))
        if not failures:
            print(f"regression floors: all {sum(len(b) for b in FLOORS.values())} held")
    return exit_code(failures)


def exit_code(failures) -> int:
    """Non-zero when a floor broke, with one loud line per broken floor (.ci/run stops on it)."""
    for f in failures:
        print(f"REGRESSION: {f}", file=sys.stderr)
    if failures:
        print(f"skills benchmark: {len(failures)} regression floor(s) broken (see FLOORS in "
              f"benchmarks/skills.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
