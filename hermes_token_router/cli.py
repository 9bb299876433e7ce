"""``hermes-token-router`` (also ``python -m hermes_token_router``): offline commands.

None of these start Hermes or call a model unless the classifier is configured and asked
for: ``route`` prints a decision, ``report`` reads the savings ledger, ``skills`` builds
and queries the skill index.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional


def _router_decide():
    """The full router (rules, then the classifier when configured) for ``route``."""
    from .config import ConfigError, ConfigStore, RouterConfig, read_config_text, resolve_profile_name
    from .paths import config_path
    from .router import decide

    path = config_path()
    try:  # a file that cannot even be read (not UTF-8, not a regular file, too big): exit 2
        if path.exists():
            read_config_text(path)
    except (ConfigError, OSError) as exc:
        print(f"hermes-token-router: {exc}", file=sys.stderr)
        return None
    parsed, error = ConfigStore().load()
    if error:  # readable but invalid: say so, and show what the rules alone decide
        print(f"hermes-token-router: {error}", file=sys.stderr)
    cfg = parsed.for_profile(resolve_profile_name()) if parsed is not None else RouterConfig()

    def run(text: str):
        return decide(text, cfg, _classifier_toolsets())
    return run


def _classifier_toolsets():
    from .catalog import load_blurbs
    from .paths import shipped

    return tuple(sorted(load_blurbs(shipped("policy") / "catalog.yaml").items()))


def build_parser() -> argparse.ArgumentParser:
    from . import report, route_cli
    from .skill_router import cli as skills_cli

    parser = argparse.ArgumentParser(prog="hermes-token-router",
                                     description="Offline tools for the Hermes token router plugin.")
    sub = parser.add_subparsers(dest="command", required=True)
    route_cli.add_route_subcommand(sub)
    report.add_subcommand(sub)
    skills_cli.add_subcommands(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "route":
        from . import route_cli

        args.decide = _router_decide()  # rules, then the classifier when config.yaml enables it
        return route_cli.run_route(args) if args.decide is not None else 2
    if args.command == "report":
        from . import report

        return report.run(args)
    if args.command == "skills":
        from .skill_router import cli as skills_cli

        return skills_cli.run(args)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
