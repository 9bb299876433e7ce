"""hermes-token-router: route each Hermes session to the tool schemas it needs.

``register`` is the whole plugin surface Hermes sees; everything else is internal.
"""

__version__ = "0.3.0"


def register(ctx):  # resolved lazily so the CLI and the pure core import without Hermes
    from .plugin import register as _register

    return _register(ctx)


__all__ = ["register", "__version__"]
