"""The generated parts of `ganeval --help`: one line per experiment and per top-level key, read from the config files.

An experiment's line is the first sentence of the comment that opens its yaml (after `# @package _global_`); a
top-level key's line is the help its field declares in the schema (`ganeval.app.schema.RootConfig`). Both come
from where the experiment or key is declared, so a new one shows up without a list to keep.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

from ganeval.app.paths import config_dir

WIDTH = 110  # a description longer than this is cut at a word and ends with "…"


def _leading_comment(text: str) -> str:
    """The comment lines that open a yaml file (the `# @package` line skipped), joined with spaces."""
    words = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            break
        body = stripped.lstrip("#").strip()
        if body.startswith("@package"):
            continue
        words.append(body)
    return " ".join(w for w in words if w)


def _shorten(text: str, width: int = WIDTH) -> str:
    """`text` if it fits `width`, else cut at the last word boundary before it, with "…"."""
    if len(text) <= width:
        return text
    return text[: width - 1].rsplit(" ", 1)[0].rstrip(" ,;:(") + "…"


def first_sentence(text: str) -> str:
    """The text up to the first '.' that ends a sentence (followed by a space or the end), shortened to WIDTH."""
    match = re.search(r"\.(\s|$)", text)
    return _shorten(text[: match.start() + 1] if match else text)


def experiment_descriptions(root: Path | None = None) -> dict[str, str]:
    """experiment name -> its one-line description (sorted by name)."""
    folder = (root or config_dir()) / "experiment"
    return {p.stem: first_sentence(_leading_comment(p.read_text())) or "(no description: its yaml opens with no comment)"
            for p in sorted(folder.glob("*.yaml"))}


def key_descriptions() -> dict[str, str]:
    """Top-level key -> its help line, from the schema (the group nodes are listed under "Config groups")."""
    from ganeval.app.schema import HELP

    return {key: _shorten(text) for key, text in HELP.items()}


def _show(value: Any) -> str:
    """A config value as a command line would write it (null, true, 10, [0, 1], {_target_: ...})."""
    from omegaconf import OmegaConf

    if OmegaConf.is_config(value):
        value = cast(Any, OmegaConf.to_container(value, resolve=False))  # plain data, keyed by strings
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict) and "_target_" in value:
        return f"{{_target_: {value['_target_']}, ...}}"
    if isinstance(value, dict):
        inner = ", ".join(f"{k}: {_show(v)}" for k, v in value.items())
        return _shorten("{" + inner + "}", 40)
    if isinstance(value, list):
        return _shorten("[" + ", ".join(_show(v) for v in value) + "]", 40)
    return str(value)


def experiments_text() -> str:
    """The experiments block: `  name  description`, the chosen default marked."""
    items = experiment_descriptions()
    width = max(map(len, items), default=0)
    return "\n".join(f"  {name:<{width}}  {text}" for name, text in items.items())


def keys_text(cfg: Any) -> str:
    """The keys block: `  key=value  description`, each value as composed for this command (the chosen experiment
    and overrides applied)."""
    from omegaconf import OmegaConf

    rows = []
    for key, text in key_descriptions().items():
        node = cfg._get_node(key) if key in cfg else None
        value = "?" if node is None else _show(node._value() if not OmegaConf.is_config(node) else node)
        rows.append((f"{key}={value}", text))
    width = min(max((len(a) for a, _ in rows), default=0), 30)
    return "\n".join(f"  {a:<{width}}  {b}" if len(a) <= width else f"  {a}\n  {'':<{width}}  {b}" for a, b in rows)


def part(name: str, cfg: Any) -> str:
    """A generated part of the help text ("experiments" or "keys"), with `$` escaped for Hydra's string.Template."""
    if name == "experiments":
        text = experiments_text()
    elif name == "keys":
        text = keys_text(cfg)
    else:
        raise ValueError(f"ganeval.help: no part {name!r} (experiments or keys)")
    return text.replace("$", "$$")
