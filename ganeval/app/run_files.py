"""The files a run of `ganeval` writes into its results folder besides its results: the command's record
(`.hydra/config.yaml`, `hydra.yaml`, `overrides.yaml`, as Hydra lays them out) and the log `ganeval.log`.

Hydra itself writes nothing (`hydra.output_subdir: null`, its run folder the working directory, no file log): the app
writes these once the plan is built (`begin`), so a command refused before that leaves nothing behind. A command
refused after it (`undo`) takes them back when they are all it wrote there: the earlier bytes of Hydra's files
restored, the log cut to its earlier length, the folders it made removed. Never through a link: a link at one of
these names is refused before anything is written. Light to import (its writes import `ganeval.common`).
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HYDRA_DIR = ".hydra"
HYDRA_FILES = ("config.yaml", "hydra.yaml", "overrides.yaml")
LOG = "ganeval.log"
LOG_FORMAT = "[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"  # Hydra's job log format


@dataclass
class Written:
    """What `begin` found in the folder and what it attached, to take back on a refusal."""

    folder: Path
    made: Path | None  # the topmost folder it created (None: the folder existed)
    hydra: dict[str, str | None]  # Hydra's files' earlier text (None: absent)
    log_size: int | None  # ganeval.log's earlier size (None: absent)
    tree: frozenset[tuple[str, int, int]]  # everything else in the folder: (path, size, mtime_ns)
    handler: logging.Handler | None


_WRITTEN: list[Written] = []


def _tree(d: Path) -> frozenset[tuple[str, int, int]]:
    """Every entry under `d` but Hydra's files and the log (links listed, never followed)."""
    out = set()
    for root, dirs, files in os.walk(d, followlinks=False):
        rel = os.path.relpath(root, d)
        for name in dirs + files:
            if rel == "." and name in (HYDRA_DIR, LOG) or rel == HYDRA_DIR and name in HYDRA_FILES:
                continue
            st = os.lstat(os.path.join(root, name))
            out.add((os.path.join(rel, name), st.st_size, st.st_mtime_ns))
    return frozenset(out)


def _regular(p: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(p).st_mode)
    except OSError:
        return False


def begin(folder: Path, cfg: Any) -> None:
    """The run starts in `folder`: write the command's record there and log into its ganeval.log from now on."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    from ganeval.common import atomic_write_text

    folder = folder.absolute()
    for p in (folder / HYDRA_DIR, *(folder / HYDRA_DIR / n for n in HYDRA_FILES), folder / LOG):
        if os.path.islink(p):
            raise ValueError(f"{p} is a symbolic link (to {os.readlink(p)}); ganeval never writes through a link: "
                             "remove the link or choose another results_dir")
    made = first_missing(folder)
    hydra = {n: (folder / HYDRA_DIR / n).read_text() if _regular(folder / HYDRA_DIR / n) else None for n in HYDRA_FILES}
    log_size = os.lstat(folder / LOG).st_size if _regular(folder / LOG) else None
    tree = _tree(folder) if made is None else frozenset()
    hc = HydraConfig.get()
    texts = {"config.yaml": OmegaConf.to_yaml(cfg), "hydra.yaml": OmegaConf.to_yaml(OmegaConf.create({"hydra": hc})),
             "overrides.yaml": OmegaConf.to_yaml(OmegaConf.create(list(hc.overrides.task)))}
    _WRITTEN.append(Written(folder, made, hydra, log_size, tree, None))
    for name, text in texts.items():
        atomic_write_text(folder / HYDRA_DIR / name, text)  # a rename: never through a link
    handler = logging.FileHandler(folder / LOG, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logging.getLogger().addHandler(handler)
    _WRITTEN[-1].handler = handler


def close() -> None:
    """Stop logging into the run's ganeval.log (its files stay; `undo` may still take them back)."""
    for w in _WRITTEN:
        if w.handler is not None:
            logging.getLogger().removeHandler(w.handler)
            w.handler.close()
            w.handler = None


def undo() -> bool:
    """After a refusal: put each folder `begin` wrote into back as it found it, when Hydra's files and the log are all
    the command wrote there (anything else new or changed: its record stays, it describes what did that). Whether
    every folder was put back; a link planted meanwhile at one of the names is left alone."""
    from ganeval.common import atomic_write_text

    close()
    done = True
    while _WRITTEN:
        w = _WRITTEN.pop()
        if not os.path.isdir(w.folder) or os.path.islink(w.folder) or _tree(w.folder) != w.tree:
            done = False
            continue
        for name, text in w.hydra.items():
            p = w.folder / HYDRA_DIR / name
            if os.path.islink(p):
                continue
            if text is not None:
                atomic_write_text(p, text)
            elif _regular(p):
                p.unlink()
        log = w.folder / LOG
        if w.log_size is None and _regular(log):
            log.unlink()
        elif w.log_size is not None and _regular(log):
            fd = os.open(log, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                os.ftruncate(fd, w.log_size)
            finally:
                os.close(fd)
        if all(text is None for text in w.hydra.values()):
            _rmdir(w.folder / HYDRA_DIR)
        if w.made is not None:
            remove_made(w.folder, w.made)
    return done


def first_missing(folder: Path) -> Path | None:
    """The topmost folder of `folder` (itself included) that does not exist yet, which making it creates; None when
    it exists."""
    made, probe = None, folder
    while not os.path.lexists(probe):
        made, probe = probe, probe.parent
    return made


def remove_made(folder: Path, made: Path) -> None:
    """Remove `folder` and its parents up to `made` (`first_missing`'s answer) while they are empty folders."""
    d = folder
    while _rmdir(d) and d != made:
        d = d.parent


def _rmdir(d: Path) -> bool:
    """Remove `d` when it is an empty folder; whether it did."""
    try:
        d.rmdir()
    except OSError:
        return False
    return True


def forget() -> None:
    """The command ends: stop logging into its ganeval.log and forget what `begin` recorded."""
    close()
    _WRITTEN.clear()
