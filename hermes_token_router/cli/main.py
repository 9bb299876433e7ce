"""Argument parsing and dispatch: one parser, a shared ``-p/--profile``/``--home`` on every
subcommand, and the profile's HERMES_HOME set before any Hermes import.

Why one place: every subcommand must act on the same home ``hermes -p`` would, and the
output must survive ``| head`` (a closed pipe ends the command quietly, not in a traceback).

The same subcommands hang under Hermes's own command line as ``hermes [-p PROFILE]
token-router ...`` (``add_to_hermes`` / ``run_from_hermes``, registered with
``ctx.register_cli_command``). That is the handle a user of Hermes's installer has: it puts
only ``hermes`` on PATH (a link into its own virtualenv), so no ``python`` on PATH can import
Hermes or the plugin's dependencies. ``python -m hermes_token_router`` stays for an install
Hermes cannot load.
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


HERMES_SUBCOMMAND = "token-router"
HERMES_HELP = "the token router plugin: route, report, doctor, config, skills"


def add_subcommands(parser: argparse.ArgumentParser, dest: str) -> None:
    from . import config_cmd, doctor, report, route, skills

    common = common_options()
    parser.add_argument("--version", action="version", version=f"hermes-token-router {__version__}")
    sub = parser.add_subparsers(dest=dest, required=True)
    for module in (route, report, doctor, config_cmd, skills):
        module.add_subcommand(sub, common)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hermes-token-router",
                                     description="Command line of the Hermes token router plugin.")
    add_subcommands(parser, "command")
    return parser


def add_to_hermes(parser: argparse.ArgumentParser) -> None:
    """``setup_fn`` of ``hermes token-router``. The subcommand lands in its own ``dest``:
    Hermes reads ``args.command`` after parsing, and it must stay ``token-router``."""
    add_subcommands(parser, "token_router_command")


def run_from_hermes(args: argparse.Namespace) -> None:
    """``handler_fn`` of ``hermes token-router``. Hermes ignores a handler's return value,
    so a non-zero code (the doctor's 2) leaves through ``SystemExit``."""
    code = dispatch(args)
    if code:
        sys.exit(code)


def main(argv: Optional[List[str]] = None) -> int:
    return dispatch(build_parser().parse_args(argv))


def dispatch(args: argparse.Namespace) -> int:
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
