"""Data sources (real datasets, embedded images, synthetic manifolds, folders, arrays), perturbations, image rules.

Every source is a plain function returning a numpy array: images uint8 N×C×H×W, points float32 N×D.
"""

from __future__ import annotations

from ganeval.data.datasets import (
    DatasetNotFoundError,
    celeba,
    cifar10,
    cifar100,
    data_root,
    fashion_mnist,
    mnist,
)
from ganeval.data.embedded import digits, digits_classes, patches
from ganeval.data.files import array, folder, list_images
from ganeval.data.images import to_uint8
from ganeval.data.manifolds import sphere, swiss_roll, torus
from ganeval.data.perturb import blur_radius, gaussian_blur
from ganeval.data.wordvectors import WordVectors, read_word_vectors

__all__ = [
    "to_uint8", "mnist", "fashion_mnist", "cifar10", "cifar100", "celeba", "DatasetNotFoundError",
    "data_root", "digits", "digits_classes", "patches", "torus", "sphere", "swiss_roll", "folder", "array",
    "list_images", "gaussian_blur", "blur_radius", "read_word_vectors", "WordVectors",
]
