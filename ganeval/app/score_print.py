"""What `ganeval-score` prints: the results (plain lines or the --json document), what a single value is, and its
refusals in the words of its own flags (not the Hydra keys the library messages use).
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping


def number(v: float) -> float | None:
    """A JSON-safe float (NaN -> null)."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def as_json(result: Any) -> dict[str, Any]:
    """The machine-readable document: inputs, protocol, extractor and one entry per model and metric."""
    full = result.record.config["full_sets"]
    rows = []
    for _, r in result.summary.iterrows():
        entry: dict[str, Any] = {"model": str(r["model"]), "metric": str(r["metric"])}
        if full:
            entry["value"] = float(r["mean"])
            entry.update(result.extras.get((str(r["model"]), str(r["metric"])), {}))
        else:
            entry["value"] = number(r["mean"])  # one key whatever `runs` (the mean over runs here; "mean" kept too)
            entry.update({k: number(r[k]) for k in ("mean", "std", "ci_low", "ci_high", "half_width")})
            entry["n_runs"] = int(r["n_runs"])
        if "fid_full" in r.index:
            entry["fid_full"] = number(r["fid_full"])
        rows.append(entry)
    cfg = result.record.config
    return {
        "real": {"input": result.real.arg, "rows": len(result.real)},
        "fakes": [{"model": f.name, "input": f.arg, "rows": len(f)} for f in result.fakes],
        "mode": "full sets" if full else "subsample protocol",
        "runs": cfg["runs"], "sample_size": cfg["sample_size"], "confidence": None if full else cfg["confidence"],
        "seed": cfg["seed"], "device": cfg["device"], "size": cfg.get("size"), "layout": cfg.get("layout", "auto"),
        "features": cfg["features"], "metrics": cfg["metrics"],
        **({"real_features": cfg["real_features"]} if "real_features" in cfg else {}),
        "dims": result.record.dims,
        **({"left_out": result.record.left_out} if result.record.left_out else {}),
        "interval_covers": result.record.interval_covers,
        "reference": reference_json(result.real),
        "protocol": result.record.full_set,
        "results": rows,
        "out": str(result.out) if result.out is not None else None,
    }


def time_line(result: Any, total: float) -> str:
    """Where the time went, one line: `total` seconds, then each stage's (features with its images/s, or "from the
    cache" when every set's features were read from --cache-dir)."""
    parts = []
    for name, seconds in result.stages.items():
        text = f"{name} {seconds:.1f} s"
        if name == "features":
            if result.extracted and seconds > 0:
                text += f" ({result.extracted} images at {result.extracted / seconds:.1f} images/s)"
            elif result.from_cache and not result.extracted:
                text += " (from the cache)"
        parts.append(text)
    return f"ganeval-score: {total:.1f} s in all: {', '.join(parts)}"


def reference_json(real: Any) -> dict[str, Any] | None:
    """What a reference REAL was: its layout, whether it held moments only, its preprocessing mode if stated."""
    ref = getattr(real, "reference", None)
    if ref is None:
        return None
    return {"path": ref.path, "layout": ref.layout, "moments_only": ref.moments_only, "mode": ref.mode}


def value_rows(result: Any) -> list[tuple[str, str, str]]:
    """(model, metric label, value text) per FAKE and metric, as `plain_lines` prints them: the value alone on full sets
    (IMD to its probe noise's digits, KID with its std over subsets), mean ± half-width with runs > 1; under --protocol
    the full-set FID its papers report on a row of its own."""
    from ganeval.results.tables import metric_label
    from ganeval.results.intervals import decimals_for

    full = result.record.config["full_sets"]
    extractor = result.record.extractor or None  # named as every file names it: FID, FID (clean), FD_pixels, ...
    labels = {m: metric_label(m, extractor)[0].split("×")[0] for m in map(str, result.summary["metric"])}  # raw KID
    rows = []
    for _, r in result.summary.iterrows():
        label = labels[str(r["metric"])]
        if full:
            text = single_value_text(result, r)
        else:
            d = decimals_for(float(r["half_width"]))  # the mean to its interval's precision, as report.html does
            text = (f"{r['mean']:.{d}f} ± {r['half_width']:.{d}f}  ({r['confidence']:.0%} CI over {int(r['n_runs'])} "
                    f"runs of {int(r['sample_size'])})")
        rows.append((str(r["model"]), label, text))
        if pd_notna(r.get("fid_full")):  # --protocol: the number its papers report, beside ours
            rows.append((str(r["model"]), f"{label}, full sets", f"{r['fid_full']:.6g}  (one value: all rows of each "
                         f"set, the number protocol {result.record.full_set['protocol']} reports)"))
    return rows


def moments_line(result: Any) -> str | None:
    """What the numbers are against when REAL is a moments-only reference (None otherwise)."""
    ref = getattr(result.real, "reference", None)
    if ref is None or not ref.moments_only:
        return None
    return (f"(against the moments of {result.real.arg}, fixed: "
            + ("an interval covers generated subsamples only)" if not result.record.config["full_sets"]
               else "one value, no interval)"))


def plain_lines(result: Any) -> list[str]:
    """One line per FAKE and metric: model, metric label, value (± half-width with runs > 1)."""
    rows = value_rows(result)
    width = max(len(f.name) for f in result.fakes)
    column = max([4, *(len(label) for _, label, _ in rows if not label.endswith(", full sets"))])
    lines = [f"{model:<{width}}  {label:<{column}} {text}" for model, label, text in rows]
    return lines + [line for line in [moments_line(result)] if line is not None]


def html_view(result: Any) -> str:
    """A result as a notebook shows it (`ScoreResult._repr_html_`): a table of `value_rows`, then the comparisons
    in words and the moments line, each escaped."""
    from html import escape

    cells = "".join(f"<tr><td>{escape(m)}</td><td>{escape(label)}</td><td style='text-align:left'>{escape(t)}</td></tr>"
                    for m, label, t in value_rows(result))
    notes = [*result.sentences, *[line for line in [moments_line(result)] if line is not None]]
    return ("<table><thead><tr><th>model</th><th>metric</th><th style='text-align:left'>value</th></tr></thead>"
            f"<tbody>{cells}</tbody></table>" + "".join(f"<p>{escape(n)}</p>" for n in notes))


def pd_notna(v: Any) -> bool:
    """True for a number that is not NaN (None and NaN: no value)."""
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def single_value_text(result: Any, r: Any) -> str:
    """A full-set value as printed: IMD to the digits its probe noise supports, KID with its std over subsets."""
    extra = result.extras.get((str(r["model"]), str(r["metric"])), {})
    if r["metric"] == "imd":
        return imd_text(float(r["mean"]), extra.get("se"), int(result.record.config["metrics"]["imd"]["nv"]))
    text = f"{r['mean']:.6g}"
    if "std" in extra and r["metric"] == "kid":
        fake = next(f for f in result.fakes if f.name == str(r["model"]))
        rows = {"real": len(result.real), "fake": len(fake)}
        text += kid_std_text(extra["std"], int(result.record.config["metrics"]["kid"]["subset_size"]), rows)
    elif "std" in extra:
        text += f"  (std over subsets {extra['std']:.3g})"
    return text


def significant_decimals(noise: float, value: float) -> int:
    """Decimals that keep the first significant digit of `noise` (a standard deviation): 2.3 -> 0, 0.04 -> 2.
    No noise measured: six significant digits of the value."""
    if not math.isfinite(noise) or noise <= 0:
        return max(0, 5 - math.floor(math.log10(abs(value)))) if value else 6
    return max(0, -math.floor(math.log10(noise)))


def imd_text(value: float, se: float | None, probes: int) -> str:
    """IMD on full sets with the digits its probes' standard error supports: '39.25 ± 0.053 (standard error …)'."""
    if se is None:
        return f"{value:.6g}"
    d = significant_decimals(se, value)
    return f"{value:.{d}f} ± {se:.2g}  (the standard error of its {probes} random probes)"


def kid_std_text(std: float, subset_size: int, rows: Mapping[str, int]) -> str:
    """KID's std over subsets, saying when every subset is the whole of both sets (std 0 then means nothing)."""
    if all(n == subset_size for n in rows.values()):
        return f"  (one subset = both whole sets of {subset_size}: no spread over subsets to show)"
    return f"  (std over subsets {std:.3g})"


RUNS_HINT = ("one value per metric on the full sets, no interval: for mean ± interval over subsamples use "
             "--runs 10 --sample-size M (M at most the smallest set)")


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
    (r"(?<![-.\w])metrics=(\w+)", r"--metrics \1"),
    (r"(?<![-.\w])cache_dir\b", r"--cache-dir"),
    (r"(?<![-.\w])vocab=(\d+)", r"--vocab \1"),  # ganeval.data.wordvectors' words
    (r"(?<![-.\w])vocab must (.*) \(or None for all\)", r"--vocab must \1 (or no --vocab for all)"),
    (r"\bpass a smaller vocab\b", r"pass a smaller --vocab"),
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
    from ganeval.features.missing_weights import weights_message

    error = unwrapped(error)
    if isinstance(error, WeightsNotFoundError):
        return weights_message(error, download, SCORE_WORDS)
    return in_flags(" ".join(str(error).split()))


# the words of `ganeval.features.missing_weights.weights_message` in each face
SCORE_WORDS = {"weights": "--weights FILE", "weights_arg": "--weights", "no_download": "--no-download",
               "pixels": "--features pixels"}
APP_WORDS = {"weights": "features.weights=FILE", "weights_arg": "features.weights",
             "no_download": "features.download=false", "pixels": "features=pixels"}  # the `ganeval` app's keys


def stop_line(e: BaseException, cache_dir: str | None) -> str:
    """The line for a command stopped by Ctrl-C or SIGTERM: the run loop's own (what is stored), else how to go on."""
    from ganeval.stops import Stopped, by_sigterm

    if isinstance(e, Stopped):
        return str(e)
    how = "by SIGTERM" if by_sigterm(e) else "(Ctrl-C)"
    kept = ": the feature chunks finished in --cache-dir are kept and resume" if cache_dir else ""
    return f"stopped {how} before any run was scored; rerun the same command{kept}"
