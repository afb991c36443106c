"""The resumable per-run store: `runs.csv` (long form, rewritten atomically), its `runs.meta.json` sidecar, its lock.

A results directory is resumed only when the sidecar's config hash equals the current one, runs.csv's
bytes have the checksum the sidecar recorded, and every stored row is one the current task writes
(known groups and metrics, each run complete, no duplicates, finite values); anything else is refused
with a `StoreError` naming the file, so numbers of two configs, cut files or hand edits never reach a summary.
While a process writes a results directory it holds an exclusive `flock` on its lock file.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import hashlib
import io
import json
import math
import os
import re
import threading
from pathlib import Path
from typing import Any, Iterator

import pandas as pd
from filelock import lock_descriptor

from ganeval.common import atomic_write_text
from ganeval.safety import open_own_file
from ganeval.hashing import cut_short_form, stable_hash
from ganeval.protocol.draws import DRAWS_KEY
from ganeval.protocol.task import RowSpec
from ganeval.results.outputs import clear_outputs

RUNS_FILE = "runs.csv"
META_FILE = "runs.meta.json"
LOCK_FILE = ".ganeval.lock"
DISCARD = "pass overwrite=true to discard them"
_RUN = re.compile(r"0|[1-9][0-9]*")
_FIXED = ("run", "metric", "value")


class StoreError(ValueError):
    """A results directory whose stored runs cannot be resumed as they are."""


class ConfigMismatchError(StoreError):
    """The results directory holds runs made by another config."""


class ResultsDirBusyError(ValueError):
    """Another process is writing the results directory."""


def _missing_as_none(v: Any) -> Any:
    return None if isinstance(v, float) and math.isnan(v) else v  # NaN and None both are an empty CSV field


class Layout:
    """The rows a task's runs write, as objects (to check new rows) and as runs.csv text (to check stored ones)."""

    def __init__(self, spec: RowSpec) -> None:
        self.spec = spec
        self.template = spec.rows(0, every=True)  # the rows of every run first, then those of the first runs only
        self.n_every = len(spec.rows(spec.extra_runs))
        lines = list(csv.reader(io.StringIO(pd.DataFrame(self.template).to_csv(index=False))))
        self.header = lines[0]
        self.groups = [c for c in self.header if c not in _FIXED]
        self._pos = [self.header.index(c) for c in (*self.groups, "metric")]
        self._by_text = {self._text_key(f): i for i, f in enumerate(lines[1:])}
        self._by_object = {self._object_key(row): i for i, row in enumerate(self.template)}
        if not len(self._by_text) == len(self._by_object) == len(self.template):
            raise ValueError(f"the task's row spec names a row twice: {spec}")

    def _text_key(self, fields: list[str]) -> tuple[str, ...]:
        return tuple(fields[i] for i in self._pos)

    def _object_key(self, row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(_missing_as_none(row.get(c)) for c in (*self.groups, "metric"))

    def _label(self, key: tuple[Any, ...]) -> str:
        return " ".join(f"{c}={v}" for c, v in zip((*self.groups, "metric"), key) if v not in (None, ""))

    def check_run(self, r: int, found: list[tuple[int | None, float, str]]) -> None:
        """ValueError unless run r's rows (expected index or None, value, label) are every expected row once, finite."""
        seen: set[int] = set()
        expected = len(self.template) if r < self.spec.extra_runs else self.n_every
        for i, value, label in found:
            if i is None or i >= expected:
                raise ValueError(f"run {r} has a row the current task does not write ({label})")
            if i in seen:
                raise ValueError(f"run {r} has the row {label} twice")
            if not math.isfinite(value):
                raise ValueError(f"run {r}: {label} is {value}, not a finite number")
            seen.add(i)
        missing = [i for i in range(expected) if i not in seen]
        if missing:
            example = self._label(self._object_key(self.template[missing[0]]))
            raise ValueError(f"run {r} is incomplete: {len(missing)} of its {expected} rows are missing "
                             f"(e.g. {example})")

    def check_new(self, r: int, rows: list[dict[str, Any]]) -> None:
        """ValueError unless `rows`, what the task computed for run r, are exactly the rows its spec promises."""
        for row in rows:
            extra = set(row) - set(self.header)
            if extra or row.get("run") != r:
                raise ValueError(f"the task's rows for run {r} have run={row.get('run')} or unexpected columns "
                                 f"{sorted(extra)} (expected {self.header})")
        keys = [self._object_key(row) for row in rows]
        values = [float(row.get("value", math.nan)) for row in rows]
        self.check_run(r, [(self._by_object.get(k), v, self._label(k)) for k, v in zip(keys, values)])

    def parse(self, text: str) -> dict[int, list[dict[str, Any]]]:
        """The runs in runs.csv `text`, run -> rows as the task writes them; ValueError saying what is wrong."""
        if not text:
            raise ValueError("it is empty")
        if not text.endswith("\n"):
            raise ValueError("its last line has no newline at its end: the file was cut")
        reader = csv.reader(io.StringIO(text))
        header = next(reader)
        if header != self.header:
            raise ValueError(f"its columns are {header}, expected {self.header}")
        run_at, value_at = header.index("run"), header.index("value")
        found: dict[int, list[tuple[int | None, float, str]]] = {}
        for fields in reader:
            where = f"line {reader.line_num}"
            if len(fields) != len(header):
                raise ValueError(f"{where} has {len(fields)} fields, expected {len(header)}: a cut or edited line")
            if not _RUN.fullmatch(fields[run_at]):
                raise ValueError(f"{where}: run {fields[run_at]!r} is not an integer ≥ 0")
            try:
                value = float(fields[value_at])
            except ValueError:
                raise ValueError(f"{where}: value {fields[value_at]!r} is not a number") from None
            key = self._text_key(fields)
            found.setdefault(int(fields[run_at]), []).append((self._by_text.get(key), value, self._label(key)))
        runs = {}
        for r, items in found.items():
            self.check_run(r, items)
            runs[r] = [{**self.template[i], "run": r, "value": value} for i, value, _ in items if i is not None]
        return runs


PROVENANCE_KEY = "_provenance"  # in an identity (at any level): a list of key paths (lists of keys) below it whose
# values say where an input was read from (a path as typed), beside a content hash of what was read: not part of
# what defines the runs, so neither hashed nor compared


def _provenance(obj: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The full key paths `obj`'s PROVENANCE_KEY lists declare."""
    found: set[tuple[str, ...]] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == PROVENANCE_KEY and isinstance(v, (list, tuple)):
                found |= {prefix + tuple(str(x) for x in p) for p in v if isinstance(p, (list, tuple))}
            else:
                found |= _provenance(v, prefix + (str(k),))
    return found


def _defining(obj: Any, skip: set[tuple[str, ...]], prefix: tuple[str, ...] = ()) -> Any:
    """`obj` without the values at `skip` and without the provenance declarations themselves."""
    if isinstance(obj, dict):
        return {k: _defining(v, skip, prefix + (str(k),)) for k, v in obj.items()
                if prefix + (str(k),) not in skip and not (k == PROVENANCE_KEY and isinstance(v, (list, tuple)))}
    if isinstance(obj, list):
        return [_defining(v, skip, prefix) for v in obj]
    return obj


def defining(identity: Any, declared_by: Any = None) -> Any:
    """What of `identity` defines its runs: without the provenance that `declared_by` (default: itself) declares."""
    return _defining(identity, _provenance(identity if declared_by is None else declared_by))


def identity_hash(identity: Any) -> str:
    """The config hash of a results directory: the hash of the identity its runs are keyed by (for the `ganeval` app:
    the resolved config without number-neutral keys, the protocol settings and the inputs' content hashes), without
    its provenance (where the inputs were read from: `PROVENANCE_KEY`), so that the same inputs spelled or placed
    otherwise give the same hash. It is the one hash runs.meta.json, summary.json, the log and a refusal show."""
    return stable_hash(defining(identity))


EXTRACTOR_KEYS = ("extractor", "features")  # where an identity holds the feature extractor's (whose "weights" is a hash)


def _plain(obj: Any) -> Any:
    """`obj` as it reads back from runs.meta.json (JSON types; others by str(), as `stable_hash` hashes them)."""
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def _hash_key(key: str, parent: str) -> bool:
    """Whether the value under `key` (in a dict under `parent`) is a content hash older versions stored cut short:
    keys ending in "sha256", and an extractor identity's "weights" (Inception 8, DINOv2/CLIP 16 digits before)."""
    return key.endswith("sha256") or (key == "weights" and parent in EXTRACTOR_KEYS)


def _same(stored: Any, now: Any, key: str = "", parent: str = "") -> bool:
    if isinstance(stored, dict) and isinstance(now, dict):
        return stored.keys() == now.keys() and all(_same(stored[k], now[k], k, key) for k in stored)
    if isinstance(stored, list) and isinstance(now, list):
        return len(stored) == len(now) and all(_same(a, b, key, parent) for a, b in zip(stored, now))
    if _hash_key(key, parent) and cut_short_form(stored, now):
        return True
    return stored == now


def same_identity(stored: Any, now: Any) -> bool:
    """Whether a results folder's stored identity is `now`'s, allowing the content hashes older ganeval versions
    stored cut short (8 or 16 hex digits under a key ending in "sha256", or an extractor identity's "weights" under
    "extractor"/"features"): such a one must be a prefix of the full SHA-256, everything else equal. The provenance
    `now` declares (input paths) is left out of both: a folder stored with other spellings of the same inputs (or
    by a version that declared none) is the same identity."""
    plain = _plain(now)
    return _same(defining(stored, plain), defining(plain))


def _migrate(d: Path, meta: dict[str, Any], config_hash: str, identity: dict[str, Any] | None) -> dict[str, Any]:
    """`meta` of a folder whose stored identity differs from `identity` only by shorter content hashes, rewritten in
    the current form (its config hash and full hashes; the checksums of runs.csv kept), so that it resumes; a folder of
    another identity raises ConfigMismatchError (one saying so when its runs were drawn by other random draws).
    Call it holding the lock."""
    _check_draws(d, meta.get("identity"), identity)
    if identity is None or not same_identity(meta.get("identity"), identity):
        raise ConfigMismatchError(
            f"{d} holds runs made by another config (config hash {meta['config_hash']}, now {config_hash}); "
            "choose another results_dir or pass overwrite=true to discard them"
        )
    meta = {**meta, "config_hash": config_hash, "identity": _plain(identity)}
    _write_meta(d / META_FILE, meta)
    return meta


def _check_draws(d: Path, stored: Any, now: dict[str, Any] | None) -> None:
    """Refuse a protocol folder whose runs were drawn under another version of the random draws than `now`'s (an
    identity without the key holds version 1: every metric drew from one stream after the metrics before it)."""
    if not isinstance(now, dict) or DRAWS_KEY not in now or not isinstance(stored, dict):
        return
    old = stored.get(DRAWS_KEY, 1)
    if old != now[DRAWS_KEY]:
        raise ConfigMismatchError(
            f"{d} holds runs made with ganeval's random draws version {old} and this ganeval draws version "
            f"{now[DRAWS_KEY]} (each metric from a stream of its own), so those runs are not extended: choose another "
            "results_dir or pass overwrite=true to compute them again"
        )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_meta(path: Path, meta: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")


def _read_meta(path: Path) -> dict[str, Any]:
    try:
        meta = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StoreError(f"{path} is not a ganeval run record (not JSON: {e}); {DISCARD}") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("config_hash"), str):
        raise StoreError(f"{path} is not a ganeval run record (no config_hash); {DISCARD}")
    return meta


class Store:
    """An open results directory: its checked stored runs, and a writer keeping runs.csv and its checksum in step."""

    def __init__(self, directory: Path, meta: dict[str, Any], on_disk: str | None,
                 runs: dict[int, list[dict[str, Any]]]) -> None:
        self.directory, self.meta, self.on_disk, self.runs = directory, meta, on_disk, runs

    def write(self, rows: pd.DataFrame) -> Path:
        """Rewrite runs.csv atomically with all `rows`, recording its checksum in runs.meta.json first.

        The sidecar keeps the checksum of the file it replaces too, so a kill between the two renames
        leaves a runs.csv (the previous one) that still resumes.
        """
        text = rows.to_csv(index=False)
        digest = _sha256(text.encode())
        meta = {**self.meta, "runs_sha256": digest, "runs_sha256_previous": self.on_disk}
        _write_meta(self.directory / META_FILE, meta)
        path = self.directory / RUNS_FILE
        atomic_write_text(path, text)
        self.meta, self.on_disk = meta, digest
        return path


def open_store(
    results_dir: str | Path, config_hash: str, identity: dict[str, Any], layout: Layout, overwrite: bool = False
) -> Store:
    """Open `results_dir` for runs of `config_hash` whose rows follow `layout`, with the stored runs checked.

    Refuses (StoreError, ConfigMismatchError) runs of another config or a runs.csv that is not exactly what
    ganeval wrote, unless `overwrite`. Call it holding `locked(results_dir)`.
    """
    d = Path(results_dir)
    runs_path, meta_path = d / RUNS_FILE, d / META_FILE
    d.mkdir(parents=True, exist_ok=True)
    for tmp in (*d.glob(f".{RUNS_FILE}.*.tmp"), *d.glob(f".{META_FILE}.*.tmp")):
        tmp.unlink(missing_ok=True)  # left by a killed writer (we hold the lock: no writer is running)
    if overwrite:
        clear_outputs(d)  # the previous run's outputs (never a file ganeval did not write)
        for p in (runs_path, meta_path):
            p.unlink(missing_ok=True)
    if not meta_path.exists():
        if runs_path.exists():
            raise ConfigMismatchError(
                f"{runs_path} exists without {META_FILE}, so its config is unknown; "
                "choose another results_dir or pass overwrite=true to discard it"
            )
        meta = {"config_hash": config_hash, "identity": identity, "runs_sha256": None, "runs_sha256_previous": None}
        _write_meta(meta_path, meta)
        return Store(d, meta, None, {})
    meta = _read_meta(meta_path)
    if meta["config_hash"] != config_hash:
        meta = _migrate(d, meta, config_hash, identity)  # an older version's short hashes resume; others refused
    if not runs_path.exists():
        return Store(d, meta, None, {})
    data = runs_path.read_bytes()
    try:
        runs = layout.parse(data.decode())
    except (UnicodeDecodeError, ValueError) as e:
        raise StoreError(f"{runs_path} cannot be resumed: {e}; {DISCARD}") from None
    digest = _sha256(data)
    if "runs_sha256" not in meta:
        raise StoreError(f"{meta_path} records no checksum of {RUNS_FILE} (written by an older ganeval), so edits "
                         f"to {runs_path} cannot be ruled out; {DISCARD} and compute the runs again")
    if digest not in (meta["runs_sha256"], meta.get("runs_sha256_previous")):
        raise StoreError(f"{runs_path} was changed after ganeval wrote it (its sha256 is not the one {META_FILE} "
                         f"records): edited or damaged numbers are never resumed; {DISCARD}")
    return Store(d, meta, digest, runs)


def check_store(results_dir: str | Path, config_hash: str, overwrite: bool = False,
                identity: dict[str, Any] | None = None, clear: bool = True) -> None:
    """Before any expensive work, refuse a results_dir that another process is writing or (unless `overwrite`)
    that holds runs of another config (given `identity`, a folder of an older version whose identity differs only
    by shorter content hashes is brought to the current form instead); reads only the lock and runs.meta.json (the rows
    are checked when the run loop opens the store). With `overwrite` the previous outputs are cleared now, or (`clear`
    False: the run may still be refused after extraction) when the run loop opens the store."""
    d = Path(results_dir)
    meta_path, runs_path = d / META_FILE, d / RUNS_FILE
    with locked(d):
        if not overwrite and meta_path.exists() and (meta := _read_meta(meta_path))["config_hash"] != config_hash:
            _migrate(d, meta, config_hash, identity)
    if overwrite:
        if clear:
            clear_outputs(d)  # a fresh start: no output of the previous run survives into this one's report
        return
    if not meta_path.exists() and runs_path.exists():
        raise ConfigMismatchError(f"{runs_path} exists without {META_FILE}, so its config is unknown; "
                                  "choose another results_dir or pass overwrite=true to discard it")


def try_lock(fd: int) -> bool:
    """Take an exclusive lock on `fd` without waiting: False if another open file holds it. filelock's primitive:
    flock on POSIX, LockFileEx on Windows (never a silent no-lock); the file stays ours (opened by `open_own_file`)."""
    return lock_descriptor(fd, blocking=False)


def lock_holder(fd: int) -> str | None:
    """The pid holding a flock on `fd`'s file, from /proc/locks (Linux); None where that cannot be told."""
    try:
        st = os.fstat(fd)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == inode and fields[4].isdigit() \
                and int(fields[4]) != os.getpid():
            return fields[4]
    return None


@contextlib.contextmanager
def locked(results_dir: str | Path) -> Iterator[None]:
    """Hold `results_dir`'s exclusive lock (its pid and start time in the lock file); ResultsDirBusyError if taken.

    The kernel drops a flock when its holder dies, so the lock of a killed process is taken over. The file is
    removed on a clean exit (or a refusal); after a crash or an interrupt it stays, saying so (STALE_NOTE).
    """
    d = Path(results_dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / LOCK_FILE
    for _ in range(20):  # a lock file removed by its clean holder between our open and flock: open the new one
        fd = open_own_file(path, "results_dir's lock file")
        if not try_lock(fd):
            try:
                text = os.read(fd, 200).decode(errors="replace")
            except OSError:  # Windows: the holder's locked byte cannot be read
                text = ""
            pid, _, since = text.strip().partition(" ")
            holder = lock_holder(fd)
            thread = _HELD.get(_file_key(fd))
            os.close(fd)
            if holder is not None and holder != pid:  # the file names a writer, the kernel another: trust the kernel
                pid, since = holder, "unknown"
            writer = (f"another thread of this process ({thread})" if thread is not None and holder is None
                      else f"process {pid or '(unknown)'}")
            raise ResultsDirBusyError(f"results_dir {d} is being written by {writer} (since "
                                      f"{since.splitlines()[0] if since else 'unknown'}); wait for it or choose "
                                      "another results_dir")
        if _same_file(fd, path):
            break
        os.close(fd)
    else:  # pragma: no cover - only under a storm of lock holders
        raise ResultsDirBusyError(f"results_dir {d}: its lock file keeps changing; retry")
    clean = False
    key = _file_key(fd)
    _HELD[key] = threading.current_thread().name
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {datetime.datetime.now().isoformat(timespec='seconds')}\n".encode())
        try:
            yield
        except ValueError:  # a refusal (bad input, another config's runs): nothing crashed, nothing to explain
            clean = True
            raise
        clean = True
    finally:
        if clean:  # nothing left behind after a clean exit (removed while still held: no one else can take it)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        else:
            with contextlib.suppress(OSError):
                os.write(fd, STALE_NOTE.encode())
        _HELD.pop(key, None)
        os.close(fd)


# the lock files this process holds (device, inode) -> the holding thread's name: a second thread of the process is
# told so (the kernel's lock table names the process alone, and the lock file its pid, the caller's own)
_HELD: dict[tuple[int, int], str] = {}


def _file_key(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


STALE_NOTE = ("# left by the process above, which stopped before finishing (error, interrupt or kill). It is not held:\n"
              "# the next ganeval run on this directory takes it over and resumes the runs stored here.\n")


def _same_file(fd: int, path: Path) -> bool:
    """Whether the open `fd` is still the file at `path` (not one its holder removed after a clean exit)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)
