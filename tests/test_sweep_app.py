"""App-layer helpers pinned at every branch: node schemas, sample grids, resolvers, Python words, defaults, paths and
the generated help (ganeval/app/)."""

from __future__ import annotations

import collections.abc
import os
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Optional, Sequence, Union

import pytest

from ganeval.app.node_types import check_node, matches, words

_CASES: list[tuple[Any, Any, bool]] = [
    (Any, None, True), (Any, object(), True),
    (int, 3, True), (int, True, False), (int, 3.0, False), (int, None, False), (int, "3", False),
    (float, 3, True), (float, 3.5, True), (float, False, False), (float, "1", False),
    (bool, True, True), (bool, 1, False),
    (str, "a", True), (str, 1, False),
    (Path, "p", True), (Path, 1, False), (os.PathLike, "p", True), (os.PathLike, None, False),
    (type(None), None, True), (type(None), 0, False),
    (Optional[int], None, True), (Optional[int], 2, True), (Optional[int], "2", False),
    (Union[int, str], "x", True), (Union[int, str], 1.5, False), (int | None, None, True), (int | str, [], False),
    (Literal["a", "b"], "a", True), (Literal["a", "b"], "c", False), (Literal[1], True, True),
    (list[int], [1, 2], True), (list[int], [1, "2"], False), (list[int], (1,), True), (list[int], 1, False),
    (list, [1, "a"], True), (Sequence[str], ["a"], True), (Sequence[str], "ab", False),
    (tuple[int, ...], [1, 2], True), (tuple[int, ...], [1, 2.5], False), (tuple[int, str], [1, "a"], True),
    (tuple[int, str], [1, 2], True),  # two element types: not checked one by one
    (dict[str, int], {"a": 1}, True), (dict, [1], False), (Mapping[str, Any], {}, True),
    (Callable[..., Any], "pkg.fn", True), (Callable[..., Any], print, True), (Callable[..., Any], 3, False),
    (collections.abc.Callable, "pkg.fn", True),
    (int, {"_target_": "x.y"}, True), (list[int], {"_target_": "x.y"}, True), (Literal["a"], None, False),
    (bytes, 3, True),  # a kind the config cannot spell: its call checks it
]


@pytest.mark.parametrize("hint, value, ok", _CASES)
def test_a_value_matches_its_annotation(hint: Any, value: Any, ok: bool) -> None:
    assert matches(value, hint) is ok


@pytest.mark.parametrize("hint, text", [
    (int, "an integer"), (float, "a number"), (bool, "true or false"), (str, "a string"), (Path, "a path"),
    (os.PathLike, "a path"), (Optional[int], "an integer or null"), (Union[int, str], "an integer or a string"),
    (Union[str, Path, None], "a string or a path or null"), (Union[Path, os.PathLike], "a path"),
    (Literal["a", 2], "one of 'a', 2"), (list[int], "a list"), (Sequence[str], "a list"), (tuple, "a list"),
    (dict[str, int], "a mapping"), (Mapping, "a mapping"), (bytes, "bytes"),
])
def test_an_annotation_in_words(hint: Any, text: str) -> None:
    assert words(hint) == text


def _target(a: int, b: Optional[str] = None, *, c: list[float] | None = None) -> None:
    """A node target for the tests below."""


def _open(a: int, **kw: Any) -> None:
    """A target taking any keyword."""


class _Cls:
    def __init__(self, size: int = 1) -> None:
        self.size = size


def test_a_nodes_keys_and_values_are_checked_against_its_target() -> None:
    here = f"{__name__}._target"
    check_node("data", {"_target_": here, "a": 1, "b": None, "c": [1, 2.5]})
    check_node("data", {"_target_": here, "a": "???", "_other_": 3})  # missing values and private keys: skipped
    with pytest.raises(ValueError, match=rf"^data.d: {here} takes no argument 'd' \(it takes: a, b, c\)$"):
        check_node("data", {"_target_": here, "d": 1})
    with pytest.raises(ValueError, match=r"^data.aa: .* takes no argument 'aa' \(did you mean a\?\) \(it takes: a, b, c\)$"):
        check_node("data", {"_target_": here, "aa": 1})
    with pytest.raises(ValueError, match=rf"^data.a='1': {here} takes an integer there$"):
        check_node("data", {"_target_": here, "a": "1"})
    with pytest.raises(ValueError, match=r"^data.c=\['x'\]: .* takes a list or null there$"):
        check_node("data", {"_target_": here, "c": ["x"]})
    check_node("data", {"_target_": f"{__name__}._open", "a": 1, "anything": object()})
    with pytest.raises(ValueError, match="takes an integer there"):
        check_node("data", {"_target_": f"{__name__}._open", "a": 1.5})
    check_node("f", {"_target_": f"{__name__}._Cls", "size": 2})
    with pytest.raises(ValueError, match=r"^f.scale: .* takes no argument 'scale' \(it takes: size\)$"):
        check_node("f", {"_target_": f"{__name__}._Cls", "scale": 2})
    check_node("f", {"_target_": "no.such.module.fn", "x": 1})  # unknown targets are named elsewhere
    check_node("f", {"x": 1})


# ------------------------------------------------------------------------------------------------------------------
# `ganeval-score`'s sample grids (ganeval/app/score_samples.py)
# ------------------------------------------------------------------------------------------------------------------
def test_the_grid_draw_is_its_own_sorted_stream() -> None:
    import numpy as np

    from ganeval.app.score_samples import GRID_SAMPLES, GRID_STREAM, sample_indices

    assert (GRID_SAMPLES, GRID_STREAM) == (16, 0x6772)
    want = np.sort(np.random.default_rng([5, 0x6772]).choice(100, 16, replace=False))
    assert np.array_equal(sample_indices(100, 5), want)
    assert np.array_equal(sample_indices(16, 5), np.arange(16))  # n == count: every row
    assert np.array_equal(sample_indices(3, 5, count=4), np.arange(3))
    assert len(sample_indices(17, 5)) == 16


def test_grid_names_keep_position_and_a_safe_name() -> None:
    from ganeval.app.score_samples import grid_name

    assert grid_name(0, "real_cifar 10/train") == "samples_0_real_cifar_10_train.png"
    assert grid_name(2, "..a b..") == "samples_2_a_b.png"
    assert grid_name(1, "///") == "samples_1_set.png"
    assert grid_name(3, "v1.2-x_y") == "samples_3_v1.2-x_y.png"


def test_tiles_larger_than_the_limit_shrink_keeping_their_aspect() -> None:
    import numpy as np
    from PIL import Image

    from ganeval.app.score_samples import TILE_MAX, fit_tiles

    assert TILE_MAX == 128
    rng = np.random.default_rng(0)
    same = rng.integers(0, 256, (2, 3, 128, 64), dtype=np.uint8)
    assert fit_tiles(same) is same
    big = rng.integers(0, 256, (2, 3, 129, 40), dtype=np.uint8)
    got = fit_tiles(big)
    size = (round(40 * 128 / 129), 128)
    want = np.asarray(Image.fromarray(big[1].transpose(1, 2, 0)).resize(size, Image.Resampling.BILINEAR))
    assert got.shape == (2, 3, 128, size[0]) and np.array_equal(got[1], want.transpose(2, 0, 1))
    grey = rng.integers(0, 256, (1, 1, 10, 1000), dtype=np.uint8)
    out = fit_tiles(grey, most=100)
    assert out.shape == (1, 1, 1, 100)  # 10 × 0.1 = 1 row: at least one
    want = np.asarray(Image.fromarray(grey[0, 0]).resize((100, 1), Image.Resampling.BILINEAR))
    assert np.array_equal(out[0, 0], want)


# ------------------------------------------------------------------------------------------------------------------
# The root config's resolvers (ganeval/app/resolvers.py)
# ------------------------------------------------------------------------------------------------------------------
def test_resolver_helpers_read_given_values_only() -> None:
    from omegaconf import OmegaConf

    from ganeval.app import resolvers as R

    assert R._first(None, "b") == "b" and R._first("", "b") == "b" and R._first("a", "b") == "a"
    assert R._first(0, "b") == 0
    assert R._label("cifar 10/x..") == "cifar_10_x" and R._label("..") == "x"
    node = OmegaConf.create({"path": "/d/sets/my.data.npz", "name": None, "missing": "???"})
    assert R._value(node, "path") == "/d/sets/my.data.npz"
    assert R._value(node, "name") is None and R._value(node, "missing") is None and R._value(node, "absent") is None
    assert R._value({"path": "x"}, "path") is None  # a plain dict is not a config node
    assert R._stem(node, "path") == "my.data" and R._stem(node, "name") is None


@pytest.fixture
def no_hydra_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Hydra app is running (an earlier test of the process may have set HydraConfig, as apphelp does)."""
    from hydra.core.hydra_config import HydraConfig

    monkeypatch.setattr(HydraConfig, "initialized", staticmethod(lambda: False))


def test_model_labels_name_each_model_as_the_tables_do(no_hydra_run: None) -> None:
    from omegaconf import OmegaConf

    from ganeval.app.resolvers import model_labels

    cfg = OmegaConf.create({"generators": {"a": {}, "b": {}}, "generator": {"name": "g", "path": "p/x.npz"}})
    assert model_labels(cfg) == ["a", "b", "g"]
    assert model_labels(OmegaConf.create({"generator": {"path": "p/x.npz", "function": "f"}})) == ["x"]
    assert model_labels(OmegaConf.create({"generator": {"function": "pkg.f"}})) == ["pkg.f"]
    assert model_labels(OmegaConf.create({"generator": {"other": 1}})) == ["generator"]
    assert model_labels(OmegaConf.create({"generator": {"other": 1},
                                          "hydra": {"runtime": {"choices": {"generator": "quick"}}}})) == ["quick"]
    assert model_labels(OmegaConf.create({"data": {}})) == []


def test_a_benchmarks_folder_names_its_data_and_models_and_hashes_them(no_hydra_run: None) -> None:
    from omegaconf import OmegaConf

    from ganeval.app.resolvers import benchmark_dir
    from ganeval.hashing import stable_hash

    cfg = OmegaConf.create({"data": {"path": "/x/cifar.npz"}, "generators": {"m 1": {"path": "a.npz"}}})
    nodes = {"data": {"path": "/x/cifar.npz"}, "generator": None, "generators": {"m 1": {"path": "a.npz"}}}
    assert benchmark_dir(cfg) == f"results/benchmark/cifar-vs-m_1-{stable_hash(nodes, 6)}"
    other = OmegaConf.create({"data": {"path": "/y/cifar.npz"}, "generators": {"m 1": {"path": "a.npz"}}})
    assert benchmark_dir(other) != benchmark_dir(cfg)
    bare = OmegaConf.create({"hydra": {"runtime": {"choices": {"data": "digits"}}}})
    assert benchmark_dir(bare).startswith("results/benchmark/digits-vs-nothing-")
    assert benchmark_dir(OmegaConf.create({})).startswith("results/benchmark/data-vs-nothing-")


# ------------------------------------------------------------------------------------------------------------------
# A refusal in a Python caller's words (ganeval/app/python_words.py)
# ------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command, python", [
    ("use --option kid.subset_size=50, then", 'use metrics={"kid": {"subset_size": 50}}, then'),
    ("set --option kid.degree", 'set metrics={"kid": {"degree": ...}}'),
    ("--option METRIC.OPTION=VALUE", 'metrics={"METRIC": {"OPTION": VALUE}}'),
    ("pass --no-download here", "pass download=False here"),
    ("drop --runs", "drop runs="), ("drop --runs 5", "drop runs=5"), ("drop --bogus", "drop --bogus"),
    ("give --overwrite", "give overwrite=True"), ("--no-plots", "plots=False"), ("--no-samples", "samples=False"),
    ("--quiet", "progress=False"),
    ("--runs 5", "runs=5"), ("--runs N", "runs=N"), ("--sample-size -3", "sample_size=-3"), ("--dims 2.5e3", "dims=2.5e3"),
    ("--features dinov2", 'features="dinov2"'), ("--features unknownx", "features unknownx"),
    ("--resize clean", 'resize="clean"'), ("--layout nhwc", 'layout="nhwc"'),
    ("--weights w/a.pt", 'weights="w/a.pt"'), ("--weights FILE", "weights=FILE"), ("--out results_1", 'out="results_1"'),
    ("--out here", "out here"), ("--cache-dir /data/x", 'cache_dir="/data/x"'), ("--save-ref r.npz", 'save_ref="r.npz"'),
    ("--vocab", "vocab"), ("--bogus 3", "--bogus 3"),
    ("set features.weights=FILE", "set weights=FILE"),
    ("x (+generator.layout=nchw, or +generators.NAME.layout=nhwc, in a config) y", "x y"),
    ("(config 'generator/samples')", "(a samples generator)"), ("REAL and FAKE", "real and fakes"),
])
def test_each_command_word_has_its_python_word(command: str, python: str) -> None:
    from ganeval.app.python_words import in_python

    assert in_python(command) == python


# ------------------------------------------------------------------------------------------------------------------
# Defaults declared in two places agree (ganeval/app/schema.py, ganeval/app/score_request.py)
# ------------------------------------------------------------------------------------------------------------------
def test_the_root_configs_defaults_are_the_papers_protocol_and_settings() -> None:
    import dataclasses

    from ganeval.app.schema import RootConfig
    from ganeval.protocol.settings import Settings

    d = {f.name: (f.default_factory() if f.default is dataclasses.MISSING else f.default)  # type: ignore[misc]
         for f in dataclasses.fields(RootConfig)}
    s = Settings()
    assert (d["runs"], d["sample_size"], d["confidence"], d["seed"], d["workers"], d["probe_repeats"]) == (
        s.runs, s.sample_size, s.confidence, s.seed, s.workers, s.probe_repeats) == (100, 10000, 0.99, 0, 1, 0)
    assert (d["batch_size"], d["cache_dir"], d["models_dir"], d["plugins"]) == (250, ".cache/ganeval", "models", [])
    assert (d["overwrite"], d["progress"], d["plots"], d["dry_run"]) == (False, True, True, False)
    assert all(d[k] is None for k in ("n_generated", "device", "results_dir", "train_epochs", "train_seeds",
                                      "run_experiment", "data", "features", "metrics", "generator"))


def test_a_score_requests_defaults_are_score_s_and_the_commands() -> None:
    import dataclasses
    import inspect

    import ganeval
    from ganeval.app.score import parser
    from ganeval.app.score_request import ScoreRequest

    fields = {f.name: f for f in dataclasses.fields(ScoreRequest)}
    req = ScoreRequest("r", ())
    shared = [n for n, p in inspect.signature(ganeval.score).parameters.items()
              if n in fields and p.default is not inspect.Parameter.empty and n not in ("metrics", "num_workers")]
    assert len(shared) >= 25
    for name in shared:
        assert getattr(req, name) == inspect.signature(ganeval.score).parameters[name].default, name
    assert req.metrics == {"imd": {}, "fid": {}, "kid": {}} and req.num_workers == 0
    assert (req.labels, req.said, req.default_metrics) == ((), (), False)
    cli = vars(parser().parse_args(["REAL", "FAKE"]))
    for name in ("runs", "sample_size", "confidence", "seed", "layout", "overwrite", "device", "size", "dims"):
        assert cli[name] == getattr(req, name), name
    assert cli["no_download"] is not req.download and cli["no_plots"] is not req.plots
    assert cli["no_samples"] is not req.samples and cli["quiet"] is not req.progress


# ------------------------------------------------------------------------------------------------------------------
# Paths (ganeval/app/paths.py) and the generated help (ganeval/app/help.py)
# ------------------------------------------------------------------------------------------------------------------
def test_results_folders_and_writability(tmp_path: Path) -> None:
    from ganeval.app.paths import CUSTOM, check_writable, config_dir, default_results_dir

    assert (config_dir() / "config.yaml").is_file() and config_dir().name == "configs"
    assert default_results_dir("x/y", "blur") == Path("x/y")
    assert default_results_dir(None, "blur") == Path("results/blur") and default_results_dir("", None) == Path(
        "results") / CUSTOM == Path("results/custom")
    check_writable(tmp_path / "a" / "b", "out")  # made later: its nearest existing part is writable
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match=rf"^out={tmp_path / 'f' / 'sub'} cannot be made: {tmp_path / 'f'} is a "
                                         "file; choose another out$"):
        check_writable(tmp_path / "f" / "sub", "out")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):  # root writes anywhere: nothing to refuse
            check_writable(ro / "x", "results_dir")
        else:
            with pytest.raises(ValueError, match=r"^results_dir=.* is not writable \("):
                check_writable(ro / "x", "results_dir")
    finally:
        ro.chmod(0o700)


def test_an_output_inside_an_input_folder_is_refused(tmp_path: Path) -> None:
    from ganeval.app.paths import check_not_inside_inputs

    inp = tmp_path / "imgs"
    (inp / "sub").mkdir(parents=True)
    (tmp_path / "file.npz").write_text("x")
    check_not_inside_inputs(tmp_path / "out", [inp, tmp_path / "file.npz", tmp_path / "none"], "out")
    with pytest.raises(ValueError, match=rf"^out={inp} is the input folder {inp}: ganeval would write"):
        check_not_inside_inputs(inp, [inp], "out")
    with pytest.raises(ValueError, match=r"is inside the input folder .*; choose out outside every input$"):
        check_not_inside_inputs(inp / "sub" / "new", [str(inp)], "out")
    link = tmp_path / "link"
    link.symlink_to(inp)
    with pytest.raises(ValueError, match="is inside the input folder"):
        check_not_inside_inputs(link / "r", [inp], "out")  # through a link too
    check_not_inside_inputs(tmp_path / "imgs2", [inp], "out")  # a sibling whose name starts alike


def test_config_input_paths_collects_paths_and_replicas() -> None:
    from ganeval.app.paths import config_input_paths

    cfg = {"data": {"path": "a.npz", "other": 1}, "hydra": {"path": "x"},
           "generators": {"m": {"path": Path("b"), "replicas": ["c", 3, Path("d")]}, "n": [{"path": "e"}]},
           "replicas": "not a list", "path": 5}
    assert config_input_paths(cfg) == ["a.npz", "b", "c", "d", "e"]
    assert config_input_paths([{"path": "z"}, "path"]) == ["z"] and config_input_paths("path") == []


def test_help_lines_are_cut_at_a_word() -> None:
    from ganeval.app import help as H

    assert H.WIDTH == 110
    assert H._shorten("a" * 110) == "a" * 110
    assert H._shorten("word " * 30) == ("word " * 21).rstrip() + "…"  # cut at the last space of the first 109
    assert len(H._shorten("word " * 30)) <= 110
    assert H._shorten("aa bb, cc", 8) == "aa bb…"
    assert H.first_sentence("One thing. Then more.") == "One thing."
    assert H.first_sentence("Version 1.2 is here. Then") == "Version 1.2 is here."
    assert H.first_sentence("No end") == "No end" and H.first_sentence("Ends here.") == "Ends here."
    text = "# @package _global_\n# First line\n#\n#   of the comment. Next.\nkey: 1\n# not this\n"
    assert H._leading_comment(text) == "First line of the comment. Next."
    assert H._leading_comment("key: 1\n# late\n") == ""


def test_help_shows_each_kind_of_value(tmp_path: Path) -> None:
    from omegaconf import OmegaConf

    from ganeval.app import help as H

    assert [H._show(v) for v in (None, True, False, 10, 0.5, "x")] == ["null", "true", "false", "10", "0.5", "x"]
    assert H._show([0, 1, None]) == "[0, 1, null]"
    assert H._show({"_target_": "a.b", "k": 1}) == "{_target_: a.b, ...}"
    assert H._show({"k": True, "j": [1]}) == "{k: true, j: [1]}"
    assert H._show(OmegaConf.create({"k": None})) == "{k: null}"
    assert H._show(list(range(30))).endswith("…") and len(H._show(list(range(30)))) <= 40
    (tmp_path / "experiment").mkdir()
    (tmp_path / "experiment" / "b.yaml").write_text("# @package _global_\n# Bee runs. More.\nx: 1\n")
    (tmp_path / "experiment" / "a.yaml").write_text("x: 1\n")
    assert H.experiment_descriptions(tmp_path) == {
        "a": "(no description: its yaml opens with no comment)", "b": "Bee runs."}
    with pytest.raises(ValueError, match=r"^ganeval.help: no part 'other' \(experiments or keys\)$"):
        H.part("other", None)
    assert "$$" in H.part("experiments", None) or "$" not in H.part("experiments", None)
