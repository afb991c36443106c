"""The test helper `apphelp.run_inprocess` checks what it exists for: a config the plan refuses is refused by the run
too, and a run's outputs are the plan's (never skipped silently)."""

from __future__ import annotations

from typing import Any

import pytest

import apphelp


def test_a_plan_refused_but_a_run_that_goes_ahead_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import ganeval.app.validate as validate

    def refuse(cfg: Any) -> Any:
        raise ValueError("no such dataset")

    ran: list[Any] = []
    monkeypatch.setattr(apphelp, "app_config", lambda overrides: {"overrides": overrides})
    monkeypatch.setattr(validate, "build_plan", refuse)
    monkeypatch.setattr(apphelp, "run_app", lambda cfg: ran.append(cfg) or {"summary": 1})
    with pytest.raises(AssertionError, match="refused .*no such dataset.*the run went ahead"):
        apphelp.run_inprocess(["data=nope"])
    assert ran == [{"overrides": ["data=nope"]}]


def test_a_plan_refused_and_a_run_refused_raises_the_runs_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import ganeval.app.validate as validate

    def refuse(cfg: Any) -> Any:
        raise ValueError("no such dataset")

    def run_refuses(cfg: Any) -> Any:
        raise KeyError("the run's own refusal")

    monkeypatch.setattr(apphelp, "app_config", lambda overrides: {})
    monkeypatch.setattr(validate, "build_plan", refuse)
    monkeypatch.setattr(apphelp, "run_app", run_refuses)
    with pytest.raises(KeyError, match="the run's own refusal"):
        apphelp.run_inprocess(["data=nope"])
