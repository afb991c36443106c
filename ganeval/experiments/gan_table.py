"""Real data against generators -> the paper's GAN table (experiments quickstart, paper_table, benchmark).

Datasets come from `datasets` (name -> {data, generators}) or, when that is empty, from the `data` group
with `generators` plus the `generator` group. Everything that can fail is checked before any training,
sampling or extraction starts.
"""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd

from ganeval.experiments import common
from ganeval.protocol import Block, check_sizes
from ganeval.results import compare_runs, summarize_runs

log = logging.getLogger("ganeval")
GIVEN = "__generator__"


def dataset_specs(cfg: Any, data_name: str = "data") -> dict[str, dict[str, Any]]:
    """name -> {"data": node, "generators": {model: node}} for the datasets this run scores."""
    out: dict[str, dict[str, Any]] = {}
    datasets = cfg.get("datasets") or {}
    include = cfg.get("include")
    if datasets:
        names = list(include) if include else list(datasets)
        unknown = [n for n in names if n not in datasets]
        if unknown:
            raise ValueError(f"include names {unknown}, which are not in datasets {list(datasets)}")
        for name in names:
            spec = datasets[name]
            out[name] = {"data": spec.data, "generators": dict(spec.get("generators") or {})}
    else:
        gens = dict(cfg.get("generators") or {})
        if cfg.get("generator") is not None:
            gens[GIVEN] = cfg.generator  # renamed to the generator's own name once built
        out[data_name] = {"data": cfg.data, "generators": gens}
    for name, spec in out.items():
        if not spec["generators"]:
            raise ValueError(
                f"dataset {name} has no generator to score: pick one with generator=checkpoint|module|callable|samples "
                "(and its path/target) or add generators.NAME={...}"
            )
    return out


def run(ctx: common.Context) -> pd.DataFrame:
    """Train/load, sample, extract, run the protocol, and write the table (see module doc)."""
    cfg = ctx.cfg
    metrics = common.metric_options(cfg)
    specs = dataset_specs(cfg, ctx.choices.get("data") or "data")
    n_gen = common.n_generated(cfg)

    # 1. everything that can fail, before expensive work
    with ctx.stage("load data"):
        reals = {name: common.load_data(s["data"], f"data of {name}") for name, s in specs.items()}
    given: dict[str, dict[str, Any]] = {}
    sizes: dict[str, int] = {}
    for name, s in specs.items():
        sizes[f"the real pool of {name}"] = len(reals[name])
        given[name] = common.build_generators(ctx, reals[name], s["generators"], name, validate_only=True)
        if GIVEN in given[name]:
            gen = given[name].pop(GIVEN)
            label = str(getattr(gen, "name", None) or ctx.choices.get("generator") or "generator")
            if label in s["generators"]:
                raise ValueError(f"the generator group's model is named {label!r} like one in generators; "
                                 "rename it with generator.name=...")
            given[name][label] = gen
            s["generators"][label] = s["generators"].pop(GIVEN)
        for model, node in s["generators"].items():
            gen = given[name].get(model)
            size = common.pool_size(ctx, gen) if gen is not None else n_gen
            sizes[f"the generated pool of {name}/{model} (n_generated)"] = size
    check_sizes(int(cfg.sample_size), sizes, metrics)
    extractor = common.make_extractor(ctx)

    # 2. generators, pools and features
    blocks = []
    generators: dict[str, dict[str, Any]] = {}
    ctx.record.generators = generators
    for name, s in specs.items():
        with ctx.stage("features"):
            real_f = common.features(ctx, reals[name], extractor, f"{name} (real)")
        fakes = []
        for model, node in s["generators"].items():
            gen = given[name].get(model)
            if gen is None:
                gen = common.train_generator(ctx, reals[name], _plain(node.train), name, model)
            generators[f"{name}/{model}"] = common.generator_identity(gen)
            pool = common.generated_pool(ctx, gen, f"{name}/{model}")
            with ctx.stage("features"):
                fakes.append(({"model": model}, common.features(ctx, pool, extractor, f"{name}/{model}")))
        blocks.append(Block(real_f, fakes, {"data": name}))

    # 3. runs, summary, table
    rows = common.score(ctx, blocks, metrics)
    summary = summarize_runs(rows, float(cfg.confidence), int(cfg.sample_size))
    comparison = compare_runs(rows, float(cfg.confidence)) if rows["model"].nunique() > 1 else None
    title = str(cfg.get("title") or ctx.name)
    common.write(ctx, summary, comparison, title, metrics=metrics)
    return summary


def _plain(node: Any) -> dict[str, Any]:
    from omegaconf import OmegaConf

    out = OmegaConf.to_container(node, resolve=True)
    assert isinstance(out, dict)
    return out
