"""The plugin's command line: ``hermes-token-router`` (pip install) or
``python -m hermes_token_router`` (from a directory install or a checkout).

    route TEXT           the routing decision for a message (rules, then the classifier)
    report               what the router saved, from the profile's ledger
    doctor [--probe]     does this Hermes and this profile give the router a routing path?
    config [--set K=V]   show or change the profile's own settings file
    skills build|match|trim

Every subcommand takes ``-p/--profile`` (and ``--home DIR``) and acts on that profile's
HERMES_HOME, resolved the way ``hermes -p`` resolves it.
"""

from .main import main

__all__ = ["main"]
