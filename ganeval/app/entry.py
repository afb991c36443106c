"""The `ganeval` command's entry point: the Hydra app, or one line naming the extra that installs Hydra.

The core install (`pip install ganeval`: the metrics, `ganeval.score`, `ganeval-score`, the training-loop metrics)
holds no Hydra; the config-driven app comes with `pip install 'ganeval[app]'`.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Run `ganeval` (`ganeval.app.main.main`) where Hydra is installed; else say how to install it, exit 1."""
    try:
        import hydra  # noqa: F401
    except ImportError:
        print("ganeval: the config-driven app needs Hydra, an optional dependency: pip install 'ganeval[app]' "
              "(ganeval-score and the Python API work without it)", file=sys.stderr)
        return 1
    from ganeval.app.main import main as app

    app()
    return 0
