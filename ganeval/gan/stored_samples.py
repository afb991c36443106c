"""Samples generated elsewhere as a generator: a folder of image files, a `.npy` / `.npz` array or a word-vector file.

The `generator/samples` config group's option (`ganeval.gan.SampleGenerator`); it behaves as the others of
`ganeval.gan.generators` do (`validate()`, `sample(n, seed)`, `identity()`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ganeval.data.images import LAYOUTS, apply_layout, as_uint8_images, image_layout
from ganeval.gan.generators import _Base
from ganeval.hashing import sha256_file, sha256_folder


class SampleGenerator(_Base):
    """Samples generated elsewhere: a folder of image files, a `.npy` / `.npz` array (key `key`), or word vectors
    (`.vec`, `.vec.gz`, word2vec `.bin`: the `vocab` most frequent words' vectors as N×D points).

    Files are read by `ganeval.data.folder` / `ganeval.data.array` / `ganeval.data.read_word_vectors`. sample(n, seed) picks n of the
    stored samples without replacement from `seed` (kept in stored order), all of them when n equals
    their number; asking for more than there are is an error.
    """

    kind = "samples"

    def __init__(
        self, path: str | Path, name: str | None = None, key: str | None = None, replicas: Sequence[Any] | None = None,
        layout: str = "auto", vocab: int | None = None,
    ) -> None:
        super().__init__(name or Path(path).stem, replicas)
        self.path = Path(path)
        self.key = key
        self.vocab = vocab
        self.layout = str(layout).lower()
        if self.layout not in LAYOUTS:
            raise ValueError(f"{self.what}: layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        self._data: np.ndarray | None = None

    def _array(self, mmap: bool = False) -> np.ndarray:
        """The samples array, 4-D images read in `layout` (an ambiguous shape under auto refused, naming the option)."""
        from ganeval.data.files import load_array

        arr = load_array(self.path, self.key, mmap=mmap)
        return apply_layout(arr, self.layout, str(self.path), "+generator.layout=nchw or +generator.layout=nhwc "
                            "(+generators.NAME.layout=... for one of several)", strict=False)

    def sample_shape(self) -> tuple[int, ...]:
        """One sample's shape as `sample` returns it ((C, H, W) or (D,)), before loading the samples: an image folder's
        from its files' headers, a .npy's from its header and first row (mapped), word vectors' from the `vocab`
        rows read."""
        from ganeval.data.sources import ImageSource

        source = self._source()
        if self._data is None and source == "folder":  # not loaded yet: the headers (loaded: its array, read once)
            return tuple(int(d) for d in ImageSource(self.path).shape[1:])
        arr = self._data if self._data is not None else self._load() if source == "wordvectors" else self._array(True)
        if arr.ndim == 2 and np.issubdtype(arr.dtype, np.floating):
            return tuple(int(d) for d in arr.shape[1:])
        return tuple(int(d) for d in as_uint8_images(np.asarray(arr[:1]), self.what, 1).shape[1:])

    def _source(self) -> str:
        from ganeval.data.wordvectors import is_word_vector_file

        if self.path.is_dir():
            return "folder"
        if self.path.is_file() and is_word_vector_file(self.path):
            return "wordvectors"
        if self.vocab is not None:
            raise ValueError(f"{self.what}: vocab applies to word-vector files (.vec, .vec.gz, .bin, .bin.gz), not "
                             f"{str(self.path)!r}")
        if self.path.is_file() and self.path.suffix.lower() in (".npy", ".npz"):
            return "array"
        if not self.path.exists():
            raise ValueError(f"{self.what}: {str(self.path)!r} does not exist; expected an image folder, a .npy/.npz "
                             "file or word vectors (.vec, .bin)")
        raise ValueError(f"{self.what}: {str(self.path)!r} is neither an image folder, a .npy/.npz file nor word "
                         "vectors (.vec, .bin)")

    def validate(self) -> None:
        """Check the path and, cheaply, the layout: image headers share one size, or the array is images/points."""
        from ganeval.data import list_images

        if self._source() == "folder":
            from PIL import Image

            files = list_images(self.path)
            if not files:
                raise ValueError(f"{self.what}: folder {str(self.path)!r} holds no image files")
            sizes: dict[tuple[int, int], Path] = {}
            for f in files:
                try:
                    with Image.open(f) as im:
                        sizes.setdefault(im.size, f)
                except Exception as e:  # noqa: BLE001
                    raise ValueError(f"{self.what}: cannot read image file {f}: {e}") from e
            if len(sizes) > 1:
                raise ValueError(f"{self.what}: the images in {str(self.path)!r} differ in size: "
                                 + ", ".join(f"{p.name} is {w}×{h}" for (w, h), p in sizes.items()))  # fmt: skip
            return
        if self._source() == "wordvectors":
            self._load()  # the vocab rows read, streaming: a bad file is refused naming its line, before any work
            return
        try:
            arr = self._array(mmap=True)  # a .npy is mapped: only its header and two rows are read
        except (OSError, ValueError) as e:
            raise ValueError(f"{self.what}: {e}") from e
        if arr.ndim == 2 and np.issubdtype(arr.dtype, np.floating):
            return  # points
        if arr.ndim < 3 or len(arr) == 0:
            raise ValueError(f"{self.what}: {str(self.path)!r} holds an array of shape {arr.shape} {arr.dtype}; "
                             "expected float points N×D or images N×H×W, N×H×W×C or N×C×H×W")
        image_layout(arr.shape, self.what)  # the whole array's shape, not that of the rows checked below
        as_uint8_images(np.asarray(arr[:2]), self.what, min(2, len(arr)))

    def _load(self) -> np.ndarray:
        if self._data is None:
            from ganeval.data import folder
            from ganeval.data.wordvectors import word_vector_array

            try:
                source = self._source()
                self._data = (folder(self.path) if source == "folder" else word_vector_array(self.path, self.vocab)
                              if source == "wordvectors" else self._array())
            except (OSError, ValueError) as e:
                raise ValueError(f"{self.what}: {e}") from e
        return self._data

    def __len__(self) -> int:
        return len(self._load())

    def sample(self, n: int, seed: int, batch_size: int = 500, device: Any = None) -> np.ndarray:
        """n stored samples chosen with `seed` (uint8 N×C×H×W images, or float N×D points)."""
        self._check_request(n, seed, batch_size)
        data = self._load()
        if n > len(data):
            raise ValueError(f"{self.what}: asked for {n} samples but {str(self.path)!r} holds only {len(data)}")
        if n == len(data):
            idx = np.arange(n)
        else:
            idx = np.sort(np.random.default_rng(seed).choice(len(data), n, replace=False))
        arr = np.asarray(data[idx])
        if arr.ndim == 2 and np.issubdtype(arr.dtype, np.floating):
            return arr
        return as_uint8_images(arr, self.what, n)

    def identity(self) -> dict[str, Any]:
        ident: dict[str, Any] = {"kind": self.kind, "name": self.name, "path": str(self.path), "key": self.key}
        if self.layout != "auto":  # absent under auto: identities of before stay valid
            ident["layout"] = self.layout
        if self.vocab is not None:
            ident["vocab"] = int(self.vocab)
        if self.path.is_file():
            ident["sha256"] = sha256_file(self.path)
        elif self.path.is_dir():
            from ganeval.data import list_images

            files = list_images(self.path)
            ident.update(files=len(files), sha256=sha256_folder(self.path, files))
        return ident
