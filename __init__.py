"""Directory-plugin entry: Hermes imports this file as ``hermes_plugins.hermes_token_router``."""

from .hermes_token_router import register

__all__ = ["register"]
