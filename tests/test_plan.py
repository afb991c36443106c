"""config -> Plan -> the study's run(plan): the plan is built once, holds every checked setting, and is all a study
gets; dry_run=true prints it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from apphelp import app_config, run_inprocess

from ganeval.app import plan as plan_module
from ganeval.app.plan import Plan, describe
from ganeval.app.validate import build_plan
from ganeval.app.schema import ROOT_KEYS


def _plan(overrides: list[str]) -> Plan:
    return build_plan(app_config(overrides))


def test_the_plan_holds_typed_settings_options_inputs_and_outputs(tmp_path: Path) -> None:
    plan = _plan(["runs=7", "sample_size=300", "metrics.kid.subset_size=100", "n_generated=900", "batch_size=64", "train_epochs=2",
                  f"results_dir={tmp_path / 'res'}", f"models_dir={tmp_path / 'm'}", "cache_dir=null"])
    assert plan.name == "quickstart" and plan.study == "ganeval.studies.gan_table.run"
    assert (plan.settings.runs, plan.settings.sample_size) == (7, 300)
    assert plan.options == plan_module.Options(batch_size=64, cache_dir=None, models_dir=str(tmp_path / "m"),
                                               train_epochs=2, n_generated=900, plots=True, overwrite=False)
    assert plan.results_dir == tmp_path / "res" and plan.train_seeds == (0, 1, 2)
    roles = {i.key: i.role for i in plan.inputs}
    assert roles == {"data": "data", "features": "extractor", "generators.wgan": "generator to train",
                     "generators.wgan_gp": "generator to train"}
    assert "runs.csv" in plan.outputs and "report.html" in plan.outputs
    # the study's own keys and its input nodes, read-only; none of the keys the plan holds typed
    assert plan.params.title and "generators" in plan.params and "data" in plan.params
    assert not set(plan.params) & (set(ROOT_KEYS) - {"data", "features", "generator"})
    with pytest.raises(Exception, match="(?i)read-only"):
        plan.params.title = "changed"
    assert not (tmp_path / "res").exists() and not (tmp_path / "m").exists()  # building a plan writes nothing


def test_n_generated_null_is_twice_sample_size_and_ranges_are_checked_once(tmp_path: Path) -> None:
    assert _plan(["sample_size=300", "metrics.kid.subset_size=100", "n_generated=null",
                  f"results_dir={tmp_path}"]).options.n_generated == 600
    with pytest.raises(ValueError, match="batch_size must be"):
        _plan(["batch_size=0", f"results_dir={tmp_path}"])
    with pytest.raises(ValueError, match="n_generated must be"):
        _plan(["n_generated=0", f"results_dir={tmp_path}"])


def test_a_study_lists_and_checks_only_the_inputs_it_reads(tmp_path: Path) -> None:
    plan = _plan(["experiment=stability", f"results_dir={tmp_path}"])
    assert sorted(i.key for i in plan.inputs) == ["data", "features", "other"]
    assert plan.reads == ("data", "other", "features")
    # the root data of an experiment with datasets is not one of its inputs (heat_traces reads datasets)
    plan = _plan(["experiment=heat_traces", f"results_dir={tmp_path}"])
    assert all(i.key.startswith(("datasets.", "features")) for i in plan.inputs), plan.inputs


def test_dry_run_prints_the_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_inprocess(["dry_run=true", f"results_dir={tmp_path / 'res'}", "runs=5", "sample_size=200",
                             "metrics.kid.subset_size=100"])
    out = capsys.readouterr().out
    assert out.startswith("plan of experiment quickstart (ganeval.studies.gan_table.run)"), out
    assert "5 runs of 200 rows per pool" in out and "generators.wgan: generator to train, train arch=digits" in out
    assert f"outputs in {tmp_path / 'res'}" in out and "checked: keys and values" in out
    assert result["checked"] and not (tmp_path / "res").exists()


def test_describe_names_every_input_and_check() -> None:
    from ganeval.protocol import Settings

    plan = Plan(name="x", results_dir=Path("out"), device="cpu", config={}, study="m.run",
                settings=Settings(runs=3, sample_size=10, metrics={"fid": {}}, progress=False),
                inputs=(plan_module.Input("data", "data", "ganeval.data.array path=a.npy"),),
                outputs=("runs.csv",), checked=("keys and values",))
    text = describe(plan)
    assert "data: data, ganeval.data.array path=a.npy" in text and "metrics fid" in text
    assert "outputs in out (those that apply): runs.csv" in text and "checked: keys and values" in text


def test_a_study_gets_the_plan_and_not_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def fake_run(plan: Any) -> dict[str, Any]:
        seen["plan"] = plan
        return {}

    import ganeval.studies.stability as stability

    monkeypatch.setattr(stability, "run", fake_run)
    run_inprocess(["experiment=stability", f"results_dir={tmp_path / 'res'}", "runs=2", "sample_size=100", "metrics.kid.subset_size=50"])
    plan = seen["plan"]
    assert isinstance(plan, Plan) and dataclasses.is_dataclass(plan)
    assert plan.settings.sample_size == 100 and "halvings" in plan.params and "runs" not in plan.params


@pytest.mark.parametrize(("override", "message"), [
    ("data.size=abc", r"data.size='abc': ganeval.data.digits takes an integer there"),
    ("data.size=3.5", r"data.size=3.5: ganeval.data.digits takes an integer there"),
    ("+data.sizee=3", r"data.sizee: ganeval.data.digits takes no argument 'sizee' \(did you mean size\?\)"),
    ("features=inception", None),
])
def test_an_input_node_is_checked_against_its_targets_signature(tmp_path: Path, override: str,
                                                                 message: str | None) -> None:
    args = [override, f"results_dir={tmp_path}"]
    if message is None:
        _plan([*args, "features.channels_last=false", "features.weights=null"])  # right types pass
        with pytest.raises(ValueError, match=r"features.channels_last='maybe': .*InceptionExtractor takes true or false"):
            _plan([*args, "features.channels_last=maybe"])
        return
    with pytest.raises(ValueError, match=message):
        _plan(args)


def test_type_rules_of_the_node_schema() -> None:
    import os
    from typing import Literal, Optional, Sequence

    from ganeval.app.node_types import matches, words

    assert matches(3, int) and not matches(True, int) and not matches("3", int) and matches(3, float)
    assert matches("a.npy", str | os.PathLike) and matches(None, Optional[int]) and not matches(None, int)
    assert matches([1, 2], Sequence[int]) and not matches([1, "x"], list[int]) and not matches(3, list[int])
    assert matches("a", Literal["a", "b"]) and not matches("c", Literal["a", "b"])
    assert matches({"_target_": "torch.nn.Linear"}, int)  # a nested node is instantiated first
    assert words(int | None) == "an integer or null" and words(bool | str) == "true or false or a string"


def test_a_datasets_train_argument_is_not_a_generator_to_train(tmp_path: Path) -> None:
    plan = _plan(["experiment=paper_table", "include=[mnist]", f"results_dir={tmp_path}"])
    roles = {i.key: i.role for i in plan.inputs}
    assert roles["datasets.mnist.data"] == "data" and roles["datasets.mnist.generators.wgan"] == "generator to train"
    assert "datasets.celeba.data" not in roles  # left out by include


def test_dry_run_refuses_like_the_real_run(tmp_path: Path) -> None:
    """quickstart with sample_size=5000: both the dry run and the real run name the 1797 digits first (the dry run
    used to name the generated pool, whose fix, n_generated, would only lead to the data's refusal)."""
    for dry in ("true", "false"):
        with pytest.raises(ValueError, match=r"sample_size=5000 is larger than data \(1797 rows\)"):
            run_inprocess([f"dry_run={dry}", "sample_size=5000", f"results_dir={tmp_path / 'res'}"])
    assert not (tmp_path / "res").exists()


def test_describe_says_one_run() -> None:
    from ganeval.protocol import Settings

    plan = Plan(name="x", results_dir=Path("out"), device="cpu", config={}, study="m.run",
                settings=Settings(runs=1, sample_size=10, metrics={"fid": {}}, progress=False))
    assert "protocol: 1 run of 10 rows per pool" in describe(plan)


def test_a_missing_value_is_named_with_an_example_of_its_own(tmp_path: Path) -> None:
    """generator=samples without generator.path names generator.path, and no data.path example that is not its."""
    with pytest.raises(ValueError) as info:
        _plan(["experiment=benchmark", "data=digits", "generator=samples", f"results_dir={tmp_path}"])
    text = str(info.value)
    assert text.startswith("generator.path must be given: add generator.path=") and "data.path" not in text, text
    with pytest.raises(ValueError, match=r"data.path must be given: .*e\.g\. data\.path=/path/to/real\.npy"):
        _plan(["experiment=benchmark", "data=array", "generator=samples", "generator.path=x.npy",
               f"results_dir={tmp_path}"])
