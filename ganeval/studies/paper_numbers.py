"""The IMD paper's Table 1 (`\\label{tab:gans}`), typed from the paper, for `experiment=paper_table` to show.

Source: paper/imd-paper.tex (Tsitsulin et al., ICLR 2020), the table at line ~743-791 (caption at line 750,
"IMD agrees with KID and FID across varying datasets for GAN evaluation"); it is the paper's only `table`
environment, so LaTeX numbers it Table 1. Each cell is mean ± half-width of the 99 % interval over 100 runs of
10k real vs 10k generated Inception pool3 features (paper line 827). KID is as printed, ×10³ (`PAPER_SCALE`).
`tests/test_paper_table.py` re-parses the .tex table and checks every number here.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple


class PaperCell(NamedTuple):
    """One cell of the paper's table: mean ± half-width of its 99 % interval, in the units the paper prints."""

    mean: float
    half_width: float


# the protocol the paper's numbers were made under (paper line 827 and the table's caption)
PAPER_PROTOCOL: Final[dict[str, Any]] = {"sample_size": 10000, "runs": 100, "confidence": 0.99, "features": "Inception pool3 (2048-d)"}
# printed value = our value × scale (the paper prints KID×10³)
PAPER_SCALE: Final = {"imd": 1.0, "kid": 1e3, "fid": 1.0}
# our dataset / model keys (configs/experiment/paper_table.yaml) -> the paper's column labels, in the paper's order
PAPER_DATASETS: Final = {"mnist": "MNIST", "fashion_mnist": "FashionMNIST", "cifar10": "CIFAR10", "celeba": "CelebA"}
PAPER_MODELS: Final = {"wgan": "WGAN", "wgan_gp": "WGAN-GP"}
PAPER_METRICS: Final = ("imd", "kid", "fid")  # the paper's rows, top to bottom

# (dataset, model, metric) -> the printed cell
PAPER_TABLE: Final[dict[tuple[str, str, str], PaperCell]] = {
    ("mnist", "wgan", "imd"): PaperCell(57.74, 0.47),
    ("mnist", "wgan_gp", "imd"): PaperCell(10.77, 0.42),
    ("fashion_mnist", "wgan", "imd"): PaperCell(118.14, 0.52),
    ("fashion_mnist", "wgan_gp", "imd"): PaperCell(13.45, 0.54),
    ("cifar10", "wgan", "imd"): PaperCell(18.10, 0.36),
    ("cifar10", "wgan_gp", "imd"): PaperCell(10.84, 0.42),
    ("celeba", "wgan", "imd"): PaperCell(10.11, 0.33),
    ("celeba", "wgan_gp", "imd"): PaperCell(2.84, 0.31),
    ("mnist", "wgan", "kid"): PaperCell(47.26, 0.07),
    ("mnist", "wgan_gp", "kid"): PaperCell(5.53, 0.03),
    ("fashion_mnist", "wgan", "kid"): PaperCell(119.93, 0.14),
    ("fashion_mnist", "wgan_gp", "kid"): PaperCell(25.49, 0.07),
    ("cifar10", "wgan", "kid"): PaperCell(93.89, 0.09),
    ("cifar10", "wgan_gp", "kid"): PaperCell(59.59, 0.09),
    ("celeba", "wgan", "kid"): PaperCell(217.28, 0.14),
    ("celeba", "wgan_gp", "kid"): PaperCell(92.71, 0.08),
    ("mnist", "wgan", "fid"): PaperCell(31.75, 0.07),
    ("mnist", "wgan_gp", "fid"): PaperCell(8.95, 0.03),
    ("fashion_mnist", "wgan", "fid"): PaperCell(152.44, 0.12),
    ("fashion_mnist", "wgan_gp", "fid"): PaperCell(35.31, 0.07),
    ("cifar10", "wgan", "fid"): PaperCell(101.43, 0.09),
    ("cifar10", "wgan_gp", "fid"): PaperCell(80.65, 0.09),
    ("celeba", "wgan", "fid"): PaperCell(205.63, 0.09),
    ("celeba", "wgan_gp", "fid"): PaperCell(85.55, 0.08),
}


def paper_better(dataset: str, metric: str) -> str:
    """The model the paper's numbers rank better (lower mean) on `dataset` × `metric`: 'wgan_gp' in every cell."""
    a, b = (PAPER_TABLE[(dataset, m, metric)].mean for m in PAPER_MODELS)
    return "wgan" if a < b else "wgan_gp"
