"""The interpretability figure: normalised heat traces of several datasets over t, with bands over runs.

Run r subsamples `sample_size` rows of each dataset's features with `numpy.random.default_rng([seed, r])`
and computes its heat trace on a log grid of t, by `trace_method`: "exact" (dense eigendecomposition,
N ≤ 10 000) or "slq" (metrics.imd.m Lanczos steps, probes from the same generator). IMD's m = 10 is biased
at large t (−27 % at t = 100, N = 1000: scripts/heat_trace_accuracy.py), so the figure's default is exact.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from ganeval.app import pipeline
from ganeval.app.plan import Plan
from ganeval.protocol import RowSpec, Settings, as_array, run_loop, share
from ganeval.protocol.api import unique_names
from ganeval.protocol.draws import draw_rows, run_generator
from ganeval.results import t_interval

if TYPE_CHECKING:
    from ganeval.metrics.registry import Metrics

TRACE_METHODS = ("exact", "slq")
SCALE = 1e6  # heat_trace returns normalised traces ×1e6

INPUTS = ("datasets", "features")  # the config keys it reads inputs from (its plan)
# the files it may write into results_dir (its plan lists them)
OUTPUTS = ("runs.csv", "runs.meta.json", "summary.csv", "summary.json", "accuracy.csv", "table.md", "verdict.md",
           "heat_traces.png", "report.html")


@dataclass
class HeatTraceTask:
    """Callable run r -> rows (run, data, t, metric='heat_trace', value) for every dataset."""

    sets: dict[str, Any]
    t: np.ndarray
    settings: Settings
    method: str = "exact"

    def __call__(self, r: int) -> list[dict[str, Any]]:
        from ganeval.metrics import heat_trace

        s = self.settings
        rows: list[dict[str, Any]] = []
        for name, feats in self.sets.items():
            x = as_array(feats)
            rng = run_generator(s.seed, r)
            sub = np.asarray(x[draw_rows(len(x), s.sample_size, rng)])
            h = heat_trace(sub, t=self.t, seed=rng, device=s.device, method=self.method, **cast("Metrics", s.metrics)["imd"])
            rows += [{"run": r, "data": name, "t": float(t), "metric": "heat_trace", "value": float(v)}
                     for t, v in zip(self.t, h)]
        return rows

    def row_spec(self) -> RowSpec:
        """One row per dataset and t."""
        return RowSpec(tuple({"data": name, "t": float(t)} for name in self.sets for t in self.t), ("heat_trace",))

    def shared(self, tmpdir: str) -> "HeatTraceTask":
        """A copy whose arrays are memory-mapped `.npy` files under `tmpdir` (for worker processes)."""
        sets = {name: share(a, os.path.join(tmpdir, f"h{i}.npy")) for i, (name, a) in enumerate(self.sets.items())}
        return HeatTraceTask(sets, self.t, self.settings, self.method)


def t_grid(cfg: Any) -> np.ndarray:
    """`n_t` log-spaced temperatures on [t_min, t_max]."""
    lo, hi, n = float(cfg.t_min), float(cfg.t_max), int(cfg.n_t)
    if not (0 < lo < hi) or n < 2:
        raise ValueError(f"need 0 < t_min < t_max and n_t ≥ 2, got t_min={lo}, t_max={hi}, n_t={n}")
    return np.logspace(np.log10(lo), np.log10(hi), n)


def check_trace_method(cfg: Any, sample_size: int) -> str:
    """`trace_method` checked before any work: "exact" (N ≤ EXACT_MAX_N) or "slq"."""
    from ganeval.metrics.imd import EXACT_MAX_N

    method = cfg.get("trace_method")
    if method not in TRACE_METHODS:
        raise ValueError(f"trace_method must be one of {TRACE_METHODS}, got {method!r}")
    if method == "exact" and sample_size > EXACT_MAX_N:
        raise ValueError(f"trace_method=exact needs a dense {sample_size}×{sample_size} eigendecomposition per run; it "
                         f"is allowed for sample_size ≤ {EXACT_MAX_N}: use trace_method=slq (with metrics.imd.m Lanczos "
                         "steps) or a smaller sample_size")
    return str(method)


def summarize_traces(rows: pd.DataFrame, confidence: float, sample_size: int, method: str = "exact",
                     steps: int | None = None) -> pd.DataFrame:
    """Per dataset and t: mean, std and Student-t interval of the trace over runs, with the trace method
    (and its Lanczos steps for slq)."""
    out = []
    for (name, t), g in rows.groupby(["data", "t"], sort=False):
        out.append({"data": name, "t": t, "metric": "heat_trace", **t_interval(g["value"].to_numpy(), confidence),
                    "sample_size": sample_size, "confidence": confidence, "trace_method": method,
                    "lanczos_steps": steps if method == "slq" else None})
    return pd.DataFrame(out)


def nearest_t(grid: np.ndarray, wanted: Any) -> list[float]:
    """The grid points nearest (in log t) to each wanted temperature inside the grid's range, without repeats."""
    g = np.asarray(grid, dtype=np.float64)
    picked = [float(g[np.argmin(np.abs(np.log(g) - np.log(float(w))))]) for w in wanted
              if g.min() <= float(w) <= g.max()]
    return list(dict.fromkeys(picked))


def trace_table(summary: pd.DataFrame, ts: list[float], title: str, protocol: str) -> str:
    """table.md: the trace of each dataset at a few t, mean ± half-width (units of 10⁶, as plotted)."""
    head = "| data | " + " | ".join(f"t = {t:.3g}" for t in ts) + " |"
    lines = [f"# {title}", "", protocol, "", head, "|---" * (len(ts) + 1) + "|"]
    for name, g in summary.groupby("data", sort=False):
        cells = []
        for t in ts:
            row = g[np.isclose(g["t"], t)].iloc[0]
            cells.append(f"{row['mean'] / SCALE:.4f} ± {row['half_width'] / SCALE:.4f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def accuracy_check(sets: dict[str, Any], t: np.ndarray, settings: Settings, steps: list[int]) -> pd.DataFrame:
    """Per dataset, on run 0's subsample: the relative bias of m-step SLQ against the exact trace at every t,
    for each m in `steps` (the Lanczos part, per probe against the exact quadratic form of the same probe, so
    the probes' own noise does not hide it): mean over the nv probes with its Student-t interval; beside it the
    probes' part (`hutchinson_rel_std`: the std of one nv-probe estimate from the exact forms) and the total error of
    this draw's nv-probe estimate against the exact trace (`estimate_rel_error`: Lanczos bias + Hutchinson noise;
    the plain estimate, without IMD's control variate, whose term t·e^−t is below 5·10⁻⁴ from t = 10)."""
    import torch

    from ganeval.metrics.imd import knn_graph
    from ganeval.metrics.slq_error import exact_forms, slq_forms, spectrum

    o, s = cast("Metrics", settings.metrics)["imd"], settings
    out = []
    for name, feats in sets.items():
        x = as_array(feats)
        rng = run_generator(s.seed, 0)
        sub = np.asarray(x[draw_rows(len(x), s.sample_size, rng)], dtype=np.float32)
        nbrs = knn_graph(torch.from_numpy(sub), o["k"], o["knn"], seed=0,  # as heat_trace with a Generator seed
                         nndescent=o["nndescent"])
        spec = spectrum(nbrs)
        tt = torch.from_numpy(t)
        probes = torch.from_numpy(rng.standard_normal((len(sub), o["nv"])))
        exact = exact_forms(spec, probes, tt)
        truth = spec.trace(tt)
        # the probes' own part (Hutchinson): each probe's exact quadratic form as a trace estimate; its std over the
        # probes / √nv is the noise of one nv-probe estimate (relative to the trace)
        hutch = (len(sub) * exact.q / truth[None, :]).numpy() - 1.0
        hutch_std = hutch.std(axis=0, ddof=1) / np.sqrt(hutch.shape[0])
        for m in steps:
            slq = slq_forms(nbrs, probes, tt, m).q
            rel = (len(sub) * (slq - exact.q) / truth[None, :]).numpy()
            total = (len(sub) * slq.mean(dim=0) / truth).numpy() - 1.0  # this draw's nv-probe estimate, all errors
            out += [{"data": name, "lanczos_steps": m, "t": float(tv), "nv": o["nv"],
                     **{f"bias_{k}": v for k, v in t_interval(rel[:, j], s.confidence).items()
                        if k in ("mean", "ci_low", "ci_high")},
                     "hutchinson_rel_std": float(hutch_std[j]), "estimate_rel_error": float(total[j])}
                    for j, tv in enumerate(t)]
    return pd.DataFrame(out)


def verdict_lines(summary: pd.DataFrame, accuracy: pd.DataFrame | None, method: str, steps: int, limit: float,
                  confidence: float) -> list[str]:
    """verdict.md: is the figure accurate at every plotted t (from the measured biases), and the paper's
    statements on the figure that the datasets present can answer."""
    pct = f"{confidence:.0%}"
    lines = ["# Heat traces: verdict", ""]
    if method == "exact":
        lines.append("Traces: `trace_method=exact` (dense eigendecomposition of each run's normalised Laplacian): "
                     "no estimator error; the bands are the variation over subsamples alone.")
    else:
        lines.append(f"Traces: `trace_method=slq` with m = {steps} Lanczos steps and nv = "
                     f"{accuracy['nv'].iloc[0] if accuracy is not None and len(accuracy) else '?'} probes; the "
                     "bands include the probes' noise.")
    if accuracy is not None and len(accuracy):
        lines += ["", f"Accuracy check on run 0's subsample of each dataset (relative bias of m-step SLQ against the "
                  f"exact trace, mean over probes with its {pct} interval; worst t of the plotted grid; then the "
                  "total error of one estimate, where measured):", ""]
        total = "hutchinson_rel_std" in accuracy.columns
        for (name, m), g in accuracy.groupby(["data", "lanczos_steps"], sort=False):
            worst = g.iloc[int(np.argmax(np.abs(g["bias_mean"].to_numpy())))]
            within = bool(max(abs(worst.bias_ci_low), abs(worst.bias_ci_high)) < limit)
            line = (f"- {name}, m = {m}: bias {100 * worst.bias_mean:+.3f} % "
                    f"[{100 * worst.bias_ci_low:+.3f}, {100 * worst.bias_ci_high:+.3f}] at t = {worst.t:.3g}: "
                    f"{'within' if within else 'NOT within'} {100 * limit:g} % at every plotted t")
            if total:
                rms = np.sqrt(g["bias_mean"].to_numpy() ** 2 + g["hutchinson_rel_std"].to_numpy() ** 2)
                w = g.iloc[int(np.argmax(rms))]
                e = g.iloc[int(np.argmax(np.abs(g["estimate_rel_error"].to_numpy())))]
                line += (f"; total error of one nv = {int(g['nv'].iloc[0])} estimate (Lanczos bias + Hutchinson "
                         f"noise): RMS up to {100 * float(rms.max()):.2f} % (at t = {w.t:.3g}: Hutchinson std "
                         f"{100 * w.hutchinson_rel_std:.2f} %), this draw's estimate {100 * e.estimate_rel_error:+.2f} % "
                         f"off the exact trace at t = {e.t:.3g}")
            lines.append(line + ".")
        if total:
            lines += ["", "The bias alone says how many Lanczos steps suffice; what one figure drawn with SLQ would "
                      "be off by is the total error, where the probes' noise dominates at large t."]
    lines += ["", "The paper's statements on its figure (Inception features of MNIST, FashionMNIST, CIFAR-10, "
              "CIFAR-100, CelebA; 10k samples):", ""]
    lines += paper_statements(summary, confidence)
    return lines


def statements(summary: pd.DataFrame, confidence: float) -> list[tuple[str, str, str, str]]:
    """The figure's statements, each (quote, verdict, what decided it, the line verdict.md says), from the intervals
    of the datasets present; a statement about datasets this run did not score is not tested (stand-in data), and
    intervals that overlap decide nothing (not testable here)."""
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, STAND_IN

    names = list(dict.fromkeys(summary["data"]))
    t10 = nearest_t(np.unique(summary["t"]), [10.0])
    out = []
    quote = "For t=10, i.e., at a medium scale, CelebA is most different from the random graph"
    if t10 and len(names) > 1:
        at = summary[np.isclose(summary["t"], t10[0])].set_index("data")
        dist = (at["mean"] / SCALE - 1).abs().sort_values(ascending=False)
        first, second = dist.index[0], dist.index[1]
        a, b = at.loc[first], at.loc[second]
        # the distance |h/h_ER − 1| of each, with the interval of h carried through
        lo = lambda r: min(abs(r.ci_low / SCALE - 1), abs(r.ci_high / SCALE - 1))  # noqa: E731
        hi = lambda r: max(abs(r.ci_low / SCALE - 1), abs(r.ci_high / SCALE - 1))  # noqa: E731
        separate = lo(a) > hi(b)
        here = (f"On these data at t = {t10[0]:.3g}, the farthest from the random graph (|trace/ER − 1|) is {first} "
                f"({dist.iloc[0]:.3f}), then {second} ({dist.iloc[1]:.3f}); their {confidence:.0%} intervals "
                f"{'separate' if separate else 'overlap'}.")
        if "celeba" in names:
            c = at.loc["celeba"]
            v = ((HOLDS if separate else NOT_TESTABLE) if first == "celeba" else
                 CONTRADICTED if lo(a) > hi(c) else NOT_TESTABLE)
            out.append((quote, v, here, f"{v[0].upper()}{v[1:]}: {here}"))
        else:
            out.append((quote, STAND_IN, f"no CelebA; {here[0].lower()}{here[1:].rstrip('.')}",
                        f"Not tested: stand-in data (no CelebA). {here}"))
    quote = "Surprisingly, CIFAR-100 comes close to CIFAR-10 for large t values"
    if {"cifar10", "cifar100"} <= set(names):
        big = summary[np.isclose(summary["t"], summary["t"].max())].set_index("data")
        a, b = big.loc["cifar10"], big.loc["cifar100"]
        overlap = not (a.ci_high < b.ci_low or b.ci_high < a.ci_low)
        here = (f"At t = {summary['t'].max():.3g}: CIFAR-10 {a['mean'] / SCALE:.4f}, CIFAR-100 "
                f"{b['mean'] / SCALE:.4f}; intervals {'overlap (close)' if overlap else 'separate'}.")
        out.append((quote, HOLDS if overlap else CONTRADICTED, here, here))
    else:
        why = "needs CIFAR-10 and CIFAR-100: the paper's setting in the config's comment"
        out.append((quote, STAND_IN, why, f"Not tested: stand-in data ({why})."))
    return out


def paper_statements(summary: pd.DataFrame, confidence: float) -> list[str]:
    """verdict.md's lines on the figure's statements (`statements`): each quoted, then its answer."""
    return [ln for quote, _, _, said in statements(summary, confidence) for ln in (f"> \"{quote}\"", "", said, "")]


def verdict_text(summary: pd.DataFrame, accuracy: pd.DataFrame | None, method: str, steps: int, limit: float,
                 confidence: float) -> str:
    """verdict.md: the result sentences (the estimator's accuracy per dataset and m, the paper's statements), then
    `verdict_lines`."""
    from ganeval.results.verdict import claim_sentence, verdict_markdown

    lines = verdict_lines(summary, accuracy, method, steps, limit, confidence)
    heads = [claim_sentence(f"{m}-step SLQ on {name}: bias within {100 * limit:g} % of the exact trace at every "
                            "plotted t", "holds" if within else "contradicted", evidence)
             for name, m, within, evidence in accuracy_results(accuracy, limit, confidence)]
    heads += [claim_sentence(f"The paper's \"{q}\"", v, why) for q, v, why, _ in statements(summary, confidence)]
    return verdict_markdown(heads, lines[0].lstrip("# "), "\n".join(lines[2:]))


def accuracy_results(accuracy: pd.DataFrame | None, limit: float, confidence: float) -> list[tuple[Any, Any, bool, str]]:
    """Per (dataset, Lanczos steps) of the accuracy check: (dataset, m, bias within `limit` at every t, the worst t's
    bias and interval)."""
    from ganeval.results.verdict import percent

    if accuracy is None or not len(accuracy):
        return []
    out = []
    for (name, m), g in accuracy.groupby(["data", "lanczos_steps"], sort=False):
        w = g.iloc[int(np.argmax(np.abs(g["bias_mean"].to_numpy())))]
        within = bool(max(abs(w.bias_ci_low), abs(w.bias_ci_high)) < limit)
        out.append((name, m, within, f"worst at t = {w.t:.3g}: bias {100 * w.bias_mean:+.3f} %, {percent(confidence)} "
                    f"interval [{100 * w.bias_ci_low:+.3f}, {100 * w.bias_ci_high:+.3f}] %"))
    return out


def run(plan: Plan) -> pd.DataFrame:
    """Extract each dataset's features, compute its heat traces over runs, check the estimator's accuracy on run 0,
    write summary, table.md, verdict.md, accuracy.csv and heat_traces.png."""
    from ganeval.common import atomic_write_text
    from ganeval.data.images import to_rgb
    from ganeval.metrics.imd import EXACT_MAX_N
    from ganeval.results import write_csv

    cfg, settings = plan.params, plan.settings
    if "imd" not in settings.metrics:
        raise ValueError("heat_traces needs metrics.imd (its k, m, nv, normalization, knn options)")
    ts = t_grid(cfg)
    method = check_trace_method(cfg, settings.sample_size)
    steps = int(cast("Metrics", settings.metrics)["imd"]["m"])
    check_steps = [int(m) for m in (cfg.get("accuracy_steps") or [])]
    if check_steps and settings.sample_size > EXACT_MAX_N:
        raise ValueError(f"accuracy_steps needs the exact spectrum of a {settings.sample_size}-row graph (allowed up to "
                         f"{EXACT_MAX_N}): set accuracy_steps=[] or a smaller sample_size")
    if not cfg.get("datasets"):
        raise ValueError("heat_traces needs datasets: add some with +data@datasets.NAME=OPTION")
    prep = to_rgb if cfg.get("color", True) else (lambda a: a)
    with plan.stage("load data"):
        labels = unique_names(cfg.datasets, "datasets")
        data = {k: prep(pipeline.load_data(plan, v, f"datasets.{k}")) for k, v in zip(labels, cfg.datasets.values())}
    settings.check_pools({f"datasets.{k}": len(v) for k, v in data.items()})
    extractor = pipeline.make_extractor(plan)
    pipeline.open_results(plan, protocol=False)  # runs of another config or content: refused before extraction
    with plan.stage("features"):
        feats = {k: pipeline.features(plan, v, extractor, k) for k, v in data.items()}
    task = HeatTraceTask(feats, ts, settings, method)
    with plan.stage("runs"):
        rows = run_loop(task, settings, plan.results_dir, plan.identity(), plan.options.overwrite,
                        desc="heat traces")
    summary = summarize_traces(rows, settings.confidence, settings.sample_size, method, steps)
    accuracy = None
    if check_steps:
        with plan.stage("accuracy check"):
            accuracy = accuracy_check(feats, ts, settings, check_steps)
        write_csv(accuracy, plan.results_dir / "accuracy.csv")
    title = plan.title
    pipeline.write(plan, summary, None, title, tables=False)
    norm = cast("Metrics", settings.metrics)["imd"]["normalization"]
    how = "exact eigendecomposition" if method == "exact" else f"SLQ, m = {steps}, nv = {cast('Metrics', settings.metrics)['imd']['nv']}"
    protocol = (f"Heat trace ({norm.upper()} normalisation) ×10⁻⁶ of the CSV's values: mean ± half-width of the "
                f"{settings.confidence:.0%} Student-t interval over {settings.runs} runs of {settings.sample_size} "
                f"rows (features: {plan.record.extractor.get('name') if plan.record.extractor else '?'}; trace: {how}).")
    atomic_write_text(plan.results_dir / "table.md",
                      trace_table(summary, nearest_t(ts, cfg.get("table_t") or [1, 3, 10, 30, 100]), title, protocol))
    limit = float(cfg.get("accuracy_limit", 0.01))
    atomic_write_text(plan.results_dir / "verdict.md",
                      verdict_text(summary, accuracy, method, steps, limit, settings.confidence))
    if plan.options.plots:
        from ganeval.results import plots

        plots.plot_heat_traces(summary, plan.results_dir / "heat_traces.png", norm)
    return summary


def regenerate(src: Any, out: Any, scratch: str | None = None) -> None:
    """Make a stored heat_traces result's summary.json, table.md and verdict.md again from its summary.csv and
    accuracy.csv (no new runs); `scratch` names a temporary folder the run was made in, cut from the record's paths."""
    from pathlib import Path

    from omegaconf import OmegaConf

    from ganeval.common import atomic_write_text
    from ganeval.results.record import RunRecord
    from ganeval.studies.stored import read_record, relative_paths

    src, out = Path(src), Path(out)
    record = read_record(src)
    if scratch:
        record = RunRecord.from_dict(relative_paths(record.to_dict(), scratch), "summary.json")
    cfg = OmegaConf.create(record.config)
    summary = pd.read_csv(src / "summary.csv")
    accuracy = pd.read_csv(src / "accuracy.csv") if (src / "accuracy.csv").exists() else None
    conf, method = float(cfg.confidence), str(cfg.trace_method)
    steps = int(cfg.metrics.imd.m)
    record.set_results(summary, record.stage_seconds)
    record.write(out / "summary.json")
    ts = t_grid(cfg)
    norm = str(cfg.metrics.imd.normalization)
    how = "exact eigendecomposition" if method == "exact" else f"SLQ, m = {steps}, nv = {int(cfg.metrics.imd.nv)}"
    protocol = (f"Heat trace ({norm.upper()} normalisation) ×10⁻⁶ of the CSV's values: mean ± half-width of the "
                f"{conf:.0%} Student-t interval over {int(cfg.runs)} runs of {int(cfg.sample_size)} "
                f"rows (features: {(record.extractor or {}).get('name', '?')}; trace: {how}).")
    title = str(cfg.get("title") or "")
    atomic_write_text(out / "table.md", trace_table(summary, nearest_t(ts, cfg.get("table_t") or [1, 3, 10, 30, 100]),
                                                     title, protocol))
    limit = float(cfg.get("accuracy_limit", 0.01))
    atomic_write_text(out / "verdict.md", verdict_text(summary, accuracy, method, steps, limit, conf))
