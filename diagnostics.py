#!/usr/bin/env python3
"""The doctor, for a directory install: ``python diagnostics.py [-p PROFILE] [--home DIR]
[--json] [--probe]`` is ``python -m hermes_token_router doctor`` with the same flags
(exit 0: a routing path exists; 2: it does not). Run it with the Python Hermes runs on;
if that is the wrong one, it names the right one.

Without ``-p``/``--home`` and without ``HERMES_HOME``, a copy inside
``<home>/plugins/hermes-token-router/`` inspects the home it is installed in.
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
_chosen = any(a in ("-p", "--profile", "--home") or a.startswith(("--profile=", "--home=")) for a in sys.argv[1:])
if not os.environ.get("HERMES_HOME") and HERE.parent.name == "plugins" and not _chosen:
    os.environ["HERMES_HOME"] = str(HERE.parent.parent)

from hermes_token_router.cli.doctor import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
