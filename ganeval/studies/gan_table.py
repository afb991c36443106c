"""Real data against generators -> the paper's GAN table (experiments quickstart, paper_table, benchmark).

Datasets come from `datasets` (name -> {data, generators}) or, when that is empty, from the `data` group
with `generators` plus the `generator` group. Everything that can fail is checked before any training,
sampling or extraction starts. With several training seeds (`train_seeds`, or `replicas` of given
generators; the same number for every model of a dataset) each seed index is one protocol block and the
summary has two levels (per model and seed, per model across seeds). With `compare_to_paper: true`
(experiment=paper_table) the tables carry the paper's Table 1 beside ours and verdict.md says, from the interval of
each paired difference, whether the paper's ordering holds (see `ganeval.studies.paper_table`).
"""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd

from ganeval.app import generators, pipeline
from ganeval.app.plan import Plan, strict_bool
from ganeval.app.protocols import add_full_set
from ganeval.protocol.api import unique_names

log = logging.getLogger("ganeval")
INPUTS = ("data", "datasets", "generators", "generator", "features")  # the config keys it reads inputs from (its plan)
# the files it may write into results_dir (its plan lists them)
OUTPUTS = ("runs.csv", "runs.meta.json", "summary.csv", "summary.json", "comparison.csv", "summary_seeds.csv",
           "table.md", "table.tex", "verdict.md", "verdict.csv", "paper_cells.csv", "summary.png",
           "differences.png", "report.html")


def dataset_specs(cfg: Any, data_name: str = "data") -> dict[str, dict[str, Any]]:
    """name -> {"data": node, "generators": {model: node}, "given": the generator group's node or None}."""
    out: dict[str, dict[str, Any]] = {}
    datasets = cfg.get("datasets") or {}
    include = cfg.get("include")
    if datasets:
        names = list(include) if include else list(datasets)
        unknown = [n for n in names if n not in datasets]
        if unknown:
            raise ValueError(f"include names {unknown}, which are not in datasets {list(datasets)}")
        for label, name in zip(unique_names(names, "datasets"), names):
            spec = datasets[name]
            out[label] = {"data": spec.data, "generators": dict(spec.get("generators") or {}), "given": None}
    else:
        out[data_name] = {"data": cfg.data, "generators": dict(cfg.get("generators") or {}),
                          "given": cfg.get("generator")}
    for name, spec in out.items():
        if not spec["generators"] and spec["given"] is None:
            raise ValueError(
                f"dataset {name} has no generator to score: pick one with generator=checkpoint|module|callable|samples "
                "(and its path/target) or add generators.NAME={...}"
            )
    return out


def validate(plan: Plan) -> list[str]:
    """The dry run's check of this study (`ganeval.app.validate.check_plan` calls it): the datasets and models of
    quickstart / paper_table / benchmark, as far as the config tells."""
    from ganeval.app.validate import UnknownRows, plan_generator

    done = []
    specs = dataset_specs(plan.params, plan.choices.get("data") or "data")
    real = UnknownRows()
    for name, spec in specs.items():
        nodes = {m: n for m, n in spec["generators"].items() if n is not None}
        counts = {}
        for label, node in zip(unique_names(nodes, f"dataset {name} has the models"), nodes.values()):
            counts[label] = len(plan_generator(plan, real, node, f"{name}/{label}"))
        if spec["given"] is not None:
            counts["generator"] = len(plan_generator(plan, real, spec["given"], f"{name}/generator"))
        generators.seed_count({m: [None] * c for m, c in counts.items()}, f"dataset {name}")
        done.append(f"dataset {name}: models {', '.join(counts)}")
    return done


def plan_models(plan: Plan, real: Any, spec: dict[str, Any], data: str) -> dict[str, list[Any]]:
    """model label -> plans (train specs or generator objects, one per training seed) for one dataset, all checked
    and identified; the generator group's model comes last, under its own name (for replicas whose default names
    differ, e.g. files: the group's choice). Two models whose labels are equal, or unequal seed counts, are refused."""
    nodes = {model: node for model, node in spec["generators"].items() if node is not None}
    plans = {label: generators.plan_generator(plan, real, node, f"{data}/{label}")
             for label, node in zip(unique_names(nodes, f"dataset {data} has the models"), nodes.values())}
    if spec["given"] is not None:
        gens = generators.plan_generator(plan, real, spec["given"], f"{data}/generator")
        names = {str(getattr(g, "name", None) or "") for g in gens}  # replicas of files: each its own default name
        own = names.pop() if len(names) == 1 else None
        label = str(own or plan.choices.get("generator") or "generator")
        if label in plans:
            raise ValueError(f"the generator group's model is named {label!r} like one in generators; "
                             "rename it with generator.name=...")
        plans[label] = gens
    generators.seed_count(plans, f"dataset {data}")
    for label, seed_plans in plans.items():
        generators.identify_plan(plan, seed_plans, f"{data}/{label}", data_label(data))
    return plans


def data_label(name: str) -> str:
    """The name a dataset's real data is loaded (and hashed) under."""
    return f"data of {name}"


def run(plan: Plan) -> pd.DataFrame:
    """Train/load, sample, extract, run the protocol, and write the table (see module doc)."""
    cfg, settings = plan.params, plan.settings
    specs = dataset_specs(cfg, plan.choices.get("data") or "data")
    paper = cfg.get("compare_to_paper") is not None and strict_bool(cfg, "compare_to_paper")

    # 1. everything that can fail, before expensive work
    with plan.stage("load data"):
        reals = {name: pipeline.load_data(plan, s["data"], data_label(name)) for name, s in specs.items()}
    plans = {name: plan_models(plan, reals[name], s, name) for name, s in specs.items()}
    sizes: dict[str, int] = {}
    for name, models in plans.items():
        sizes[f"the real pool of {name}"] = len(reals[name])
        for model, seed_plans in models.items():
            for i, entry in enumerate(seed_plans):
                what = generators.seed_key(f"{name}/{model}", i, len(seed_plans))
                sizes[f"the generated pool of {what} (n_generated)"] = generators.pool_size(plan, entry)
    settings.check_pools(sizes)
    extractor = pipeline.make_extractor(plan)
    planned = {name: generators.planned_sets(plan, reals[name], models, extractor, name)
               for name, models in plans.items()}
    for sets in planned.values():  # sets of different dimension: default metrics narrowed, chosen ones refused, now
        generators.fit_dims(plan, sets)
    # another config's or other content's runs in results_dir: refused now (a dimension known only after extraction
    # may still narrow the default metrics, whose narrower identity is this config's too, or refuse chosen ones: then
    # overwrite=true clears the previous outputs only when the runs start)
    unknown = any(d is None for sets in planned.values() for _, d in sets.values())
    pipeline.open_results(plan, narrowable=generators.dims_unknown(plan, planned), clear=not unknown)

    # 2. generators, pools and features
    blocks = []
    dims: dict[str, int] = {}  # each set's feature dimension, recorded in summary.json
    for name, models in plans.items():
        with plan.stage("features"):
            real_f = pipeline.features(plan, reals[name], extractor, f"{name} (real)")
        dims[f"{name} (real)"] = int(real_f.shape[1])
        fakes: dict[str, list[Any]] = {}
        for model, seed_plans in models.items():
            fakes[model] = []
            for i, gen in enumerate(generators.realise_generators(plan, reals[name], seed_plans, name, model)):
                what = generators.seed_key(f"{name}/{model}", i, len(seed_plans))
                fake_f, shape = generators.generated_features(plan, gen, f"{name}/{model}", extractor, what)
                generators.fit_dims(plan, {f"{name} (real)": (reals[name].shape, int(real_f.shape[1])),
                                           what: (tuple(shape), int(fake_f.shape[1]))})
                dims[what] = int(fake_f.shape[1])
                fakes[model].append(fake_f)
        blocks += generators.seed_blocks(real_f, fakes, {"data": name})

    plan.record.dims = dims

    # 3. runs, summary, table
    rows = pipeline.score(plan, blocks)
    summary, comparison, seeds = pipeline.summarize(plan, rows)
    summary, seeds = add_full_set(plan, blocks, summary, seeds)  # a named protocol's full-set FID beside the intervals
    title = plan.title
    if paper:
        write_beside_paper(plan, summary, comparison, seeds, title)
    else:
        pipeline.write(plan, summary, comparison, title, seeds=seeds)
    return summary


def verdict_records(orderings: pd.DataFrame) -> list[dict[str, Any]]:
    """The orderings as summary.json's `verdict`: one dict per row, a NaN as null (JSON has no NaN)."""
    return [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
            for r in orderings.to_dict(orient="records")]


def write_beside_paper(plan: Plan, summary: pd.DataFrame, comparison: pd.DataFrame | None,
                       seeds: pd.DataFrame | None, title: str) -> None:
    """The result files with the paper's Table 1 beside ours: table.md/.tex, verdict.md/.csv and paper_cells.csv
    (`ganeval.studies.paper_table`), the orderings also in summary.json, and summary.png."""
    from ganeval.studies import paper_table

    cfg, s = plan.params, plan.settings
    differences = paper_table.protocol_differences(s.sample_size, s.runs, s.confidence, plan.record.extractor,
                                                   plan.options.train_epochs)
    stand_in = paper_table.stand_in(plan.record.extractor, cfg)
    orderings = paper_table.orderings(comparison, sorted(set(summary["data"].astype(str))), stand_in)
    plan.record.verdict = verdict_records(orderings)
    pipeline.write(plan, summary, comparison, title, tables=False, seeds=seeds)
    paper_table.write(plan.results_dir, summary, comparison, title, differences, str(cfg.get("note") or ""), stand_in)
    if plan.options.plots:
        from ganeval.results import plots

        plots.plot_summary(summary, plan.results_dir / "summary.png", title, seeds=seeds,
                           extractor=plan.record.extractor or None, runs=plots.stored_runs(plan.results_dir))


def regenerate(src: Any, out: Any, scratch: str | None = None) -> None:
    """Make a stored paper_table result's derived files again from its runs.csv and summary.json (no new runs):
    summaries, comparison, summary.json, table.md/.tex, verdict.md/.csv and paper_cells.csv into `out`; `scratch`
    names a temporary folder the run was made in, cut from the record's paths."""
    from ganeval.results import write_results
    from ganeval.results.record import RunRecord
    from ganeval.studies import paper_table
    from ganeval.studies.stored import read_record, read_runs, relative_paths, summarize_stored

    record, rows = read_record(src), read_runs(src)
    if scratch:
        record = RunRecord.from_dict(relative_paths(record.to_dict(), scratch), "summary.json")
    summary, comparison, seeds = summarize_stored(rows, record)
    cfg = record.config
    differences = paper_table.protocol_differences(int(cfg["sample_size"]), int(cfg["runs"]), float(cfg["confidence"]),
                                                   record.extractor, cfg.get("train_epochs"))
    stand_in = paper_table.stand_in(record.extractor, cfg)
    orderings = paper_table.orderings(comparison, sorted(set(summary["data"].astype(str))), stand_in)
    record.verdict = verdict_records(orderings)
    record.set_results(summary, record.stage_seconds)
    title = str(cfg.get("title") or "")
    write_results(out, summary, comparison, record, title=title, tables=False,
                  seeds=seeds if seeds is not None and "train_seed" in seeds.columns else None)
    paper_table.write(out, summary, comparison, title, differences, str(cfg.get("note") or ""), stand_in)
