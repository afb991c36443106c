"""The inputs of `ganeval-score`: each argument resolved to a set (`load_input`), classified and labelled.

Each input is resolved in this order: an existing folder, `.zip` or `.tar` (images, streamed batch by batch by
`ganeval.data.sources.ImageSource`, decoded as `ganeval.data.folder` decodes them), an existing
`.npy`/`.npz` file (`PATH.npz:KEY` picks one array of several; `ganeval.data.array`), else the name of a data
config (`ganeval/configs/data/NAME.yaml`, loaded with its defaults as `data=NAME` would be). An array is
features when it is 2-D (N×D) and images when it is 3-D or 4-D in an image layout (N×H×W, N×C×H×W, N×H×W×C with
C = 1 or 3) holding uint8 or floats in [0, 1]; anything else is refused as ambiguous.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ganeval.app import pipeline
from ganeval.protocol.api import check_finite

NOT_NAMES = ("array", "folder")  # data configs that need a path: given as paths instead


@dataclass
class InputSet:
    """One input as loaded: what was given, its label, where it came from and its array (images or features)."""

    arg: str
    name: str
    source: str  # "folder", "zip", "tar", "array" or "data config NAME"
    array: np.ndarray | None  # None for a streamed image source
    images: bool
    reference: Any = None  # the `ganeval.data.references.Reference` when the input is a reference file
    stream: Any = None  # the ganeval.data.sources.ImageSource of a folder, zip or tar (never held in memory)
    features: Any = None  # a streamed set's features when extracted before the plan (`score_sets.extract_first`)

    @property
    def shape(self) -> tuple[int, ...]:
        """The set's shape (a streamed source's from its headers)."""
        return tuple(self.stream.shape if self.stream is not None else self.array.shape)  # type: ignore[union-attr]

    @property
    def dtype(self) -> Any:
        return np.dtype(np.uint8) if self.stream is not None else self.array.dtype  # type: ignore[union-attr]

    def __len__(self) -> int:
        return int(self.shape[0])

    def describe(self) -> str:
        """'ARG (N images of H×W with C channels)' or 'ARG (N×D features)' for messages."""
        from ganeval.data.images import describe

        if self.images:
            return f"{self.arg} ({len(self)} {describe(self.shape)})"
        return f"{self.arg} ({len(self)}×{self.shape[1]} features)"


def data_names() -> list[str]:
    """The data configs a name may be (`ganeval/configs/data/*.yaml` except those that need a path)."""
    from ganeval.app.main import config_dir

    return sorted(p.stem for p in (config_dir() / "data").glob("*.yaml") if p.stem not in NOT_NAMES)


def unread_file(arg: str, file: Path) -> None:
    """Refuse a file that is neither an array nor a container of images, saying what the command reads (a single
    image file: the folder that holds it)."""
    from ganeval.data.files import IMAGE_EXTENSIONS

    suffix = file.suffix.lower()
    if suffix in (".npy", ".npz"):
        return
    if suffix in IMAGE_EXTENSIONS:
        raise ValueError(f"{arg} is one image file: give the folder that holds the images, e.g. {file.parent}")
    raise ValueError(f"{arg} is not a file ganeval-score reads: give an image folder, a .zip/.tar of images, a "
                     ".npy/.npz file (FILE.npz:KEY for one array of several) or a dataset name")


def load_input(arg: str, size: int | None = None, layout: str = "auto") -> InputSet:
    """An input argument resolved (see the module doc for the order): image files are checked from their headers and
    streamed later, arrays loaded (4-D ones read in `layout`, see `ganeval.data.images.apply_layout`); `size` resizes
    images of files to size×size. ValueError when it is none."""
    from ganeval.data.files import load_array
    from ganeval.data.images import apply_layout
    from ganeval.data.sources import ImageSource, is_streamable

    path = Path(arg).expanduser()
    file, _, key = arg.rpartition(":") if ":" in arg and not path.exists() else (arg, "", "")
    if is_streamable(arg):
        src = ImageSource(path, size=size)
        name = path.resolve().name if path.is_dir() else path.stem
        return InputSet(arg, name, src.container.kind, None, True, stream=src)
    if size is not None:
        raise ValueError(f"--size resizes image files (folders, .zip, .tar), but {arg} is not one: resize arrays "
                         "before saving them, or drop --size")
    if Path(file).expanduser().is_file():
        from ganeval.app.score_reference import reference_input

        ref = reference_input(arg, file, key)
        if ref is not None:
            return ref
        unread_file(arg, Path(file).expanduser())
        try:
            arr = load_array(Path(file).expanduser(), key or None)
        except ValueError as e:
            if "pass key=" not in str(e):
                raise
            raise ValueError(f"{e} (on the command line: {file}:KEY)") from None
        if arr.ndim == 4:
            arr = apply_layout(arr, layout, arg, "--layout nchw or --layout nhwc", strict=False)
        name = Path(file).stem + (f":{key}" if key else "")
        return classify(InputSet(arg, name, "array", arr, False))
    names = data_names()
    if arg in names:
        from omegaconf import OmegaConf

        from ganeval.app.main import config_dir

        node = OmegaConf.load(config_dir() / "data" / f"{arg}.yaml")
        arr = pipeline.instantiate(node)
        arr = arr.numpy() if hasattr(arr, "numpy") and not isinstance(arr, np.ndarray) else np.asarray(arr)
        return classify(InputSet(arg, arg, f"data config {arg}", arr, False))
    hint = "does not exist" if ("/" in arg or path.suffix) else "is not an existing folder or file"
    raise ValueError(f"{arg} {hint}, and it is not a dataset name; give an image folder, a .npy/.npz file (FILE.npz:KEY "
                     f"for one array of several) or one of: {', '.join(names)}")


def classify(s: InputSet) -> InputSet:
    """Decide images vs features by dimensions and dtype (see the module doc); ValueError when it is neither."""
    from ganeval.data.images import image_layout

    a = s.array
    if len(a) == 0:
        raise ValueError(f"{s.arg} is empty")
    if a.ndim == 2:
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
            raise ValueError(f"{s.arg} holds {a.dtype} values: features must be numbers")
        check_finite(s.arg, a)
        s.images = False
        return s
    layout_ok = True
    try:
        image_layout(a.shape)
    except ValueError:
        layout_ok = False
    if a.ndim in (3, 4) and layout_ok and a.dtype == np.uint8:
        s.images = True
        return s
    if a.ndim in (3, 4) and layout_ok and np.issubdtype(a.dtype, np.floating):
        check_finite(s.arg, a)
        lo, hi = float(a.min()), float(a.max())
        if lo >= 0.0 and hi <= 1.0:
            s.images = True
            return s
        raise ValueError(f"{s.arg} is a float array of shape {a.shape} with values in [{lo:.4g}, {hi:.4g}]: neither "
                         "images (floats must lie in [0, 1]; convert with ganeval.data.to_uint8(images, value_range=...)) "
                         "nor N×D features (reshape them to N×D)")
    raise ValueError(f"{s.arg} is an array of shape {a.shape} and dtype {a.dtype}: neither N×D features nor images "
                     "(uint8 or floats in [0, 1], N×H×W, N×C×H×W or N×H×W×C with C = 1 or 3); reshape features to N×D")


def label_sets(fakes: list[InputSet]) -> None:
    """Give the generated sets distinct model labels: their names, or the arguments where names collide."""
    from collections import Counter

    counts = Counter(s.name for s in fakes)
    for s in fakes:
        if counts[s.name] > 1:
            s.name = s.arg
    args = Counter(s.arg for s in fakes)
    twice = [a for a, n in args.items() if n > 1]
    if twice:
        raise ValueError(f"FAKE {twice[0]} is given {args[twice[0]]} times: give each generated set once")
