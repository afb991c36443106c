"""One home per extractor: the registry (`ganeval.features.base.REGISTRY`) declares each name, its dimension(s),
resize modes, weights option and defaults; ganeval-score's flags, the Hydra `features` group and the docs table
agree with it, and a plugin's extractor reaches ganeval-score."""

from __future__ import annotations

import inspect
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from omegaconf import OmegaConf

from ganeval.app.main import config_dir
from ganeval.app.score import main, parser
from ganeval.features.base import REGISTRY, ExtractorEntry
from ganeval.metrics import fid

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = {n: e for n, e in REGISTRY.items() if e.cls.__module__.startswith("ganeval.")}


def features_node(name: str) -> Any:
    """`ganeval/configs/features/NAME.yaml` with its `defaults` (another file of the group, then itself) applied."""
    node = OmegaConf.load(config_dir() / "features" / f"{name}.yaml")
    merged = OmegaConf.create()
    for item in node.pop("defaults", []):
        merged = OmegaConf.merge(merged, node if item == "_self_" else features_node(str(item)))
    return merged if len(merged) else node


def class_of(target: str) -> type:
    import importlib

    module, _, attr = target.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def default_of(entry: ExtractorEntry, option: str) -> Any:
    """An option's value when the entry is made without options: its preset, else the class's default."""
    if option in entry.options:
        return entry.options[option]
    return inspect.signature(entry.cls).parameters[option].default


def test_the_features_config_group_is_the_registry() -> None:
    """Every shipped name has its config and every config a name; each config selects the entry's class with its
    preset options, its default resize mode and dimension, and a weights key exactly when the entry takes one."""
    from ganeval.features.inception import resize_mode

    files = {p.stem for p in (config_dir() / "features").glob("*.yaml")}
    assert files == set(SHIPPED)
    for name, entry in SHIPPED.items():
        node = OmegaConf.to_container(features_node(name))
        assert class_of(node["_target_"]) is entry.cls, name
        for key, value in entry.options.items():
            assert node[key] == value, (name, key)
        assert ("weights" in node) == entry.weights == ("weights" in inspect.signature(entry.cls).parameters), name
        if entry.resize:
            given = node.get("resize", default_of(entry, "resize"))
            norm = resize_mode if entry.cls.__name__ == "InceptionExtractor" else str
            assert norm(given) == norm(default_of(entry, "resize")) == entry.resize[0], name
        if len(entry.dims) > 1:
            assert node.get("dims", default_of(entry, "dims")) == default_of(entry, "dims") == entry.dims[0], name


@pytest.mark.parametrize("name", ["inception", "inception_spatial", "inception_logits", "dinov2", "pixels"])
def test_declared_dimension_is_what_the_extractor_gives(name: str) -> None:
    """The dimension an entry declares is its extractor's at the defaults (known before extracting)."""
    entry = REGISTRY[name]
    ex = entry.make()
    if entry.dims:
        assert ex.feature_dim((10, 3, 32, 32)) == entry.dims[0]
    else:  # pixels: the input's C·H·W
        assert ex.feature_dim((10, 3, 32, 32)) == 3 * 32 * 32 and ex.feature_dim((10, 28, 28)) == 28 * 28


def test_clip_dimension_from_open_clip() -> None:
    pytest.importorskip("open_clip")
    for name in ("clip", "clip_l14_336"):
        assert REGISTRY[name].make().feature_dim((1, 3, 8, 8)) == REGISTRY[name].dims[0] == 768


def test_score_flags_are_built_from_the_registry() -> None:
    actions = {a.dest: a for a in parser()._actions}
    assert list(actions["features"].choices) == list(REGISTRY)
    assert set(actions["resize"].choices) == {m for e in REGISTRY.values() for m in e.resize}
    assert set(actions["dims"].choices) == {d for e in REGISTRY.values() if len(e.dims) > 1 for d in e.dims}
    for name, entry in REGISTRY.items():
        assert name in actions["features"].help and (not entry.help or entry.help in actions["features"].help)
        if entry.weights:
            assert f"{name}," in actions["weights"].help or f"{name} (" in actions["weights"].help


def registry_table() -> str:
    """The extractor table of docs/scoring.md as the registry says it."""
    rows = ["| `--features` | dimension (default first) | `--resize` (default first) | `--weights` | what |",
            "|---|---|---|---|---|"]
    for name, e in SHIPPED.items():
        dims = ", ".join(map(str, e.dims)) if e.dims else "the input's"
        modes, weights = ", ".join(e.resize) or "—", "yes" if e.weights else "—"
        rows.append(f"| `{name}` | {dims} | {modes} | {weights} | {e.help} |")
    return "\n".join(rows)


def test_docs_table_is_the_registry() -> None:
    text = (ROOT / "docs" / "scoring.md").read_text(encoding="utf-8")
    marker = "<!-- extractors: generated from the registry -->\n"
    start = text.index(marker) + len(marker)
    assert text[start:text.index("\n<!-- /extractors -->")] == registry_table()


PLUGIN = textwrap.dedent('''
    import torch
    from ganeval.features.base import Extractor, register


    @register("half_mean", help="the mean of each half of a feature row (a test plugin)")
    class HalfMean(Extractor):
        images = False
        cacheable = False

        def feature_dim(self, shape):
            return 2

        def __call__(self, batch: torch.Tensor) -> torch.Tensor:
            return batch.float().reshape(len(batch), 2, -1).mean(dim=2)
''')


@pytest.fixture()
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "halfmean_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "halfmean_plugin"
    REGISTRY.pop("half_mean", None)
    sys.modules.pop("halfmean_plugin", None)


def test_a_plugin_extractor_reaches_ganeval_score(plugin, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    real, fake = rng.normal(size=(200, 6)).astype(np.float32), (rng.normal(size=(150, 6)) + 0.4).astype(np.float32)
    np.save(tmp_path / "r.npy", real)
    np.save(tmp_path / "f.npy", fake)
    assert "half_mean" not in REGISTRY
    with pytest.raises(SystemExit):
        main(["--plugins", plugin, "--help"])
    shown = " ".join(capsys.readouterr().out.split())  # the help as words, whatever argparse's wrapping
    assert "half_mean" in shown.split("--features {")[1].split("}")[0] and "a test plugin" in shown
    args = ["--plugins", plugin, str(tmp_path / "r.npy"), str(tmp_path / "f.npy"), "--features", "half_mean",
            "--metrics", "fid", "--json", "--quiet"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    halves = lambda x: x.reshape(len(x), 2, -1).mean(axis=2)  # noqa: E731
    assert doc["features"] == {"name": "half_mean"}
    assert doc["results"][0]["value"] == pytest.approx(fid(halves(real), halves(fake)), rel=1e-6)


def test_an_unknown_plugin_is_one_line(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--plugins", "no_such_module_here", "a.npy", "b.npy"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--plugins: cannot import 'no_such_module_here'" in err
