"""The paper's appendix on the estimator, re-made: SLQ's error against Lanczos steps m and probes nv, and the
control variate's variance reduction, on one k-NN graph of offline data with its exact spectrum as ground truth.

One subsample (`sample_size` rows drawn with `numpy.random.default_rng([seed, 0])`) gives the graph; a pool of
`probes` unit Gaussian probes (drawn next from the same generator) gives per-probe quadratic forms: the m-step
Gauss quadratures for every m ≤ `max_steps` (the leading m×m blocks of one long Lanczos run's matrices, which
with full re-orthogonalisation are the m-step ones) and the exact forms (eigendecomposition). An nv-probe
estimate is the mean of nv single-probe estimates, so the pool splits into disjoint batches of nv: each error
is measured over pool/nv independent estimates, with Student-t or bootstrap intervals.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, cast

import numpy as np
import pandas as pd
import torch

from ganeval.app import pipeline
from ganeval.app.plan import Plan
from ganeval.protocol.draws import draw_rows, run_generator
from ganeval.results import t_interval
from ganeval.studies.slq_claims import claim_verdicts, claims, one_row

if TYPE_CHECKING:
    from ganeval.metrics.registry import Metrics

log = logging.getLogger("ganeval")
INPUTS = ("data", "features")  # the config keys it reads inputs from (its plan)
# the files it may write into results_dir (its plan lists them)
OUTPUTS = ("estimator.csv", "summary.csv", "summary.json", "table.md", "verdict.md", "slq_accuracy.png",
           "report.html")


@dataclass
class Pool:
    """Single-probe trace estimates on one graph (P probes, T temperatures) and the exact traces."""

    t: np.ndarray  # T
    truth: np.ndarray  # T: tr exp(−tL)
    slq: np.ndarray  # M×P×T: with the control variate, m = 1..M steps
    slq_plain: np.ndarray  # M×P×T: without it
    exact: np.ndarray  # P×T: exact quadratic forms (the Hutchinson terms), with the control variate
    forms_slq: np.ndarray  # M×P×T: quadratic forms q_m
    forms_exact: np.ndarray  # P×T
    l_slq: np.ndarray  # M×P: vᵀLv from the quadrature
    var_theory: np.ndarray  # T: exact single-probe variance with the control variate
    var_theory_plain: np.ndarray  # T: without
    alpha_theory: np.ndarray  # T: the variance-optimal α of the control variate, from the spectrum
    n: int


def probe_pool(x: np.ndarray, k: int, t: np.ndarray, probes: np.ndarray, max_steps: int, chunk: int = 100) -> Pool:
    """Every probe's m-step (m = 1..max_steps) and exact quadratic forms on the union k-NN graph of `x`."""
    from ganeval.metrics.imd import knn_graph
    from ganeval.metrics.laplacian import normalized_adjacency
    from ganeval.metrics.slq import lanczos, quadrature
    from ganeval.metrics.slq_error import ProbeForms, exact_forms, single_probe_variance, spectrum

    nbrs = knn_graph(torch.from_numpy(np.asarray(x, dtype=np.float32)), k)
    n = nbrs.shape[0]
    spec = spectrum(nbrs)
    tt = torch.from_numpy(t)
    s = normalized_adjacency(nbrs)
    p = torch.from_numpy(probes)
    q = np.empty((max_steps, p.shape[1], len(t)))
    lq = np.empty((max_steps, p.shape[1]))
    for a in range(0, p.shape[1], chunk):
        alpha, beta = lanczos(s, p[:, a : a + chunk], max_steps)
        for m in range(1, max_steps + 1):
            theta, w = quadrature(alpha[:, :m], beta[:, : m - 1])
            q[m - 1, a : a + chunk] = torch.einsum("pk,tpk->pt", w, torch.exp(-tt[:, None, None] * theta[None])).numpy()
            lq[m - 1, a : a + chunk] = (w * theta).sum(dim=1).numpy()
    ex = exact_forms(spec, p, tt)
    slq = np.stack([ProbeForms(torch.from_numpy(q[i]), torch.from_numpy(lq[i])).estimates(n, tt, True).numpy()
                    for i in range(max_steps)])
    slq_plain = n * q
    lam = spec.values
    a = torch.exp(-tt[:, None] * lam[None, :])
    cov = ((a - a.mean(1, keepdim=True)) * (lam - lam.mean())[None, :]).mean(1)
    alpha_opt = -cov / (tt * lam.var(unbiased=False))
    return Pool(t=t, truth=spec.trace(tt).numpy(), slq=slq, slq_plain=slq_plain,
                exact=ex.estimates(n, tt, True).numpy(), forms_slq=q, forms_exact=ex.q.numpy(), l_slq=lq,
                var_theory=single_probe_variance(spec, tt, True).numpy(),
                var_theory_plain=single_probe_variance(spec, tt, False).numpy(), alpha_theory=alpha_opt.numpy(), n=n)


def batch_errors(est: np.ndarray, truth: np.ndarray, nv: int) -> np.ndarray:
    """Relative errors (B×T) of the nv-probe estimates from disjoint batches of the P×T single-probe estimates."""
    b = est.shape[0] // nv
    return est[: b * nv].reshape(b, nv, -1).mean(axis=1) / truth[None, :] - 1


def rms(rel: np.ndarray, confidence: float) -> dict[str, float]:
    """Root mean square of B relative errors (one per independent estimate) with the χ²_B interval of the RMS:
    exact for normal errors of mean zero (batch means of many probes), conservative (wider) where a bias dominates."""
    from scipy.stats import chi2

    b = rel.size
    ss = float(np.sum(rel**2))
    lo, hi = (1 - confidence) / 2, (1 + confidence) / 2
    return {"value": float(np.sqrt(ss / b)), "ci_low": float(np.sqrt(ss / chi2.ppf(hi, b))),
            "ci_high": float(np.sqrt(ss / chi2.ppf(lo, b)))}


def mean_ci(values: np.ndarray, confidence: float) -> dict[str, float]:
    s = t_interval(values, confidence)
    return {"value": s["mean"], "ci_low": s["ci_low"], "ci_high": s["ci_high"]}


def bootstrap(x: np.ndarray, y: np.ndarray, t: np.ndarray, n: int, resamples: int, confidence: float,
              seed: Any) -> dict[str, np.ndarray]:
    """Percentile bootstrap over probes (seeded) of std(x)/std(y) and of the variance-optimal
    α = −cov(X, Y')/(t·var(Y')), x with and y without the control variate (X = y, Y' = (x − y)/(t·e^−t) + n = n·vᵀLv)."""
    rng = np.random.default_rng(seed)
    lo, hi = (1 - confidence) / 2, (1 + confidence) / 2
    ratios: list[float]
    alphas: list[float]
    ratios, alphas = [], []
    w = t * np.exp(-t)
    lv = (x - y) / w[None, :] + n  # n·vᵀLv per probe (the same for every t, up to rounding)
    for _ in range(0, resamples, 100):
        idx = rng.integers(0, x.shape[0], size=(min(100, resamples - len(ratios)), x.shape[0]))
        xs, ys, ls = x[idx], y[idx], lv[idx]
        ratios += list(xs.std(axis=1, ddof=1) / ys.std(axis=1, ddof=1))
        cov = ((ys - ys.mean(1, keepdims=True)) * (ls - ls.mean(1, keepdims=True))).mean(1)
        alphas += list(-cov / (t[None, :] * ls.var(axis=1)))
    r, a = np.array(ratios), np.array(alphas)
    return {"ratio_low": np.quantile(r, lo, axis=0), "ratio_high": np.quantile(r, hi, axis=0),
            "alpha_low": np.quantile(a, lo, axis=0), "alpha_high": np.quantile(a, hi, axis=0)}


def measure(pool: Pool, cfg: Any, confidence: float, seed: int) -> pd.DataFrame:
    """The numbers of the three figures as rows (figure, quantity, t, m, nv, value, ci_low, ci_high, reference)."""
    from ganeval.metrics.slq_error import hutchinson_bound, lanczos_bound

    t, truth, n = pool.t, pool.truth, pool.n
    nv0, m0 = int(cfg.nv), int(cfg.m)
    rows: list[dict[str, Any]] = []

    def add(figure: str, quantity: str, j: int, m: int | None, nv: int | None, stats: Mapping[str, float | None],
            reference: float | None = None) -> None:
        rows.append({"figure": figure, "quantity": quantity, "t": float(t[j]), "m": m, "nv": nv, **stats,
                     "reference": reference})

    paper_t = [int(np.argmin(np.abs(t - float(v)))) for v in cfg.t_errors]
    hutch = batch_errors(pool.exact, truth, nv0)
    for j in paper_t:
        add("m", "rms_error_hutchinson", j, None, nv0, rms(hutch[:, j], confidence))
        for m in range(1, pool.slq.shape[0] + 1):
            rel = batch_errors(pool.slq[m - 1], truth, nv0)
            lanczos_part = (pool.slq[m - 1][:, j] - pool.exact[:, j]) / truth[j]
            per_batch = np.abs(batch_errors(pool.slq[m - 1] - pool.exact + truth[None, :], truth, nv0)[:, j])
            add("m", "rms_error", j, m, nv0, rms(rel[:, j], confidence), lanczos_bound(m, float(t[j])))
            if m == m0:  # the same estimate without the control variate
                plain = batch_errors(pool.slq_plain[m - 1], truth, nv0)
                add("m", "rms_error_plain", j, m, nv0, rms(plain[:, j], confidence))
            add("m", "lanczos_bias", j, m, nv0, mean_ci(lanczos_part, confidence))
            add("m", "lanczos_max_abs", j, m, nv0, {"value": float(per_batch.max()), "ci_low": None, "ci_high": None},
                lanczos_bound(m, float(t[j])))
            form = np.abs(pool.forms_slq[m - 1][:, j] / pool.forms_exact[:, j] - 1)
            add("m", "form_rel_error", j, m, None, mean_ci(form, confidence))
        for nv in cfg.nv_list:
            nv = int(nv)
            if pool.slq.shape[1] // nv < int(cfg.min_batches):
                continue
            rel = batch_errors(pool.slq[m0 - 1], truth, nv)
            bias = float(np.mean(pool.slq[m0 - 1][:, j] - pool.exact[:, j]))
            theory = float(np.sqrt(pool.var_theory[j] / nv + bias**2) / truth[j])
            add("nv", "rms_error", j, m0, nv, rms(rel[:, j], confidence),
                float(hutchinson_bound(nv, float(cfg.delta))))
            add("nv", "rms_error_theory", j, m0, nv, {"value": theory, "ci_low": None, "ci_high": None})
    var_t = [j for j in range(len(t)) if float(cfg.t_variance_min) <= t[j] <= float(cfg.t_variance_max)]
    x, y = pool.slq[m0 - 1][:, var_t], pool.slq_plain[m0 - 1][:, var_t]
    boot = bootstrap(x, y, t[var_t], n, int(cfg.bootstrap), confidence, [seed, 1])
    for i, j in enumerate(var_t):
        for name, arr, theory in (("std_cv", x, pool.var_theory), ("std_plain", y, pool.var_theory_plain)):
            sd = arr[:, i].std(ddof=1) / np.sqrt(nv0) / truth[j]
            add("variance", name, j, m0, nv0, {"value": float(sd), "ci_low": None, "ci_high": None},
                float(np.sqrt(theory[j] / nv0) / truth[j]))
        ratio = x[:, i].std(ddof=1) / y[:, i].std(ddof=1)
        add("variance", "std_ratio", j, m0, nv0, {"value": float(ratio), "ci_low": float(boot["ratio_low"][i]),
                                                 "ci_high": float(boot["ratio_high"][i])},
            float(np.sqrt(pool.var_theory[j] / pool.var_theory_plain[j])))
        lv = (x[:, i] - y[:, i]) / (t[j] * np.exp(-t[j])) + n
        alpha = -np.cov(y[:, i], lv, ddof=0)[0, 1] / (t[j] * lv.var())
        add("variance", "alpha_optimal", j, m0, nv0, {"value": float(alpha), "ci_low": float(boot["alpha_low"][i]),
                                                     "ci_high": float(boot["alpha_high"][i])},
            float(pool.alpha_theory[j]))
        add("variance", "alpha_used", j, m0, nv0, {"value": float(np.exp(-t[j])), "ci_low": None, "ci_high": None})
    return pd.DataFrame(rows)


MARK = {True: "holds", False: "contradicted", None: "not testable here (the interval straddles the threshold)"}


def verdict_text(found: list[dict[str, Any]], header: str, confidence: float = 0.99) -> str:
    """verdict.md: the claims table in the common vocabulary, then each quoted statement, the criterion, its verdict
    and the numbers per t."""
    from ganeval.results.verdicts import claims_table

    verdicts = {c.name: c for c in claim_verdicts(found, confidence)}
    lines = ["# SLQ estimator accuracy: verdict", "", header, "",
             "One graph (a single 1000-node digits graph): the verdicts are about this estimator on it; the per-t "
             "intervals cover the probes, not other graphs. p-values (where a claim is a threshold on one interval) "
             "are approximated from the stored intervals (normal, on the threshold's side), Bonferroni over a "
             "claim's t values, then Holm over the claims.", "",
             claims_table(verdicts.values(), confidence).rstrip("\n"), ""]
    for c in found:
        v = verdicts[c["claim"]]
        lines += [f"## {c['claim']}: {v.verdict.upper()} ({v.vs_paper})", "", f"> \"{c['quote']}\" ({c['where']})", "",
                  f"Criterion: {c['criterion']}.", ""]
        lines += [f"- t = {t:.3g}: {MARK[h]} ({text})" for t, h, text in c["per_t"]]
        lines.append("")
    from dataclasses import replace

    from ganeval.results.verdict import claim_sentences, verdict_markdown

    def shown(c: dict[str, Any]) -> Any:  # the claim with the interval of its first failing t (else its last t)
        t, _, text = next((p for p in c["per_t"] if p[1] is False), next((p for p in c["per_t"] if p[1] is None),
                                                                         c["per_t"][-1]))
        return replace(verdicts[c["claim"]], evidence=f"{verdicts[c['claim']].evidence}; at t = {t:.3g}: {text}")

    return verdict_markdown(claim_sentences([shown(c) for c in found], confidence, rule=True), lines[0].lstrip("# "),
                            "\n".join(lines[2:]))


def header_text(k: int, sample_size: int, data: str, features: str, seed: int, probes: int, confidence: float,
                bootstrap: int) -> str:
    """The protocol sentence that heads table.md and verdict.md."""
    return (f"One union k-NN graph (k = {k}) of {sample_size} rows of {data} ({features} features), seed {seed}; "
            f"{probes} unit Gaussian probes split into disjoint batches of nv; ground truth: the dense "
            f"eigendecomposition. Intervals ({confidence:.0%}): χ² over the batches for an RMS error (exact for normal "
            "batch errors of mean zero), Student-t over probes for a mean (biases); percentile bootstrap over probes "
            f"({bootstrap} resamples) for the variance ratio and the optimal α.")


def regenerate(src: Any, out: Any, scratch: str | None = None) -> None:
    """Make a stored slq_accuracy result's table.md, verdict.md and summary.json again from its estimator.csv (no new
    measurement); `scratch` names a temporary folder the run was made in, cut from the record's paths."""
    from pathlib import Path

    from omegaconf import OmegaConf

    from ganeval.common import atomic_write_text
    from ganeval.results.record import RunRecord
    from ganeval.studies.stored import read_record, relative_paths

    src, out = Path(src), Path(out)
    record = read_record(src)
    if scratch:
        record = RunRecord.from_dict(relative_paths(record.to_dict(), scratch), "summary.json")
    df = pd.read_csv(src / "estimator.csv")
    cfg = OmegaConf.create(record.config)
    found = claims(df, cfg)
    conf = float(cfg.confidence)
    record.verdict = [{k: v for k, v in c.items() if k != "per_t"} | {"per_t": [list(p) for p in c["per_t"]]}
                      for c in found]
    record.claims = [c.record() for c in claim_verdicts(found, conf)]
    data = str(cfg.data.get("_target_", "data")).rsplit(".", 1)[-1]
    header = header_text(int(cfg.metrics.imd.k), int(cfg.sample_size), data,
                         (record.extractor or {}).get("name", "?"), int(cfg.seed), int(cfg.probes), conf,
                         int(cfg.bootstrap))
    summary = df[df.quantity.isin(["rms_error", "lanczos_bias", "std_ratio"])].reset_index(drop=True)
    record.set_results(summary, record.stage_seconds)
    record.write(out / "summary.json")
    atomic_write_text(out / "table.md", table_text(df, cfg, header))
    atomic_write_text(out / "verdict.md", verdict_text(found, header, conf))


def table_text(df: pd.DataFrame, cfg: Any, header: str) -> str:
    """table.md: RMS relative error against m and nv at the paper's temperatures, and the variance reduction."""
    m0, nv0 = int(cfg.m), int(cfg.nv)
    ts = sorted(set(df[df.figure == "m"].t))
    ms = [m for m in cfg.table_steps if m <= int(df[df.figure == "m"].m.max())]
    nvs = sorted(set(int(v) for v in df[df.figure == "nv"].nv))
    fmt = lambda r: f"{r.value:.2e} [{r.ci_low:.1e}, {r.ci_high:.1e}]"  # noqa: E731
    lines = ["# SLQ estimator accuracy", "", header, "",
             f"RMS relative error of the trace estimate against m (nv = {nv0}), [interval]:", "",
             "| t | " + " | ".join(f"m = {m}" for m in ms) + f" | exact forms (m = ∞) | m = {m0} without the control "
             "variate |", "|---" * (len(ms) + 3) + "|"]
    for t in ts:
        lines.append(f"| {t:.3g} | " + " | ".join(fmt(one_row(df, "m", "rms_error", t, m)) for m in ms)
                     + f" | {fmt(one_row(df, 'm', 'rms_error_hutchinson', t))} | {fmt(one_row(df, 'm', 'rms_error_plain', t))} |")
    lines += ["", f"RMS relative error against nv (m = {m0}), [interval]:", "",
              "| t | " + " | ".join(f"nv = {v}" for v in nvs) + " |", "|---" * (len(nvs) + 1) + "|"]
    for t in ts:
        lines.append(f"| {t:.3g} | " + " | ".join(fmt(one_row(df, "nv", "rms_error", t, nv=v)) for v in nvs) + " |")
    var = df[df.figure == "variance"]
    lines += ["", f"Control variate (m = {m0}, nv = {nv0}): relative std of the estimate without and with it, their "
              "ratio [bootstrap interval], the variance-optimal α relative to the α = e^−t used:", "",
              "| t | std without | std with | ratio | optimal α · e^t |", "|---|---|---|---|---|"]
    for t in sorted(set(var.t)):
        a, b = one_row(df, "variance", "std_plain", t), one_row(df, "variance", "std_cv", t)
        r, al = one_row(df, "variance", "std_ratio", t), one_row(df, "variance", "alpha_optimal", t)
        lines.append(f"| {t:.3g} | {a.value:.2e} | {b.value:.2e} | {r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}] | "
                     f"{al.value * np.exp(t):.3f} [{al.ci_low * np.exp(t):.3f}, {al.ci_high * np.exp(t):.3f}] |")
    return "\n".join(lines) + "\n"


def plot(df: pd.DataFrame, path: Any, title: str) -> None:
    """Three panels as the paper's figures: error against m (bounds dotted), against nv (bound dotted), std over t."""
    from ganeval.results.plots import _plt, _save

    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    ax = axes[0]
    for i, (t, g) in enumerate(df[(df.figure == "m") & (df.quantity == "rms_error")].groupby("t")):
        g = g.sort_values("m")
        ax.plot(g.m, g.value, "-o", ms=2, color=f"C{i}", label=f"t = {t:.3g}")
        ax.fill_between(g.m, g.ci_low, g.ci_high, color=f"C{i}", alpha=0.2)
        ax.plot(g.m, g.reference, ":", color=f"C{i}", lw=2)
        lz = df[(df.figure == "m") & (df.quantity == "lanczos_bias") & np.isclose(df.t, t)].sort_values("m")
        ax.plot(lz.m, lz.value.abs(), "--", color=f"C{i}", lw=0.8)
    ax.set(yscale="log", ylim=(1e-9, 1e1), xlabel="Lanczos steps m",
           ylabel="relative trace error (RMS; dashed: Lanczos part; dotted: bound)")
    ax.legend(fontsize=7)
    ax = axes[1]
    for i, (t, g) in enumerate(df[(df.figure == "nv") & (df.quantity == "rms_error")].groupby("t")):
        g = g.sort_values("nv")
        ax.plot(g.nv, g.value, "-o", ms=2, color=f"C{i}", label=f"t = {t:.3g}")
        ax.fill_between(g.nv, g.ci_low, g.ci_high, color=f"C{i}", alpha=0.2)
        th = df[(df.figure == "nv") & (df.quantity == "rms_error_theory") & np.isclose(df.t, t)].sort_values("nv")
        ax.plot(th.nv, th.value, "--", color=f"C{i}", lw=0.8)
    g = df[(df.figure == "nv") & (df.quantity == "rms_error")].drop_duplicates("nv").sort_values("nv")
    ax.plot(g.nv, g.reference, ":", color="k", lw=2, label="bound")
    ax.set(xscale="log", yscale="log", ylim=(1e-9, 1e1), xlabel="probes nv",
           ylabel="relative trace error (RMS; dashed: exact theory)")
    ax.legend(fontsize=7)
    ax = axes[2]
    for i, (name, label) in enumerate((("std_plain", "original SLQ"), ("std_cv", "SLQ w/ variance reduction"))):
        g = df[(df.figure == "variance") & (df.quantity == name)].sort_values("t")
        ax.plot(g.t, g.value, "-o", ms=2, color=f"C{i}", label=label)
        ax.plot(g.t, g.reference, ":", color=f"C{i}", lw=1.5)
    ax.set(xscale="log", yscale="log", xlabel="t", ylabel="relative std of the estimate (dotted: exact theory)")
    ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    _save(fig, path)


def check_config(cfg: Any, sample_size: int) -> None:
    """The experiment's own keys, checked before any work."""
    from ganeval.metrics.imd import EXACT_MAX_N

    if sample_size > EXACT_MAX_N:
        raise ValueError(f"slq_accuracy needs the full eigendecomposition of a {sample_size}-row graph; use "
                         f"sample_size ≤ {EXACT_MAX_N}")
    m, nv, steps, probes = int(cfg.m), int(cfg.nv), int(cfg.max_steps), int(cfg.probes)
    if not 1 <= m <= steps:
        raise ValueError(f"need 1 ≤ m ≤ max_steps, got m={m}, max_steps={steps}")
    if nv < 1 or probes // nv < int(cfg.min_batches) or int(cfg.min_batches) < 2:
        raise ValueError(f"probes={probes} must hold at least min_batches={cfg.min_batches} (≥ 2) batches of nv={nv}")
    if not cfg.t_errors or min(float(v) for v in cfg.t_errors) <= 0:
        raise ValueError(f"t_errors must be positive temperatures, got {cfg.t_errors}")
    if not 0 < float(cfg.t_variance_min) < float(cfg.t_variance_max):
        raise ValueError("need 0 < t_variance_min < t_variance_max")
    if not 0 < float(cfg.delta) < 1:
        raise ValueError(f"delta must lie in (0, 1), got {cfg.delta}")


def run(plan: Plan) -> pd.DataFrame:
    """Build the graph, measure the estimator on it, write estimator.csv, table.md, verdict.md and slq_accuracy.png."""
    from ganeval.common import atomic_write_text
    from ganeval.results import write_csv

    cfg, settings = plan.params, plan.settings
    if "imd" not in settings.metrics:
        raise ValueError("slq_accuracy needs metrics.imd (its k)")
    o = cast("Metrics", settings.metrics)["imd"]
    if o["rademacher"] or o["knn"] != "exact":
        raise ValueError("slq_accuracy measures Gaussian probes on the exact k-NN graph: set metrics.imd.rademacher=false "
                         "and metrics.imd.knn=exact")
    check_config(cfg, settings.sample_size)
    with plan.stage("load data"):
        images = pipeline.load_data(plan, cfg.data, "data")
    settings.check_pools({"data": len(images)})
    extractor = pipeline.make_extractor(plan)
    pipeline.open_results(plan, protocol=False)  # a results_dir holding another config's runs: refused now
    with plan.stage("features"):
        feats = pipeline.features(plan, images, extractor, "data")
    t = np.unique(np.concatenate([np.asarray(cfg.t_errors, dtype=np.float64),
                                  np.logspace(np.log10(float(cfg.t_variance_min)),
                                              np.log10(float(cfg.t_variance_max)), int(cfg.n_t_variance))]))
    rng = run_generator(settings.seed, 0)
    x = np.asarray(feats[draw_rows(len(feats), settings.sample_size, rng)])
    probes = rng.standard_normal((len(x), int(cfg.probes)))
    with plan.stage("estimator"):
        pool = probe_pool(x, int(o["k"]), t, probes, int(cfg.max_steps))
        df = measure(pool, cfg, settings.confidence, settings.seed)
    write_csv(df, plan.results_dir / "estimator.csv")
    found = claims(df, cfg)
    plan.record.verdict = [{k: v for k, v in c.items() if k != "per_t"} | {"per_t": [list(p) for p in c["per_t"]]}
                          for c in found]
    plan.record.claims = [c.record() for c in claim_verdicts(found, settings.confidence)]
    features = plan.record.extractor.get("name") if plan.record.extractor else "?"
    header = header_text(int(o["k"]), settings.sample_size, plan.choices.get("data", "data"), str(features),
                         settings.seed, int(cfg.probes), settings.confidence, int(cfg.bootstrap))
    summary = df[df.quantity.isin(["rms_error", "lanczos_bias", "std_ratio"])].reset_index(drop=True)
    pipeline.write(plan, summary, None, plan.title, tables=False)
    atomic_write_text(plan.results_dir / "table.md", table_text(df, cfg, header))
    atomic_write_text(plan.results_dir / "verdict.md", verdict_text(found, header, settings.confidence))
    if plan.options.plots:
        plot(df, plan.results_dir / "slq_accuracy.png", plan.title)
    for c in found:
        log.info("%s: %s", c["claim"], MARK[c["holds"]])
    return df
