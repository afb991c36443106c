"""`ganeval-score --protocol NAME`: the named protocols of the Hydra app (`protocol=NAME`), read from the same files
(`ganeval/configs/protocol/*.yaml`, `ganeval.app.protocols.protocol_table`), applied to the command's options.

Each fixed config key maps to what ganeval-score has for it: `features._target_` -> `--features`, `features.dims`
-> `--dims`, `features.resize` -> `--resize`, `seed` -> `--seed`, `n_generated` -> the row count of every FAKE, and
the `data.*` keys -> REAL (a dataset name loaded with the protocol's values, e.g. cifar10 with train: false; an
image folder/zip/tar with `--size` for `ganeval.data.folder`; an ADM batch or `FILE.npz:KEY` for
`ganeval.data.array`). An option left out takes the protocol's value; one given with another value is refused in
one line (exit 2), as `protocol=NAME` refuses a departing override, before any input is read.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence, cast

from ganeval.app.protocols import normal_value, protocol_table
from ganeval.app.score_inputs import InputSet, classify, data_names, load_input

if TYPE_CHECKING:
    from omegaconf import DictConfig


OPTIONS = {"features._target_": "features", "features.dims": "dims", "features.resize": "resize", "seed": "seed"}
FOLDER, ARRAY = "ganeval.data.folder", "ganeval.data.array"


def protocol_spec(name: str) -> dict[str, Any]:
    """The protocol `name` of the table ({name, reports, fixed}); ValueError naming the ones there are."""
    table = protocol_table()
    if name not in table:
        raise ValueError(f"--protocol {name}: no such protocol; the protocols are {', '.join(table)}")
    return table[name]


def given_options(p: argparse.ArgumentParser, argv: Sequence[str]) -> set[str]:
    """The option dests the command line sets itself (not left at their defaults)."""
    for action in p._actions:
        action.default = argparse.SUPPRESS
    return set(vars(p.parse_args(list(argv))))


def extractor_name(target: str) -> str:
    """The `--features` name of a features config `_target_`: the registry's entry of that class without preset
    options (e.g. ganeval.features.InceptionExtractor -> inception)."""
    import importlib

    from ganeval.features.base import REGISTRY

    module, _, attr = target.rpartition(".")
    cls = getattr(importlib.import_module(module), attr, None) if module else None
    for name, entry in REGISTRY.items():
        if entry.cls is cls and not entry.options:
            return name
    raise ValueError(f"features._target_={target} has no --features name in ganeval-score")


def departure(spec: Mapping[str, Any], key: str, want: Any, option: str, got: Any) -> ValueError:
    """The one-line refusal of a value that departs from the protocol."""
    name = spec["name"]
    return ValueError(f"--protocol {name} fixes {key}={want} ({spec['reports']}), but this command gives {option} "
                      f"{got}: drop {option.split()[0]} to report the protocol's number, or drop --protocol {name} to "
                      "run your own (its numbers are then not comparable with the protocol's)")


def apply_protocol(args: argparse.Namespace, given: set[str]) -> dict[str, Any] | None:
    """Set the options the protocol `args.protocol` fixes (in place) and refuse those given otherwise; returns the
    protocol ({name, reports, fixed}) or None without --protocol. Checks only options: inputs come later."""
    if getattr(args, "protocol", None) is None:
        return None
    spec = protocol_spec(args.protocol)
    fixed = spec["fixed"]
    for key, dest in OPTIONS.items():
        if key not in fixed:
            continue
        want = extractor_name(fixed[key]) if dest == "features" else normal_value(key, fixed[key])
        have = getattr(args, dest)
        if dest in given and normal_value(key, have) != want:
            raise departure(spec, key, fixed[key], f"--{dest}", have)
        setattr(args, dest, want)
    if FOLDER == fixed.get("data._target_") and fixed.get("data.size") is not None:
        if "size" in given and args.size != fixed["data.size"]:
            raise departure(spec, "data.size", fixed["data.size"], "--size", args.size)
        args.size = int(fixed["data.size"])
    unknown = [k for k in fixed if k not in OPTIONS and k != "n_generated" and not k.startswith("data.")]
    if unknown:
        raise ValueError(f"--protocol {spec['name']} fixes {', '.join(unknown)}, which ganeval-score has no option "
                         f"for: run it with the ganeval app (protocol={spec['name']})")
    metrics = [m.strip() for m in (args.metrics or "fid").split(",")]
    if "fid" not in metrics:
        raise ValueError(f"--protocol {spec['name']} reports FID ({spec['reports']}), but --metrics {args.metrics} "
                         "leaves it out: add fid, or drop --protocol")
    return spec


def data_names_of(target: str) -> list[str]:
    """The dataset names (`ganeval/configs/data/NAME.yaml`) whose `_target_` is `target`."""
    from omegaconf import OmegaConf

    from ganeval.app.paths import config_dir

    return [n for n in data_names()
            if cast("DictConfig", OmegaConf.load(config_dir() / "data" / f"{n}.yaml")).get("_target_") == target]


def load_real(protocol: str, real: str, size: int | None) -> InputSet:
    """REAL as the protocol fixes it (see the module doc), or ValueError naming what REAL must be."""
    spec = protocol_spec(protocol)
    fixed = spec["fixed"]
    target = fixed.get("data._target_")
    data = {k.partition(".")[2]: v for k, v in fixed.items() if k.startswith("data.") and k != "data._target_"}
    values = "".join(f", data.{k}={v}" for k, v in data.items())
    what = f"--protocol {spec['name']} fixes the real data ({target}{values})"
    if target is None:
        return load_input(real, size)
    if target == FOLDER:
        from ganeval.data.sources import is_streamable

        if not is_streamable(real):
            raise ValueError(f"{what}: give REAL as the folder, .zip or .tar of those images, not {real}")
        return load_input(real, size)
    if target == ARRAY:
        return array_real(real, size, data, what)
    names = data_names_of(str(target))
    if real not in names:
        raise ValueError(f"{what}: give REAL as {' or '.join(names) or target}, not {real}, "
                         "or drop --protocol to score against another set")
    return named_real(real, data)


def array_real(real: str, size: int | None, data: Mapping[str, Any], what: str) -> InputSet:
    """REAL of a `ganeval.data.array` protocol: `FILE.npz:KEY` with the protocol's key, or an ADM batch (its images
    are `arr_0`)."""
    key = data.get("key")
    file, _, given = real.rpartition(":") if ":" in real and not Path(real).exists() \
        else (real, "", "")
    fix = ValueError(f"{what}: give REAL as the images {file if file.endswith('.npz') else 'FILE.npz'}"
                     f"{':' + str(key) if key else ''} (an ADM reference batch as it is), not {real}")
    path = Path(file).expanduser()
    if not path.is_file() or path.suffix.lower() != ".npz" or given not in ("", key):
        raise fix
    loaded = load_input(real, size)
    adm = loaded.reference is not None and loaded.reference.layout == "adm" and key == "arr_0"
    if not (adm or (key is not None and given == key)):
        raise fix
    return loaded


def named_real(name: str, data: Mapping[str, Any]) -> InputSet:
    """A dataset name loaded as `ganeval data=NAME` with the protocol's data values (e.g. train: false)."""
    import numpy as np
    from omegaconf import OmegaConf

    from ganeval.app import pipeline
    from ganeval.app.paths import config_dir

    node = OmegaConf.merge(OmegaConf.load(config_dir() / "data" / f"{name}.yaml"), dict(data))
    arr = pipeline.instantiate(node)
    arr = arr.numpy() if hasattr(arr, "numpy") and not isinstance(arr, np.ndarray) else np.asarray(arr)
    shown = ", ".join(f"{k}: {v}" for k, v in data.items())
    return classify(InputSet(name, name, f"data config {name}" + (f" ({shown})" if shown else ""), arr, False))


def check_images(protocol: str | None, real: InputSet, fakes: list[InputSet]) -> None:
    """Every image set (REAL and the FAKEs) has the protocol's channels and size (from headers or the array's shape,
    before any extraction): another size would print the protocol's number for other images."""
    if protocol is None:
        return
    from ganeval.app.score_request import chw

    spec = protocol_spec(protocol)
    want = spec.get("images") or {}
    if not want:
        return
    c, size = int(want["channels"]), int(want["size"])
    for role, s in (("REAL", real), *(("FAKE", f) for f in fakes)):
        if not s.images:
            continue
        _, (sc, sh, sw), files = chw(s)
        if (sc, sh, sw) != (c, size, size):
            fix = f" (or --size {size} for image files)" if files else ""
            raise ValueError(f"--protocol {spec['name']} scores {size}×{size} images with {c} channels "
                             f"({spec['reports']}), but {role} {s.describe()}: give images of that size{fix}, or drop "
                             "--protocol")


def check_fakes(protocol: str | None, fakes: list[InputSet]) -> None:
    """Every FAKE holds the protocol's `n_generated` rows (checked from headers, before any extraction)."""
    if protocol is None:
        return
    spec = protocol_spec(protocol)
    n = spec["fixed"].get("n_generated")
    for f in fakes:
        if n is not None and len(f) != int(n):
            raise ValueError(f"--protocol {spec['name']} fixes n_generated={n} ({spec['reports']}), but FAKE "
                             f"{f.describe()} has {len(f)}: give {n} generated images, or drop --protocol")


def add_full_set(plan: Any, protocol: str | None, real_f: Any, fakes_f: list[Any], summary: Any) -> Any:
    """Under --protocol: `summary` with the `fid_full` column (each whole FAKE against the whole REAL, the number the
    protocol's papers report) and the run record's `full_set`; without, `summary` as it is."""
    if protocol is None:
        return summary
    import json

    from ganeval.protocol import Block
    from ganeval.protocol.reported import FULL_SET_MEANS, attach_full_set, full_set_values
    from ganeval.results.summary import FULL_SET_COLUMN

    spec = protocol_spec(protocol)
    with plan.stage("full sets", "(FID of the whole sets, as the protocol's papers report it)"):
        values = full_set_values([Block(real_f, fakes_f)], plan.device)
    plan.record.full_set = {"protocol": spec["name"], "reports": spec["reports"], "column": FULL_SET_COLUMN,
                           "means": FULL_SET_MEANS, "values": json.loads(values.to_json(orient="records"))}
    return attach_full_set(summary, values)


__all__ = ["add_full_set", "apply_protocol", "check_fakes", "check_images", "given_options", "load_real", "protocol_spec"]
