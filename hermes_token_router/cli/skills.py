"""``skills build|match|trim``: the skill router's command line, per profile.

Why a CLI: the index is built offline (a second of embedding) and matching must be
inspectable, so users can see *why* a skill would load before trusting the router. Every
verb acts on the profile given with ``-p`` (its skills, its ``token-router/.skill-index``,
its Hermes ``config.yaml`` for ``trim --write``), never on whichever copy runs the command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path



def add_subcommand(subparsers, common=None) -> argparse.ArgumentParser:
    parents = [common] if common is not None else []
    p = subparsers.add_parser("skills", help="skill router: build the index, test matches, trim the skills index")
    p.set_defaults(run=run)
    sub = p.add_subparsers(dest="skills_command", required=True)
    b = sub.add_parser("build", help="scan skills the way Hermes does and write the index", parents=parents)
    b.add_argument("--skills-dir", action="append", default=[], help="skills root (repeatable; default: Hermes's)")
    b.add_argument("--out", help="index directory (default: $HERMES_HOME/token-router/.skill-index of the profile)")
    b.add_argument("--backend", default=None, help="embedding backend (default from config: use-m3)")
    m = sub.add_parser("match", help="show which skills a message would load", parents=parents)
    m.add_argument("text", nargs="?", help="the message")
    m.add_argument("--jsonl", action="store_true", help='read {"id":..,"text":..} lines from stdin')
    m.add_argument("--index", help="index directory")
    m.add_argument("--skills-dir", action="append", default=[], help="trusted skills root (repeatable)")
    m.add_argument("--json", action="store_true", help="print JSON")
    t = sub.add_parser("trim", help="print (or write) Hermes's skills.disabled list keeping only some skills",
                       parents=parents)
    t.add_argument("--keep", default="", help="comma-separated skill names to keep listed")
    t.add_argument("--skills-dir", action="append", default=[])
    t.add_argument("--write", action="store_true", help="apply to Hermes's config.yaml (after a backup)")
    t.add_argument("--restore", action="store_true", help="restore config.yaml from the backup")
    return p


def _router_cfg(profile: str):
    """The profile's skills block, or defaults if the router config is absent/broken."""
    from ..skill_router.config import SkillRouterConfig

    try:
        from ..config import ConfigStore

        file, error = ConfigStore().load()
        if file is not None:
            return file.for_profile(profile).skills
        if error:
            print(f"warning: {error}; using skill-router defaults", file=sys.stderr)
    except Exception as exc:
        print(f"warning: router config unreadable ({exc}); using skill-router defaults", file=sys.stderr)
    return SkillRouterConfig()


def _match_payload(router, text: str) -> dict:
    """The output contract (issue 13): frontmatter names, best first, per tier."""
    from ..skill_router.inject import no_skill_work

    res = router.match(text, no_skill_work=no_skill_work(text))
    return {"inject": [{"name": m.entry.name, "score": round(m.score, 4), "via": m.via, "lead": _lead(m),
                        "qualified_name": m.entry.qualified_name, "file": m.entry.path} for m in res.matches],
            "hints": [{"name": m.entry.name, "score": round(m.score, 4), "lead": _lead(m),
                       "qualified_name": m.entry.qualified_name} for m in res.hints],
            "path": res.path}


def _lead(m):
    """What the injection gate read (compare with ``inject_z``); null for nickname hits."""
    return None if m.lead is None else round(m.lead, 2)


def run(args) -> int:
    cmd = getattr(args, "skills_command", None)
    cfg = _router_cfg(getattr(args, "profile_name", "default"))
    if cmd == "build":
        from ..skill_router.index import build_index, default_index_dir
        from ..skill_router.host import skill_dirs
        from ..skill_router.scan import scan_skills

        out = Path(args.out or cfg.index_dir or default_index_dir()).expanduser()
        dirs = [Path(d) for d in args.skills_dir] or None
        if not scan_skills(dirs):  # never replace an index with an empty one (a wrong profile, a typo)
            roots = ", ".join(str(d) for d in (dirs or skill_dirs())) or "(none)"
            print(f"warning: found 0 skills in {roots} (profile {getattr(args, 'profile_name', 'default')}); "
                  f"nothing written to {out}. Pick the profile with -p NAME or pass --skills-dir DIR",
                  file=sys.stderr)
            return 1
        meta = build_index(out, dirs, backend=args.backend or cfg.backend, threshold=cfg.threshold)
        print(json.dumps({"index_dir": str(out), **meta}, indent=1))
        return 0
    if cmd == "match":
        from ..skill_router.inject import SkillRouter

        cfg = cfg.model_copy(update={"enabled": True, "skills_dirs": [*cfg.skills_dirs, *args.skills_dir]})
        router = SkillRouter(cfg, index_dir=Path(args.index).expanduser() if args.index else None)
        if args.jsonl:
            for line in sys.stdin:
                if not line.strip():
                    continue
                item = json.loads(line)
                print(json.dumps({"id": item.get("id"), **_match_payload(router, str(item.get("text", "")))},
                                 ensure_ascii=False), flush=True)
            return 0
        if not args.text:
            print("skills match: give TEXT or --jsonl", file=sys.stderr)
            return 2
        payload = _match_payload(router, args.text)
        if args.json:
            print(json.dumps(payload, ensure_ascii=False, indent=1))
        else:
            print(f"path: {payload['path'] or 'none'}")
            for s in payload["inject"]:
                lead = "" if s["lead"] is None else f"  lead {s['lead']:.2f}"
                print(f"  inject {s['score']:.3f}  {s['name']}  ({s['via']}){lead}")
            for s in payload["hints"]:
                print(f"  hint   {s['score']:.3f}  {s['name']}  lead {s['lead']:.2f}")
        return 0
    if cmd == "trim":
        from ..skill_router import trim

        if args.restore:
            ok = trim.restore()
            print("restored Hermes config from backup" if ok else "no backup to restore", file=sys.stderr)
            return 0 if ok else 1
        keep = [k for k in args.keep.split(",") if k.strip()]
        disable, unknown = trim.disabled_list(keep, [Path(d) for d in args.skills_dir] or None)
        if unknown:
            print(f"warning: --keep names no skill: {', '.join(unknown)}", file=sys.stderr)
        print(yaml_block(disable))
        if args.write:
            backup = trim.write_disabled(disable)
            print(f"wrote skills.disabled ({len(disable)} skills) to {trim.hermes_config_path()}; "
                  f"backup: {backup}", file=sys.stderr)
        return 0
    print("usage: skills {build,match,trim}", file=sys.stderr)
    return 2


def yaml_block(disable) -> str:
    import yaml

    return yaml.safe_dump({"skills": {"disabled": list(disable)}}, sort_keys=False, allow_unicode=True).rstrip()
