"""Reference statistics files, read and written: ganeval's own `.npz` and the field's layouts.

Each layout is recognised by its keys, never by guess (`read_reference` returns None for any other file, and refuses
one that holds moments only in part, such as `sigma` alone: never feature rows):

| layout | keys | gives |
|---|---|---|
| ganeval (`write_reference`) | `features`, `mu`, `sigma`, `meta` (JSON, `"format": "ganeval-reference"`) | features + moments + provenance |
| pytorch-fid / TTUR / EDM `.npz`, clean-fid `{name}_{mode}[_{model}]_{split}_{res}.npz` | `mu`, `sigma` (beside them at most scalars such as `n`, `mu_s`/`sigma_s`, and `extractor`: the name `--save-stats` writes for features other than Inception's) | moments only (Inception's unless `extractor` names others) |
| clean-fid `..._kid.npz` | exactly `feats` | Inception features |
| ADM reference batch (openai/guided-diffusion evaluations) | `arr_0` (N×H×W×3 uint8), `mu`, `sigma` (+ `mu_s`, `sigma_s`) | the real images |
| EDM2 `.pkl` | a dict `{fid: {mu, sigma}, fd_dinov2: {mu, sigma}}` | Inception and DINOv2 moments only |

EDM2 pickles are read by an unpickler that only rebuilds plain containers and numpy arrays (`_reconstruct`,
`ndarray`, `dtype`, `scalar`, `_frombuffer`, and `_codecs.encode` for protocol-2 bytes): any other global (code a
pickle could run) is refused. Moments are checked when read: shapes, finite, symmetric, and positive semi-definite
within float rounding (`check_psd`: λ_min(sigma) ≥ −tol·max|sigma|, tol = max(PSD_RTOL, D·ε) with ε the machine
epsilon of the dtype the file stores sigma in, so a float32 copy of a true covariance passes).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ganeval.common import atomic_np_save

GANEVAL_FORMAT = "ganeval-reference"
GANEVAL_VERSION = 1
MOMENT_KEYS = ("mu", "sigma", "mu_s", "sigma_s")  # never feature rows: `FILE:mu` is refused
STATS_SPACE_KEY = "extractor"  # a statistics file's feature space, when not Inception's (`write_stats`)
EDM2_SPACES = {"fid": "inception", "fd_dinov2": "dinov2"}  # EDM2's key -> ganeval's extractor name
CLEAN_FID_NAME = re.compile(
    r"^(?P<name>.+?)_(?P<mode>legacy_pytorch|legacy_tensorflow|clean)(?P<model>_[a-z0-9_]+?)?_(?P<split>[a-z0-9]+)"
    r"_(?P<res>\d+|na)(?P<kid>_kid)?\.npz$")
SYMMETRY_RTOL = 1e-6
PSD_RTOL = 1e-6  # least tolerance of `check_psd`, relative to max |sigma| (D·ε of sigma's stored dtype when larger)
PICKLE_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),  # protocol 5: array from bytes
    ("_codecs", "encode"),  # protocol-2 pickles store bytes as codecs.encode(str, "latin1") (torch's weights_only allows it)
}


@dataclass
class Moments:
    """Mean (D) and covariance (D×D) of a feature set, float64."""

    mu: np.ndarray
    sigma: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.mu.shape[0])


@dataclass
class Reference:
    """A reference file as read: its layout, moments by feature space (extractor name), real features or images
    where the file holds them, the preprocessing mode where the file says it, and its provenance."""

    path: str
    layout: str  # "ganeval", "pytorch-fid", "clean-fid", "clean-fid-kid", "adm", "edm2"
    moments: dict[str, Moments] = field(default_factory=dict)
    features: np.ndarray | None = None  # N×D real features (ganeval, clean-fid _kid)
    images: np.ndarray | None = None  # N×H×W×C uint8 real images (ADM)
    space: str | None = None  # the extractor that made `features`/`moments` when there is one
    mode: str | None = None  # preprocessing mode the file states (clean-fid name, ganeval meta); None: unsaid
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def moments_only(self) -> bool:
        """True when the file holds no real rows (features or images): only FID/FD can be scored against it."""
        return self.features is None and self.images is None

    def describe(self) -> str:
        what = ", ".join(f"{k} {m.dim}-d moments" for k, m in self.moments.items())
        if self.features is not None:
            what = f"{len(self.features)}×{self.features.shape[1]} features" + (f", {what}" if what else "")
        if self.images is not None:
            what = f"{len(self.images)} images" + (f", {what}" if what else "")
        return f"{self.path} ({self.layout} reference: {what})"


class ReferenceError(ValueError):
    """A reference file that cannot be used as it is (the message names the file and the fix)."""


class _RestrictedUnpickler(pickle.Unpickler):
    """Rebuilds plain containers and numpy arrays only; any other global is refused, so nothing runs."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in PICKLE_ALLOWED:
            return super().find_class(module, name)
        raise ReferenceError(f"{module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        raise ReferenceError("a persistent id")


def safe_unpickle(data: bytes, path: str) -> Any:
    """Unpickle `data` allowing only dicts, lists, tuples, numbers, strings and numpy arrays/scalars."""
    try:
        return _RestrictedUnpickler(io.BytesIO(data)).load()
    except ReferenceError as e:
        raise ReferenceError(f"{path} is a pickle that would load {e}, not only arrays and dicts: refused (ganeval "
                             "loads pickles without running code); give an EDM2 reference .pkl {fid: {mu, sigma}} "
                             "or an .npz of mu and sigma") from None
    except Exception as e:  # truncated, not a pickle, bad opcodes
        raise ReferenceError(f"{path} is not a readable pickle ({type(e).__name__}: {e}); download or write it "
                             "again") from None


def check_moments(mu: Any, sigma: Any, what: str) -> Moments:
    """Moments checked: numeric, `mu` of D entries, `sigma` D×D, finite, symmetric, positive semi-definite within
    rounding (`check_psd`); returned as float64."""
    for name, v in (("mu", mu), ("sigma", sigma)):
        if not isinstance(v, np.ndarray) or not (np.issubdtype(v.dtype, np.floating) or np.issubdtype(v.dtype, np.integer)):
            raise ReferenceError(f"{what}: {name} is not a numeric array ({type(v).__name__}"
                                 f"{' ' + str(v.dtype) if isinstance(v, np.ndarray) else ''}); write the file again")
    sigma_dtype = sigma.dtype
    mu, sigma = np.asarray(mu, np.float64), np.asarray(sigma, np.float64)
    if mu.ndim != 1 or mu.shape[0] < 1:
        raise ReferenceError(f"{what}: mu must be a vector of D means, got shape {mu.shape}")
    d = mu.shape[0]
    if sigma.shape != (d, d):
        raise ReferenceError(f"{what}: mu has {d} entries but sigma has shape {sigma.shape}, not {d}×{d}: the two "
                             "come from different features; write the file again from one feature set")
    for name, v in (("mu", mu), ("sigma", sigma)):
        if not np.isfinite(v).all():
            raise ReferenceError(f"{what}: {name} holds {int((~np.isfinite(v)).sum())} non-finite values (NaN or inf); "
                                 "compute the statistics again from finite features")
    scale = float(np.abs(sigma).max()) if sigma.size else 0.0
    asym = float(np.abs(sigma - sigma.T).max()) if sigma.size else 0.0
    if asym > SYMMETRY_RTOL * max(scale, np.finfo(np.float64).tiny):
        raise ReferenceError(f"{what}: sigma is not symmetric (max |sigma - sigmaᵀ| = {asym:.3g} of max |sigma| "
                             f"{scale:.3g}): it is not a covariance matrix; write the file again")
    check_psd(sigma, stored_eps(sigma_dtype), what)
    return Moments(mu, sigma)


def stored_eps(dtype: np.dtype) -> float:
    """The machine epsilon of the dtype sigma was stored in (float64's for integers)."""
    return float(np.finfo(dtype).eps) if np.issubdtype(dtype, np.floating) else float(np.finfo(np.float64).eps)


def psd_tolerance(d: int, eps: float) -> float:
    """How negative an eigenvalue of a D×D covariance may be, relative to max |sigma|, and still count as rounding:
    max(PSD_RTOL, D·ε) (ε: the stored dtype's epsilon; rounding each entry moves an eigenvalue by at most D·ε·max|σ|)."""
    return max(PSD_RTOL, d * eps)


def check_psd(sigma: np.ndarray, eps: float, what: str) -> None:
    """Refuse a symmetric `sigma` (float64) with an eigenvalue below −tol·max|sigma| (`psd_tolerance`): not a
    covariance. Tested by a Cholesky factorisation of sigma + tol·max|sigma|·I (which exists exactly when every
    eigenvalue exceeds −tol·max|sigma|); the eigenvalues are computed only for the message."""
    d = sigma.shape[0]
    scale = float(np.abs(sigma).max()) if sigma.size else 0.0
    if scale == 0.0:
        return  # the zero matrix: a covariance of constant features
    tol = psd_tolerance(d, eps)
    try:
        np.linalg.cholesky(sigma + (tol * scale) * np.eye(d))
        return
    except np.linalg.LinAlgError:
        pass
    lam = np.linalg.eigvalsh(sigma)
    raise ReferenceError(f"{what}: sigma has {int((lam < -tol * scale).sum())} negative eigenvalues down to "
                         f"{lam[0]:.3g} (beyond the rounding tolerance −{tol:.1g}·max|sigma| = {-tol * scale:.3g}): "
                         "it is not a covariance matrix (positive semi-definite); write the file again")


def check_features(a: Any, what: str) -> np.ndarray:
    """Feature rows checked: a numeric N×D array with N ≥ 2, finite."""
    if not isinstance(a, np.ndarray) or a.ndim != 2 or not np.issubdtype(a.dtype, np.number) or len(a) < 2:
        raise ReferenceError(f"{what}: features must be a numeric N×D array with N ≥ 2, got "
                             f"{getattr(a, 'shape', type(a).__name__)} {getattr(a, 'dtype', '')}")
    if not np.isfinite(a).all():
        raise ReferenceError(f"{what}: features hold non-finite values; extract them again")
    return a


META_TYPES: dict[str, tuple[type, ...]] = {"extractor": (dict,), "weights_sha256": (str,), "resize_mode": (str,),
                                           "content_hash": (str,), "n": (int,)}
AGREE_RTOL = 1e-6  # stored moments may differ from their features' by this much (of their scale): rounding only


def check_meta(meta: dict[str, Any], what: str) -> None:
    """Refuse a ganeval reference whose provenance fields have the wrong JSON type (each may be null)."""
    for key, types in META_TYPES.items():
        v = meta.get(key)
        if v is not None and (not isinstance(v, types) or isinstance(v, bool)):
            raise ReferenceError(f"{what}: meta's {key!r} must be {' or '.join(t.__name__ for t in types)} or null, "
                                 f"got {type(v).__name__} {json.dumps(v)[:60]}: the file was changed after ganeval wrote "
                                 "it; write the reference again")
    name = (meta.get("extractor") or {}).get("name")
    if name is not None and not isinstance(name, str):
        raise ReferenceError(f"{what}: meta's extractor name must be a string, got {json.dumps(name)[:60]}; write the "
                             "reference again")


def check_agree(mom: Moments, feats: np.ndarray, what: str, block: int = 4096) -> None:
    """Refuse stored moments that are not their own features' (ganeval scores the features, a peer the moments):
    mu exactly, sigma through its product with two fixed random vectors (any change of sigma moves it almost surely),
    in O(N·D) and blocks of rows, not a second D×D covariance."""
    n, d = feats.shape
    mu = np.zeros(d)
    for s in range(0, n, block):
        mu += feats[s : s + block].sum(axis=0, dtype=np.float64)
    mu /= n
    v = np.random.default_rng(0).standard_normal((d, 2))
    sv = np.zeros((d, 2))
    for s in range(0, n, block):
        c = feats[s : s + block].astype(np.float64) - mu
        sv += c.T @ (c @ v)
    sv /= n - 1
    scale = max(float(np.abs(mom.sigma).max()), np.finfo(np.float64).tiny)
    dmu = float(np.abs(mom.mu - mu).max()) / max(float(np.abs(mu).max()), np.sqrt(scale))
    dsigma = float(np.abs(mom.sigma @ v - sv).max()) / (scale * float(np.abs(v).sum(axis=0).max()))
    if max(dmu, dsigma) > AGREE_RTOL:
        raise ReferenceError(f"{what}: its mu/sigma are not the moments of its own features (relative difference "
                             f"{max(dmu, dsigma):.3g}): the file was changed after ganeval wrote it, and ganeval (which "
                             "scores the features) and a peer (which reads mu/sigma) would disagree; write it again")


def _npz_arrays(p: Path) -> dict[str, np.ndarray] | None:
    """All arrays of an `.npz` (no pickle), or None when it is not an npz archive."""
    if not zipfile.is_zipfile(p):
        return None
    try:
        with np.load(p, allow_pickle=False) as z:
            return {k: np.asarray(z[k]) for k in z.files}
    except ValueError as e:
        raise ReferenceError(f"{p} holds Python objects, which are not loaded (no pickle): save numeric arrays "
                             f"({e})") from None
    except (OSError, EOFError, zipfile.BadZipFile) as e:
        raise ReferenceError(f"{p} is not a readable .npz file ({type(e).__name__}: {e}); write or copy it again") from None


def _from_npz(p: Path, z: dict[str, np.ndarray]) -> Reference | None:
    keys = set(z)
    what = str(p)
    if {"features", "mu", "sigma", "meta"} <= keys:
        try:
            meta = json.loads(str(z["meta"]))
        except json.JSONDecodeError:
            meta = {}
        if not isinstance(meta, dict):
            raise ReferenceError(f"{what}: its meta is JSON {type(meta).__name__}, not an object: the file holds a "
                                 "ganeval reference's arrays (features, mu, sigma, meta) but not its provenance; write "
                                 "the reference again")
        if meta.get("format") == GANEVAL_FORMAT:
            check_meta(meta, what)
            feats = check_features(z["features"], what)
            mom = check_moments(z["mu"], z["sigma"], what)
            if mom.dim != feats.shape[1]:
                raise ReferenceError(f"{what}: features are {feats.shape[1]}-d but mu has {mom.dim} entries; write "
                                     "the reference again")
            check_agree(mom, feats, what)
            space = (meta.get("extractor") or {}).get("name")
            return Reference(what, "ganeval", {space or "features": mom}, feats, None, space,
                             meta.get("resize_mode"), meta)
    if {"mu", "sigma"} <= keys and all(k in MOMENT_KEYS or z[k].ndim == 0 for k in keys):  # scalars beside: n, ...
        m = CLEAN_FID_NAME.match(p.name.lower())
        layout, mode = ("clean-fid", m["mode"]) if m and not m["kid"] else ("pytorch-fid", None)
        meta = {k: v for k, v in m.groupdict().items() if v} if m and layout == "clean-fid" else {}
        space = stats_space(z, what)
        return Reference(what, layout, {space: check_moments(z["mu"], z["sigma"], what)}, space=space,
                         mode=mode, meta=meta)
    if keys == {"feats"}:
        m = CLEAN_FID_NAME.match(p.name.lower())
        return Reference(what, "clean-fid-kid", {}, check_features(z["feats"], what), space="inception",
                         mode=m["mode"] if m else None, meta={k: v for k, v in m.groupdict().items() if v} if m else {})
    if {"arr_0", "mu", "sigma"} <= keys:
        imgs = z["arr_0"]
        if imgs.dtype != np.uint8 or imgs.ndim != 4 or imgs.shape[-1] != 3:
            raise ReferenceError(f"{what}: an ADM reference batch holds arr_0 as N×H×W×3 uint8 images, got "
                                 f"{imgs.shape} {imgs.dtype}")
        mom = {"inception": check_moments(z["mu"], z["sigma"], what)}
        return Reference(what, "adm", mom, images=imgs, space="inception", mode="legacy_tensorflow",
                         meta={"spatial_moments": "mu_s" in keys})
    if keys & set(MOMENT_KEYS) and all(k in MOMENT_KEYS or z[k].ndim == 0 for k in keys):
        raise ReferenceError(f"{what} holds {', '.join(sorted(keys))}: part of a statistics file (no feature rows, "
                             "and not both mu and sigma, which FID needs); give the file with both mu and sigma")
    return None


def stats_space(z: dict[str, np.ndarray], what: str) -> str:
    """The feature space of a statistics file's moments: its `extractor` string (`write_stats` writes it for features
    other than Inception's), else Inception's (pytorch-fid's layout says nothing: its files are Inception's)."""
    if STATS_SPACE_KEY not in z:
        return "inception"
    name = z[STATS_SPACE_KEY]
    if name.dtype.kind != "U" or name.ndim != 0 or not str(name):
        raise ReferenceError(f"{what}: its {STATS_SPACE_KEY!r} must be the extractor's name (a string), got "
                             f"{name.dtype} of shape {name.shape}; write the file again")
    return str(name)


def _from_pickle(p: Path) -> Reference:
    obj = safe_unpickle(p.read_bytes(), str(p))
    if not isinstance(obj, dict) or not obj or not set(obj) <= set(EDM2_SPACES):
        got = sorted(map(str, obj)) if isinstance(obj, dict) else type(obj).__name__
        raise ReferenceError(f"{p} is not an EDM2 reference: expected a dict with keys among {sorted(EDM2_SPACES)} "
                             f"(each {{mu, sigma}}), got {got}")
    moments = {}
    for key, stats in obj.items():
        if not isinstance(stats, dict) or not {"mu", "sigma"} <= set(stats):
            raise ReferenceError(f"{p}: {key} must be a dict holding mu and sigma")
        moments[EDM2_SPACES[key]] = check_moments(stats["mu"], stats["sigma"], f"{p} [{key}]")
    return Reference(str(p), "edm2", moments)


def read_reference(path: str | os.PathLike) -> Reference | None:
    """The reference in `path` (checked), or None when the file is not in a reference layout (e.g. a plain array).

    Raises `ReferenceError` for a file in a reference layout that is broken or unsafe."""
    p = Path(path).expanduser()
    if not p.is_file():
        return None
    if p.suffix.lower() == ".pkl":
        return _from_pickle(p)
    if p.suffix.lower() != ".npz":
        return None
    z = _npz_arrays(p)
    return None if z is None else _from_npz(p, z)


def refuse_moment_key(path: str, key: str) -> None:
    """`FILE.npz:mu` would score a mean vector or a covariance matrix as if it were feature rows: refused."""
    if key in MOMENT_KEYS:
        raise ReferenceError(f"{path}:{key} is a {'covariance matrix' if key.startswith('sigma') else 'mean vector'} "
                             f"of a statistics file, not feature rows; give {path} itself (FID/FD is then scored "
                             "against its moments)")


def stats_meta(identity: dict[str, Any], weights_sha256: str | None, n: int, content_hash: str | None) -> dict[str, Any]:
    """The provenance written with a ganeval reference."""
    return {"format": GANEVAL_FORMAT, "version": GANEVAL_VERSION, "extractor": identity,
            "weights_sha256": weights_sha256, "resize_mode": identity.get("resize_mode", _default_mode(identity)),
            "n": int(n), "content_hash": content_hash}


def _default_mode(identity: dict[str, Any]) -> str | None:
    return {"inception": "legacy_pytorch", "dinov2": "pil"}.get(str(identity.get("name")))


def check_file_writable(path: str | os.PathLike, what: str, overwrite: bool = False) -> Path:
    """Refuse to write through a link, over a folder, or over an existing file without `overwrite`."""
    p = Path(path).expanduser()
    if p.is_symlink():
        raise ReferenceError(f"{what} {p} is a symbolic link: ganeval does not write through links; give another path")
    if p.exists() and not p.is_file():
        raise ReferenceError(f"{what} {p} exists and is not a file; give a file path")
    if p.exists() and not overwrite:
        raise ReferenceError(f"{what} {p} exists; remove it or pass --overwrite")
    if p.suffix.lower() != ".npz":
        raise ReferenceError(f"{what} {p} must end in .npz")
    if not p.parent.is_dir():
        raise ReferenceError(f"{what} {p}: folder {p.parent} does not exist")
    try:  # a probe, as the app's for results_dir: a read-only folder or mount refused before any extraction
        with tempfile.TemporaryFile(dir=p.parent):
            pass
    except OSError as e:
        raise ReferenceError(f"{what} {p}: folder {p.parent} is not writable ({e.strerror}); give another path or "
                             "make it writable") from None
    return p


def moments_of(features: np.ndarray) -> Moments:
    """Mean and unbiased covariance (ddof=1) in float64, as pytorch-fid's `calculate_activation_statistics`."""
    f = np.asarray(features, np.float64)
    return Moments(f.mean(axis=0), np.cov(f, rowvar=False))


def write_reference(path: str | os.PathLike, features: np.ndarray, meta: dict[str, Any],
                    overwrite: bool = False) -> Moments:
    """ganeval's reference `.npz` (atomically): `features` (float32 N×D), `mu`, `sigma` (float64) and `meta` (JSON).
    An existing file (also one another process wrote meanwhile) is replaced only with `overwrite`."""
    feats = check_features(np.ascontiguousarray(features, np.float32), str(path))
    mom = moments_of(feats)
    with _not_replaced():
        atomic_np_save(path, overwrite, features=feats, mu=mom.mu, sigma=mom.sigma,
                       meta=np.array(json.dumps(meta, sort_keys=True, default=str)))
    return mom


def write_stats(path: str | os.PathLike, mom: Moments, overwrite: bool = False, space: str | None = None) -> None:
    """A pytorch-fid statistics `.npz` {mu, sigma} (atomically), which `pytorch_fid` reads as its own; an existing
    file replaced only with `overwrite`. `space`: the extractor's name, stored beside them (`extractor`, a string
    pytorch-fid does not read) unless the moments are Inception's (pytorch-fid's own) or unnamed features'."""
    named = {STATS_SPACE_KEY: np.array(space)} if space not in (None, "inception", "identity") else {}
    with _not_replaced():
        atomic_np_save(path, overwrite, mu=mom.mu, sigma=mom.sigma, **named)


@contextlib.contextmanager
def _not_replaced() -> Iterator[None]:
    """A file that appeared at a new output's path meanwhile (`atomic_path(replace=False)`): a one-line refusal."""
    try:
        yield
    except FileExistsError as e:
        raise ReferenceError(str(e)) from None


__all__ = ["Moments", "Reference", "ReferenceError", "read_reference", "refuse_moment_key", "check_moments",
           "safe_unpickle", "check_psd", "psd_tolerance", "write_reference", "write_stats", "moments_of", "stats_meta", "check_file_writable"]
