"""The inputs of `ganeval-score`: each argument resolved to a set (`load_input`), classified and labelled, and
the reference files a REAL may be (pytorch-fid/TTUR, clean-fid, EDM2, ADM, ganeval's own), checked against the
extractor before any feature is extracted.

Each input is resolved in this order: an existing folder, `.zip` or `.tar` (images, streamed batch by batch by
`ganeval.data.sources.ImageSource`, decoded as `ganeval.data.folder` decodes them), a reference file (recognised
by its keys), an existing `.npy`/`.npz` file (`PATH.npz:KEY` picks one array of several; `ganeval.data.array`),
else the name of a data config (`ganeval/configs/data/NAME.yaml`, loaded with its defaults as `data=NAME` would
be). An array is features when it is 2-D (N×D) and images when it is 3-D or 4-D in an image layout (N×H×W,
N×C×H×W, N×H×W×C with C = 1 or 3) holding uint8 or floats in [0, 1]; anything else is refused as ambiguous.

A moments-only reference (mu, sigma) serves FID/FD alone (metrics that need the real rows are refused, naming the
file that would serve); a reference with features (ganeval's, clean-fid's `_kid.npz`) serves every metric; an ADM
batch is its images.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ganeval.app import pipeline
from ganeval.data.references import Moments, Reference, ReferenceError, read_reference, refuse_moment_key
from ganeval.hashing import cut_short_form, shown_extractor
from ganeval.protocol.api import check_finite


NOT_NAMES = ("array", "folder", "wordvectors")  # data configs that need a path: given as paths instead


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
    features: Any = None  # a streamed set's features when extracted before the plan (`ganeval.app.scoring.extract_first`)
    labelled: bool = False  # its name is the label the user gave (a key of `score`'s fakes dict), kept as given
    said: str | None = None  # an in-memory input: how the Python caller wrote it (real, fakes, fakes[0], fakes['a'])

    @property
    def shape(self) -> tuple[int, ...]:
        """The set's shape (a streamed source's from its headers)."""
        return tuple(self.stream.shape if self.stream is not None else self.array.shape)  # type: ignore[union-attr]

    @property
    def dtype(self) -> Any:
        return np.dtype(np.uint8) if self.stream is not None else self.array.dtype  # type: ignore[union-attr]

    def __len__(self) -> int:
        return int(self.shape[0])

    def contents(self) -> str:
        """'N images of H×W with C channels' or 'N×D features'."""
        from ganeval.data.images import describe

        return f"{len(self)} {describe(self.shape)}" if self.images else f"{len(self)}×{self.shape[1]} features"

    def describe(self) -> str:
        """'ARG (N images of H×W with C channels)' or 'ARG (N×D features)' for messages."""
        return f"{self.arg} ({self.contents()})"

    def named(self, real: bool) -> str:
        """The set in a message: 'REAL ARG' / 'FAKE ARG' as on the command line (`python_words` writes REAL as real
        and FAKE as fakes for a Python caller); an in-memory input as the caller wrote it (real, fakes['a'])."""
        return self.said if self.said is not None else f"{'REAL' if real else 'FAKE'} {self.arg}"


def data_names() -> list[str]:
    """The data configs a name may be (`ganeval/configs/data/*.yaml` except those that need a path)."""
    from ganeval.app.paths import config_dir

    return sorted(p.stem for p in (config_dir() / "data").glob("*.yaml") if p.stem not in NOT_NAMES)


def unread_file(arg: str, file: Path) -> None:
    """Refuse a file that is neither an array nor a container of images, saying what the command reads (a single
    image file: the folder that holds it)."""
    from ganeval.data.files import IMAGE_EXTENSIONS

    from ganeval.data.wordvectors import is_word_vector_file

    suffix = file.suffix.lower()
    if suffix in (".npy", ".npz") or is_word_vector_file(file):
        return
    if suffix in IMAGE_EXTENSIONS:
        raise ValueError(f"{arg} is one image file: give the folder that holds the images, e.g. {file.parent}")
    raise ValueError(f"{arg} is not a file ganeval-score reads: give an image folder, a .zip/.tar of images, a "
                     ".npy/.npz file (FILE.npz:KEY for one array of several) or a dataset name")


def size_refusal(arg: str) -> ValueError:
    """--size given with an input that exists but is not image files (an array, a reference, a dataset name)."""
    return ValueError(f"--size resizes image files (folders, .zip, .tar), but {arg} is not one: resize arrays "
                      "before saving them, or drop --size")


def load_input(arg: str, size: int | None = None, layout: str = "auto", vocab: int | None = None) -> InputSet:
    """An input argument resolved (see the module doc for the order): image files are checked from their headers and
    streamed later, arrays loaded (4-D ones read in `layout`, see `ganeval.data.images.apply_layout`); `size` resizes
    images of files to size×size; `vocab` reads the most frequent words of a word-vector file (.vec, .vec.gz, .bin).
    ValueError when it is none."""
    from ganeval.data.files import load_array
    from ganeval.data.images import apply_layout
    from ganeval.data.sources import ImageSource, is_streamable
    from ganeval.data.wordvectors import is_word_vector_file

    if vocab is not None and not is_word_vector_file(arg):
        raise vocab_refusal(arg)
    path = Path(arg).expanduser()
    file, _, key = arg.rpartition(":") if ":" in arg and not path.exists() else (arg, "", "")
    if is_streamable(arg):
        src = ImageSource(path, size=size)
        name = path.resolve().name if path.is_dir() else path.stem
        return InputSet(arg, name, src.container.kind, None, True, stream=src)
    if Path(file).expanduser().is_file():
        if size is not None:  # after the path's own checks: a single image file is named as such
            from ganeval.data.files import IMAGE_EXTENSIONS

            if Path(file).suffix.lower() in IMAGE_EXTENSIONS:
                unread_file(arg, Path(file).expanduser())
            raise size_refusal(arg)
        words = word_vector_input(arg, vocab)
        if words is not None:
            return words
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
        if size is not None:
            raise size_refusal(arg)
        from omegaconf import OmegaConf

        from ganeval.app.paths import config_dir

        node = OmegaConf.load(config_dir() / "data" / f"{arg}.yaml")
        arr = pipeline.instantiate(node)
        arr = arr.numpy() if hasattr(arr, "numpy") and not isinstance(arr, np.ndarray) else np.asarray(arr)
        return classify(InputSet(arg, arg, f"data config {arg}", arr, False))
    hint = "does not exist" if ("/" in arg or path.suffix) else "is not an existing folder or file"
    raise ValueError(f"{arg} {hint}, and it is not a dataset name; give an image folder, a .npy/.npz file (FILE.npz:KEY "
                     f"for one array of several) or one of: {', '.join(names)}")


def word_vector_input(arg: str, vocab: int | None) -> InputSet | None:
    """A word-vector file (.vec, .vec.gz, .bin; `ganeval.data.wordvectors`) as an N×D feature set of its `vocab` most
    frequent words (all of them when None); None for another file."""
    from ganeval.data.wordvectors import is_word_vector_file, read_word_vectors

    if not is_word_vector_file(arg):
        return None
    wv = read_word_vectors(arg, vocab)
    name = Path(arg).name
    name = name[: -len(next(s for s in (".vec.gz", ".bin.gz", ".vec", ".bin") if name.lower().endswith(s)))]
    return InputSet(arg, name, "word vectors", wv.vectors, False)


def vocab_refusal(arg: str) -> ValueError:
    """--vocab given with an input that is not a word-vector file."""
    return ValueError(f"--vocab reads the most frequent words of a word-vector file (.vec, .vec.gz, .bin), but {arg} "
                      "is not one: drop --vocab")


def given_input(obj: Any, label: str, size: int | None = None, layout: str = "auto", n_generated: int | None = None,
                seed: int = 0, vocab: int | None = None) -> InputSet:
    """An input given from Python (`ganeval.score`): a path or dataset name as on the command line (`load_input`), a
    numpy array or torch tensor (images or N×D features, classified as a loaded array is), or a generator (a
    callable `fn(n, seed)` as the app's `generator=callable` calls it, or an object with `sample(n, seed)`), drawn
    once for `n_generated` rows with `seed`; `label` names it in messages and results."""
    if isinstance(obj, (str, os.PathLike)):
        return load_input(os.fspath(obj), size, layout, vocab)
    if vocab is not None:
        raise vocab_refusal(label)
    if size is not None:
        raise ValueError(f"--size resizes image files (folders, .zip, .tar), but {label} is an in-memory input: "
                         "resize it first, or drop --size")
    if callable(obj) or callable(getattr(obj, "sample", None)):
        arr, source = generated(obj, label, layout, n_generated, seed), "generator"
    else:
        arr, source = in_memory(obj, label), "array"
    if arr.ndim == 4:
        from ganeval.data.images import apply_layout

        arr = apply_layout(arr, layout, label, "--layout nchw or --layout nhwc", strict=False)
    return classify(InputSet(label, label, source, arr, False))


def fake_inputs(fakes: Any) -> tuple[list[str | None], list[Any], list[str]]:
    """(labels, inputs, how the caller writes each) of `score`'s `fakes`: one input (`fakes`), a list of them (no
    labels; `fakes[0]`) or a dict label -> input (`fakes['a']`)."""
    if isinstance(fakes, Mapping):
        bad = [k for k in fakes if not isinstance(k, str) or not k]
        if bad:
            raise ValueError(f"fakes: a dict's keys label the generated sets and must be non-empty strings, got {bad[0]!r}")
        return list(fakes), list(fakes.values()), [f"fakes[{k!r}]" for k in fakes]
    if isinstance(fakes, (list, tuple)):
        return [None] * len(fakes), list(fakes), [f"fakes[{i}]" for i in range(len(fakes))]
    return [None], [fakes], ["fakes"]


def in_memory(obj: Any, label: str) -> np.ndarray:
    """A numpy array, or a torch tensor copied to the host; ValueError naming what an input may be otherwise."""
    from ganeval.common import check_plain

    check_plain(obj, label)
    if isinstance(obj, np.ndarray):
        return obj
    if type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "detach"):
        return obj.detach().cpu().numpy()
    raise ValueError(f"{label} is a {type(obj).__name__}: give a folder, .zip/.tar, .npy/.npz or reference file path, "
                     "a dataset name, a numpy array, a torch tensor, or a generator fn(n, seed) with n_generated=N")


def generated(obj: Any, label: str, layout: str, n_generated: int | None, seed: int) -> np.ndarray:
    """`n_generated` samples of a generator drawn with `seed` (checked and laid out by `ganeval.gan.generators`): a
    callable's 2-D output is N×D feature rows, any other images, as a given array is classified (`classify`)."""
    if n_generated is None:
        raise ValueError(f"{label} is a generator: give n_generated=N, the number of samples to draw from it")
    if isinstance(n_generated, bool) or not isinstance(n_generated, int) or n_generated < 2:
        raise ValueError(f"n_generated must be an integer of at least 2, got {n_generated!r}")
    if not callable(getattr(obj, "sample", None)):
        from ganeval.gan.generators import CallableGenerator

        obj = CallableGenerator(obj, name=label, layout=layout, points=None)  # rows or images, as an array is read
    return np.asarray(obj.sample(n_generated, seed))


def classify(s: InputSet) -> InputSet:
    """Decide images vs features by dimensions and dtype (see the module doc); ValueError when it is neither."""
    from ganeval.data.images import image_layout

    a = s.array
    assert a is not None  # every caller gives an array in memory
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
        from ganeval.data.images import unit_range_text

        raise ValueError(f"{s.arg} is a float array of shape {a.shape} with values in {unit_range_text(lo, hi)}: neither "
                         "images (floats must lie in [0, 1]; convert with ganeval.data.to_uint8(images, value_range=...)) "
                         "nor N×D features (reshape them to N×D)")
    raise ValueError(f"{s.arg} is an array of shape {a.shape} and dtype {a.dtype}: neither N×D features nor images "
                     "(uint8 or floats in [0, 1], N×H×W, N×C×H×W or N×H×W×C with C = 1 or 3); reshape features to N×D")


def label_sets(fakes: list[InputSet]) -> None:
    """Give the generated sets distinct model labels: the labels given, else their names, or their arguments where
    names collide or a name is "real" (REAL's label in the results: its row count and dimension). A label left
    "real" or shared is refused, naming it."""
    from collections import Counter

    args = Counter(s.arg for s in fakes)
    twice = [a for a, n in args.items() if n > 1]
    if twice:
        raise ValueError(f"FAKE {twice[0]} is given {args[twice[0]]} times: give each generated set once")
    counts = Counter(s.name for s in fakes)
    for s in fakes:
        if not s.labelled and (counts[s.name] > 1 or s.name == "real"):
            s.name = s.arg
    if any(s.name == "real" for s in fakes):
        raise ValueError("a generated set is labelled 'real', REAL's label in the results: give it another label "
                         "(on the command line, another path to it, e.g. ./real)")
    shared = [name for name, n in Counter(s.name for s in fakes).items() if n > 1]
    if shared:
        raise ValueError(f"two generated sets are labelled {shared[0]!r}: give each its own label")


LAYOUT_NAMES = {"ganeval": "ganeval reference", "pytorch-fid": "pytorch-fid statistics", "clean-fid": "clean-fid statistics",
                "clean-fid-kid": "clean-fid KID features", "adm": "ADM reference batch", "edm2": "EDM2 reference"}


def reference_input(arg: str, file: str, key: str) -> InputSet | None:
    """The input of a reference file (None: not a reference layout, load it as an array); `FILE:mu` refused."""
    if key:
        refuse_moment_key(file, key)
        return None
    ref = read_reference(Path(file).expanduser())
    if ref is None:
        return None
    name, source = Path(file).stem, LAYOUT_NAMES[ref.layout]
    if ref.images is not None:
        return classify(InputSet(arg, name, source, ref.images, True, reference=ref))
    if ref.features is not None:
        return classify(InputSet(arg, name, source, ref.features, False, reference=ref))
    dim = next(iter(ref.moments.values())).dim
    return InputSet(arg, name, source, np.empty((0, dim), np.float32), False, reference=ref)


def precomputed(s: InputSet) -> bool:
    """Whether an input is a reference's features (used as they are, not extracted)."""
    return s.reference is not None and s.reference.features is not None


def refuse_fake_references(fakes: list[InputSet]) -> None:
    """A statistics file cannot be a generated set: its rows are not samples."""
    for f in fakes:
        if f.reference is not None and f.reference.moments_only:
            raise ReferenceError(f"FAKE {f.arg} is a {LAYOUT_NAMES[f.reference.layout]} file (moments only): generated "
                                 "sets are scored from their samples; give it as REAL, the generated images as FAKE")


def extractor_mode(extractor: Any) -> str | None:
    """The extractor's preprocessing mode (Inception: legacy_pytorch by default; DINOv2: pil), None for others."""
    return getattr(extractor, "resize_mode", None)


def reference_moments(ref: Reference, extractor: Any, arg: str) -> Moments:
    """The reference's moments for this extractor's feature space (EDM2: fid -> inception, fd_dinov2 -> dinov2)."""
    name = extractor.name
    if name in ref.moments:
        return ref.moments[name]
    if name == "identity" and len(ref.moments) == 1:
        return next(iter(ref.moments.values()))
    have = ", ".join(ref.moments)
    raise ReferenceError(f"REAL {arg} holds moments of {have} features, not {name}'s: give --features "
                         f"{next(iter(ref.moments)) if len(ref.moments) == 1 else 'inception or dinov2'} (and images as FAKE)")


def check_reference(ref: Reference, arg: str, extractor: Any, metrics: list[str], dim: int | None) -> None:
    """Refuse, before extraction, a reference that cannot serve: other dimension, other preprocessing mode, other
    extractor identity (ganeval's), or metrics needing real rows against moments alone."""
    if ref.images is not None:
        return  # the real images themselves: extracted like any set
    if ref.moments_only:
        need = [m for m in metrics if m != "fid"]
        if need:
            raise ReferenceError(
                f"{', '.join(m.upper() for m in need)} need the real set's features, but REAL {arg} holds only moments "
                "(mu, sigma), which serve FID/FD alone: give --metrics fid, or as REAL the real images, a ganeval "
                "reference written by `ganeval-score --save-ref REF.npz REAL_IMAGES` (features and moments), or for "
                "KID clean-fid's matching _kid.npz")
        got = reference_moments(ref, extractor, arg).dim
    else:
        got = int(ref.features.shape[1])  # type: ignore[union-attr]
    if dim is not None and got != dim:  # None: an extractor whose dimension shows only once it runs
        raise ReferenceError(f"REAL {arg} holds {got}-d statistics but --features {extractor.name} gives {dim}-d "
                             "features: the file was made by another extractor (or block); choose the matching "
                             "--features/--dims or another reference")
    mode = extractor_mode(extractor)
    if ref.mode is not None and mode is not None and ref.mode != mode and extractor.name == (ref.space or "inception"):
        raise ReferenceError(f"REAL {arg} was made with the '{ref.mode}' preprocessing but the features would be made "
                             f"with '{mode}': add --resize {ref.mode} (mixing them moves FID by whole points)")
    if ref.layout == "ganeval" and extractor.name != "identity":
        made = (ref.meta.get("extractor") or {})
        now = extractor.identity()
        diff = sorted(k for k in made.keys() | now.keys() if not same_made(k, made.get(k), now.get(k), ref.meta))
        if diff:
            made, now = shown_extractor(made), shown_extractor(now)
            raise ReferenceError(f"REAL {arg} was made by another extractor than --features {extractor.name} "
                                 f"({', '.join(f'{k}: {made.get(k)!r} vs {now.get(k)!r}' for k in diff[:3])}): give "
                                 "the same --features/--dims/--resize/--weights, or write the reference again")


def same_made(key: str, made: Any, now: Any, meta: dict[str, Any]) -> bool:
    """Whether a reference's recorded extractor field is the current form's: equal, or its "weights" as older versions recorded
    it (cut to 8/16 hex digits, a prefix of the full SHA-256; the full `weights_sha256` beside it, when there, equal)."""
    if key != "weights" or made == now:
        return bool(made == now)
    return cut_short_form(made, now) and meta.get("weights_sha256") in (None, now)
