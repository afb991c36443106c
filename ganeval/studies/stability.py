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
from typing import Any

import pandas as pd

from ganeval.app import pipeline
from ganeval.hashing import stable_hash
from ganeval.protocol import Block
from ganeval.results import write_csv, write_results
from ganeval.results.seeds import split_probe_draws
from ganeval.studies.stability_grid import (approx_recall, compare, cpu_model, knn_methods, plan_parts, read_timing,
                                            sample_sizes, split_halves, stored_runs, summarize, warm_up_approx)
from ganeval.studies.stability_grid import loglog_slope, variance_ratio_interval  # noqa: F401  (stability.NAME)
from ganeval.studies.stability_report import plot_stability, table_markdown, timing_table, verdict, verdict_markdown
from ganeval.studies.stability_report import RECALL_EXACT  # noqa: F401  (stability.NAME)

log = logging.getLogger("ganeval")


# --------------------------------------------------------------------------- the experiment
def run(ctx: pipeline.Context) -> pd.DataFrame:
    """Split data, extract, score every part of the grid, write summary, comparison, table, verdict and plot."""
    from ganeval.data.images import to_rgb
    from ganeval.protocol.api import store_identity
    from ganeval.protocol.store import check_store

    cfg, settings = ctx.cfg, ctx.settings
    sizes = sample_sizes(settings.sample_size, cfg.halvings)
    methods = knn_methods(cfg.knn_methods, settings.metrics["imd"]["knn"]) if "imd" in settings.metrics else []
    if settings.probe_repeats:
        raise ValueError("experiment=stability does not use probe_repeats (its rows are not curves): set probe_repeats=0")
    name = ctx.choices.get("data") or "data"
    other_name = ctx.choices.get("data@other") or "other"
    prep = to_rgb if pipeline.strict_bool(cfg, "color") else (lambda a: a)
    with ctx.stage("load data"):
        data = prep(pipeline.load_data(ctx, cfg.data, "data"))
        other = prep(pipeline.load_data(ctx, cfg.other, "other"))
    half = len(data) // 2
    settings.check_pools({f"each half of data ({name}, {len(data)} rows)": half, f"other ({other_name})": len(other)})
    parts = plan_parts(settings, sizes, methods)
    extractor = pipeline.make_extractor(ctx)
    overwrite = pipeline.strict_bool(cfg, "overwrite")
    for part in parts:  # another config's or other content's runs: refused before extraction
        identity = store_identity(part.settings, ctx.identity())
        check_store(part.directory(ctx.results_dir), stable_hash(identity), overwrite, identity)

    if overwrite:  # discard the stores of parts this grid no longer has, so results_dir holds one experiment
        import shutil

        planned = {part.directory(ctx.results_dir) for part in parts}
        for stale in sorted((ctx.results_dir / "runs").glob("n*-*")):
            if stale.is_dir() and stale not in planned:
                shutil.rmtree(stale)
    with ctx.stage("features"):
        feats = pipeline.features(ctx, data, extractor, name)
        other_f = pipeline.features(ctx, other, extractor, other_name)
    if feats.shape[1] != other_f.shape[1]:
        raise ValueError(f"other has {other_f.shape[1]} features, data {feats.shape[1]}: give both one shape "
                         "(one image size and channel count, color=true for grey against colour)")
    a, b = split_halves(feats, int(cfg.split_seed))
    fakes = [({"pair": "same"}, b), ({"pair": "different"}, other_f)]
    chunks, seconds, loads = [], {}, []
    timings: dict[str, dict[str, Any]] = {}
    warmed = False
    for part in parts:
        directory = part.directory(ctx.results_dir)
        todo = settings.runs - (0 if overwrite else min(stored_runs(directory), settings.runs))
        if part.knn == "approx" and todo and not warmed:
            with ctx.stage("compile pynndescent"):
                warm_up_approx()
            warmed = True
        groups = {"n": part.n, **({"knn": part.knn} if part.knn else {})}
        stage = f"runs n={part.n} {part.name}"
        with ctx.stage(stage):
            from ganeval.protocol import run_blocks

            rows = run_blocks([Block(a, fakes, groups)], part.settings, directory, ctx.identity(), overwrite)
        if todo:  # the time per run of the runs made now, kept beside them (a resumed part keeps its time)
            from ganeval.results import write_json

            write_json({"seconds_per_run": ctx.stage_seconds[stage] / todo, "runs_timed": todo,
                        "load_1min": round(os.getloadavg()[0], 2), "cpu": cpu_model(), "device": settings.device},
                       directory / "timing.json")
        timing = read_timing(directory)
        if part.knn == "approx" and "approx_recall" not in timing:  # measured once, kept beside the part's runs
            if not warmed:
                with ctx.stage("compile pynndescent"):
                    warm_up_approx()
                warmed = True
            with ctx.stage("approx kNN recall"):
                timing["approx_recall"] = approx_recall(a, part.settings, part.n)
            from ganeval.results import write_json

            write_json(timing, directory / "timing.json")
        timings[f"n{part.n}-{part.name}"] = timing
        if "seconds_per_run" in timing:
            seconds[f"n{part.n}-{part.name}"] = float(timing["seconds_per_run"])
            loads.append(float(timing.get("load_1min", math.nan)))
        chunks.append(split_probe_draws(rows)[0])
    recall = {int(key[1:].split("-")[0]): float(t["approx_recall"]) for key, t in timings.items() if "approx_recall" in t}
    rows = pd.concat(chunks, ignore_index=True)
    rows["knn"] = rows["knn"].fillna("") if "knn" in rows else ""
    summary = summarize(rows, settings.confidence)
    comparison = compare(rows, settings.confidence)
    claims = verdict(summary, comparison, seconds, recall)

    context = {"description": f"{name} halves vs {other_name}", "runs": settings.runs, "confidence": settings.confidence,
               "pools": f"two halves of {name} with {half} rows each, {other_name} with {len(other)} rows, "
                        f"{feats.shape[1]}-d features",
               "machine": f"{cpu_model()}, {os.cpu_count()} cores, 1-min load average {min(loads, default=math.nan):.1f}–"
                          f"{max(loads, default=math.nan):.1f} while the parts ran (knn.csv)"}
    ctx.record.verdict = claims
    ctx.record.context = context
    ctx.record.knn = "+".join(methods) or None  # pipeline.write would record metrics.imd.knn, not the methods run
    ctx.record.set_results(summary, ctx.stage_seconds)
    write_results(ctx.results_dir, summary, comparison if len(comparison) else None, ctx.record, tables=False)
    write_csv(timing_table(sizes, parts, timings, recall), ctx.results_dir / "knn.csv")
    from ganeval.common import atomic_write_text

    atomic_write_text(ctx.results_dir / "table.md", table_markdown(summary, comparison))
    atomic_write_text(ctx.results_dir / "verdict.md", verdict_markdown(claims, summary, context))
    if pipeline.strict_bool(cfg, "plots"):
        plot_stability(summary, ctx.results_dir / "stability.png")
    for c in claims:
        log.info("%s: %s", c["claim"], c["holds"])
    return summary


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
    claims = verdict(summary, comparison, seconds, recall)
    if record.context is None:
        raise ValueError(f"{src / 'summary.json'} has no context (pools, machine) to write the verdict with")
    record.verdict = claims
    record.set_results(summary, record.stage_seconds)
    write_results(out, summary, comparison if len(comparison) else None, record, tables=False)
    atomic_write_text(out / "table.md", table_markdown(summary, comparison))
    atomic_write_text(out / "verdict.md", verdict_markdown(claims, summary, record.context))
