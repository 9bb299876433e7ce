#!/usr/bin/env python3
"""Does the installed Hermes give hermes-token-router a routing path? (exit 0 yes, 2 no)

Run it with the Python Hermes runs on, from a checkout or from the directory install
(``$HERMES_HOME/plugins/hermes-token-router/``):

    python diagnostics.py            # plain text
    python diagnostics.py --json     # one JSON object
    python diagnostics.py --probe    # plus one real offline turn against a local stub model

The logic lives in ``hermes_token_router/diagnose.py``; this file only finds it.
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
# Run from a directory install without HERMES_HOME: inspect the home this copy lives in.
if not os.environ.get("HERMES_HOME") and HERE.parent.name == "plugins" and "--home" not in sys.argv:
    os.environ["HERMES_HOME"] = str(HERE.parent.parent)

from hermes_token_router.diagnose import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
