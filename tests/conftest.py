"""Shared pytest set-up: deterministic threads, a `gpu` skip and small shared fixtures."""

from __future__ import annotations

from typing import Iterator

import pytest
import torch


SLOW_TIMEOUT = 1800  # seconds for a test marked `slow` (pyproject's `timeout` is every other test's)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Ctrl-C's SIGINT reaches the commands the tests start and stop with it: a shell that runs pytest in the
    background (`pytest &`) ignores SIGINT, which every child would inherit (and then run on when stopped)."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:  # a slow test gets the larger timeout unless it names its own
        if "slow" in item.keywords and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT))
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread (and far faster than on two on a busy 2-core machine)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
