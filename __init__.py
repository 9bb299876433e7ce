"""Directory-plugin entry: Hermes imports this file as ``hermes_plugins.hermes_token_router``."""

try:
    from .hermes_token_router import register
except ImportError:  # imported as a bare module (a test runner in a checkout whose folder name is no identifier)
    from hermes_token_router import register

__all__ = ["register"]
