"""Image sources that stream batches: folders (recursive), `.zip` and `.tar` archives, each with a content identity.

`ImageSource(path, size=None)` checks the files from their headers and the archive index (no decoding), then
yields uint8 N×C×H×W batches through a DataLoader; its decoded pixels equal `ganeval.data.folder`'s, in the same
order, and so do its content hashes (existing feature caches and results stay valid).
"""

from __future__ import annotations

from ganeval.data.sources.containers import Container, open_container
from ganeval.data.sources.images import ImageSource

__all__ = ["ImageSource", "Container", "open_container", "is_streamable"]


def is_streamable(path: str) -> bool:
    """True for an existing folder, `.zip` or `.tar` file (what `ImageSource` reads)."""
    from pathlib import Path

    p = Path(path).expanduser()
    return p.is_dir() or (p.is_file() and p.suffix.lower() in (".zip", ".tar"))
