"""Row counts of the shipped datasets from their published sizes, so a dry run can compare them with sample_size
without loading anything (tests/test_configs.py checks the small ones against a real load)."""

from __future__ import annotations

from typing import Any, Mapping

DIGITS_PER_CLASS = (178, 182, 177, 183, 181, 182, 181, 179, 174, 180)  # scikit-learn's digits: 1 797 in all
TRAIN_TEST = {"mnist": (60000, 10000), "fashion_mnist": (60000, 10000), "cifar10": (50000, 10000),
              "cifar100": (50000, 10000)}
CELEBA = {"train": 162770, "valid": 19867, "test": 19962, "all": 202599}


def known_rows(target: str, options: Mapping[str, Any]) -> int | None:
    """Rows a `ganeval.data.*` node yields, from the dataset's published size; None when only its content says
    (folders, files) or the options are not plain."""
    name = target.rpartition(".")[2]
    try:
        if name == "digits":
            return sum(DIGITS_PER_CLASS)
        if name == "digits_classes":
            return sum(DIGITS_PER_CLASS[int(c)] for c in set(options.get("classes", (0, 1, 2, 3, 4))))
        if name in TRAIN_TEST:
            return TRAIN_TEST[name][0 if options.get("train", True) else 1]
        if name == "celeba":
            rows = CELEBA[str(options.get("split", "train"))]
            limit = options.get("limit")
            return min(rows, int(limit)) if limit is not None else rows
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    n = options.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) else None
