"""A pytest plugin for the idiom runtime checks: writes each test's outcome to a JSON file."""

from __future__ import annotations

import json
import os

import pytest

_OUTCOMES: dict[str, str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _OUTCOMES[report.nodeid] = report.outcome


def pytest_sessionfinish(session: pytest.Session) -> None:
    with open(os.environ["JAXTARGET_OUTCOMES"], "w", encoding="utf-8") as f:
        json.dump(_OUTCOMES, f)
