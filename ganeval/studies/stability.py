"""The paper's stability figure: each metric's mean and interval against the sample size n, IMD with exact and
approximate kNN, for a same-distribution pair (two disjoint halves of one dataset) and a different pair.

`data` is split by a seeded permutation into halves A and B; `other` is the different set. For every n of the
grid (`sample_size` halved `halvings` times) the protocol scores (A, B) and (A, other) in one block, so the
two pairs share run r's subsample of A (paired), in three stores under `runs/`: IMD with exact kNN, IMD with
approximate kNN (the same subsamples and probes: paired with exact), and FID + KID. KID's subsets hold
min(metrics.kid.subset_size, n) rows (an unbiased estimate whatever the subset size; only its variance changes).
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from ganeval.app import pipeline
from ganeval.app.plan import Plan, strict_bool
from ganeval.protocol import Block
from ganeval.results import write_csv, write_results
from ganeval.results.seeds import split_probe_draws
from ganeval.studies.stability_grid import (approx_recall, compare, cpu_model, knn_methods, plan_parts, read_timing,
                                            sample_sizes, split_halves, stored_runs, summarize, warm_up_approx)
from ganeval.studies.stability_grid import loglog_slope, variance_ratio_interval  # noqa: F401  (stability.NAME)
from ganeval.studies.stability_claims import decide
from ganeval.studies.stability_report import plot_stability, table_markdown, timing_table, verdict, verdict_markdown  # noqa: F401
from ganeval.studies.stability_report import RECALL_EXACT, VARIANCE_SIMILAR  # noqa: F401  (stability.NAME)

if TYPE_CHECKING:
    from ganeval.metrics.registry import Metrics

log = logging.getLogger("ganeval")
INPUTS = ("data", "other", "features")  # the config keys it reads inputs from (its plan)
# the files it may write into results_dir (its plan lists them)
OUTPUTS = ("runs/", "summary.csv", "summary.json", "comparison.csv", "knn.csv", "table.md", "verdict.md", "stability.png",
           "report.html")


# --------------------------------------------------------------------------- the experiment
def run(plan: Plan) -> pd.DataFrame:
    """Split data, extract, score every part of the grid, write summary, comparison, table, verdict and plot."""
    from ganeval.data.images import to_rgb

    cfg, settings = plan.params, plan.settings
    sizes = sample_sizes(settings.sample_size, cfg.halvings)
    methods = knn_methods(cfg.knn_methods, cast("Metrics", settings.metrics)["imd"]["knn"]) if "imd" in settings.metrics else []
    if settings.probe_repeats:
        raise ValueError("experiment=stability does not use probe_repeats (its rows are not curves): set probe_repeats=0")
    name = plan.choices.get("data") or "data"
    other_name = plan.choices.get("data@other") or "other"
    prep = to_rgb if strict_bool(cfg, "color") else (lambda a: a)
    with plan.stage("load data"):
        data = prep(pipeline.load_data(plan, cfg.data, "data"))
        other = prep(pipeline.load_data(plan, cfg.other, "other"))
    half = len(data) // 2
    settings.check_pools({f"each half of data ({name}, {len(data)} rows)": half, f"other ({other_name})": len(other)})
    parts = plan_parts(settings, sizes, methods)
    extractor = pipeline.make_extractor(plan)
    open_parts(plan, parts)
    with plan.stage("features"):
        feats = pipeline.features(plan, data, extractor, name)
        other_f = pipeline.features(plan, other, extractor, other_name)
    if feats.shape[1] != other_f.shape[1]:
        raise ValueError(f"other has {other_f.shape[1]} features, data {feats.shape[1]}: give both one shape "
                         "(one image size and channel count, color=true for grey against colour)")
    a, b = split_halves(feats, int(cfg.split_seed))
    rows, timings = run_parts(plan, parts, a, [({"pair": "same"}, b), ({"pair": "different"}, other_f)])
    seconds = {k: float(t["seconds_per_run"]) for k, t in timings.items() if "seconds_per_run" in t}
    loads = [float(t.get("load_1min", math.nan)) for t in timings.values() if "seconds_per_run" in t]
    recall = {int(key[1:].split("-")[0]): float(t["approx_recall"]) for key, t in timings.items() if "approx_recall" in t}
    summary = summarize(rows, settings.confidence)
    comparison = compare(rows, settings.confidence)
    claims, decided = decide(summary, comparison, seconds, recall)

    context = {"description": f"{name} halves vs {other_name}", "runs": settings.runs, "confidence": settings.confidence,
               "pools": f"two halves of {name} with {half} rows each, {other_name} with {len(other)} rows, "
                        f"{feats.shape[1]}-d features",
               "machine": f"{cpu_model()}, {os.cpu_count()} cores, 1-min load average {min(loads, default=math.nan):.1f}–"
                          f"{max(loads, default=math.nan):.1f} while the parts ran (knn.csv)"}
    params = cast("Metrics", settings.metrics)["imd"]["nndescent"] if "imd" in settings.metrics else None
    if params is not None and "approx" in methods:  # only a non-default setting is named (older records lack it)
        context["nndescent"] = ", ".join(f"{k}={v}" for k, v in params.items())
    write_files(plan, summary, comparison, (claims, decided), context, timing_table(sizes, parts, timings, recall),
                methods)
    return summary


def open_parts(plan: Plan, parts: list[Any]) -> None:
    """Refuse, before extraction, a part's store holding another config's or other content's runs; with
    overwrite=true discard the stores of parts this grid no longer has, so results_dir holds one experiment."""
    from ganeval.protocol.api import store_identity
    from ganeval.protocol.store import check_store, identity_hash

    overwrite = plan.options.overwrite
    for part in parts:
        identity = store_identity(part.settings, plan.identity())
        check_store(part.directory(plan.results_dir), identity_hash(identity), overwrite, identity)
    if overwrite:
        import shutil

        planned = {part.directory(plan.results_dir) for part in parts}
        for stale in sorted((plan.results_dir / "runs").glob("n*-*")):
            if stale.is_dir() and stale not in planned:
                shutil.rmtree(stale)


def run_parts(plan: Plan, parts: list[Any], a: Any, fakes: list[Any]) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """Score every part of the grid (resumable, each in its own store) into one frame of per-run rows; and each
    part's timing.json (seconds per run of the runs made now, the load, approx k-NN's recall, measured once)."""
    from ganeval.protocol import run_blocks
    from ganeval.results import write_json

    overwrite, runs = plan.options.overwrite, plan.settings.runs
    chunks, timings, warmed = [], {}, False
    for part in parts:
        directory = part.directory(plan.results_dir)
        todo = runs - (0 if overwrite else min(stored_runs(directory), runs))
        if part.knn == "approx" and not warmed and (todo or "approx_recall" not in read_timing(directory)):
            with plan.stage("compile pynndescent"):
                warm_up_approx()
            warmed = True
        groups = {"n": part.n, **({"knn": part.knn} if part.knn else {})}
        stage = f"runs n={part.n} {part.name}"
        with plan.stage(stage):
            rows = run_blocks([Block(a, fakes, groups)], part.settings, directory, plan.identity(), overwrite)
        if todo:  # the time per run of the runs made now, kept beside them (a resumed part keeps its time)
            write_json({"seconds_per_run": plan.stage_seconds[stage] / todo, "runs_timed": todo,
                        "load_1min": round(os.getloadavg()[0], 2), "cpu": cpu_model(), "device": plan.settings.device},
                       directory / "timing.json")
        timing = read_timing(directory)
        if part.knn == "approx" and "approx_recall" not in timing:  # measured once, kept beside the part's runs
            with plan.stage("approx kNN recall"):
                timing["approx_recall"] = approx_recall(a, part.settings, part.n)
            write_json(timing, directory / "timing.json")
        timings[f"n{part.n}-{part.name}"] = timing
        chunks.append(split_probe_draws(rows)[0])
    rows = pd.concat(chunks, ignore_index=True)
    rows["knn"] = rows["knn"].fillna("") if "knn" in rows else ""
    return rows, timings


def write_files(plan: Plan, summary: pd.DataFrame, comparison: pd.DataFrame, found: tuple[list[dict[str, Any]], list[Any]],
                context: dict[str, Any], knn: pd.DataFrame, methods: list[str]) -> None:
    """summary.csv/.json, comparison.csv, knn.csv, table.md, verdict.md and (plots) stability.png; `found` is
    `stability_claims.decide`'s claim dicts and Holm-corrected claims."""
    from ganeval.common import atomic_write_text

    claims, decided = found
    plan.record.verdict = claims
    plan.record.claims = [c.record() for c in decided]
    plan.record.context = context
    plan.record.knn = "+".join(methods) or None  # pipeline.write would record metrics.imd.knn, not the methods run
    plan.record.set_results(summary, plan.stage_seconds)
    write_results(plan.results_dir, summary, comparison if len(comparison) else None, plan.record, tables=False)
    write_csv(knn, plan.results_dir / "knn.csv")
    atomic_write_text(plan.results_dir / "table.md", table_markdown(summary, comparison))
    atomic_write_text(plan.results_dir / "verdict.md", verdict_markdown(claims, summary, context, decided))
    if plan.options.plots:
        plot_stability(summary, plan.results_dir / "stability.png")
    for c in claims:
        log.info("%s: %s", c["claim"], c["holds"])


def regenerate(src: Any, out: Any) -> None:
    """Make a stored stability result's summary, comparison, summary.json, table.md and verdict.md again from its
    runs/*/runs.csv, knn.csv (recall, seconds per run) and the record's context (no new runs)."""
    from ganeval.common import atomic_write_text
    from ganeval.studies.stored import read_record

    src, out = Path(src), Path(out)
    record = read_record(src)
    conf = float(record.config["confidence"])
    rows = pd.concat([pd.read_csv(p / "runs.csv") for p in sorted((src / "runs").iterdir())], ignore_index=True)
    rows["knn"] = rows["knn"].fillna("") if "knn" in rows else ""
    knn = pd.read_csv(src / "knn.csv")
    recall = {int(r["n"]): float(r["approx_recall"]) for _, r in knn.iterrows()
              if "approx_recall" in knn.columns and pd.notna(r["approx_recall"])}
    seconds = {f"n{int(r['n'])}-{c[len('seconds_per_run_'):]}": float(r[c]) for _, r in knn.iterrows()
               for c in knn.columns if c.startswith("seconds_per_run_") and pd.notna(r[c])}
    summary = summarize(rows, conf)
    comparison = compare(rows, conf)
    claims, decided = decide(summary, comparison, seconds, recall)
    if record.context is None:
        raise ValueError(f"{src / 'summary.json'} has no context (pools, machine) to write the verdict with")
    record.verdict = claims
    record.claims = [c.record() for c in decided]
    record.set_results(summary, record.stage_seconds)
    write_results(out, summary, comparison if len(comparison) else None, record, tables=False)
    atomic_write_text(out / "table.md", table_markdown(summary, comparison))
    atomic_write_text(out / "verdict.md", verdict_markdown(claims, summary, record.context, decided))
