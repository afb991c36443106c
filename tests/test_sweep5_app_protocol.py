"""Sweep 5 (app + protocol): exact values, defaults and edges of the store, the validation and the protocol API."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional  # noqa: F401 (Dict, List, Optional: a structured config's annotations)

import numpy as np
import pandas as pd
import pytest

from ganeval.protocol import store
from ganeval.protocol.task import RowSpec


def _spec() -> RowSpec:
    return RowSpec(({"model": "a"}, {"model": "b"}), ("m1", "m2"), ({"model": "a"},), ("x",), extra_runs=1)


def _layout() -> store.Layout:
    return store.Layout(_spec())


# ------------------------------------------------------------------ Layout
def test_layout_header_groups_and_counts() -> None:
    lay = _layout()
    assert lay.header == ["run", "model", "metric", "value"]
    assert lay.groups == ["model"]
    assert len(lay.template) == 5 and lay.n_every == 4
    assert [(r["model"], r["metric"]) for r in lay.template] == [("a", "m1"), ("a", "m2"), ("b", "m1"), ("b", "m2"),
                                                                 ("a", "x")]


def test_layout_refuses_a_spec_naming_a_row_twice() -> None:
    with pytest.raises(ValueError, match="names a row twice"):
        store.Layout(RowSpec(({"model": "a"}, {"model": "a"}), ("m1",)))


def test_missing_as_none_only_nan_floats() -> None:
    assert store._missing_as_none(math.nan) is None
    assert store._missing_as_none(None) is None
    assert store._missing_as_none(1.5) == 1.5
    assert store._missing_as_none("nan") == "nan"


def test_label_skips_empty_and_none() -> None:
    lay = _layout()
    assert lay._label(("a", "m1")) == "model=a metric=m1"
    assert lay._label((None, "m1")) == "metric=m1"
    assert lay._label(("", "m1")) == "metric=m1"


def _rows(r: int, spec: RowSpec | None = None, value: float = 1.0) -> list[dict[str, Any]]:
    return (spec or _spec()).rows(r, value)


def test_check_new_extra_rows_in_first_runs_only() -> None:
    lay = _layout()
    lay.check_new(0, _rows(0))  # 5 rows: run 0 < extra_runs=1
    assert len(_rows(0)) == 5 and len(_rows(1)) == 4
    lay.check_new(1, _rows(1))  # run 1 == extra_runs: only the every-run rows
    with pytest.raises(ValueError, match=r"run 1 has a row the current task does not write \(model=a metric=x\)"):
        lay.check_new(1, _rows(0, value=1.0) and [{**row, "run": 1} for row in _rows(0)])
    with pytest.raises(ValueError, match=r"run 0 is incomplete: 1 of its 5 rows are missing \(e.g. model=a metric=x\)"):
        lay.check_new(0, _rows(1) and [{**row, "run": 0} for row in _rows(1)])


def test_check_run_messages_exact() -> None:
    lay = _layout()
    with pytest.raises(ValueError, match=r"run 1 has a row the current task does not write \(L\)"):
        lay.check_run(1, [(None, 1.0, "L")])
    with pytest.raises(ValueError, match=r"run 1 has a row the current task does not write \(L\)"):
        lay.check_run(1, [(4, 1.0, "L")])  # index 4 == n_every: out of range for run 1
    lay.check_run(1, [(0, 1.0, "a"), (1, 1.0, "b"), (2, 1.0, "c"), (3, 1.0, "d")])
    with pytest.raises(ValueError, match="run 1 has the row b twice"):
        lay.check_run(1, [(0, 1.0, "a"), (0, 1.0, "b")])
    with pytest.raises(ValueError, match=r"run 1: c is inf, not a finite number"):
        lay.check_run(1, [(0, math.inf, "c")])
    with pytest.raises(ValueError, match=r"run 1 is incomplete: 3 of its 4 rows are missing \(e.g. model=a metric=m2\)"):
        lay.check_run(1, [(0, 1.0, "a")])
    with pytest.raises(ValueError, match=r"run 1 is incomplete: 2 of its 4 rows are missing \(e.g. model=a metric=m1\)"):
        lay.check_run(1, [(1, 1.0, "a"), (3, 1.0, "b")])


def test_check_new_refuses_wrong_run_or_extra_columns() -> None:
    lay = _layout()
    rows = _rows(1)
    with pytest.raises(ValueError, match=r"run=2 or unexpected columns \[\]"):
        lay.check_new(1, [{**rows[0], "run": 2}, *rows[1:]])
    with pytest.raises(ValueError, match=r"run=1 or unexpected columns \['z'\]"):
        lay.check_new(1, [{**rows[0], "z": 1}, *rows[1:]])
    lay.check_new(1, [{k: v for k, v in row.items() if k != "metric"} | {"metric": row["metric"]} for row in rows])


def _csv(rows: list[dict[str, Any]]) -> str:
    return pd.DataFrame(rows).to_csv(index=False)


def test_parse_round_trip_and_refusals() -> None:
    lay = _layout()
    text = _csv(_rows(0, value=0.5) + _rows(1, value=2.0))
    runs = lay.parse(text)
    assert sorted(runs) == [0, 1]
    assert runs[0] == [{**t, "run": 0, "value": 0.5} for t in lay.template]
    assert runs[1] == [{**t, "run": 1, "value": 2.0} for t in lay.template[:4]]
    with pytest.raises(ValueError, match="it is empty"):
        lay.parse("")
    with pytest.raises(ValueError, match="no newline at its end"):
        lay.parse(text[:-1])
    with pytest.raises(ValueError, match="its columns are"):
        lay.parse(text.replace("model", "modal", 1))
    head, first, *rest = text.splitlines(keepends=True)
    with pytest.raises(ValueError, match="line 2 has 3 fields, expected 4"):
        lay.parse(head + first.rsplit(",", 1)[0] + "\n")
    with pytest.raises(ValueError, match=r"line 2: run '00' is not an integer"):
        lay.parse(head + "0" + first + "".join(rest))
    with pytest.raises(ValueError, match=r"line 2: value 'abc' is not a number"):
        lay.parse(head + first.rsplit(",", 1)[0] + ",abc\n")
    with pytest.raises(ValueError, match="run 0 has a row the current task does not write"):
        lay.parse(text + "0,c,m1,1.0\n")


# ------------------------------------------------------------------ identities
def test_provenance_and_defining_exact() -> None:
    ident = {"a": {"p": "x", "h": 1, "_provenance": [["p"]]}, "b": [{"q": 1}], "_provenance": [["c", "d"]],
             "c": {"d": 5, "e": 6}}
    assert store._provenance(ident) == {("a", "p"), ("c", "d")}
    assert store.defining(ident) == {"a": {"h": 1}, "b": [{"q": 1}], "c": {"e": 6}}
    # a _provenance key that is not a list is an ordinary value
    assert store.defining({"_provenance": "s", "k": 1}) == {"_provenance": "s", "k": 1}
    # declared_by another identity
    assert store.defining({"p": 1, "k": 2}, {"_provenance": [["p"]]}) == {"k": 2}
    assert store.defining({"p": 1, "k": 2}) == {"p": 1, "k": 2}
    assert store.identity_hash(ident) == store.identity_hash({**ident, "a": {**ident["a"], "p": "y"}})


def test_plain_sorts_keys() -> None:
    assert list(store._plain({"b": 1, "a": {"d": 1, "c": 2}})) == ["a", "b"]
    assert list(store._plain({"b": 1, "a": {"d": 1, "c": 2}})["a"]) == ["c", "d"]


def test_hash_key_rule() -> None:
    assert store._hash_key("sha256", "")
    assert store._hash_key("x_sha256", "whatever")
    assert store._hash_key("weights", "extractor") and store._hash_key("weights", "features")
    assert not store._hash_key("weights", "model")
    assert not store._hash_key("sha", "extractor")


def test_same_identity_short_hashes_and_differences() -> None:
    full = "ab" * 32
    assert store.same_identity({"x_sha256": full[:8], "k": [1, 2]}, {"x_sha256": full, "k": [1, 2]})
    assert store.same_identity({"extractor": {"weights": full[:16]}}, {"extractor": {"weights": full}})
    assert not store.same_identity({"model": {"weights": full[:16]}}, {"model": {"weights": full}})
    assert not store.same_identity({"x_sha256": "cd" * 4}, {"x_sha256": full})
    assert not store.same_identity({"k": 1}, {"k": 1, "j": 2})
    assert not store.same_identity({"k": 1, "j": 3}, {"k": 1, "j": 2})
    assert not store.same_identity({"k": [1, 2]}, {"k": [1]})
    assert not store.same_identity({"k": [1, 3]}, {"k": [1, 2]})
    assert not store.same_identity({"k": [1]}, {"k": 1})
    assert not store.same_identity({"k": {"a": 1}}, {"k": 1})
    assert store.same_identity({"k": 1}, {"k": 1})
    assert not store.same_identity({"k": 1}, {"k": 2})
    assert store.same_identity({"k": [{"a": 1}]}, {"k": [{"a": 1}]})
    # provenance that `now` declares is left out of both
    assert store.same_identity({"p": "old", "k": 1}, {"p": "new", "k": 1, "_provenance": [["p"]]})


def test_check_draws_default_version_one(tmp_path: Path) -> None:
    store._check_draws(tmp_path, {"k": 1}, {"draws": 1})  # absent = version 1
    with pytest.raises(store.ConfigMismatchError, match="random draws version 1 and this ganeval draws version 2"):
        store._check_draws(tmp_path, {"k": 1}, {"draws": 2})
    store._check_draws(tmp_path, {"draws": 2}, {"draws": 2})
    store._check_draws(tmp_path, {"draws": 1}, {"k": 2})  # now without the key: not checked
    store._check_draws(tmp_path, "x", {"draws": 2})  # stored not a dict
    store._check_draws(tmp_path, {"draws": 1}, None)


def test_write_meta_exact_text(tmp_path: Path) -> None:
    meta = {"b": 1, "a": [1, 2], "config_hash": "h"}
    store._write_meta(tmp_path / "m.json", meta)
    assert (tmp_path / "m.json").read_text() == json.dumps(meta, indent=2, sort_keys=True) + "\n"
    assert store._read_meta(tmp_path / "m.json") == meta


def test_read_meta_refusals(tmp_path: Path) -> None:
    p = tmp_path / "m.json"
    for text in ("[1]", '{"config_hash": 3}', "{}", "nope"):
        p.write_text(text)
        with pytest.raises(store.StoreError, match="is not a ganeval run record"):
            store._read_meta(p)


# ------------------------------------------------------------------ open_store / check_store
def _stored(tmp_path: Path) -> tuple[Path, store.Store]:
    d = tmp_path / "res" / "sub"
    s = store.open_store(d, "h1", {"k": 1}, _layout())  # parents created
    s.write(pd.DataFrame(_rows(0, value=0.25)))
    return d, s


def test_open_store_writes_and_resumes_with_default_overwrite(tmp_path: Path) -> None:
    d, s = _stored(tmp_path)
    text = (d / store.RUNS_FILE).read_text()
    assert text == _csv(_rows(0, value=0.25))
    meta = json.loads((d / store.META_FILE).read_text())
    assert meta["runs_sha256"] == store._sha256(text.encode()) and meta["runs_sha256_previous"] is None
    again = store.open_store(d, "h1", {"k": 1}, _layout())  # overwrite defaults to False: the runs are kept
    assert sorted(again.runs) == [0] and again.on_disk == meta["runs_sha256"]
    assert again.runs[0][0]["value"] == 0.25
    fresh = store.open_store(d, "h1", {"k": 1}, _layout(), overwrite=True)
    assert fresh.runs == {} and not (d / store.RUNS_FILE).exists()


def test_open_store_without_runs_file_and_tmp_cleanup(tmp_path: Path) -> None:
    d = tmp_path / "r"
    store.open_store(d, "h1", {"k": 1}, _layout())
    (d / f".{store.RUNS_FILE}.1.tmp").write_text("x")
    s = store.open_store(d, "h1", {"k": 1}, _layout())
    assert s.runs == {} and s.on_disk is None
    assert not (d / f".{store.RUNS_FILE}.1.tmp").exists()


def test_open_store_refusals(tmp_path: Path) -> None:
    d, s = _stored(tmp_path)
    with pytest.raises(store.ConfigMismatchError, match="another config"):
        store.open_store(d, "h2", {"k": 2}, _layout())
    (d / store.RUNS_FILE).write_text(_csv(_rows(0, value=0.5)))
    with pytest.raises(store.StoreError, match="was changed after ganeval wrote it"):
        store.open_store(d, "h1", {"k": 1}, _layout())
    meta = json.loads((d / store.META_FILE).read_text())
    del meta["runs_sha256"]
    (d / store.META_FILE).write_text(json.dumps(meta))
    with pytest.raises(store.StoreError, match="records no checksum"):
        store.open_store(d, "h1", {"k": 1}, _layout())
    (d / store.META_FILE).unlink()
    with pytest.raises(store.ConfigMismatchError, match="exists without runs.meta.json"):
        store.open_store(d, "h1", {"k": 1}, _layout())


def test_open_store_accepts_previous_checksum(tmp_path: Path) -> None:
    d, s = _stored(tmp_path)
    first = (d / store.RUNS_FILE).read_text()
    s.write(pd.DataFrame(_rows(0, value=0.25) + _rows(1, value=3.0)))
    meta = json.loads((d / store.META_FILE).read_text())
    assert meta["runs_sha256_previous"] == store._sha256(first.encode())
    (d / store.RUNS_FILE).write_text(first)  # the kill between the two renames
    assert sorted(store.open_store(d, "h1", {"k": 1}, _layout()).runs) == [0]


def test_open_store_migrates_short_hashes(tmp_path: Path) -> None:
    d = tmp_path / "r"
    full = "ab" * 32
    store.open_store(d, "old", {"w_sha256": full[:8]}, _layout())
    s = store.open_store(d, "new", {"w_sha256": full}, _layout())
    meta = json.loads((d / store.META_FILE).read_text())
    assert meta["config_hash"] == "new" and meta["identity"] == {"w_sha256": full} and s.meta == meta


def test_check_store_defaults(tmp_path: Path) -> None:
    d, _ = _stored(tmp_path)
    (d / "summary.csv").write_text("x\n")
    with pytest.raises(store.ConfigMismatchError, match="another config"):
        store.check_store(d, "h2")  # overwrite defaults to False
    with pytest.raises(store.ConfigMismatchError, match="another config"):
        store.check_store(d, "h2", identity={"k": 2})
    store.check_store(d, "h1")
    assert (d / "summary.csv").exists()
    store.check_store(d, "h2", overwrite=True, clear=False)
    assert (d / "summary.csv").exists()
    store.check_store(d, "h2", overwrite=True)  # clear defaults to True
    assert not (d / "summary.csv").exists()


def test_check_store_runs_without_meta(tmp_path: Path) -> None:
    d = tmp_path / "r"
    d.mkdir()
    store.check_store(d, "h")  # empty: fine
    (d / store.RUNS_FILE).write_text("run\n")
    with pytest.raises(store.ConfigMismatchError, match="exists without runs.meta.json"):
        store.check_store(d, "h")
    store.check_store(d, "h", overwrite=True)


# ------------------------------------------------------------------ locks
def _hold(path: Path, text: str) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               f"fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT)\n"
                               f"fcntl.flock(fd, fcntl.LOCK_EX)\nos.write(fd, {text.encode()!r})\n"
                               "print('locked', flush=True)\ntime.sleep(30)\n"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_lock_holder_and_long_lock_text(tmp_path: Path) -> None:
    import os

    since = "s" * 300
    holder = _hold(tmp_path / store.LOCK_FILE, f"{0} {since}\n")  # pid 0 written: the kernel's holder is trusted
    try:
        fd = os.open(tmp_path / store.LOCK_FILE, os.O_RDONLY)
        try:
            assert store.lock_holder(fd) == str(holder.pid)
            assert not store.try_lock(fd)
        finally:
            os.close(fd)
        with pytest.raises(store.ResultsDirBusyError) as e:
            with store.locked(tmp_path):
                pass
        assert f"by process {holder.pid} (since unknown)" in str(e.value)
    finally:
        holder.kill()
        holder.wait()


def test_busy_message_reads_200_bytes_of_the_lock_file(tmp_path: Path) -> None:
    import os

    holder = _hold(tmp_path / store.LOCK_FILE, f"PID {'t' * 300}\n")
    try:
        real = store.lock_holder
        store_holder = None
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(store, "lock_holder", lambda fd: store_holder)
            with pytest.raises(store.ResultsDirBusyError) as e:
                with store.locked(tmp_path):
                    pass
        assert f"by process PID (since {'t' * 196}); wait" in str(e.value)
        assert real is store.lock_holder
    finally:
        holder.kill()
        holder.wait()
    assert os.path.exists(tmp_path / store.LOCK_FILE)


def test_lock_holder_of_own_lock_is_none(tmp_path: Path) -> None:
    import os

    with store.locked(tmp_path):
        path = tmp_path / store.LOCK_FILE
        text = path.read_text()
        assert text.startswith(f"{os.getpid()} ") and text.endswith("\n") and len(text.splitlines()) == 1
        fd = os.open(path, os.O_RDONLY)
        try:
            assert store.lock_holder(fd) is None
            assert store._same_file(fd, path)
            assert not store._same_file(fd, tmp_path / "other")
        finally:
            os.close(fd)
    assert not path.exists()


def test_locked_removes_file_after_refusal_and_notes_a_crash(tmp_path: Path) -> None:
    d = tmp_path / "a" / "b"
    with pytest.raises(ValueError, match="no"):
        with store.locked(d):
            raise ValueError("no")
    assert not (d / store.LOCK_FILE).exists()
    with pytest.raises(RuntimeError):
        with store.locked(d):
            raise RuntimeError("crash")
    text = (d / store.LOCK_FILE).read_text()
    assert text.endswith(store.STALE_NOTE) and text.count("\n") == 3
    with store.locked(d):  # a stale file is taken over and truncated
        assert store.STALE_NOTE not in (d / store.LOCK_FILE).read_text()
    assert not (d / store.LOCK_FILE).exists()


def test_second_thread_is_told_so(tmp_path: Path) -> None:
    import threading

    errors: list[str] = []
    with store.locked(tmp_path):
        def other() -> None:
            try:
                with store.locked(tmp_path):
                    pass
            except store.ResultsDirBusyError as e:
                errors.append(str(e))

        t = threading.Thread(target=other, name="T2")
        t.start()
        t.join()
    assert len(errors) == 1 and f"another thread of this process ({threading.current_thread().name})" in errors[0]


# ------------------------------------------------------------------ app/validate.check_present
def test_check_present_resolves_inception_without_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omegaconf import OmegaConf

    import ganeval.features.inception as inception
    from ganeval.app.validate import check_present

    calls: list[tuple[Any, Any]] = []

    def fake(weights: Any = None, *, download: bool = True) -> Path:
        calls.append((weights, download))
        return tmp_path

    monkeypatch.setattr(inception, "check_weights_available", fake)
    target = "ganeval.features.inception.InceptionExtractor"
    cfg = OmegaConf.create({"features": {"_target_": target, "weights": None, "download": False}})
    assert check_present(cfg) == ["features.weights"]
    assert calls == [(None, False)]
    missing = str(tmp_path / "none.pth")
    cfg = OmegaConf.create({"features": {"_target_": target, "weights": missing}})
    with pytest.raises(ValueError, match=r"features.weights=.*none.pth does not exist"):
        check_present(cfg)
    assert calls[1] == (missing, False)
    cfg = OmegaConf.create({"features": {"_target_": target, "weights": None, "download": True}})
    assert check_present(cfg) == ["features.weights"] and len(calls) == 2
    given = tmp_path / "w.pth"
    given.write_bytes(b"x")
    cfg = OmegaConf.create({"features": {"_target_": target, "weights": str(given)}})
    assert check_present(cfg) == ["features.weights"] and len(calls) == 2
    cfg = OmegaConf.create({"features": {"_target_": "ganeval.features.other.X", "weights": None, "download": False}})
    assert check_present(cfg) == ["features.weights"] and len(calls) == 2
    cfg = OmegaConf.create({"features": {"_target_": target, "download": False}})
    assert check_present(cfg) == [] and len(calls) == 2
    cfg = OmegaConf.create({"model": {"_target_": "other.Thing", "weights": missing}})
    assert check_present(cfg) == []
    assert check_present(cfg, ("data",)) == []


# ------------------------------------------------------------------ protocol/api.evaluate_detailed
def test_evaluate_detailed_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """Called with real and fakes only: 100 runs of 10 000 rows, seed 0, 99 %, 1 worker, progress, no out/overwrite."""
    import ganeval.protocol.api as api

    seen: dict[str, Any] = {}

    class Stop(Exception):
        pass

    def fake_run_blocks(blocks: Any, settings: Any, out: Any, cache: Any, overwrite: Any) -> Any:
        seen.update(settings=settings, out=out, overwrite=overwrite)
        raise Stop

    monkeypatch.setattr(api, "run_blocks", fake_run_blocks)
    rng = np.random.default_rng(0)
    with pytest.raises(Stop):
        api.evaluate_detailed(rng.normal(size=(30, 2)), rng.normal(size=(30, 2)), metrics=["fid"])
    st = seen["settings"]
    assert (st.runs, st.sample_size, st.seed, st.confidence, st.workers, st.progress) == (100, 10000, 0, 0.99, 1, True)
    assert seen["out"] is None and seen["overwrite"] is False


def test_layout_template_holds_extra_rows_whatever_extra_runs() -> None:
    spec = RowSpec(({"model": "a"},), ("m1",), ({"model": "a", "probe_draw": 1},), ("imd",), extra_runs=0)
    lay = store.Layout(spec)
    assert lay.header == ["run", "model", "metric", "value", "probe_draw"]
    assert len(lay.template) == 2 and lay.n_every == 1


def test_provenance_needs_the_key_and_a_list() -> None:
    assert store._provenance({"k": [["a"]], "m": {"n": [["b"]]}}) == set()
    assert store._provenance({"_provenance": "a"}) == set()
    assert store._provenance({"m": {"_provenance": [["b", 1], "c"]}}) == {("m", "b", "1")}


def test_open_store_overwrite_on_an_empty_folder(tmp_path: Path) -> None:
    s = store.open_store(tmp_path / "new", "h", {"k": 1}, _layout(), overwrite=True)
    assert s.runs == {} and s.meta["config_hash"] == "h" and (tmp_path / "new" / store.META_FILE).is_file()


# ------------------------------------------------------------------ app/validate helpers
def _cfg(d: dict[str, Any]) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.create(d)


def test_unknown_rows_len() -> None:
    from ganeval.app.validate import UnknownRows

    assert len(UnknownRows()) == 2**62


def test_nodes_and_target_nodes_paths() -> None:
    from ganeval.app.validate import _nodes, target_nodes

    cfg = _cfg({"a": {"_target_": "x.A", "b": {"_target_": "x.B"}}, "l": [{"_target_": "x.L"}, 3],
                "n": None, "m": "???", "c": {"k": 1}})
    assert [w for w, _ in _nodes(cfg, "")] == ["", "a", "a.b", "l[0]", "c"]
    assert [w for w, _ in _nodes(cfg, "r")] == ["r", "r.a", "r.a.b", "r.l[0]", "r.c"]
    assert [w for w, _ in target_nodes(cfg)] == ["a", "a.b", "l[0]"]
    assert [w for w, _ in target_nodes(cfg, ("l",))] == ["l[0]"]
    assert [w for w, _ in target_nodes(_cfg({"_target_": "x.R", "a": {"_target_": "???"}}))] == []


def test_used_rules() -> None:
    from ganeval.app.validate import used

    cfg = _cfg({"data": {}, "datasets": {"x": {}, "y": {}}, "include": ["x"]})
    assert not used(cfg, "data")
    assert used(cfg, "datasets.x") and not used(cfg, "datasets.y")
    assert used(cfg, "features")
    assert not used(cfg, "features", ("data", "datasets"))
    assert used(cfg, "datasets.x.sub", ("datasets",))
    assert used(cfg, "l[0]", ("l",))
    assert used(_cfg({"data": {}, "datasets": {}}), "data")  # an empty datasets does not replace data
    assert used(_cfg({"data": {}, "datasets": {"x": {}}}), "datasets.x")  # no include: every dataset


def test_check_targets_names_the_key() -> None:
    from ganeval.app.validate import check_targets

    assert check_targets(_cfg({"a": {"_target_": "ganeval.app.validate.used"}})) == ["a._target_"]
    with pytest.raises(ValueError, match=r"^a\._target_=ganeval\.nope\.X does not import"):
        check_targets(_cfg({"a": {"_target_": "ganeval.nope.X"}}))


def test_missing_paths_exact(tmp_path: Path) -> None:
    from ganeval.app.validate import missing_paths

    there = tmp_path / "there.npy"
    there.write_bytes(b"")
    gone = str(tmp_path / "gone")
    cfg = _cfg({"g": {"path": str(there), "replicas": [gone + "1", str(there), 5]},
                "f": {"weights": gone + "w", "state_dict": 3}, "h": {"path": "???"},
                "k": {"weights": gone + "x", "replicas": [gone + "2"]}})
    assert missing_paths(cfg) == [f"g.path={gone}1", f"f.weights={gone}w", f"k.weights={gone}x"]
    assert missing_paths(_cfg({"path": gone})) == [f".path={gone}"]


def test_check_data_sizes_edges() -> None:
    from ganeval.app.validate import check_data_sizes

    cfg = _cfg({"data": {"_target_": "ganeval.data.something", "n": 50}})
    assert check_data_sizes(cfg, 50) == ["data: 50 rows"]  # exactly sample_size rows is enough
    with pytest.raises(ValueError, match=r"^sample_size=51 is larger than data \(data\.n=50 rows\): lower sample_size "
                                         r"or raise n$"):
        check_data_sizes(cfg, 51)
    mnist = _cfg({"data": {"_target_": "ganeval.data.mnist", "train": False}})
    assert check_data_sizes(mnist, 10000) == ["data: 10000 rows"]
    with pytest.raises(ValueError, match=r"^sample_size=10001 is larger than data \(10000 rows\): lower sample_size$"):
        check_data_sizes(mnist, 10001)
    syn = _cfg({"data": {"_target_": "ganeval.metrics.synthetic.pool3_like", "n": 7}})
    assert check_data_sizes(syn, 7) == ["data: 7 rows"]
    other = _cfg({"data": {"_target_": "other.data", "n": 1}, "d2": {"_target_": "ganeval.data.folder"}})
    assert check_data_sizes(other, 5) == []
    assert check_data_sizes(cfg, 51, ("features",)) == []


def test_dataset_folder_names() -> None:
    from ganeval.app.validate import dataset_folder

    r = Path("/r")
    assert dataset_folder("mnist", r) == r / "MNIST/raw"
    assert dataset_folder("fashion_mnist", r) == r / "FashionMNIST/raw"
    assert dataset_folder("cifar10", r) == r / "cifar-10-batches-py"
    assert dataset_folder("cifar100", r) == r / "cifar-100-python"
    assert dataset_folder("celeba", r) == r / "celeba"
    assert dataset_folder("digits", r) is None


def test_check_present_datasets(tmp_path: Path) -> None:
    from ganeval.app.validate import check_present

    cfg = _cfg({"data": {"_target_": "ganeval.data.mnist", "download": False, "root": str(tmp_path)}})
    with pytest.raises(ValueError, match=r"^data: the dataset is not under .*MNIST/raw and data\.download=false"):
        check_present(cfg)
    (tmp_path / "MNIST" / "raw").mkdir(parents=True)
    assert check_present(cfg) == ["data on disk"]
    assert check_present(_cfg({"data": {"_target_": "ganeval.data.mnist", "download": True,
                                        "root": str(tmp_path / "none")}})) == []
    assert check_present(_cfg({"data": {"_target_": "ganeval.data.digits", "download": False}})) == ["data on disk"]
    assert check_present(_cfg({"data": {"_target_": "other.mnist", "download": False,
                                        "root": str(tmp_path / "none")}})) == []


def test_role_source_and_train_spec() -> None:
    from ganeval.app.validate import inputs_of, is_train_spec, role, source

    assert is_train_spec({"train": {"arch": "mlp"}})
    assert not is_train_spec({"train": True, "_target_": "x"}) and not is_train_spec({"train": True})
    assert not is_train_spec({"_target_": "x", "train": {"a": 1}})
    assert role("x", {"train": {"arch": "mlp"}}) == "generator to train"
    assert role("x", {"_target_": "ganeval.features.inception.I"}) == "extractor"
    assert role("features", {"_target_": "my.X"}) == "extractor"
    assert role("x", {"_target_": "ganeval.gan.SampleGenerator"}) == "given generator"
    assert role("generator", {"_target_": "my.G"}) == "given generator"
    assert role("generators.a", {"_target_": "my.G"}) == "given generator"
    assert role("a.generators.b", {"_target_": "my.G"}) == "given generator"
    assert role("data", {"_target_": "my.D"}) == "data"
    assert source({"train": {"arch": "mlp", "lr": 1, "epochs": 3, "gan": "w", "seed": 2}}) == \
        "train arch=mlp, epochs=3, gan=w, seed=2"
    assert source({"_target_": "my.G", "path": "p", "weights": 3, "state_dict": "s"}) == "my.G path=p state_dict=s"
    cfg = _cfg({"data": {"_target_": "my.D"}, "generators": {"a": {"train": {"arch": "mlp"}}, "b": {"k": 1}}})
    assert [(i.key, i.role, i.source) for i in inputs_of(cfg)] == [
        ("data", "data", "my.D"), ("generators.a", "generator to train", "train arch=mlp")]
    assert [i.key for i in inputs_of(cfg, ("generators",))] == ["generators.a"]


# ------------------------------------------------------------------ app/plan
def _plan(**kw: Any) -> Any:
    from ganeval.app.plan import Plan
    from ganeval.protocol import Settings

    settings = kw.pop("settings", None) or Settings(runs=3, sample_size=20, metrics={"fid": {}}, seed=4,
                                                    confidence=0.95, device="cpu", workers=1, progress=False)
    return Plan(name="exp", results_dir=Path("/tmp/res"), device="cpu", settings=settings,
                config=kw.pop("config", {"metrics": {"fid": {}, "kid": {}}, "runs": 3}), **kw)


def test_options_defaults() -> None:
    from ganeval.app.plan import Options

    o = Options()
    assert (o.batch_size, o.cache_dir, o.models_dir, o.train_epochs, o.n_generated, o.plots, o.overwrite) == \
        (250, None, "models", None, None, True, False)


def test_fit_kid_to_sample_edges(caplog: Any = None) -> None:
    from ganeval.app.plan import fit_kid_to_sample

    def after(n: Any, size: int = 1000) -> Any:
        cfg = _cfg({"sample_size": n, "metrics": {"kid": {"subset_size": size}}})
        fit_kid_to_sample(cfg)
        return cfg.metrics.kid.subset_size

    assert after(2) == 2 and after(999) == 999
    assert after(1) == 1000 and after(1000) == 1000 and after(5000) == 1000
    assert after(500, 400) == 400  # a chosen size stays (refused later if too large)
    assert after(True) == 1000 or after(True) == 1  # a bool is an int to isinstance; documented only for ints
    cfg = _cfg({"sample_size": 10, "metrics": {"fid": {}}})
    fit_kid_to_sample(cfg)
    assert "kid" not in cfg.metrics
    cfg = _cfg({"sample_size": "10", "metrics": {"kid": {"subset_size": 1000}}})
    fit_kid_to_sample(cfg)
    assert cfg.metrics.kid.subset_size == 1000


def _opts_cfg(**kw: Any) -> Any:
    base = {"batch_size": 8, "cache_dir": None, "models_dir": "m", "train_epochs": None, "n_generated": None,
            "sample_size": 30, "plots": False, "overwrite": True}
    return _cfg({**base, **kw})


def test_options_from_config_values_and_edges() -> None:
    from ganeval.app.plan import Options, options_from_config

    assert options_from_config(_opts_cfg()) == Options(batch_size=8, cache_dir=None, models_dir="m", train_epochs=None,
                                                        n_generated=60, plots=False, overwrite=True)
    o = options_from_config(_opts_cfg(batch_size=1, cache_dir="c", train_epochs=1, n_generated=1, plots=True,
                                      overwrite=False))
    assert (o.batch_size, o.cache_dir, o.train_epochs, o.n_generated, o.plots, o.overwrite) == (1, "c", 1, 1, True, False)
    assert options_from_config(_opts_cfg(cache_dir="")).cache_dir is None
    for key in ("batch_size", "train_epochs", "n_generated"):
        with pytest.raises(ValueError, match=key):
            options_from_config(_opts_cfg(**{key: 0}))


def test_check_train_seeds_edges() -> None:
    from ganeval.app.plan import check_train_seeds

    assert check_train_seeds(None) is None
    assert check_train_seeds([0]) == (0,)
    assert check_train_seeds([2, 0, 1]) == (2, 0, 1)
    with pytest.raises(ValueError, match="non-empty list"):
        check_train_seeds([])
    with pytest.raises(ValueError, match=r"train_seeds\[1\]"):
        check_train_seeds([0, -1])
    with pytest.raises(ValueError, match=r"train_seeds=\[1, 1\] repeats a seed"):
        check_train_seeds([1, 1])


def test_check_missing_lists_keys() -> None:
    from ganeval.app.plan import check_missing

    check_missing(_cfg({"a": 1, "g": {"replicas": ["x"], "path": "???"}, "hydra": {"x": "???"}}))
    with pytest.raises(ValueError, match=r"^a, b\.c must be given: add a=\.\.\. b\.c=\.\.\. to the command line$"):
        check_missing(_cfg({"a": "???", "b": {"c": "???"}}))
    with pytest.raises(ValueError, match=r"data\.path=\.\.\. to the command line \(e\.g\. data\.path=/path"):
        check_missing(_cfg({"data": {"path": "???"}}))
    with pytest.raises(ValueError, match=r"^g\.path must be given"):
        check_missing(_cfg({"g": {"replicas": None, "path": "???"}}))


def test_check_keys_paths() -> None:
    from ganeval.app.plan import check_keys

    check_keys({"a": {"1": 1, "b": [{"x": 1}]}})
    with pytest.raises(ValueError, match="the config has the keys"):
        check_keys({1: 1, "1": 2})
    with pytest.raises(ValueError, match=r"a\.b has the keys"):
        check_keys({"a": {"b": {1: 1, "1": 2}}})
    with pytest.raises(ValueError, match=r"a\[1\] has the keys"):
        check_keys({"a": [{}, {1: 1, "1": 2}]})


def test_narrowed_and_numeric_config() -> None:
    from ganeval.app.plan import narrowed_config, numeric_config

    c = {"metrics": {"fid": 1, "kid": 2}, "x": 1}
    assert narrowed_config(c, {"fid": None}) == {"metrics": {"fid": 1}, "x": 1}
    assert narrowed_config({"x": 1}, {"fid": None}) == {"x": 1}
    cfg = {"runs": 5, "workers": 2, "seed": 1, "train_seeds": None, "probe_repeats": 0, "hydra": {},
           "generator": {"replicas": None, "p": 1}}
    assert numeric_config(cfg) == {"seed": 1, "generator": {"p": 1}}
    assert numeric_config({"train_seeds": [1], "probe_repeats": 1, "generator": {"replicas": [1]}}) == \
        {"train_seeds": [1], "probe_repeats": 1, "generator": {"replicas": [1]}}
    assert numeric_config({"generator": {"p": 1}}) == {"generator": {"p": 1}}


def test_input_provenance_exact() -> None:
    from ganeval.app.plan import input_provenance

    content = {"data": {"real": "h"}, "generators": {"a": {"sha256": "s", "path": "p"}, "b": {"sha256": "t"}}}
    config = {"real": "r.npy", "fakes": {"a": "a.npy", "c": "c.npy", "b": 3}, "data": {"path": "d"},
              "generator": {"path": "g", "replicas": None}, "generators": {"x": {"replicas": ["r"], "path": None}}}
    assert input_provenance(config, content) == [
        ["config", "real"], ["config", "fakes", "a"], ["config", "data", "path"],
        ["content", "generators", "a", "path"], ["config", "generator", "path"], ["config", "generators", "x", "replicas"]]
    assert input_provenance(config, {"data": {}, "generators": {"a": {"sha256": "s"}, "b": {"k": 1}}}) == \
        [["config", "fakes", "a"]]
    assert input_provenance({"real": 3, "data": {"path": 1}}, {"data": {"real": 1}}) == []
    assert input_provenance({}, {}) == []


def test_strict_bool() -> None:
    from ganeval.app.plan import strict_bool

    assert strict_bool({"k": True}, "k") is True and strict_bool({"k": False}, "k") is False
    with pytest.raises(ValueError, match="k must be true or false, got 'no'"):
        strict_bool({"k": "no"}, "k")


def test_plan_title_identity_and_record() -> None:
    from ganeval.app.plan import UNKNOWN_HASH

    p = _plan()
    assert p.title == "exp"
    assert _plan(params=_cfg({"title": "T"})).title == "T"
    assert _plan(params=_cfg({"title": ""})).title == "exp"
    assert p.record.config_hash == UNKNOWN_HASH and p.record.seed == 4 and p.record.runs == 3
    assert p.identity() == {"config": {"metrics": {"fid": {}, "kid": {}}}, "content": {"data": {}, "generators": {}}}
    assert p.identity({"fid": {}})["config"] == {"metrics": {"fid": {}}}
    q = _plan(config={"real": "r.npy"})
    q.content["data"]["real"] = "h"
    assert q.identity()[store.PROVENANCE_KEY] == [["config", "real"]]
    h = p.set_config_hash({"a": 1})
    assert h == store.identity_hash({"a": 1}) == p.config_hash


def test_plan_stage_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    import ganeval.app.plan as plan_mod

    ticks = iter([10.0, 12.5, 20.0, 21.0])
    monkeypatch.setattr(plan_mod, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))
    p = _plan()
    assert p.dry_run is False
    with p.stage("x"):
        pass
    assert p.stage_seconds == {"x": 2.5}
    with p.stage("x", "again"):
        pass
    assert p.stage_seconds == {"x": 3.5}


def test_options_and_input_are_frozen() -> None:
    import dataclasses

    from ganeval.app.plan import Input, Options

    with pytest.raises(dataclasses.FrozenInstanceError):
        Options().batch_size = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Input("k", "r", "s").key = "j"  # type: ignore[misc]


def test_describe_exact() -> None:
    from ganeval.app.plan import Input, describe

    p = _plan(inputs=(Input("data", "data", "my.D"),), outputs=("runs.csv", "summary.csv"), checked=("a", "b"),
              study="s.run")
    text = describe(p)
    assert text.splitlines() == [
        "plan of experiment exp (s.run)",
        "  protocol: 3 runs of 20 rows per pool, seed 4, 95% intervals, metrics fid, on cpu",
        "  options: batch_size 250, n_generated None, cache_dir None, models_dir models",
        "  inputs (each hashed by content when it is read):",
        "    data: data, my.D",
        "  outputs in /tmp/res (those that apply): runs.csv, summary.csv",
        "  checked: a; b"]
    from dataclasses import replace

    from ganeval.app.plan import Options

    one = _plan(settings=replace(p.settings, runs=1), options=Options(train_epochs=2), train_seeds=(0, 1))
    lines = describe(one).splitlines()
    assert lines[1].startswith("  protocol: 1 run of 20 rows")
    assert lines[2].endswith("models_dir models, train_epochs 2, train_seeds [0, 1]")
    assert lines[4] == "    (none)"


def test_nodes_skip_typed_null_and_missing_containers() -> None:
    from dataclasses import dataclass, field

    from omegaconf import OmegaConf

    from ganeval.app.validate import _nodes

    @dataclass
    class S:
        d: Optional[Dict[str, int]] = None
        lst: List[int] = "???"  # type: ignore[assignment]
        e: Dict[str, int] = field(default_factory=lambda: {"a": 1})

    assert [w for w, _ in _nodes(OmegaConf.structured(S), "")] == ["", "e"]


def test_checks_resolve_interpolations() -> None:
    from ganeval.app.validate import check_data_sizes, check_nodes

    cfg = _cfg({"flag": True, "data": {"_target_": "ganeval.data.datasets.mnist", "train": "${flag}"}})
    assert check_nodes(cfg) == ["data arguments"]
    sized = _cfg({"x": 5, "data": {"_target_": "ganeval.data.something", "n": "${x}"}})
    assert check_data_sizes(sized, 5) == ["data: 5 rows"]


# ------------------------------------------------------------------ protocol/task
def test_rowspec_rows_extra_edge() -> None:
    spec = RowSpec(({"g": 1},), ("m",), ({"g": 2},), ("x",), extra_runs=2)
    assert spec.rows(1, 0.5) == [{"run": 1, "g": 1, "metric": "m", "value": 0.5},
                                 {"run": 1, "g": 2, "metric": "x", "value": 0.5}]
    assert spec.rows(2) == [{"run": 2, "g": 1, "metric": "m", "value": 0.0}]
    assert len(spec.rows(5, every=True)) == 2
    assert RowSpec(({"g": 1},), ("m",)).extra_runs == 0 and RowSpec(({"g": 1},), ("m",)).rows(0) == \
        [{"run": 0, "g": 1, "metric": "m", "value": 0.0}]


def test_shared_arrays_round_trip(tmp_path: Path) -> None:
    from ganeval.protocol.task import Block, MetricTask, SharedArray, as_array, share

    a = np.arange(6.0).reshape(3, 2)
    s = share(a, str(tmp_path / "a.npy"))
    assert isinstance(s, SharedArray) and len(s) == 3 and np.array_equal(as_array(s), a)
    assert s.__getstate__() == {"path": str(tmp_path / "a.npy"), "_arr": None}
    assert as_array(a) is a
    task = MetricTask([Block(a, [({"model": "x"}, a + 1)], {"data": "d"}, (3,))], _settings())
    copy = task.shared(str(tmp_path))
    b = copy.blocks[0]
    assert b.real.path == str(tmp_path / "a0.npy") and b.fakes[0][1].path == str(tmp_path / "a1.npy")
    assert b.groups == {"data": "d"} and b.draw == (3,) and b.fakes[0][0] == {"model": "x"}
    assert np.array_equal(as_array(b.fakes[0][1]), a + 1)


def _settings(**kw: Any) -> Any:
    from ganeval.protocol import Settings

    base: dict[str, Any] = dict(runs=2, sample_size=10, metrics={"fid": {}}, seed=0, confidence=0.9, device="cpu",
                                workers=1, progress=False)
    return Settings(**{**base, **kw})


def test_metric_task_row_spec_and_float32_rule() -> None:
    from ganeval.protocol.task import PROBE_DRAW, Block, MetricTask

    a = np.zeros((12, 2))
    blocks = [Block(a, [({"model": "x"}, a), ({"model": "y"}, a)], {"data": "d"})]
    t = MetricTask(blocks, _settings())
    assert t.row_spec() == RowSpec(({"data": "d", "model": "x"}, {"data": "d", "model": "y"}), ("fid",))
    assert t._float32_products()
    imd = MetricTask(blocks, _settings(metrics={"imd": {}, "fid": {}}, probe_repeats=2))
    spec = imd.row_spec()
    assert spec.groups == ({"data": "d", "model": "x", PROBE_DRAW: 0}, {"data": "d", "model": "y", PROBE_DRAW: 0})
    assert spec.extra_groups == ({"data": "d", "model": "x", PROBE_DRAW: 1}, {"data": "d", "model": "y", PROBE_DRAW: 1})
    assert spec.extra_metrics == ("imd",) and spec.extra_runs == 2 and set(spec.metrics) == {"imd", "fid"}
    assert imd._float32_products()
    half = MetricTask(blocks, _settings(metrics={"imd": {"knn_precision": "bfloat16"}}))
    assert not half._float32_products()


# ------------------------------------------------------------------ protocol/loop
class _Task:
    """Run r -> one row per model, value r + 0.5 (model a) and 10 r (model b)."""

    def __init__(self, bad: int | None = None) -> None:
        self.calls: list[int] = []
        self.bad = bad

    def __call__(self, r: int) -> list[dict[str, Any]]:
        self.calls.append(r)
        rows = [{"run": r, "model": "a", "metric": "m", "value": r + 0.5},
                {"run": r, "model": "b", "metric": "m", "value": 10.0 * r}]
        return rows[:1] if r == self.bad else rows

    def row_spec(self) -> RowSpec:
        return RowSpec(({"model": "a"}, {"model": "b"}), ("m",))


def test_run_loop_in_memory_exact() -> None:
    from ganeval.protocol.loop import run_loop

    t = _Task()
    rows = run_loop(t, _settings(runs=3))
    assert t.calls == [0, 1, 2]
    assert rows.to_dict("records") == [{"run": r, "model": m, "metric": "m", "value": v} for r in range(3)
                                       for m, v in (("a", r + 0.5), ("b", 10.0 * r))]
    assert run_loop(_Task(), _settings(runs=1)).shape == (2, 4)


def test_run_loop_resumes_and_cuts_to_runs(tmp_path: Path) -> None:
    from ganeval.protocol.loop import run_loop

    run_loop(_Task(), _settings(runs=3), tmp_path, {"k": 1})
    assert store.Layout(_Task().row_spec()).parse((tmp_path / store.RUNS_FILE).read_text()).keys() == {0, 1, 2}
    t = _Task()
    rows = run_loop(t, _settings(runs=4), tmp_path, {"k": 1})
    assert t.calls == [3] and list(rows["run"]) == [0, 0, 1, 1, 2, 2, 3, 3]
    t = _Task()
    rows = run_loop(t, _settings(runs=2), tmp_path, {"k": 1})
    assert t.calls == [] and list(rows["run"]) == [0, 0, 1, 1] and list(rows.index) == [0, 1, 2, 3]
    t = _Task()
    with pytest.raises(store.ConfigMismatchError):
        run_loop(t, _settings(runs=2), tmp_path, {"k": 2})
    rows = run_loop(t, _settings(runs=2), tmp_path, {"k": 2}, overwrite=True)
    assert t.calls == [0, 1] and len(rows) == 4
    with pytest.raises(store.ConfigMismatchError):
        run_loop(_Task(), _settings(runs=2), tmp_path)  # no identity: {}, another config than {"k": 2}


def test_run_loop_refuses_an_incomplete_run(tmp_path: Path) -> None:
    from ganeval.protocol.loop import run_loop

    with pytest.raises(ValueError, match=r"run 1 is incomplete: 1 of its 2 rows are missing \(e\.g\. model=b "
                                         r"metric=m\); run 1 is not stored$"):
        run_loop(_Task(bad=1), _settings(runs=3), tmp_path, {"k": 1})
    assert list(store.Layout(_Task().row_spec()).parse((tmp_path / store.RUNS_FILE).read_text())) == [0]


def test_remove_stale_scratch_after_60_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import time

    from ganeval.protocol import loop

    monkeypatch.setattr(loop.tempfile, "gettempdir", lambda: str(tmp_path))
    now = time.time()
    ages = {"old": 62.0, "young": 58.0}
    for name, age in ages.items():
        d = tmp_path / f"{loop.SCRATCH_PREFIX}{name}"
        d.mkdir()
        (d / loop.OWNER_FILE).write_text("")
        os.utime(d / loop.OWNER_FILE, (now - age, now - age))
    (tmp_path / f"{loop.SCRATCH_PREFIX}other").mkdir()  # no owner file: not ours
    loop._remove_stale_scratch()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{loop.SCRATCH_PREFIX}other", f"{loop.SCRATCH_PREFIX}young"]
    assert loop.STALE_AFTER_S == 60.0
    path = loop._scratch_path()
    assert path.startswith(str(tmp_path / loop.SCRATCH_PREFIX)) and len(Path(path).name) == len(loop.SCRATCH_PREFIX) + 16
    with loop._scratch(path) as p:
        assert p == path and (os.stat(p).st_mode & 0o777) == 0o700
        assert (os.stat(Path(p) / loop.OWNER_FILE).st_mode & 0o777) == 0o600
        fd = os.open(Path(p) / loop.OWNER_FILE, os.O_RDWR)
        try:
            assert not store.try_lock(fd)  # held while the run lives
        finally:
            os.close(fd)
    assert not Path(path).exists()


# ------------------------------------------------------------------ protocol/full
def test_check_full_sizes_edges() -> None:
    from ganeval.protocol.full import check_full_sizes

    check_full_sizes({"real": 2}, {"fid": {}})
    with pytest.raises(ValueError, match=r"^real has 1 row\(s\): every metric needs at least 2$"):
        check_full_sizes({"real": 1}, {"fid": {}})
    check_full_sizes({"a": 6}, {"imd": {"k": 5}})
    with pytest.raises(ValueError, match=r"^a has 5 rows, not more than IMD's k=5 neighbours"):
        check_full_sizes({"a": 5}, {"imd": {"k": 5}})
    check_full_sizes({"a": 7}, {"kid": {"subset_size": 7}})
    with pytest.raises(ValueError, match=r"^a has 6 rows, fewer than KID's subset_size=7: .* \(at most 6\)$"):
        check_full_sizes({"a": 6}, {"kid": {"subset_size": 7}})
    fd = {"fd_inf": {"points": 15, "min_fraction": 0.1}}
    check_full_sizes({"real": 3}, fd, real="real")  # the real set is not one FD∞ draws sizes from
    with pytest.raises(ValueError, match=r"^x has 3 rows, too few for FD∞'s sizes"):
        check_full_sizes({"x": 3}, fd, real="real")


def _fid64(x: np.ndarray, y: np.ndarray) -> float:
    from scipy import linalg

    m1, m2 = x.mean(0), y.mean(0)
    s1, s2 = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    covmean = linalg.sqrtm(s1 @ s2).real
    return float(((m1 - m2) ** 2).sum() + np.trace(s1 + s2 - 2 * covmean))


def test_full_set_task_rows_and_extras() -> None:
    from ganeval.protocol.full import EXTRA_SEP, FullSetTask, score_full, split_extras, with_standard_errors

    rng = np.random.default_rng(1)
    real, fa, fb = rng.normal(size=(40, 3)), rng.normal(size=(40, 3)) + 1.0, rng.normal(size=(40, 3)) * 2.0
    task = FullSetTask(real, [({"model": "a"}, fa), ({"model": "b"}, fb)], _settings(metrics={"fid": {}, "kid": {
        "subsets": 3, "subset_size": 10}}, seed=5))
    assert task.row_spec() == RowSpec(({"model": "a"}, {"model": "b"}), ("fid", "kid"))
    rows = task(0)
    assert [(r["model"], r["metric"]) for r in rows] == [("a", "fid"), ("a", "kid"), ("b", "fid"), ("b", "kid")]
    assert rows[0]["value"] == pytest.approx(_fid64(real, fa), rel=1e-6)
    assert rows[2]["value"] == pytest.approx(_fid64(real, fb), rel=1e-6)
    assert set(task.extras) == {("a", "fid"), ("a", "kid"), ("b", "fid"), ("b", "kid")}
    assert task.extras[("a", "fid")] == {} and set(task.extras[("a", "kid")]) == {"std"}
    kid_opts = task.settings.metrics["kid"]
    seeded = score_full(real, fa, {"kid": kid_opts}, 5)["kid"]
    assert rows[1]["value"] == seeded["value"] and task.extras[("a", "kid")]["std"] == seeded["std"]
    assert score_full(real, fa, {"kid": kid_opts}) == score_full(real, fa, {"kid": kid_opts}, 0)
    assert score_full(real, fa, {"kid": kid_opts})["kid"]["value"] != seeded["value"]
    with pytest.raises(ValueError, match=r"one run \(run 0\), not run 1"):
        task(1)
    # stored extras: "imd:se" rows split back into extras
    frame = pd.DataFrame([{"run": 0, "model": "a", "metric": "imd", "value": 1.0},
                          {"run": 0, "model": "a", "metric": "imd" + EXTRA_SEP + "se", "value": 0.25},
                          {"run": 0, "model": "a", "metric": "fid", "value": 3.0}])
    kept, extras = split_extras(frame)
    assert list(kept["metric"]) == ["imd", "fid"] and list(kept.index) == [0, 1]
    assert extras == {("a", "imd"): {"se": 0.25}}
    summary = pd.DataFrame([{"model": "a", "metric": "imd"}, {"model": "a", "metric": "fid"}])
    from ganeval.results.summary import SE_COLUMN

    out = with_standard_errors(summary, extras)
    assert out[SE_COLUMN].iloc[0] == 0.25 and math.isnan(out[SE_COLUMN].iloc[1])
    assert with_standard_errors(summary, {("a", "kid"): {"std": 1.0}}) is summary


def test_full_set_row_spec_with_imd_se() -> None:
    from ganeval.protocol.full import FullSetTask

    task = FullSetTask(np.zeros((3, 2)), [({"model": "a"}, np.zeros((3, 2)))],
                       _settings(metrics={"imd": {}, "fid": {}}, sample_size=10))
    assert task.row_spec() == RowSpec(({"model": "a"},), ("imd", "fid", "imd:se"))


def test_settings_from_config_metrics_and_interpolation() -> None:
    from ganeval.app.plan import settings_from_config

    cfg = _cfg({"runs": 3, "sample_size": 20, "seed": 7, "confidence": 0.9, "device": "cpu", "workers": 1,
                "progress": False, "probe_repeats": 0, "size": 12,
                "metrics": {"fid": {}, "imd": None, "kid": {"subset_size": "${size}", "subsets": 4}}})
    s = settings_from_config(cfg)
    assert list(s.metrics) == ["fid", "kid"]
    assert s.metrics["kid"]["subset_size"] == 12 and s.metrics["kid"]["subsets"] == 4
    assert (s.runs, s.sample_size, s.seed, s.confidence, s.workers, s.progress) == (3, 20, 7, 0.9, 1, False)


# ------------------------------------------------------------------ protocol/reported
def test_full_set_values_and_attach() -> None:
    from ganeval.protocol.reported import _key, attach_full_set, full_set_values
    from ganeval.protocol.task import Block
    from ganeval.results.summary import FULL_SET_COLUMN

    rng = np.random.default_rng(2)
    real, fa = rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + 0.5
    values = full_set_values([Block(real, [({"model": "a", "train_seed": 0}, fa)], {"data": "d"})])
    assert list(values.columns) == ["data", "model", "train_seed", FULL_SET_COLUMN]
    assert values[FULL_SET_COLUMN].iloc[0] == pytest.approx(_fid64(real, fa), rel=1e-6)
    summary = pd.DataFrame([{"data": "d", "model": "a", "train_seed": 0.0, "metric": "fid"},
                            {"data": "d", "model": "a", "train_seed": 0.0, "metric": "kid"},
                            {"data": "d", "model": "b", "train_seed": 0.0, "metric": "fid"}])
    out = attach_full_set(summary, values)
    assert out[FULL_SET_COLUMN].iloc[0] == values[FULL_SET_COLUMN].iloc[0]
    assert math.isnan(out[FULL_SET_COLUMN].iloc[1]) and math.isnan(out[FULL_SET_COLUMN].iloc[2])
    assert FULL_SET_COLUMN not in summary.columns
    twice = pd.concat([values, values.assign(train_seed=0)], ignore_index=True)
    assert math.isnan(attach_full_set(summary.drop(columns="train_seed"), twice)[FULL_SET_COLUMN].iloc[0])
    assert attach_full_set(summary, values.iloc[:0])[FULL_SET_COLUMN].isna().all()
    assert _key(0) == _key(0.0) == _key(np.int64(0)) == "0" and _key(True) == "True" and _key(0.5) == "0.5"
    assert _key(np.float32(2.0)) == "2" and _key("x") == "x"


# ------------------------------------------------------------------ protocol/task: a run's rows
def test_metric_task_call_rows_and_probe_repeat() -> None:
    from ganeval.protocol.task import PROBE_DRAW, Block, MetricTask

    rng = np.random.default_rng(3)
    real, fa, fb = rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + 1.0, rng.normal(size=(25, 2)) * 3.0
    blocks = [Block(real, [({"model": "a"}, fa), ({"model": "b"}, fb)], {"data": "d"})]
    task = MetricTask(blocks, _settings(metrics={"imd": {"k": 3}, "fid": {}}, probe_repeats=1, sample_size=12))
    r0, r1 = task(0), task(1)
    assert [(r["run"], r["model"], r[PROBE_DRAW], r["metric"]) for r in r0] == [
        (0, "a", 0, "imd"), (0, "a", 0, "fid"), (0, "a", 1, "imd"),
        (0, "b", 0, "imd"), (0, "b", 0, "fid"), (0, "b", 1, "imd")]
    assert [(r["run"], r["model"], r[PROBE_DRAW], r["metric"]) for r in r1] == [
        (1, "a", 0, "imd"), (1, "a", 0, "fid"), (1, "b", 0, "imd"), (1, "b", 0, "fid")]
    assert all(r["data"] == "d" for r in r0 + r1)
    assert r0[0]["value"] != r0[2]["value"]  # another probe draw, same subsamples
    assert [e["metric"] for e in task.errors] == ["imd", "imd", "imd", "imd"]
    assert [(e["run"], e["model"], e[PROBE_DRAW]) for e in task.errors] == [(0, "a", 0), (0, "b", 0), (1, "a", 0),
                                                                              (1, "b", 0)]
    store.Layout(task.row_spec()).check_new(0, r0)
    store.Layout(task.row_spec()).check_new(1, r1)
    # the FID of run 0 is the FID of the drawn rows (float64 closed form)
    from ganeval.protocol.draws import branch, draw_rows, run_generator

    g = run_generator(0, 0)
    idx_real = draw_rows(30, 12, g)
    idx_a = draw_rows(30, 12, branch(g))
    assert r0[1]["value"] == pytest.approx(_fid64(real[idx_real], fa[idx_a]), rel=1e-5)


def test_task_containers_frozen_repr_and_caches(tmp_path: Path) -> None:
    import dataclasses

    from ganeval.protocol.task import Block, MetricTask, SharedArray

    with pytest.raises(dataclasses.FrozenInstanceError):
        RowSpec(({"g": 1},), ("m",)).extra_runs = 1  # type: ignore[misc]
    a = np.arange(8.0).reshape(4, 2)
    task = MetricTask([Block(a, [({"model": "x"}, a)])], _settings())
    text = repr(task)
    assert "_rows" not in text and "_infos" not in text and "errors" not in text and "settings" in text
    info = task._pool_info(a)
    assert task._pool_info(a) is info and len(task._infos) == 1
    np.save(tmp_path / "o.npy", np.array([{"k": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        SharedArray(str(tmp_path / "o.npy")).get()
    np.save(tmp_path / "f.npy", a)
    s = SharedArray(str(tmp_path / "f.npy"))
    assert s.get() is s.get()


def test_run_loop_progress_bar_and_resume_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              caplog: pytest.LogCaptureFixture) -> None:
    import logging

    import ganeval.common as common
    from ganeval.protocol.loop import run_loop

    bars: list[dict[str, Any]] = []

    class Bar:
        def __init__(self, **kw: Any) -> None:
            self.kw, self.n = kw, 0
            bars.append({"kw": kw, "bar": self})

        def update(self, k: int) -> None:
            self.n += k

        def close(self) -> None:
            pass

    monkeypatch.setattr(common, "progress_bar", lambda **kw: Bar(**kw))
    run_loop(_Task(), _settings(runs=2, progress=True), tmp_path, {"k": 1})
    assert bars[-1]["kw"] == {"total": 2, "initial": 0, "desc": "runs", "disable": False, "unit": "run"}
    assert bars[-1]["bar"].n == 2
    with caplog.at_level(logging.INFO, logger="ganeval"):
        run_loop(_Task(), _settings(runs=5, progress=True), tmp_path, {"k": 1}, desc="d")
    assert bars[-1]["kw"] == {"total": 5, "initial": 2, "desc": "d", "disable": False, "unit": "run"}
    assert f"resuming: 2 of 5 runs already in {tmp_path}" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="ganeval"):
        run_loop(_Task(), _settings(runs=5, progress=True), tmp_path, {"k": 1})  # nothing to do: no resume note
    assert "resuming" not in caplog.text
    assert bars[-1]["kw"]["disable"] is True and bars[-1]["kw"]["initial"] == 5
    run_loop(_Task(), _settings(runs=6, progress=True), tmp_path, {"k": 1})  # one run to do: no bar
    assert bars[-1]["kw"]["disable"] is True and bars[-1]["bar"].n == 1
    run_loop(_Task(), _settings(runs=8, progress=False), tmp_path, {"k": 1})
    assert bars[-1]["kw"]["disable"] is True
    with caplog.at_level(logging.INFO, logger="ganeval"):
        run_loop(_Task(), _settings(runs=2, progress=True))  # nothing stored: no resume note
    assert "resuming" not in caplog.text
