"""What a test needs, as markers that follow from its fixtures (a pytest plugin).

A test that needs Chromium asks for the `chromium` fixture, one that needs the Postgres
server asks for `postgres` (or a fixture built on it), and so on: the marker is added from
the fixture at collection, so a tier (`pytest -m browser`, `-m "not browser and not
postgres"`) can never miss a test whose author forgot a decorator. The guards below make
forgetting the fixture fail loudly instead: a test that launches Chromium or opens a
Postgres connection in the pytest process without carrying the marker fails with a line
saying which fixture to ask for.

The tiers (`pytest -m <marker>`):

- `browser`: headless Chromium (the bot, the results site, the Dagster UI)
- `postgres`: the Postgres server on 127.0.0.1:5432
- `sandbox`: bubblewrap (agent, build and bot sandboxes)
- `webserver`: a Dagster web server started for the test
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

# fixture → the marker of what it needs
NEEDS: dict[str, str] = {
    "chromium": "browser",
    "postgres": "postgres",
    "pg_database": "postgres",
    "pg_env": "postgres",
    "bwrap": "sandbox",
    "sandbox": "sandbox",  # the bubblewrap fixtures of the agent, build and quality tests
    "dagster_webserver": "webserver",
}
TIERS: dict[str, str] = {
    "browser": "opens headless Chromium (the `chromium` fixture)",
    "postgres": "needs the Postgres server on 127.0.0.1:5432 (the `postgres` fixture)",
    "sandbox": "runs bubblewrap (the `bwrap` fixture)",
    "webserver": "starts a Dagster web server (the `dagster_webserver` fixture)",
}

_current: list[pytest.Item] = []
# Guard refusals of the running test: the code under test may catch the error (the bot
# records a browser that would not start as its own failure), so the test fails at teardown.
_refused: list[str] = []


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_by_fixtures(items)


def mark_by_fixtures(items: list[pytest.Item]) -> None:
    for item in items:
        for name in getattr(item, "fixturenames", ()):
            marker = NEEDS.get(name)
            if marker and item.get_closest_marker(marker) is None:
                item.add_marker(marker)


def _guarded(original: Callable[..., Any], marker: str, what: str) -> Callable[..., Any]:
    fixture = next(f for f, m in NEEDS.items() if m == marker)

    def guard(*args: Any, **kwargs: Any) -> Any:
        item = _current[-1] if _current else None
        if item is not None and item.get_closest_marker(marker) is None:
            message = (
                f"{item.nodeid} {what} but does not ask for the `{fixture}` fixture, so it "
                f"carries no `{marker}` marker and a tier would miss it: add `{fixture}` to "
                "its arguments (or `pytest.mark.usefixtures`)"
            )
            _refused.append(message)
            raise RuntimeError(message)
        return original(*args, **kwargs)

    guard.__wrapped__ = original  # type: ignore[attr-defined]
    return guard


def install_guards(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wrap the in-process doors to Chromium and Postgres (the session's MonkeyPatch)."""
    try:
        from playwright.sync_api import BrowserType
    except ImportError:  # pragma: no cover - the environment always has it
        pass
    else:
        for name in ("launch", "launch_persistent_context"):
            monkeypatch.setattr(
                BrowserType,
                name,
                _guarded(getattr(BrowserType, name), "browser", "launches Chromium"),
            )
    try:
        import psycopg2
    except ImportError:  # pragma: no cover
        pass
    else:
        monkeypatch.setattr(
            psycopg2, "connect", _guarded(psycopg2.connect, "postgres", "connects to Postgres")
        )


@pytest.fixture(scope="session", autouse=True)
def _needs_guards() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        install_guards(patch)
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _current.append(item)
    _refused.clear()
    try:
        return (yield)
    finally:
        _current.pop()


@pytest.fixture(autouse=True)
def _needs_declared() -> Iterator[None]:
    """Fails the test whose code reached Chromium or Postgres without its fixture, even
    where the code under test caught the guard's error."""
    yield
    if _refused:
        pytest.fail(_refused[0], pytrace=False)
