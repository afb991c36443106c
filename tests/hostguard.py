"""A guard that makes every host conversion of chosen tensors raise (`Tensor.numpy`, `cpu`, `__array__`, `tolist`,
`to("cpu")` from another device): the tests that pools stay on their device use it."""

from __future__ import annotations

import pytest
import torch


def guard_storages(monkeypatch: pytest.MonkeyPatch, ptrs: set[int]) -> list[str]:
    """Patch the conversions to raise for tensors whose storage pointer is in `ptrs` (a live set: pointers added
    later are guarded too); return the list of attempts."""
    tried: list[str] = []

    def wrap(name: str) -> None:
        original = getattr(torch.Tensor, name)

        def guarded(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            if self.untyped_storage().data_ptr() in ptrs and (name != "to" or _to_host(self, args, kwargs)):
                tried.append(name)
                raise AssertionError(f"host copy of a pool: Tensor.{name}")
            return original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, guarded)

    for name in ("numpy", "cpu", "__array__", "tolist", "to"):
        wrap(name)
    return tried


def _to_host(t: torch.Tensor, args: tuple, kwargs: dict) -> bool:
    target = kwargs.get("device", args[0] if args and isinstance(args[0], (str, torch.device)) else None)
    return target is not None and torch.device(target).type == "cpu" and t.device.type != "cpu"
