"""Which files of a results directory are ganeval's: refuse a foreign folder, clear a previous run's outputs on a
fresh start, and let the report show only files this run wrote.

A results directory is ganeval's when it holds a run record (runs.meta.json, summary.json with a config hash, or
the `.ganeval-outputs.json` manifest the report writes); files there other than Hydra's own (.hydra/, ganeval.log)
and the lock make a folder without a record foreign: it is refused unless overwrite=true, and ganeval never
deletes a file it did not write.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Iterable

from ganeval.common import atomic_write_text, forget_written, written_in

MANIFEST = ".ganeval-outputs.json"
RUN_RECORDS = ("runs.meta.json", "summary.json")
# the files every experiment may leave (an old results directory without a manifest is cleared of these)
STANDARD = ("runs.csv", "runs.meta.json", "summary.csv", "summary.json", "comparison.csv", "summary_seeds.csv",
            "table.md", "table.tex", "table.html", "summary.png", "differences.png", "verdict.md", "verdict.csv", "report.html")
NOT_OUTPUTS = (".hydra", "ganeval.log", ".ganeval.lock", MANIFEST, "multirun.yaml")


def _manifest(d: Path) -> list[str] | None:
    try:
        names = json.loads((d / MANIFEST).read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return [str(n) for n in names if isinstance(n, str) and "/" not in n and n not in ("", ".", "..")]


def is_ganeval_dir(d: Path) -> bool:
    """Whether `d` holds a ganeval run record (see the module doc)."""
    if (d / "runs.meta.json").is_file() or _manifest(d) is not None:
        return True
    try:
        return "config_hash" in json.loads((d / "summary.json").read_text())
    except (OSError, ValueError, TypeError):
        return False


def foreign_files(d: Path) -> list[str]:
    """Names in `d` that are neither Hydra's, the lock, nor a temporary file of an atomic write."""
    if not d.is_dir():
        return []
    return sorted(p.name for p in d.iterdir()
                  if p.name not in NOT_OUTPUTS and not (p.name.startswith(".") and p.name.endswith(".tmp")))


SYSTEM_DIRS = ("/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root", "/run",
               "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var")


def check_system_dir(results_dir: str | Path) -> None:
    """Refuse a results_dir that is a system directory itself (/etc, /usr, your home folder, ...), even as root."""
    d = Path(results_dir).expanduser().absolute()
    if str(d) in SYSTEM_DIRS or d == Path.home().absolute():
        raise ValueError(f"results_dir={results_dir} is a system or home directory itself; give the results a folder "
                         f"of their own, e.g. results_dir={d / 'ganeval-results'}")


def check_foreign(results_dir: str | Path, overwrite: bool) -> None:
    """Refuse (ValueError) a system directory, and a non-empty `results_dir` holding no ganeval run record unless
    `overwrite`."""
    check_system_dir(results_dir)
    d = Path(results_dir)
    others = foreign_files(d)
    if overwrite or not others or is_ganeval_dir(d):
        return
    shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
    raise ValueError(f"results_dir {d} is not empty ({shown}) and holds no ganeval run record, so its files are not "
                     "ganeval's: choose a new or empty results_dir, or pass overwrite=true to write beside them "
                     "(files of the same name are replaced; no other file is touched)")


def begin_run(results_dir: str | Path, overwrite: bool) -> None:
    """A run starts writing `results_dir`: refuse a foreign folder (`check_foreign`) and start the record of the
    files this run writes (what the report shows and the manifest lists)."""
    check_foreign(results_dir, overwrite)
    forget_written(results_dir)


def clear_outputs(results_dir: str | Path) -> list[str]:
    """On a fresh start (overwrite=true) delete the previous run's outputs: the files its manifest lists (else the
    standard names) when the folder is ganeval's, regular files only, never one this process wrote. Returns them."""
    d = Path(results_dir)
    if not d.is_dir() or not is_ganeval_dir(d):
        return []
    names: Iterable[str] = _manifest(d) or STANDARD
    mine = written_in(d)
    removed = []
    for name in names:
        p = d / name
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(st.st_mode) and name not in mine and name not in NOT_OUTPUTS:
            p.unlink()
            removed.append(name)
    if removed:
        (d / MANIFEST).unlink(missing_ok=True)
    return removed


def this_run(results_dir: str | Path) -> set[str] | None:
    """The result files the report may show: those this process wrote into `results_dir` and those the manifest
    lists (earlier processes of the same run: the manifest is removed on a fresh start); None, everything, for a
    folder from before manifests that this process did not write."""
    d = Path(results_dir)
    mine, listed = written_in(d), _manifest(d)
    if not mine and listed is None:
        return None
    return mine | set(listed or ())


def write_manifest(results_dir: str | Path) -> None:
    """Record the files this process wrote into `results_dir` (with those already listed, when resuming)."""
    d = Path(results_dir)
    names = sorted((written_in(d) | set(_manifest(d) or ())) - {MANIFEST})
    atomic_write_text(d / MANIFEST, json.dumps({"files": names}, indent=1) + "\n")
