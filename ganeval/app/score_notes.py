"""What `ganeval-score` says besides its numbers: the defaults it adapts to small sets (with a note), its refusals
in the words of its own flags (not the Hydra keys the library messages use), and what a single value is.

Kept apart from `score.py`/`score_sets.py` so the command's wording lives in one place and is tested on its own.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping, MutableMapping

KID_SUBSET_DEFAULT = 1000  # kid's option table default (checked against it in the tests)


def default_kid_subset(metrics: MutableMapping[str, dict[str, Any]], sizes: Mapping[str, int], runs: int,
                       sample_size: int | None) -> str | None:
    """Without `--option kid.subset_size`, KID's subsets hold min(1000, rows scored per set): the smallest set on
    full sets (runs=1), the sample size with runs > 1. Sets it in `metrics` and returns the note to print (None when
    the default 1000 fits or the user chose a size)."""
    if "kid" not in metrics or "subset_size" in (metrics["kid"] or {}):
        return None
    rows = min(sizes.values()) if runs == 1 or sample_size is None else sample_size  # too big: refused later
    if rows >= KID_SUBSET_DEFAULT or rows < 2:
        return None  # fits, or too small for any metric (refused with its own message)
    metrics["kid"] = {**(metrics["kid"] or {}), "subset_size": rows}
    what = "the smallest set" if runs == 1 or sample_size is None else "--sample-size"
    return (f"note: KID's subsets hold {rows} rows ({what}; the default is {KID_SUBSET_DEFAULT}): KID is comparable "
            f"only with KID at the same subset size; choose it with --option kid.subset_size=N")


def whole_set_note(sizes: Mapping[str, int], runs: int, sample_size: int | None) -> str | None:
    """With runs > 1, the note for sets whose every row each run draws (sample size = the set's size): the runs then
    score the same rows of them, so an interval says nothing about other samples of those sets. None otherwise."""
    if runs < 2 or sample_size is None:
        return None
    whole = [name for name, n in sizes.items() if n == sample_size]
    if not whole:
        return None
    smaller = max(2, min(sizes.values()) // 2)
    return (f"note: --sample-size {sample_size} is every row of {' and '.join(whole)}: each run scores the same rows "
            f"of {'it' if len(whole) == 1 else 'them'}, so the intervals cover only what else varies (IMD's probes, "
            f"KID's subsets{', the other sets' if len(whole) < len(sizes) else ''}), not other samples; for "
            f"intervals over subsamples draw fewer rows, e.g. --sample-size {smaller}")


def chw(s: Any) -> tuple[str, tuple[int, int, int], bool]:
    """(argument, (C, H, W) of its images, streamed from image files) of an image `InputSet`, for `size_hint`."""
    import numpy as np

    from ganeval.data.images import to_nchw

    c, h, w = to_nchw(np.empty((1, *s.shape[1:]), np.uint8)).shape[1:]
    return s.arg, (int(c), int(h), int(w)), s.stream is not None


def size_hint(real: tuple[str, tuple[int, int, int], bool], fake: tuple[str, tuple[int, int, int], bool]) -> str:
    """', or --size N (...)' when both sets are image files (folders, zips, tars: `--size` resizes only those, and
    refuses arrays) of one channel count and REAL's images are square; '' otherwise. Each set is (argument, (C, H, W),
    streamed from files)."""
    (_, (rc, rh, rw), r_files), (_, (fc, _, _), f_files) = real, fake
    if rc != fc or not (r_files and f_files) or rh != rw:
        return ""
    return f", or --size {rh} (every image file resized to {rh}×{rh}, REAL's size)"


# Library messages name config keys (`sample_size=600`, `metrics.kid.subset_size`, `lower kid.subset_size`);
# ganeval-score's user types flags. Each pattern -> its flag spelling; applied in order.
FLAG_WORDS: tuple[tuple[str, str], ...] = (
    (r"\bmetrics\.(\w+)\.(\w+)=(\S+)", r"--option \1.\2=\3"),
    (r"\bmetrics\.(\w+)\.(\w+)", r"--option \1.\2"),
    (r"\b(?:lower|raise|set) (imd|kid|fid|\w+)\.(\w+)\b(?!=)", r"lower it with --option \1.\2=N"),
    (r"\bsample_size=(\d+)", r"--sample-size \1"),
    (r"\b(?:lower|raise) sample_size\b", r"change --sample-size"),
    (r"(?<![-.\w])sample_size\b", r"--sample-size"),
    (r"(?<![-.\w])runs=(\d+)", r"--runs \1"),
    (r"(?<![-.\w])confidence=", r"--confidence "),
    (r"^confidence\b", r"--confidence"),
    (r"^layout=(\w+) given\b", r"--layout \1 given"),
    (r"(?<![-.\w])seed=(-?\d+)", r"--seed \1"),
    (r"\bgive that pool more rows\b", r"give that set more rows"),
    (r"(?<![-.\w])results_dir=(?=\S)", r"--out "),
    (r"(?<![-.\w])results_dir\b", r"--out"),
    (r"(?<![-.\w])features\.weights=FILE\b", r"--weights FILE"),
    (r"(?<![-.\w])features=(\w+)", r"--features \1"),
    (r"\bpass overwrite=true\b", r"pass --overwrite"),
    (r"(?<![-.\w])overwrite=true\b", r"--overwrite"),
)


def in_flags(message: str) -> str:
    """A library refusal reworded for `ganeval-score`: config keys replaced by the command's flags."""
    for pattern, repl in FLAG_WORDS:
        message = re.sub(pattern, repl, message)
    return message


def refusal(error: BaseException, download: bool) -> str:
    """The one line `ganeval-score` prints for a user error: weights named by its flags, keys turned into flags."""
    from ganeval.app.errors import unwrapped
    from ganeval.features.inception import WeightsNotFoundError

    error = unwrapped(error)
    if isinstance(error, WeightsNotFoundError):
        return weights_message(error, download)
    return in_flags(" ".join(str(error).split()))


SCORE_WORDS = {"weights": "--weights FILE", "weights_arg": "--weights", "no_download": "--no-download",
               "pixels": "--features pixels"}
APP_WORDS = {"weights": "features.weights=FILE", "weights_arg": "features.weights",
             "no_download": "features.download=false", "pixels": "features=pixels"}  # the `ganeval` app's keys


def weights_message(error: BaseException, download: bool, words: Mapping[str, str] = SCORE_WORDS) -> str:
    """One line for missing FID Inception weights, naming every way out in the command's terms (`words`: its
    flags, SCORE_WORDS for ganeval-score, APP_WORDS for the ganeval app)."""
    from ganeval.features.inception import WEIGHTS_ENV, WEIGHTS_FILENAME, WEIGHTS_URL, hub_weights_path

    first = str(error).splitlines()[1:2]
    if first and "no such file" in first[0] and "not set" not in first[0]:  # a path given: only it is read
        where = first[0].strip(" -").replace("the `weights` argument", words["weights_arg"])
    else:
        got = f"download disabled ({words['no_download']})" if not download else "the download failed (offline?)"
        where = f"not in {hub_weights_path()}; {got}"
    return (f"no FID Inception weights ({where}): pass the file with {words['weights']} or set {WEIGHTS_ENV}=FILE "
            f"({WEIGHTS_FILENAME} from {WEIGHTS_URL}), or score without Inception: {words['pixels']}")


def significant_decimals(noise: float, value: float) -> int:
    """Decimals that keep the first significant digit of `noise` (a standard deviation): 2.3 -> 0, 0.04 -> 2.
    No noise measured: six significant digits of the value."""
    if not math.isfinite(noise) or noise <= 0:
        return max(0, 5 - math.floor(math.log10(abs(value)))) if value else 6
    return max(0, -math.floor(math.log10(noise)))


def imd_text(value: float, probe_std: float | None) -> str:
    """IMD on full sets with the digits its probe noise supports: '8.5 (± 2.7 over probe draws)'."""
    if probe_std is None:
        return f"{value:.6g}"
    d = significant_decimals(probe_std, value)
    return f"{value:.{d}f}  (probe noise: std {probe_std:.2g} over {PROBE_SEEDS + 1} probe draws)"


def kid_std_text(std: float, subset_size: int, rows: Mapping[str, int]) -> str:
    """KID's std over subsets, saying when every subset is the whole of both sets (std 0 then means nothing)."""
    if all(n == subset_size for n in rows.values()):
        return f"  (one subset = both whole sets of {subset_size}: no spread over subsets to show)"
    return f"  (std over subsets {std:.3g})"


from ganeval.protocol.full import PROBE_SEEDS  # noqa: E402  (what the printed digits rest on)
RUNS_HINT = ("one value per metric on the full sets, no interval: for mean ± interval over subsamples use "
             "--runs 10 --sample-size M (M at most the smallest set)")
