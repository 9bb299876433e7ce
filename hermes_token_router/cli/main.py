"""Argument parsing and dispatch: one parser, a shared ``-p/--profile``/``--home`` on every
subcommand, and the profile's HERMES_HOME set before any Hermes import.

Why one place: every subcommand must act on the same home ``hermes -p`` would, and the
output must survive ``| head`` (a closed pipe ends the command quietly, not in a traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import List, Optional

from .. import __version__
from .home import ProfileError, enter, resolve_home


def common_options() -> argparse.ArgumentParser:
    """``-p/--profile`` and ``--home``: added to every subcommand (and each ``skills`` verb)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-p", "--profile", default=None,
                        help="Hermes profile to act on, as in 'hermes -p NAME' (default: as Hermes picks it)")
    common.add_argument("--home", type=Path, default=None, help="act on this HERMES_HOME directly")
    return common


def build_parser() -> argparse.ArgumentParser:
    from . import config_cmd, doctor, report, route, skills

    common = common_options()
    parser = argparse.ArgumentParser(prog="hermes-token-router",
                                     description="Command line of the Hermes token router plugin.")
    parser.add_argument("--version", action="version", version=f"hermes-token-router {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (route, report, doctor, config_cmd, skills):
        module.add_subcommand(sub, common)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        home, profile = resolve_home(args.profile, args.home)
    except ProfileError as exc:
        print(f"hermes-token-router: {exc}", file=sys.stderr)
        return 2
    enter(home)
    args.hermes_home, args.profile_name = home, profile
    try:
        code = args.run(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # `report | head`: the reader left; say nothing more and exit like other tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
