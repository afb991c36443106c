"""Generators from anywhere: a ganeval checkpoint, any torch module, a Python callable, or stored samples
(the last in `ganeval.gan.stored_samples`).

Each is what one option of the `generator` config group instantiates, and all behave the same:
`validate()` checks files and shapes cheaply (the pipeline calls it before expensive work),
`sample(n, seed, batch_size=500, device=None)` returns N uint8 images N×C×H×W (or float N×D points)
and the same seed gives the same samples, `sample_shape()` is one sample's shape ((C, H, W) or (D,)) known
before sampling (from the architecture, or from the samples `validate()` drew), `identity()` says what the
generator is. Errors name the
generator config and what was expected. `replica_argument` names the constructor argument that one entry
of a config's `replicas` list replaces (one training seed of the same model: another file, checkpoint,
state dict, or the seed passed to a callable).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from collections.abc import Iterator
from typing import Any, Callable, Mapping, Sequence, cast

import numpy as np
import torch
from torch import nn

from ganeval.common import resolve_device
from ganeval.data.images import LAYOUTS, apply_layout, as_uint8_images, to_uint8
from ganeval.gan.architectures import _Generator, build_generator
from ganeval.gan.chunked import Call, plan, rebatch, takes_offset
from ganeval.gan.checkpoint import load_checkpoint
from ganeval.gan.code import from_source, own_modules
from ganeval.gan.code_digest import callable_digest
from ganeval.gan.sampling import generate, generate_batches, latent
from ganeval.hashing import sha256_file, state_dict_sha256


class _Base:
    """Shared argument checks and error wording of every generator source."""

    kind = "base"
    replica_argument = "path"  # the constructor argument a scalar `replicas` entry replaces

    def __init__(self, name: str | None, replicas: Sequence[Any] | None = None) -> None:
        self.name = name or self.kind
        # the config's `replicas` (one entry per training seed): the pipeline makes one generator per entry
        # (`ganeval.app.generators.replica_nodes`); this generator itself is its own source only
        self.replicas = None if replicas is None else list(replicas)

    @property
    def what(self) -> str:
        return f"generator {self.name!r} (config 'generator/{self.kind}')"

    def _check_request(self, n: int, seed: int, batch_size: int) -> None:
        for arg, v, lo in (("n", n, 1), ("seed", seed, 0), ("batch_size", batch_size, 1)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < lo:
                raise ValueError(f"{self.what}: {arg} must be an int >= {lo}, got {v!r}")

    def validate(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.identity()!r})"

    def identity(self) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError


def _file_identity(path: Path) -> dict[str, Any]:
    """A generator file's path and SHA-256 (full; None while the file is missing)."""
    return {"path": str(path), "sha256": sha256_file(path) if path.is_file() else None}


def _code_identity(obj: Any) -> dict[str, Any]:
    """The qualified name of a function or class and the SHA-256 of the file that defines it (None if unknown); for
    a callable no module file describes alone (defined in `__main__`: a script, `python -c`, stdin, a notebook cell;
    without a source file; or capturing values in a closure) also `code`, the digest of its bytecode and captured
    values (`ganeval.gan.code_digest`)."""
    import inspect

    try:
        source = inspect.getsourcefile(obj)
    except TypeError:  # built-in or C-implemented
        source = None
    name = f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"
    ident: dict[str, Any] = {"qualname": name,
                             "code_sha256": sha256_file(source) if source and Path(source).is_file() else None}
    if ident["code_sha256"] is None or getattr(obj, "__module__", None) == "__main__" or getattr(obj, "__closure__", None):
        ident["code"] = callable_digest(obj)
    return ident


# --------------------------------------------------------------------------------------------------
# 1. checkpoint
# --------------------------------------------------------------------------------------------------
class CheckpointGenerator(_Base):
    """A generator trained by `ganeval.gan.train`: the architecture is rebuilt from the checkpoint alone."""

    kind = "checkpoint"

    def __init__(self, path: str | Path, name: str | None = None, replicas: Sequence[Any] | None = None) -> None:
        super().__init__(name or Path(path).parent.name or Path(path).stem, replicas)
        self.path = Path(path)
        self._module: _Generator | None = None
        self._meta: dict[str, Any] = {}

    def validate(self) -> None:
        """Load the file (weights_only) and the generator weights into the rebuilt architecture."""
        self._load()

    def _load(self) -> _Generator:
        if self._module is not None:
            return self._module
        ckpt = load_checkpoint(self.path, what=self.what)
        try:
            module = build_generator(ckpt["arch"], **ckpt["arch_kwargs"])
            module.load_state_dict(ckpt["generator"])
        except (ValueError, RuntimeError) as e:
            raise ValueError(
                f"{self.what}: the weights in {str(self.path)!r} do not fit arch {ckpt['arch']!r}: {e}"
            ) from e
        self._meta = {k: ckpt.get(k) for k in ("arch", "arch_kwargs", "config_hash", "epoch", "gen_step", "done")}
        self._module = module
        return module

    def sample_shape(self) -> tuple[int, ...]:
        """One sample's shape: the rebuilt architecture's output ((C, H, W) or (D,))."""
        return tuple(int(d) for d in self._load().output_shape)

    def sample(self, n: int, seed: int, batch_size: int = 500, device: Any = None) -> np.ndarray:
        """N samples (uint8 images or float points) from z ~ N(0, I) drawn with `seed`."""
        self._check_request(n, seed, batch_size)
        module = self._load()
        dev = resolve_device(device)
        module.to(dev)
        z = latent(n, module.latent_shape, seed)
        out_range = module.output_range
        return generate(module, z, output_range=out_range, batch_size=batch_size, device=dev)

    def sample_batches(self, n: int, seed: int, batch_size: int = 500, device: Any = None) -> Iterator[np.ndarray]:
        """`sample(n, seed)`'s rows batch by batch (same values), for extraction without an N-image array."""
        self._check_request(n, seed, batch_size)
        module = self._load()
        dev = resolve_device(device)
        module.to(dev)
        z = latent(n, module.latent_shape, seed)
        yield from generate_batches(module, z, output_range=module.output_range,
                                    batch_size=batch_size, device=dev)

    def identity(self) -> dict[str, Any]:
        if not self._meta and self.path.is_file():
            self._load()
        return {"kind": self.kind, "name": self.name, **_file_identity(self.path), **self._meta}


# --------------------------------------------------------------------------------------------------
# 2. module
# --------------------------------------------------------------------------------------------------
class ModuleGenerator(_Base):
    """Any torch.nn.Module (built from a Hydra `_target_` mapping or given) with an optional state dict.

    latent_shape: shape of one latent, e.g. [128] or [100, 1, 1] (z ~ N(0, I)); output_range:
    [-1, 1] or [0, 1] for images, None for float points.
    """

    kind = "module"
    replica_argument = "state_dict"

    def __init__(
        self,
        module: nn.Module | Mapping[str, Any],
        latent_shape: Sequence[int],
        output_range: Sequence[float] | None = (-1.0, 1.0),
        state_dict: str | Path | None = None,
        name: str | None = None,
        strict: bool = True,
        replicas: Sequence[Any] | None = None,
    ) -> None:
        super().__init__(name, replicas)
        if type(module).__name__ == "DictConfig":  # from Hydra with _recursive_: false: keep plain data
            from omegaconf import OmegaConf

            module = cast("dict[str, Any]", OmegaConf.to_container(module, resolve=True))
        self.module_spec = module
        self.latent_shape = tuple(int(s) for s in latent_shape)
        self.output_range = None if output_range is None else (float(output_range[0]), float(output_range[1]))
        self.state_dict_path = Path(state_dict) if state_dict is not None else None
        self.strict = strict
        self._module: nn.Module | None = None
        self._shape: tuple[int, ...] | None = None  # one sample's shape, from the samples validate() drew
        if not self.latent_shape or any(s < 1 for s in self.latent_shape):
            raise ValueError(
                f"{self.what}: latent_shape must be positive ints like [128] or [100, 1, 1], got {latent_shape!r}"
            )
        if self.output_range is not None and not self.output_range[1] > self.output_range[0]:
            raise ValueError(
                f"{self.what}: output_range must be [low, high] like [-1, 1] or [0, 1], got {output_range!r}"
            )

    def _target(self) -> str:
        spec = self.module_spec
        if isinstance(spec, nn.Module):
            return f"{type(spec).__module__}.{type(spec).__qualname__}"
        return str(spec.get("_target_", "?"))

    def _build(self) -> nn.Module:
        if self._module is not None:
            return self._module
        spec = self.module_spec
        if isinstance(spec, nn.Module):
            module = spec
        elif isinstance(spec, Mapping) and "_target_" in spec:
            from hydra.utils import instantiate

            try:
                module = instantiate(spec)
            except Exception as e:  # noqa: BLE001 - report any construction failure against the config
                raise ValueError(f"{self.what}: could not build module {spec.get('_target_')!r}: {e}") from e
        else:
            raise ValueError(
                f"{self.what}: module must be an nn.Module or a mapping with _target_, got {type(spec).__name__}"
            )
        if not isinstance(module, nn.Module):
            raise ValueError(
                f"{self.what}: {self._target()!r} built a {type(module).__name__}, expected a torch.nn.Module"
            )
        if self.state_dict_path is not None:
            if not self.state_dict_path.is_file():
                raise ValueError(f"{self.what}: state_dict file {str(self.state_dict_path)!r} does not exist")
            try:
                sd = torch.load(self.state_dict_path, map_location="cpu", weights_only=True)
            except Exception as e:  # noqa: BLE001
                raise ValueError(
                    f"{self.what}: {str(self.state_dict_path)!r} is not a readable state dict: {e}"
                ) from e
            if isinstance(sd, dict) and "state_dict" in sd and isinstance(sd["state_dict"], dict):
                sd = sd["state_dict"]
            try:
                module.load_state_dict(sd, strict=self.strict)
            except Exception as e:  # noqa: BLE001
                raise ValueError(
                    f"{self.what}: the state dict {str(self.state_dict_path)!r} does not fit module "
                    f"{self._target()!r}: {e}"
                ) from e
        self._module = module
        return module

    def validate(self) -> None:
        """Build the module, load its weights and run two latents through it to check the output."""
        module = self._build()
        z = latent(2, self.latent_shape, 0)
        out = self._forward(module, z, torch.device("cpu"), 2)
        self._shape = tuple(int(d) for d in self._check_output(out, 2).shape[1:])

    def sample_shape(self) -> tuple[int, ...]:
        """One sample's shape ((C, H, W) or (D,)), from the two latents `validate()` runs through the module."""
        if self._shape is None:
            self.validate()
        assert self._shape is not None
        return self._shape

    def _forward(self, module: nn.Module, z: torch.Tensor, dev: torch.device, batch_size: int) -> np.ndarray:
        module.to(dev)
        try:
            return generate(module, z, output_range=None, batch_size=batch_size, device=dev)
        except RuntimeError as e:
            raise ValueError(
                f"{self.what}: module {self._target()!r} failed on latents of shape {tuple(z.shape)}: {e}"
            ) from e

    def _check_output(self, out: np.ndarray, n: int) -> np.ndarray:
        if self.output_range is None:
            if out.ndim != 2 or len(out) != n:
                raise ValueError(
                    f"{self.what}: expected points of shape ({n}, D) with output_range=null, got {out.shape}"
                )
            return out
        if out.ndim == 3:
            out = out[:, None]
        if out.ndim != 4 or len(out) != n or out.shape[1] not in (1, 3):
            raise ValueError(f"{self.what}: expected images of shape ({n}, 1 or 3, H, W), got {out.shape}")
        return out

    def sample(self, n: int, seed: int, batch_size: int = 500, device: Any = None) -> np.ndarray:
        """N uint8 images (or float points) from z ~ N(0, I) of `latent_shape` drawn with `seed`."""
        self._check_request(n, seed, batch_size)
        module = self._build()
        raw = self._forward(module, latent(n, self.latent_shape, seed), resolve_device(device), batch_size)
        out = self._check_output(raw, n)
        if self.output_range is None:
            return out
        return to_uint8(out, value_range=self.output_range)

    def sample_batches(self, n: int, seed: int, batch_size: int = 500, device: Any = None) -> Iterator[np.ndarray]:
        """`sample(n, seed)`'s rows batch by batch (same values), for extraction without an N-image array."""
        self._check_request(n, seed, batch_size)
        module = self._build()
        z = latent(n, self.latent_shape, seed)
        dev = resolve_device(device)
        for start in range(0, n, batch_size):
            part = z[start : start + batch_size]
            out = self._check_output(self._forward(module, part, dev, batch_size), len(part))
            yield out if self.output_range is None else to_uint8(out, value_range=self.output_range)

    def identity(self) -> dict[str, Any]:
        """Kind, name, target, latent shape, output range, the state dict file, and once built its class and weights."""
        ident: dict[str, Any] = {"kind": self.kind, "name": self.name, "target": self._target(),
                                 "latent_shape": list(self.latent_shape),
                                 "output_range": list(self.output_range) if self.output_range else None}  # fmt: skip
        if isinstance(self.module_spec, Mapping):
            ident["kwargs"] = {str(k): v for k, v in self.module_spec.items() if not str(k).startswith("_")}
        if self.state_dict_path is not None:
            ident["state_dict"] = _file_identity(self.state_dict_path)
        module = self.module_spec if isinstance(self.module_spec, nn.Module) else self._module
        if module is not None:  # built (validate() builds it): its class and the weights it holds, by content
            ident["class"] = f"{type(module).__module__}.{type(module).__qualname__}"
            ident["weights_sha256"] = state_dict_sha256(module.state_dict())
        return ident


# --------------------------------------------------------------------------------------------------
# 3. callable
# --------------------------------------------------------------------------------------------------
class CallableGenerator(_Base):
    """A Python callable `package.module:function`, called as `function(n, seed)`.

    It returns uint8 images (N×H×W, N×H×W×C or N×C×H×W, C = 1 or 3) or floats in [0, 1] (the same
    layouts); with points=True, float points N×D; with points=None each output is read as `ganeval-score` reads
    an array: 2-D (N×D numbers) as feature rows, anything else as images (one generator gives one or the other).
    `seed`, when given, is passed instead of the seed
    `sample` is called with (one replica: one training seed of the model behind the callable). `layout`
    ("auto", "nchw", "nhwc"): how 4-D outputs are laid out; under "auto" an output that fits both (e.g.
    N×3×8×3) is refused, naming the option. A large pool is drawn in chunks (`fn(n, seed, offset=o)` when the
    callable takes `offset`): see `ganeval.gan.chunked`. A pool of n > 1 rows is preceded by one `function(1, seed)`
    call whose row size decides that (documented in docs/scoring.md: a stateful sampler moves once more).
    """

    kind = "callable"
    replica_argument = "seed"

    def __init__(
        self, function: str | Callable[[int, int], Any], name: str | None = None, points: bool | None = False,
        seed: int | None = None, replicas: Sequence[Any] | None = None, layout: str = "auto",
    ) -> None:
        super().__init__(name or (function if isinstance(function, str) else getattr(function, "__name__", None)),
                         replicas)
        self.function = function
        self._code: dict[str, Any] | None = None
        self._shape: tuple[int, ...] | None = None  # one sample's shape, from the samples validate() drew
        self.points = points
        self.seed = seed
        self.layout = str(layout).lower()
        if self.layout not in LAYOUTS:
            raise ValueError(f"{self.what}: layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        if seed is not None:
            self._check_request(1, seed, 1)
        if isinstance(function, str) and (function.count(":") != 1 or not all(function.split(":"))):
            raise ValueError(f"{self.what}: function must look like 'package.module:function', got {function!r}")

    def _resolve(self) -> Callable[[int, int], Any]:
        if callable(self.function):
            return self.function
        mod_name, attr = str(self.function).split(":")
        try:
            with from_source(mod_name):  # its own modules from source: a stale .pyc never runs (ganeval.gan.code)
                obj: Any = importlib.import_module(mod_name)
        except ImportError as e:
            raise ValueError(f"{self.what}: cannot import module {mod_name!r} of {self.function!r}: {e}") from e
        except Exception as e:  # noqa: BLE001 - a SyntaxError or any error raised while importing it: one line
            raise ValueError(f"{self.what}: importing module {mod_name!r} of {self.function!r} failed: "
                             f"{type(e).__name__}: {e}") from e
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise ValueError(f"{self.what}: module {mod_name!r} has no attribute {attr!r}")
            obj = getattr(obj, part)
        if not callable(obj):
            raise ValueError(f"{self.what}: {self.function!r} is not callable")
        return obj

    def validate(self) -> None:
        """Import the callable and check two samples have the expected shape and range (and, when it takes
        `offset`, that fn(1, 0, offset=2) is row 2 of fn(3, 0))."""
        self._shape = tuple(int(d) for d in self.sample(2, 0).shape[1:])
        if takes_offset(self._resolve()):
            whole, tail = self._call(Call(3, 0)), self._call(Call(1, 0, 2))
            if not np.array_equal(whole[2:], tail):
                raise ValueError(f"{self.what}: fn(1, seed, offset=2) differs from row 2 of fn(3, seed); a callable "
                                 "taking `offset` must return rows offset … offset+n-1 of fn(offset+n, seed)")

    def sample_shape(self) -> tuple[int, ...]:
        """One sample's shape ((C, H, W) or (D,)), from the two samples `validate()` draws."""
        if self._shape is None:
            self.validate()
        assert self._shape is not None
        return self._shape

    def _call(self, call: Call) -> np.ndarray:
        """One call of the function, checked and converted to uint8 N×C×H×W (or float N×D)."""
        out = self._invoke(int(call.rows), int(call.seed), **call.kwargs())
        if isinstance(out, torch.Tensor):
            out = out.detach().cpu().numpy()
        out = np.asarray(out)
        if self.points is None and out.ndim == 2:  # feature rows, as a 2-D array given to ganeval-score is
            if len(out) != call.rows or not (np.issubdtype(out.dtype, np.floating) or np.issubdtype(out.dtype, np.integer)):
                raise ValueError(f"{self.what}: expected feature rows of shape ({call.rows}, D) holding numbers, got "
                                 f"{out.dtype} {out.shape}")
            return out
        if self.points:
            if out.ndim != 2 or len(out) != call.rows or not np.issubdtype(out.dtype, np.floating):
                raise ValueError(f"{self.what}: expected float points of shape ({call.rows}, D), got {out.dtype} "
                                 f"{out.shape}")
            return out
        out = apply_layout(out, self.layout, f"{self.what}: the output of {self.function!r}",
                           "layout=nchw or layout=nhwc (+generator.layout=nhwc, or +generators.NAME.layout=nhwc, in a config)")
        return as_uint8_images(out, self.what, call.rows)

    def _invoke(self, rows: int, seed: int, **kwargs: int) -> Any:
        """fn(rows, seed, **kwargs), its imports from source; an error it raises becomes one line naming the call
        (the original chained): the user's code failed, not ganeval."""
        fn = self._resolve()
        try:
            with from_source(self._module_name()):  # what it imports while it runs is its code too
                return fn(rows, seed, **kwargs)
        except (KeyboardInterrupt, SystemExit, MemoryError):
            raise
        except Exception as e:  # noqa: BLE001 - any error of the user's function, said in one line
            args = ", ".join([str(rows), str(seed), *(f"{k}={v}" for k, v in kwargs.items())])
            text = " ".join(str(e).split())
            raise ValueError(f"{self.what}: the call {getattr(fn, '__qualname__', 'fn')}({args}) raised "
                             f"{type(e).__name__}: {text}") from e

    def _chunks(self, n: int, seed: int) -> Iterator[np.ndarray]:
        """The pool's rows chunk by chunk (`ganeval.gan.chunked.plan`): one call when it is drawn whole."""
        seed = int(seed if self.seed is None else self.seed)
        offset_aware = takes_offset(self._resolve())
        calls = [Call(n, seed)]
        if offset_aware or n > 1:  # the row size decides: one row of the function's own output (its dtype)
            probe = self._invoke(1, seed, **({"offset": 0} if offset_aware else {}))
            row = probe.element_size() * probe.numel() if isinstance(probe, torch.Tensor) else np.asarray(probe).nbytes
            calls = plan(n, seed, max(1, int(row)), offset_aware)
        rows = None
        for call in calls:
            out = self._call(call)
            if rows is not None and (out.ndim == 2) != rows:  # points=None: every call's output read alike
                raise ValueError(f"{self.what}: one call returned {'feature rows' if rows else 'images'} and another "
                                 f"an array of shape {out.shape}: return one kind for every n")
            rows = out.ndim == 2
            yield out

    def sample(self, n: int, seed: int, batch_size: int = 500, device: Any = None) -> np.ndarray:
        """Whatever `function(n, seed)` returns (its chunks, for a large pool), checked and converted to uint8
        N×C×H×W (or float N×D)."""
        self._check_request(n, seed, batch_size)
        parts = list(self._chunks(n, seed))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def sample_batches(self, n: int, seed: int, batch_size: int = 500, device: Any = None) -> Iterator[np.ndarray]:
        """`sample(n, seed)`'s rows in batches of `batch_size` (the same values and batches as slicing it), holding
        at most one chunk and one batch: extraction without an N-image array."""
        self._check_request(n, seed, batch_size)
        yield from rebatch(self._chunks(n, seed), batch_size)

    def identity(self) -> dict[str, Any]:
        """Kind, name, `module:function`, points, layout when stated, and the code: the qualified name and its module
        file's SHA-256."""
        target = self.function if isinstance(self.function, str) else (
            f"{getattr(self.function, '__module__', '?')}:{getattr(self.function, '__qualname__', '?')}")  # fmt: skip
        ident: dict[str, Any] = {"kind": self.kind, "name": self.name, "function": target, "points": self.points}
        if self.seed is not None:
            ident["seed"] = self.seed
        if self.layout != "auto":  # absent under auto: identities of before stay valid
            ident["layout"] = self.layout
        try:
            fn = self._resolve()
        except ValueError:  # not importable (validate() says why): nothing more to name
            return ident
        if self._code is None:  # computed once per generator: a captured array is read once, not per identity()
            self._code = _code_identity(fn)
        ident = {**ident, **self._code}
        modules = own_modules(self._module_name())  # the helper modules it loaded from its own folder
        if modules:  # absent without helpers: identities (and results directories) of before stay valid
            ident["modules"] = modules
        return ident

    def _module_name(self) -> str:
        """The module the callable is defined in."""
        if isinstance(self.function, str):
            return self.function.split(":")[0]
        return str(getattr(self.function, "__module__", "") or "__main__")
