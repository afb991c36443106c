"""Sweep 6: exact edges of the run's generator helpers (`ganeval.app.generators`)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from omegaconf import OmegaConf

from ganeval.app import generators as g
from ganeval.hashing import stable_hash


def _real(n: int) -> np.ndarray:
    return np.zeros((n, 2), np.float32)


def _spec(**kw: Any) -> dict[str, Any]:
    return {"arch": "mlp", "gan": "wgan", "epochs": 1, **kw}


def test_check_train_spec_batch_size_edge_and_default() -> None:
    """batch_size equal to the rows passes, one more is refused; the default 64 is the edge at 64 rows."""
    g.check_train_spec(_real(10), _spec(batch_size=10), "d/m")
    with pytest.raises(ValueError, match=r"d/m.train.batch_size=11 is larger than the real data \(10 rows\)"):
        g.check_train_spec(_real(10), _spec(batch_size=11), "d/m")
    g.check_train_spec(_real(64), _spec(), "d/m")
    with pytest.raises(ValueError, match=r"batch_size=64 is larger than the real data \(63 rows\)"):
        g.check_train_spec(_real(63), _spec(), "d/m")


def test_check_train_spec_epochs_least_legal_is_one() -> None:
    g.check_train_spec(_real(64), _spec(epochs=1), "d/m")
    with pytest.raises(ValueError, match="epochs"):
        g.check_train_spec(_real(64), _spec(epochs=0), "d/m")


@pytest.mark.parametrize("drop", ["arch", "gan", "epochs"])
def test_check_train_spec_each_required_key(drop: str) -> None:
    spec = _spec()
    del spec[drop]
    with pytest.raises(ValueError, match=r"d/m.train needs arch, gan and epochs"):
        g.check_train_spec(_real(64), spec, "d/m")


def test_check_train_spec_known_keys_and_trainer_overrides() -> None:
    """Every known key and a trainer override (lr_d) pass; an unknown key and `name` (not an override) are named."""
    g.check_train_spec(_real(64), _spec(seed=3, arch_kwargs=None, checkpoint_every=1, sample_every=1, batch_size=8),
                       "d/m")
    g.check_train_spec(_real(64), _spec(lr_d=1e-4), "d/m")
    with pytest.raises(ValueError, match=r"d/m.train has unknown keys \['bogus'\]"):
        g.check_train_spec(_real(64), _spec(bogus=1), "d/m")
    with pytest.raises(ValueError, match=r"d/m.train has unknown keys \['name'\]"):
        g.check_train_spec(_real(64), _spec(name="x"), "d/m")


def test_check_train_spec_trainer_override_is_checked() -> None:
    """A trainer override goes to the preset check: a bad value is refused with the spec's name."""
    with pytest.raises(ValueError, match=r"^d/m.train: "):
        g.check_train_spec(_real(64), _spec(lr_d=-1.0), "d/m")


def _plan(train_epochs: Any = None, seed: int = 7, train_seeds: Any = None) -> Any:
    return SimpleNamespace(options=SimpleNamespace(train_epochs=train_epochs, n_generated=5),
                           settings=SimpleNamespace(seed=seed), train_seeds=train_seeds)


def test_resolve_train_spec_each_rule() -> None:
    spec = {"arch": "mlp", "epochs": 3}
    assert g.resolve_train_spec(_plan(), spec) == {"arch": "mlp", "epochs": 3, "seed": 7}
    assert g.resolve_train_spec(_plan(train_epochs=9), spec) == {"arch": "mlp", "epochs": 9, "seed": 7}
    assert g.resolve_train_spec(_plan(), spec, 0) == {"arch": "mlp", "epochs": 3, "seed": 0}
    assert g.resolve_train_spec(_plan(), {**spec, "seed": 2}) == {"arch": "mlp", "epochs": 3, "seed": 2}
    assert spec == {"arch": "mlp", "epochs": 3}


def test_spec_key_is_ten_hex_of_the_whole_spec() -> None:
    key = g.spec_key("d", "m", {"seed": 1})
    assert key == stable_hash({"data": "d", "model": "m", "seed": 1}, 10)
    assert len(key) == 10


def test_model_dir_names_and_renames(tmp_path: Path) -> None:
    spec = {"seed": 4}
    key = g.spec_key("d", "m", spec)
    new = g.model_dir(tmp_path, "d", "m", spec)
    assert new == tmp_path / "d" / f"d-m-seed4-{key}"
    assert not new.exists()
    old = tmp_path / "d" / f"m-{key}"
    old.mkdir(parents=True)
    (old / "f").write_text("x")
    assert g.model_dir(str(tmp_path), "d", "m", spec) == new
    assert (new / "f").read_text() == "x" and not old.exists()
    assert g.model_dir(tmp_path, "d", "m", {}) == tmp_path / "d" / f"d-m-seed0-{g.spec_key('d', 'm', {})}"


def test_model_dir_keeps_an_old_folder_when_the_new_exists(tmp_path: Path) -> None:
    key = g.spec_key("d", "m", {"seed": 1})
    old = tmp_path / "d" / f"m-{key}"
    new = tmp_path / "d" / f"d-m-seed1-{key}"
    old.mkdir(parents=True)
    new.mkdir()
    assert g.model_dir(tmp_path, "d", "m", {"seed": 1}) == new
    assert old.is_dir()


def test_model_dir_uses_a_link_in_place(tmp_path: Path) -> None:
    key = g.spec_key("d", "m", {"seed": 1})
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "d").mkdir()
    link = tmp_path / "d" / f"m-{key}"
    link.symlink_to(target)
    assert g.model_dir(tmp_path, "d", "m", {"seed": 1}) == link
    assert link.is_symlink()


def test_plan_generator_train_spec_per_seed() -> None:
    node = OmegaConf.create({"train": _spec()})
    assert g.plan_generator(_plan(), _real(64), node, "d/m") == [{**_spec(), "seed": 7}]
    assert g.plan_generator(_plan(train_seeds=[1, 2]), _real(64), node, "d/m") == \
        [{**_spec(), "seed": 1}, {**_spec(), "seed": 2}]
    assert g.plan_generator(_plan(), _real(64), OmegaConf.create({"train": _spec(seed=3)}), "d/m") == [{**_spec(), "seed": 3}]
    with pytest.raises(ValueError, match=r"d/m.train sets its own seed \(3\) and train_seeds=\[1\] is given"):
        g.plan_generator(_plan(train_seeds=[1]), _real(64), OmegaConf.create({"train": _spec(seed=3)}), "d/m")


def test_plan_generator_checks_the_first_seed_spec() -> None:
    """The train spec is checked (a too large batch is refused) also with one seed."""
    with pytest.raises(ValueError, match="batch_size=65"):
        g.plan_generator(_plan(), _real(64), OmegaConf.create({"train": _spec(batch_size=65)}), "d/m")
    with pytest.raises(ValueError, match="batch_size=65"):
        g.plan_generator(_plan(train_seeds=[1, 2]), _real(64), OmegaConf.create({"train": _spec(batch_size=65)}), "d/m")


class _Rep:
    replica_argument = "path"

    def __init__(self, path: str = "a", k: int = 0) -> None:
        self.path, self.k = path, k


class _NoRep:
    def __init__(self, path: str = "a") -> None:
        self.path = path


_REP = f"{__name__}._Rep"
_NOREP = f"{__name__}._NoRep"


def test_plan_generator_given_generator_per_replica() -> None:
    gens = g.plan_generator(_plan(), _real(4), {"_target_": _REP, "path": "p", "replicas": ["x", "y"]}, "d/m")
    assert [type(x) for x in gens] == [_Rep, _Rep] and [x.path for x in gens] == ["x", "y"]


def test_replica_nodes_each_rule() -> None:
    assert g.replica_nodes({"_target_": _REP, "path": "p"}, "w") == [{"_target_": _REP, "path": "p"}]
    assert g.replica_nodes({"_target_": _REP, "path": "p", "replicas": None}, "w") == [{"_target_": _REP, "path": "p"}]
    assert g.replica_nodes({"_target_": _REP, "path": "p", "replicas": ["a", {"path": "b", "k": 2}]}, "w") == [
        {"_target_": _REP, "path": "a"}, {"_target_": _REP, "path": "b", "k": 2}]
    assert g.replica_nodes({"_target_": _NOREP, "replicas": [{"path": "q"}]}, "w") == [{"_target_": _NOREP, "path": "q"}]
    for bad in ([], "a", {"path": "a"}):
        with pytest.raises(ValueError, match=r"w.replicas must be a non-empty list"):
            g.replica_nodes({"_target_": _REP, "replicas": bad}, "w")
    with pytest.raises(ValueError, match=r"w.replicas\[1\]='b': .*_NoRep names no replica argument"):
        g.replica_nodes({"_target_": _NOREP, "replicas": [{"path": "a"}, "b"]}, "w")
    with pytest.raises(ValueError, match=r"w.replicas\[0\]='b': no.such.G names no replica argument"):
        g.replica_nodes({"_target_": "no.such.G", "replicas": ["b"]}, "w")


def test_replica_nodes_refuses_an_unset_argument_in_the_last_entry() -> None:
    node = {"_target_": _REP, "path": "???", "k": "???", "replicas": [{"path": "a", "k": 1}, {"path": "b"}]}
    with pytest.raises(ValueError, match=r"^w.replicas\[1\] leaves k unset: give it in the entry or in w$"):
        g.replica_nodes(node, "w")
    node = {"_target_": _REP, "path": "???", "k": "???", "replicas": ["a"]}
    with pytest.raises(ValueError, match=r"^w.replicas\[0\] leaves k unset"):
        g.replica_nodes(node, "w")


def test_seed_key_one_and_two_seeds() -> None:
    assert g.seed_key("d/m", 0, 1) == "d/m"
    assert g.seed_key("d/m", 0, 2) == "d/m/train_seed=0"
    assert g.seed_key("d/m", 1, 2) == "d/m/train_seed=1"
    assert g.seed_key("d/m", 0, 0) == "d/m/train_seed=0"


def test_seed_count_equal_unequal_and_empty() -> None:
    assert g.seed_count({"a": [1], "b": [2]}, "x") == 1
    assert g.seed_count({"a": [1, 2, 3]}, "x") == 3
    assert g.seed_count({}, "x") == 1
    with pytest.raises(ValueError, match=r"the models of x have different numbers of training seeds"):
        g.seed_count({"a": [1], "b": [1, 2]}, "x")


def test_seed_blocks_one_and_two_seeds() -> None:
    one = g.seed_blocks("R", {"a": ["A0"], "b": ["B0"]}, {"data": "d"})
    assert len(one) == 1
    assert (one[0].real, one[0].fakes, one[0].groups, one[0].draw) == (
        "R", [({"model": "a"}, "A0"), ({"model": "b"}, "B0")], {"data": "d"}, ())
    two = g.seed_blocks("R", {"a": ["A0", "A1"]}, {})
    assert [(b.fakes, b.draw) for b in two] == [
        ([({"model": "a", "train_seed": 0}, "A0")], ()), ([({"model": "a", "train_seed": 1}, "A1")], (1,))]


def test_plain_resolves_interpolations() -> None:
    from omegaconf import OmegaConf

    assert g.plain(OmegaConf.create({"a": 1, "b": "${a}"})) == {"a": 1, "b": 1}
    d = {"x": "${y}"}
    assert g.plain(d) is d


def test_pool_size_rules() -> None:
    plan = _plan()
    assert g.pool_size(plan, {"arch": "mlp"}) == 5
    assert g.pool_size(plan, object()) == 5
    assert g.pool_size(plan, [1, 2, 3]) == 3


def test_generator_identity() -> None:
    assert g.generator_identity(SimpleNamespace(identity=lambda: [("a", 1)])) == {"a": 1}
    assert g.generator_identity(_NoRep()) == {"type": "_NoRep"}


class _Metrics:
    def __init__(self, *ms: Any) -> None:
        self.ms = ms

    def ordered(self) -> list[tuple[Any, Any]]:
        return [(m, None) for m in self.ms]


def _m(label: str, same: bool) -> Any:
    return SimpleNamespace(unscaled_label=label, same_dim=same)


def test_check_dims_rules() -> None:
    fid, kid, imd = _m("FID", True), _m("KID", True), _m("IMD", False)
    g.check_dims(3, (4, 3), 3, (5, 3), "d/m", _Metrics(fid))
    g.check_dims(3, (4, 3), 2, (5, 2), "d/m", _Metrics(imd))
    with pytest.raises(ValueError, match=r"^FID needs features of one dimension .*d/m has 2-d features but its real "
                                         r"data 3-d"):
        g.check_dims(3, (4, 3), 2, (5, 2), "d/m", _Metrics(fid, imd))
    with pytest.raises(ValueError, match=r"^FID, KID need features"):
        g.check_dims(3, (4, 3), 2, (5, 2), "d/m", _Metrics(fid, kid))


def test_planned_shape_of_a_given_generator() -> None:
    assert g.planned_shape(_real(4), SimpleNamespace(sample_shape=lambda: (np.int64(3), 2))) == (3, 2)
    assert g.planned_shape(_real(4), SimpleNamespace(sample_shape=(3,))) is None
    assert g.planned_shape(_real(4), object()) is None


def test_planned_sets_shapes_and_dims() -> None:
    ext = SimpleNamespace(feature_dim=lambda shape: shape[-1] * 10)
    gen = SimpleNamespace(sample_shape=lambda: (2,))
    sets = g.planned_sets(_plan(), _real(4), {"a": [gen], "b": [object(), gen]}, ext, "d")
    assert sets == {"d (real)": ((4, 2), 20), "d/a": ((5, 2), 20), "d/b/train_seed=0": (None, None),
                    "d/b/train_seed=1": ((5, 2), 20)}
    assert g.planned_sets(_plan(), _real(4), {"a": [gen]}, object(), "d") == {
        "d (real)": ((4, 2), None), "d/a": ((5, 2), None)}


class _DimsPlan:
    def __init__(self, metrics: Any, choices: dict[str, str]) -> None:
        self.settings = SimpleNamespace(metrics=metrics)
        self.choices = choices
        self.narrowed: list[tuple[Any, str]] = []

    def narrow_metrics(self, metrics: Any, note: str) -> None:
        self.narrowed.append((metrics, note))


def _metrics(*names: str) -> Any:
    from ganeval.metrics.registry import Metrics

    return Metrics({n: {} for n in names})


def test_fit_dims_chosen_metrics_refuse_a_known_other_dimension() -> None:
    """Chosen metrics: two known dimensions that differ (the least count, 2) are refused, naming the set."""
    plan = _DimsPlan(_metrics("fid", "imd"), {"metrics": "fid_imd"})
    with pytest.raises(ValueError, match=r"^FID needs features of one dimension .*d/b has 2-d features"):
        g.fit_dims(plan, {"r": ((4, 3), 3), "d/a": (None, None), "d/b": ((5, 2), 2)})  # type: ignore[arg-type]
    g.fit_dims(plan, {"r": ((4, 3), 3), "d/a": ((5, 3), 3), "d/b": (None, None)})  # type: ignore[arg-type]
    assert plan.narrowed == []


def test_fit_dims_returns_early_without_a_real_or_second_dimension() -> None:
    plan = _DimsPlan(_metrics("fid", "imd"), {"metrics": "fid_imd"})
    g.fit_dims(plan, {"r": (None, None), "d/a": ((5, 3), 3), "d/b": ((5, 2), 2)})  # type: ignore[arg-type]
    g.fit_dims(plan, {"r": ((4, 3), 3), "d/a": (None, None)})  # type: ignore[arg-type]
    plan = _DimsPlan(_metrics("fid", "imd"), {})
    g.fit_dims(plan, {"r": (None, None), "d/a": ((5, 3), 3), "d/b": ((5, 2), 2)})  # type: ignore[arg-type]
    assert plan.narrowed == []


def test_fit_dims_default_metrics_narrow_with_a_note() -> None:
    plan = _DimsPlan(_metrics("fid", "imd"), {"metrics": "default"})
    g.fit_dims(plan, {"r": ((4, 3), 3), "d/a": ((5, 2), 2)})  # type: ignore[arg-type]
    assert [(list(m), n) for m, n in plan.narrowed] == [
        (["imd"], "note: r has 3 features and d/a has 2: FID needs one dimension and is left out; scoring IMD")]
    plan = _DimsPlan(_metrics("fid", "imd"), {})
    g.fit_dims(plan, {"r": ((4, 3), 3), "d/a": ((5, 3), 3)})  # type: ignore[arg-type]
    assert plan.narrowed == []


def test_dims_unknown_each_condition() -> None:
    one = {"d": {"r": ((4, 3), 3), "a": ((5, 3), None)}}
    known = {"d": {"r": ((4, 3), 3), "a": ((5, 3), 3)}}
    assert g.dims_unknown(_DimsPlan(_metrics("fid", "imd"), {}), one)  # type: ignore[arg-type]
    assert not g.dims_unknown(_DimsPlan(_metrics("fid", "imd"), {}), known)  # type: ignore[arg-type]
    assert not g.dims_unknown(_DimsPlan(_metrics("fid", "imd"), {"metrics": "x"}), one)  # type: ignore[arg-type]
    assert not g.dims_unknown(_DimsPlan(_metrics("fid"), {}), one)  # type: ignore[arg-type]
    assert not g.dims_unknown(_DimsPlan(_metrics("imd"), {}), one)  # type: ignore[arg-type]


def test_realise_generators_given_and_trained(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = SimpleNamespace(identity=lambda: {"id": "a"}), SimpleNamespace(identity=lambda: {"id": "b"})
    plan = SimpleNamespace(record=SimpleNamespace(generators=None),
                           content={"generators": {"d/m/train_seed=0": {"planned": 0}, "d/m/train_seed=1": {"p": 1}}})
    assert g.realise_generators(plan, _real(4), [a, b], "d", "m") == [a, b]  # type: ignore[arg-type]
    assert plan.record.generators == {"d/m/train_seed=0": {"planned": 0}, "d/m/train_seed=1": {"p": 1}}
    trained = SimpleNamespace(identity=lambda: {"id": "t"})
    calls: list[Any] = []
    monkeypatch.setattr(g, "train_generator", lambda *args: calls.append(args[2:]) or trained)
    plan = SimpleNamespace(record=SimpleNamespace(generators={"x": 1}), content={"generators": {"d/m": {"p": 2}}})
    assert g.realise_generators(plan, _real(4), [{"seed": 1}], "d", "m") == [trained]  # type: ignore[arg-type]
    assert plan.record.generators == {"x": 1, "d/m": {"id": "t"}}
    assert calls == [({"seed": 1}, "d", "m")]


# ---- ganeval.app.run_files: the command's record and log in the results folder, taken back on a refusal ----


@pytest.fixture
def run_files(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`run_files` with its own record of writes (see `_run_files`)."""
    yield from _run_files(monkeypatch)


def _run_files(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`run_files` with its own record of writes, Hydra's config faked, and the root logger's handlers restored."""
    import logging

    from hydra.core.hydra_config import HydraConfig

    from ganeval.app import run_files as rf

    monkeypatch.setattr(rf, "_WRITTEN", [])
    hc = OmegaConf.create({"job": {"name": "j"}, "overrides": {"task": ["a=1", "b=x"]}})
    monkeypatch.setattr(HydraConfig, "get", staticmethod(lambda: hc))
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        yield rf
    finally:
        for h in list(root.handlers):
            if h not in before:
                root.removeHandler(h)
                h.close()


def _files(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): (p.read_text() if p.is_file() else "/") for p in sorted(d.rglob("*"))}


def test_begin_writes_the_record_and_logs_and_undo_removes_made_folders(run_files: Any, tmp_path: Path) -> None:
    import logging

    folder = tmp_path / "a" / "b"
    run_files.begin(folder, OmegaConf.create({"k": 1}))
    files = _files(folder)
    assert files[".hydra/config.yaml"] == "k: 1\n"
    assert files[".hydra/overrides.yaml"] == "- a=1\n- b=x\n"
    assert files[".hydra/hydra.yaml"] == "hydra:\n  job:\n    name: j\n  overrides:\n    task:\n    - a=1\n    - b=x\n"
    (w,) = run_files._WRITTEN
    assert (w.folder, w.made, w.hydra, w.log_size, w.tree) == (
        folder, tmp_path / "a", dict.fromkeys(run_files.HYDRA_FILES), None, frozenset())
    assert w.handler in logging.getLogger().handlers
    logging.getLogger("ganeval.sweep6").warning("hello")
    assert (folder / "ganeval.log").read_text().endswith("][ganeval.sweep6][WARNING] - hello\n")
    assert run_files.undo() is True
    assert list(tmp_path.iterdir()) == [] and run_files._WRITTEN == []
    assert w.handler is None


def test_undo_restores_an_existing_folder(run_files: Any, tmp_path: Path) -> None:
    (tmp_path / ".hydra").mkdir()
    (tmp_path / ".hydra" / "config.yaml").write_text("old\n")
    (tmp_path / "ganeval.log").write_text("abc")
    (tmp_path / "keep").write_text("k")
    run_files.begin(tmp_path, OmegaConf.create({"k": 1}))
    (w,) = run_files._WRITTEN
    assert w.made is None and w.log_size == 3
    assert w.hydra == {"config.yaml": "old\n", "hydra.yaml": None, "overrides.yaml": None}
    assert {p for p, _, _ in w.tree} == {"./keep"}
    import logging

    logging.getLogger("ganeval.sweep6").warning("more")
    assert run_files.undo() is True
    assert _files(tmp_path) == {".hydra": "/", ".hydra/config.yaml": "old\n", "ganeval.log": "abc", "keep": "k"}


def test_undo_of_an_empty_existing_folder_leaves_it_empty(run_files: Any, tmp_path: Path) -> None:
    run_files.begin(tmp_path, OmegaConf.create({}))
    assert run_files.undo() is True
    assert _files(tmp_path) == {}
    assert tmp_path.is_dir()


def test_undo_keeps_a_record_beside_other_new_files(run_files: Any, tmp_path: Path) -> None:
    run_files.begin(tmp_path, OmegaConf.create({}))
    (tmp_path / "results.csv").write_text("r")
    assert run_files.undo() is False
    assert set(_files(tmp_path)) == {".hydra", ".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml",
                                     "ganeval.log", "results.csv"}


def test_undo_of_a_vanished_folder_is_not_done(run_files: Any, tmp_path: Path) -> None:
    import shutil

    run_files.begin(tmp_path / "new", OmegaConf.create({}))
    run_files.close()
    shutil.rmtree(tmp_path / "new")
    assert run_files.undo() is False
    assert list(tmp_path.iterdir()) == []


def test_undo_never_goes_through_a_folder_turned_link(run_files: Any, tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    run_files.begin(folder, OmegaConf.create({}))
    run_files.close()
    folder.rename(tmp_path / "g")
    folder.symlink_to(tmp_path / "g")
    assert run_files.undo() is False
    assert set(_files(tmp_path / "g")) == {".hydra", ".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml",
                                           "ganeval.log"}


@pytest.mark.parametrize("name", [".hydra", ".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml",
                                  "ganeval.log"])
def test_begin_refuses_a_link_at_each_name(run_files: Any, tmp_path: Path, name: str) -> None:
    (tmp_path / ".hydra").mkdir() if name != ".hydra" else None
    target = tmp_path / "target"
    (tmp_path / name).symlink_to(target)
    with pytest.raises(ValueError, match=r"is a symbolic link \(to .*target\); ganeval never writes through a link"):
        run_files.begin(tmp_path, OmegaConf.create({}))
    assert run_files._WRITTEN == [] and not target.exists()


def test_close_detaches_the_log(run_files: Any, tmp_path: Path) -> None:
    import logging

    run_files.begin(tmp_path, OmegaConf.create({}))
    (w,) = run_files._WRITTEN
    h = w.handler
    run_files.close()
    assert w.handler is None and h not in logging.getLogger().handlers
    logging.getLogger("ganeval.sweep6").warning("after")
    assert "after" not in (tmp_path / "ganeval.log").read_text()
    run_files.forget()
    assert run_files._WRITTEN == []


def test_tree_lists_all_but_the_record_and_never_follows_links(tmp_path: Path) -> None:
    from ganeval.app.run_files import _tree

    (tmp_path / ".hydra").mkdir()
    for name in ("config.yaml", "hydra.yaml", "overrides.yaml", "other"):
        (tmp_path / ".hydra" / name).write_text("x")
    (tmp_path / "ganeval.log").write_text("l")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "ganeval.log").write_text("ab")
    (tmp_path / "sub" / "config.yaml").write_text("c")
    (tmp_path / "x").write_text("xyz")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "inside").write_text("i")
    (tmp_path / "sub" / "lnk").symlink_to(tmp_path / "out")
    got = {p: size for p, size, _ in _tree(tmp_path)}
    assert set(got) == {".hydra/other", "./sub", "sub/ganeval.log", "sub/config.yaml", "./x", "./out", "out/inside",
                        "sub/lnk"}
    assert (got["./x"], got["sub/ganeval.log"]) == (3, 2)


def test_first_missing_and_remove_made(tmp_path: Path) -> None:
    from ganeval.app.run_files import _rmdir, first_missing, remove_made

    assert first_missing(tmp_path) is None
    assert first_missing(tmp_path / "a" / "b" / "c") == tmp_path / "a"
    (tmp_path / "dead").symlink_to(tmp_path / "nowhere")
    assert first_missing(tmp_path / "dead") is None
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    remove_made(tmp_path / "a" / "b" / "c", tmp_path / "a" / "b")
    assert (tmp_path / "a").is_dir() and not (tmp_path / "a" / "b").exists()
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    remove_made(tmp_path / "a" / "b" / "c", tmp_path / "a")
    assert not (tmp_path / "a").exists()
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "x").write_text("x")
    assert _rmdir(tmp_path / "f") is False
    assert _rmdir(tmp_path / "f" / "missing") is False
    (tmp_path / "f" / "x").unlink()
    assert _rmdir(tmp_path / "f") is True and not (tmp_path / "f").exists()


def test_regular_only_for_plain_files(tmp_path: Path) -> None:
    from ganeval.app.run_files import _regular

    (tmp_path / "f").write_text("x")
    (tmp_path / "l").symlink_to(tmp_path / "f")
    assert _regular(tmp_path / "f") is True
    assert _regular(tmp_path / "l") is False
    assert _regular(tmp_path) is False
    assert _regular(tmp_path / "missing") is False


def test_undo_leaves_a_planted_link_and_a_removed_log_alone(run_files: Any, tmp_path: Path) -> None:
    """A log removed meanwhile is not recreated; links planted at the record's names are left as they are."""
    run_files.begin(tmp_path / "a", OmegaConf.create({}))
    run_files.close()
    (tmp_path / "a" / "ganeval.log").unlink()
    assert run_files.undo() is True
    assert list(tmp_path.iterdir()) == []
    run_files.begin(tmp_path, OmegaConf.create({}))
    run_files.close()
    (tmp_path / "ganeval.log").unlink()
    (tmp_path / "ganeval.log").symlink_to(tmp_path / "t")
    (tmp_path / ".hydra" / "config.yaml").unlink()
    (tmp_path / ".hydra" / "config.yaml").symlink_to(tmp_path / "t")
    assert run_files.undo() is True
    assert (tmp_path / "ganeval.log").is_symlink() and (tmp_path / ".hydra" / "config.yaml").is_symlink()
    assert sorted(p.name for p in (tmp_path / ".hydra").iterdir()) == ["config.yaml"]


def test_undo_does_not_recreate_an_earlier_log_removed_meanwhile(run_files: Any, tmp_path: Path) -> None:
    (tmp_path / "ganeval.log").write_text("abc")
    run_files.begin(tmp_path, OmegaConf.create({}))
    run_files.close()
    (tmp_path / "ganeval.log").unlink()
    assert run_files.undo() is True
    assert _files(tmp_path) == {}


# ---- ganeval.app.pipeline: data loading checks and which extractor feeds which metric ----


def _data_plan() -> Any:
    return SimpleNamespace(settings=SimpleNamespace(metrics=_metrics("fid"), sample_size=4),
                           content={"data": {}})


def test_load_data_checks_and_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from ganeval.app import pipeline
    from ganeval.app.pipeline import data_hash, load_data

    monkeypatch.setattr(pipeline, "instantiate", lambda node: node)
    from ganeval.hashing import array_identity

    plan = _data_plan()
    one = np.ones((1, 1), np.float32)
    assert load_data(plan, one, "d") is one
    assert plan.content["data"]["d"] == array_identity(one)
    assert data_hash(plan, "d") == array_identity(one)["sha256"]
    out = load_data(plan, torch.ones(2, 3), "t")
    assert isinstance(out, np.ndarray) and out.shape == (2, 3)
    with pytest.raises(ValueError, match=r"^v is an array of shape \(3,\): expected features N×D"):
        load_data(plan, np.ones(3), "v")
    with pytest.raises(ValueError, match=r"^e is empty$"):
        load_data(plan, np.ones((0, 2)), "e")
    with pytest.raises(ValueError, match=r"^l must instantiate to a numpy array, got list$"):
        load_data(plan, [[1.0]], "l")
    assert set(plan.content["data"]) == {"d", "t"}


def _feed(name: str, inp: str) -> Any:
    return SimpleNamespace(name=name, input=inp)


def test_check_extractor_feeds_each_input() -> None:
    from ganeval.app.pipeline import check_extractor_feeds

    feats = _Metrics(_feed("fid", "features"))
    check_extractor_feeds(feats, SimpleNamespace(), "x")  # no `outputs`: features
    check_extractor_feeds(_Metrics(_feed("is", "logits")), SimpleNamespace(outputs=None), "x")
    check_extractor_feeds(_Metrics(_feed("is", "logits")), SimpleNamespace(outputs="logits"), "x")
    with pytest.raises(ValueError, match=r"^metrics.sfid compares the ADM evaluator's spatial Inception features, "
                                         r"but features=px gives features: use features=inception_spatial"):
        check_extractor_feeds(_Metrics(_feed("fid", "features"), _feed("sfid", "spatial")), SimpleNamespace(), "px")
    with pytest.raises(ValueError, match=r"^metrics.is scores class logits, but features=px gives features: use "
                                         r"features=inception_logits"):
        check_extractor_feeds(_Metrics(_feed("is", "logits")), SimpleNamespace(), "px")
    with pytest.raises(ValueError, match=r"^metrics.fid compares features, but features=lg gives logits: score fid "
                                         r"in a run with features=inception \(drop it here with ~metrics.fid\)$"):
        check_extractor_feeds(feats, SimpleNamespace(outputs="logits"), "lg")


def test_check_metric_inputs_names_the_chosen_extractor() -> None:
    from ganeval.app.pipeline import check_metric_inputs

    plan = SimpleNamespace(settings=SimpleNamespace(metrics=_Metrics(_feed("fid", "features"))), choices={})
    with pytest.raises(ValueError, match=r"but features=SimpleNamespace gives logits"):
        check_metric_inputs(plan, SimpleNamespace(outputs="logits"))  # type: ignore[arg-type]
    plan.choices = {"features": "lg"}
    with pytest.raises(ValueError, match=r"but features=lg gives logits"):
        check_metric_inputs(plan, SimpleNamespace(outputs="logits"))  # type: ignore[arg-type]
