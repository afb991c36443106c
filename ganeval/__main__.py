"""`python -m ganeval`: the `ganeval` command (see `ganeval.app.main`; `ganeval.app.entry` without Hydra)."""

import sys

from ganeval.app.entry import main

if __name__ == "__main__":
    sys.exit(main())
