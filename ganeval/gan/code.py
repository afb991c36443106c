"""The code a callable generator runs, by content: its own module and every module it loads from its own folder.

Rule (docs/data.md, "Generators"): the callable's *root* is the folder its top-level package or module was found in
(a `sys.path` entry: for `mymod:sample` the folder of mymod.py, for `pkg.sub:fn` the folder holding `pkg/`).
Every module imported from under that root while the callable is imported or called, except modules under the
standard library, site-packages or ganeval itself, is (1) loaded from its source, never from a `__pycache__`
`.pyc` (a stale `.pyc` would run old code under the new source's hash), and (2) hashed into the generator's
identity. Data files the code reads are not seen: name them in the generator config to key results by them.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import site
import sys
import sysconfig
from pathlib import Path
from typing import Any, Iterator

from ganeval.hashing import sha256_file

_LOADED: dict[Path, set[str]] = {}  # root -> names of the modules this process loaded from it through the finder


def _excluded() -> list[Path]:
    """Folders whose modules are never part of a callable's code: the standard library, site-packages, ganeval."""
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    with contextlib.suppress(AttributeError):
        paths.update(site.getsitepackages())
    with contextlib.suppress(AttributeError):
        paths.add(site.getusersitepackages())
    paths.add(str(Path(__file__).resolve().parents[1]))  # the ganeval package
    return [Path(p).resolve() for p in paths if p]


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def root_of(module_name: str) -> Path | None:
    """The folder the top-level package or module of `module_name` is found in (None: not a file on sys.path)."""
    top = module_name.split(".")[0]
    loaded = sys.modules.get(top)
    if loaded is not None and loaded.__spec__ is None:  # the __main__ of a script, `python -c`, stdin, a notebook
        file = getattr(loaded, "__file__", None)  # `python file.py`: the script's folder (sys.path[0]) is its root
        return Path(file).resolve().parent if file and Path(file).is_file() else None
    try:
        spec = loaded.__spec__ if loaded is not None else importlib.util.find_spec(top)
    except (ImportError, ValueError):  # not importable by name: no folder of its own
        return None
    return _root_of_spec(spec)


def _root_of_spec(spec: Any) -> Path | None:
    """The folder a module spec's top-level package or module was found in (None: not a file)."""
    if spec is None or not spec.origin or not spec.has_location:
        return None
    origin = Path(spec.origin).resolve()
    return origin.parent.parent if spec.submodule_search_locations is not None else origin.parent


def is_own(path: str | Path, root: Path) -> bool:
    """Whether the module file `path` belongs to the callable under `root` (see the module doc)."""
    p = Path(path).resolve()
    return _under(p, root) and not any(_under(p, ex) for ex in _excluded() if not _under(root, ex))


class _SourceLoader(importlib.machinery.SourceFileLoader):
    """A source loader that compiles the `.py` file every time: no `.pyc` is read (nor written)."""

    def get_code(self, fullname: str) -> Any:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


class _OwnSourceFinder:
    """A meta-path finder that loads the modules under `root` from source and records their names."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or not str(spec.origin).endswith(".py") or not is_own(spec.origin, self.root):
            return None
        loader = _SourceLoader(fullname, spec.origin)
        out = importlib.util.spec_from_file_location(fullname, spec.origin, loader=loader,
                                                     submodule_search_locations=spec.submodule_search_locations)
        _LOADED.setdefault(self.root, set()).add(fullname)
        return out


@contextlib.contextmanager
def from_source(module_name: str) -> Iterator[None]:
    """While inside, modules under the root of `module_name` are imported from source and recorded (see above)."""
    root = root_of(module_name)
    if root is None:
        yield
        return
    finder = _OwnSourceFinder(root)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(finder)


def own_modules(module_name: str) -> dict[str, str]:
    """{path relative to the root: full SHA-256 of its source} of the modules loaded from the callable's root
    (see `from_source`), the callable's own module file excluded (its hash is `code_sha256`)."""
    root = root_of(module_name)
    if root is None:
        return {}
    own = getattr(sys.modules.get(module_name), "__file__", None)
    out = {}
    for name in sorted(_LOADED.get(root, ())):
        file = getattr(sys.modules.get(name), "__file__", None)
        if not file or (own and Path(file).resolve() == Path(own).resolve()) or not Path(file).is_file():
            continue
        out[Path(file).resolve().relative_to(root).as_posix()] = sha256_file(file)
    return out
