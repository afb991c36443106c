"""The run store: stored runs are resumed only when they are exactly what this task wrote; a kill at any write
still resumes; one writer per results directory; new rows are checked before they are stored."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest

from ganeval.protocol import ResultsDirBusyError, RowSpec, Settings, StoreError, evaluate_detailed, run_loop
from ganeval.protocol import store

METRICS = {"fid": {}, "kid": {"subsets": 5, "subset_size": 30}}


def _sets() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    real = rng.normal(size=(150, 6)).astype(np.float32)
    fakes = {"01": rng.normal(size=(120, 6)), "001": rng.normal(size=(130, 6))}
    return real, {k: v.astype(np.float32) for k, v in fakes.items()}


def _call(d: Path | None, runs: int = 3, **kw: Any) -> Any:
    real, fakes = _sets()
    return evaluate_detailed(real, fakes, runs=runs, sample_size=60, metrics=METRICS, seed=7, progress=False,
                             results_dir=d, **kw)


def _resign(d: Path) -> None:
    """Record runs.csv's current checksum in the sidecar, so only the row checks can refuse an edit."""
    meta = json.loads((d / "runs.meta.json").read_text())
    meta["runs_sha256"] = hashlib.sha256((d / "runs.csv").read_bytes()).hexdigest()
    (d / "runs.meta.json").write_text(json.dumps(meta))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    d = tmp_path_factory.mktemp("written")
    return d, _call(d)


def _copy(written: tuple[Path, Any], to: Path) -> Path:
    for name in ("runs.csv", "runs.meta.json"):
        (to / name).write_bytes((written[0] / name).read_bytes())
    return to


def test_resumed_rows_are_byte_identical_and_typed_like_fresh_ones(written: tuple[Path, Any], tmp_path: Path) -> None:
    d = tmp_path / "r"
    _call(d, runs=1)
    resumed = _call(d)  # models "01" and "001" stay strings (read back by pandas they would both be the number 1)
    assert (d / "runs.csv").read_bytes() == (written[0] / "runs.csv").read_bytes()
    pd.testing.assert_frame_equal(resumed.runs, written[1].runs)
    pd.testing.assert_frame_equal(resumed.summary, written[1].summary)
    assert list(resumed.summary.model.unique()) == ["01", "001"]


def _lines(f: Callable[[list[str]], list[str]]) -> Callable[[str], str]:
    return lambda text: "".join(f(text.splitlines(True)))


EDITS = {  # name: (edit of runs.csv's text, part of the message)
    "duplicated row": (_lines(lambda ls: ls + [ls[1]]), "twice"),
    "foreign model": (_lines(lambda ls: ls + ["0,ghost,fid,1.0\n"]), "does not write (model=ghost metric=fid)"),
    "unknown metric": (_lines(lambda ls: ls + [ls[1].replace(",fid,", ",imd,")]), "does not write"),
    "incomplete run": (_lines(lambda ls: ls[:-1]), "run 2 is incomplete: 1 of its 4 rows are missing"),
    "cut last line": (lambda t: t[:-4], "no newline at its end: the file was cut"),
    "cut line, newline kept": (_lines(lambda ls: ls[:-1] + [ls[-1].rsplit(",", 1)[0] + "\n"]),
                               "has 3 fields, expected 4"),
    "columns": (_lines(lambda ls: [ls[0].replace("model", "name")] + ls[1:]), "its columns are"),
    "negative run": (_lines(lambda ls: ls[:1] + ["-" + ls[1]] + ls[2:]), "is not an integer ≥ 0"),
    "fractional run": (_lines(lambda ls: ls[:1] + [ls[1].replace("0,", "0.5,", 1)] + ls[2:]), "not an integer"),
    "nan value": (_lines(lambda ls: ls[:-1] + [ls[-1].rsplit(",", 1)[0] + ",nan\n"]), "nan, not a finite number"),
    "text value": (_lines(lambda ls: ls[:-1] + [ls[-1].rsplit(",", 1)[0] + ",abc\n"]), "'abc' is not a number"),
    "blank line": (lambda t: t + "\n", "has 0 fields"),
    "empty": (lambda t: "", "it is empty"),
}


@pytest.mark.parametrize("name", EDITS)
def test_damaged_runs_csv_is_refused_naming_the_file(written: tuple[Path, Any], tmp_path: Path, name: str) -> None:
    edit, match = EDITS[name]
    d = _copy(written, tmp_path)
    (d / "runs.csv").write_text(edit((d / "runs.csv").read_text()))
    _resign(d)  # even with a valid checksum
    with pytest.raises(StoreError) as err:
        _call(d)
    msg = str(err.value)
    assert match in msg and str(d / "runs.csv") in msg and "pass overwrite=True" in msg, msg
    ev = _call(d, overwrite=True)
    pd.testing.assert_frame_equal(ev.summary, written[1].summary)


def test_a_hand_edited_value_in_a_valid_csv_is_refused(written: tuple[Path, Any], tmp_path: Path) -> None:
    d = _copy(written, tmp_path)
    text = (d / "runs.csv").read_text()
    value = text.splitlines()[1].rsplit(",", 1)[1]
    (d / "runs.csv").write_text(text.replace(value, value[:4], 1))  # e.g. 41.6237... -> 41.6
    with pytest.raises(StoreError, match="was changed after ganeval wrote it.*pass overwrite=True"):
        _call(d)


@pytest.mark.parametrize("meta, match", [
    ("{garbage", "not JSON"), ("[1, 2]", "no config_hash"), ('{"identity": {}}', "no config_hash"),
    (b"\xff\xfe", "not JSON"),
])  # fmt: skip
def test_garbage_sidecar_is_refused_naming_the_file(
    written: tuple[Path, Any], tmp_path: Path, meta: str | bytes, match: str
) -> None:
    d = _copy(written, tmp_path)
    path = d / "runs.meta.json"
    path.write_bytes(meta if isinstance(meta, bytes) else meta.encode())
    with pytest.raises(StoreError, match=match) as err:
        _call(d)
    assert str(path) in str(err.value) and "pass overwrite=True" in str(err.value)


def test_sidecar_without_checksum_and_binary_csv_are_refused(written: tuple[Path, Any], tmp_path: Path) -> None:
    d = _copy(written, tmp_path)
    meta = json.loads((d / "runs.meta.json").read_text())
    del meta["runs_sha256"], meta["runs_sha256_previous"]
    (d / "runs.meta.json").write_text(json.dumps(meta))
    with pytest.raises(StoreError, match="records no checksum of runs.csv"):
        _call(d)
    (d / "runs.csv").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\n")
    with pytest.raises(StoreError, match="runs.csv cannot be resumed: 'utf-8' codec"):
        _call(d)


class _Crash(BaseException):
    """A simulated kill (BaseException: nothing catches it on the way out)."""


@pytest.mark.parametrize("after", [False, True], ids=["before-write", "after-write"])
def test_a_kill_at_any_write_still_resumes_to_the_same_bytes(
    written: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: bool
) -> None:
    real_write = store.atomic_write_text
    calls: list[int] = []
    k = 0
    while True:  # crash at the k-th atomic write (sidecar or runs.csv), before or after its rename
        k += 1
        d = tmp_path / f"k{k}"

        def crashing(path: Any, text: str, k: int = k) -> None:
            calls.append(1)
            if len(calls) == k and not after:
                raise _Crash
            real_write(path, text)
            if len(calls) == k:
                raise _Crash

        calls.clear()
        monkeypatch.setattr(store, "atomic_write_text", crashing)
        try:
            _call(d)
            crashed = False
        except _Crash:
            crashed = True
        monkeypatch.setattr(store, "atomic_write_text", real_write)
        if not crashed:
            break
        resumed = _call(d)
        assert (d / "runs.csv").read_bytes() == (written[0] / "runs.csv").read_bytes(), f"crash at write {k}"
        pd.testing.assert_frame_equal(resumed.summary, written[1].summary)
    assert k == 8  # the sidecar at the start, then the sidecar and runs.csv after each of 3 runs


# ------------------------------------------------------------------------------------------------ new rows
class _Toy:
    """A task writing (run, model, metric, value) rows, optionally wrong in one way."""

    def __init__(self, wrong: str = "") -> None:
        self.wrong = wrong

    def row_spec(self) -> RowSpec:
        return RowSpec(({"model": "a"}, {"model": "b"}), ("m1", "m2"))

    def __call__(self, r: int) -> list[dict[str, Any]]:
        rows = self.row_spec().rows(r, value=r + 0.5)
        if self.wrong == "nan" and r == 1:
            rows[2]["value"] = float("nan")
        if self.wrong == "missing" and r == 1:
            rows.pop()
        if self.wrong == "extra" and r == 1:
            rows.append({"run": r, "model": "c", "metric": "m1", "value": 1.0})
        return rows


@pytest.mark.parametrize("wrong, match", [
    ("nan", "run 1: model=b metric=m1 is nan, not a finite number; run 1 is not stored"),
    ("missing", "run 1 is incomplete"), ("extra", "does not write \\(model=c metric=m1\\)"),
])  # fmt: skip
def test_rows_a_task_gets_wrong_are_not_stored(tmp_path: Path, wrong: str, match: str) -> None:
    settings = Settings(runs=3, sample_size=10, metrics=("fid",), progress=False)
    with pytest.raises(ValueError, match=match):
        run_loop(_Toy(wrong), settings, tmp_path)
    assert sorted(pd.read_csv(tmp_path / "runs.csv")["run"].unique()) == [0]  # run 0 was stored, run 1 not
    rows = run_loop(_Toy(), settings, tmp_path)
    assert len(rows) == 12 and list(rows.columns) == ["run", "model", "metric", "value"]


def test_heat_trace_task_writes_the_rows_it_promises(tmp_path: Path) -> None:
    from ganeval.studies.heat_traces import HeatTraceTask

    rng = np.random.default_rng(0)
    sets = {"x": rng.normal(size=(40, 4)), "y": rng.normal(size=(40, 4)) + 1}
    settings = Settings(runs=2, sample_size=30, metrics={"imd": {"nv": 5, "m": 5}}, progress=False, device="cpu")
    task = HeatTraceTask(sets, np.logspace(-1, 1, 3), settings)
    store.Layout(task.row_spec()).check_new(0, task(0))
    first = run_loop(task, settings, tmp_path)
    text = (tmp_path / "runs.csv").read_text()
    assert text.startswith("run,data,t,metric,value\n") and len(first) == 12
    pd.testing.assert_frame_equal(run_loop(task, settings, tmp_path), first)
    other = HeatTraceTask(sets, np.logspace(-1, 1, 4), settings)  # another t grid: rows it does not write
    with pytest.raises(StoreError, match="does not write"):
        run_loop(other, settings, tmp_path)


# ------------------------------------------------------------------------------------------------ the lock
HOLDER = textwrap.dedent(
    """
    import sys, numpy as np
    from ganeval import evaluate
    rng = np.random.default_rng(0)
    real, fake = rng.normal(size=(400, 8)).astype(np.float32), rng.normal(size=(400, 8)).astype(np.float32)
    evaluate(real, fake, runs=100000, sample_size=300, metrics=("fid",), progress=False, results_dir=sys.argv[1])
    """
)


@pytest.mark.slow
def test_a_second_writer_is_refused_and_a_killed_writers_lock_taken_over(tmp_path: Path) -> None:
    d = tmp_path / "res"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(d)], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            if (d / "runs.csv").exists() and pd.read_csv(d / "runs.csv")["run"].nunique() >= 2:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        t0 = time.time()
        with pytest.raises(ResultsDirBusyError, match=f"out {d} is being written by process {proc.pid} "
                           r"\(since \d{4}-\d\d-\d\dT[\d:]+\); wait for it or choose another out"):  # Python's words
            evaluate_detailed(*_sets(), runs=2, sample_size=60, metrics=("fid",), progress=False, out=d,
                              overwrite=True)
        assert time.time() - t0 < 1.0  # at once, without waiting or computing
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    stored = pd.read_csv(d / "runs.csv")
    rng = np.random.default_rng(0)
    real, fake = rng.normal(size=(400, 8)).astype(np.float32), rng.normal(size=(400, 8)).astype(np.float32)
    ev = evaluate_detailed(real, fake, runs=2, sample_size=300, metrics=("fid",), progress=False, results_dir=d)
    assert (ev.summary.n_runs == 2).all() and len(stored) >= 2  # resumed from the killed writer's runs
    pd.testing.assert_frame_equal(ev.runs, stored[stored.run < 2].reset_index(drop=True), check_dtype=False)


def test_probe_repeat_rows_are_expected_only_in_the_first_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ganeval.protocol import Block, Settings
    from ganeval.protocol.store import Layout
    from ganeval.protocol.task import MetricTask

    rng = np.random.default_rng(2)
    settings = Settings(runs=3, sample_size=30, metrics={"imd": {"nv": 5, "m": 4}, "fid": {}}, progress=False,
                        probe_repeats=1)
    task = MetricTask([Block(rng.normal(size=(60, 4)), [({"model": "a"}, rng.normal(size=(60, 4)))])], settings)
    layout = Layout(task.row_spec())
    first, second = task(0), task(1)
    layout.check_new(0, first)
    layout.check_new(1, second)
    with pytest.raises(ValueError, match="run 1 has a row the current task does not write"):
        layout.check_new(1, second + [{**first[-1], "run": 1}])
    with pytest.raises(ValueError, match="run 0 is incomplete"):
        layout.check_new(0, first[:-1])


def test_lock_file_removed_on_clean_exit_kept_and_explained_after_a_crash(tmp_path: Path) -> None:
    from ganeval.protocol.store import LOCK_FILE, STALE_NOTE, locked

    d = tmp_path / "res"
    with locked(d):
        assert (d / LOCK_FILE).read_text().startswith(f"{os.getpid()} ")
    assert not (d / LOCK_FILE).exists()  # clean exit
    with pytest.raises(ValueError), locked(d):
        raise ValueError("a refusal")
    assert not (d / LOCK_FILE).exists()  # a refusal is no crash
    with pytest.raises(RuntimeError), locked(d):
        raise RuntimeError("crash")
    text = (d / LOCK_FILE).read_text()
    assert text.startswith(f"{os.getpid()} ") and text.endswith(STALE_NOTE) and "takes it over" in text
    with locked(d):  # taken over, rewritten, removed again
        assert STALE_NOTE not in (d / LOCK_FILE).read_text()
    assert not (d / LOCK_FILE).exists()
    ev = evaluate_detailed(*_sets(), runs=2, sample_size=60, metrics=("fid",), progress=False, results_dir=d)
    assert len(ev.runs) and not (d / LOCK_FILE).exists()


def test_a_second_thread_is_told_another_thread_of_its_process_writes(tmp_path: Path) -> None:
    """Two threads of one process on one results folder: the second is refused naming the first thread, not
    "process N" (the lock file's pid, its own process's)."""
    import threading

    from ganeval.protocol.store import locked

    d = tmp_path / "res"
    held, done = threading.Event(), threading.Event()

    def writer() -> None:
        with locked(d):
            held.set()
            done.wait(30)

    t = threading.Thread(target=writer, name="writer-1")
    t.start()
    try:
        assert held.wait(30)
        with pytest.raises(ResultsDirBusyError, match=rf"results_dir {d} is being written by another thread of this "
                           r"process \(writer-1\) \(since \d{4}-\d\d-\d\dT[\d:]+\); wait for it") as exc:
            with locked(d):
                pass
        assert f"process {os.getpid()}" not in str(exc.value)
        with pytest.raises(ResultsDirBusyError, match="out .* is being written by another thread of this process"):
            evaluate_detailed(*_sets(), runs=2, sample_size=60, metrics=("fid",), progress=False, out=d)
    finally:
        done.set()
        t.join()
    with locked(d):  # free again once the first thread is done
        pass


def test_the_run_lock_is_filelocks_primitive(tmp_path: Path) -> None:
    """The results directory's lock is taken with filelock's primitive (flock here, LockFileEx on Windows: never a
    silent no-lock), so a filelock.FileLock on the same file and the run lock exclude each other, in both orders."""
    import filelock

    from ganeval.protocol.store import LOCK_FILE, locked

    d = tmp_path / "res"
    with locked(d):
        with pytest.raises(filelock.Timeout):
            filelock.FileLock(d / LOCK_FILE, timeout=0).acquire()
    d.mkdir(exist_ok=True)
    other = filelock.FileLock(d / LOCK_FILE, timeout=0, thread_local=False, is_singleton=False)
    with other:
        assert not store.try_lock(os.open(d / LOCK_FILE, os.O_RDWR))
        with pytest.raises(ResultsDirBusyError, match=f"results_dir {d} is being written by process"):
            with locked(d):
                pass


@pytest.mark.parametrize("stored, now", [
    ({"include": ["mnist"]}, {"include": ["mnist", "cifar10"]}),
    ({"include": ["mnist", "cifar10"]}, {"include": ["mnist"]}),
    ({"include": []}, {"include": ["mnist"]}),
    ({"data": {"sha256": ["0123abcd"]}}, {"data": {"sha256": ["0123abcd" + "0" * 56, "f" * 64]}}),
])
def test_identities_whose_lists_differ_in_length_differ(stored: dict, now: dict) -> None:  # type: ignore[type-arg]
    """A stored list that is a prefix of the current one (or the other way round) is another identity: a results
    folder of `include=[mnist]` is never extended under `include=[mnist,cifar10]`."""
    assert not store.same_identity(stored, now)
    assert store.same_identity(now, now)


def test_check_store_refuses_rows_without_their_record_and_passes_a_folder_of_this_config(tmp_path: Path) -> None:
    """runs.csv without runs.meta.json has an unknown config: refused before any work; a folder whose record names
    this config hash passes (it resumes)."""
    d = tmp_path / "res"
    d.mkdir()
    (d / store.RUNS_FILE).write_text("run,metric,value\n0,imd,1.0\n")
    with pytest.raises(store.ConfigMismatchError, match="exists without"):
        store.check_store(d, "abc")
    (d / store.META_FILE).write_text(json.dumps({"config_hash": "abc"}))
    store.check_store(d, "abc")
    with pytest.raises(store.ConfigMismatchError, match="another config"):
        store.check_store(d, "xyz", identity={"x": 1})
