"""The pixels extractor's `max_size` (issue #39): images with a side over it are resized to max_size² (PIL's
bilinear, antialiased), smaller ones kept as they are; the option is part of the identity only when set."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from ganeval.features import PixelsExtractor, extract


def pil_bilinear(x: np.ndarray, side: int) -> np.ndarray:
    """Each channel of uint8 N×C×H×W images as floats in [0, 1] resized by PIL (mode F, bilinear), flattened."""
    return np.stack([np.stack([np.asarray(Image.fromarray(im[c].astype(np.float32) / 255, mode="F")
                                          .resize((side, side), Image.BILINEAR)) for c in range(im.shape[0])])
                     for im in x]).reshape(len(x), -1)


def test_larger_images_are_resized_to_max_size_as_pil_does() -> None:
    x = np.random.default_rng(0).integers(0, 256, (3, 3, 256, 200), dtype=np.uint8)  # non-square, 256 > 32
    got = extract(x, "pixels", max_size=32, progress=False)
    assert got.shape == (3, 32 * 32 * 3)
    np.testing.assert_allclose(got, pil_bilinear(x, 32), atol=1e-6)
    assert PixelsExtractor(max_size=32).side(256, 200) == 32 and PixelsExtractor(max_size=32).side(32, 20) is None


@pytest.mark.parametrize("shape", [(1, 8, 8), (3, 32, 32), (3, 20, 32)])
def test_images_within_max_size_are_kept_as_they_are(shape: tuple[int, int, int]) -> None:
    x = np.random.default_rng(1).integers(0, 256, (4, *shape), dtype=np.uint8)
    got = extract(x, "pixels", max_size=32, progress=False)
    np.testing.assert_array_equal(got, (torch.from_numpy(x).float() / 255).reshape(4, -1).numpy())
    assert got.shape[1] == int(np.prod(shape))


def test_max_size_is_in_the_identity_only_when_set() -> None:
    """Set, it keys the cache and the record; unset, the identity is what it always was (stored runs and cache
    entries of native pixels keep their keys)."""
    assert PixelsExtractor().identity() == {"name": "pixels", "size": None, "channels": None, "scale": "x/255"}
    assert PixelsExtractor(max_size=32).identity()["max_size"] == 32
    assert PixelsExtractor(max_size=32).identity() != PixelsExtractor(max_size=64).identity()


@pytest.mark.parametrize("kw, match", [({"max_size": 0}, "max_size must be a positive int"),
                                        ({"max_size": True}, "max_size must be a positive int"),
                                        ({"size": 8, "max_size": 32}, "not both")])
def test_bad_options_refused(kw: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        PixelsExtractor(**kw)  # type: ignore[arg-type]
