from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from bench_pipeline import settings
from bench_pipeline.sandbox import get_sandbox
from bench_pipeline.sandbox.bubblewrap import BubblewrapSandbox
from bench_pipeline.warehouse.artifacts import ArtifactStore
from resources import (
    AgentResource,
    ArtifactStoreResource,
    SandboxResource,
    SonarQubeResource,
    WarehouseResource,
)

REPO = settings.project_root()
EXPERIMENTS = REPO / "experiments"

# Markers by what a test needs, added from the fixtures it asks for (tests/needs.py).
pytest_plugins = ["tests.needs"]


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium the bot drives (Debian's, or $BENCH_CHROMIUM): asking for it marks the
    test `browser`."""
    from bench_pipeline.bot.browser import chromium_executable

    path = chromium_executable()
    if path is None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            path = p.chromium.executable_path
    return path


@pytest.fixture(scope="session")
def dagster_webserver() -> Path:
    """The `dagster-webserver` executable of this environment (what `bench ui` and the UI
    tests start): asking for it marks the test `webserver`."""
    import sys

    path = Path(sys.executable).with_name("dagster-webserver")
    assert path.is_file(), f"no {path}: run make setup"
    return path


@pytest.fixture(scope="session")
def postgres() -> dict[str, object]:
    """The Postgres server on 127.0.0.1:5432 (trust auth), its connection settings: asking
    for it marks the test `postgres`. Skips where no server answers (CI starts one)."""
    from tests.deploy.pg import PG, admin_connection

    try:
        admin_connection().close()
    except Exception as error:  # psycopg2.OperationalError, kept lazy
        pytest.skip(f"no Postgres server answers on 127.0.0.1:5432: {error}")
    return dict(PG)


@pytest.fixture(scope="session")
def bwrap() -> BubblewrapSandbox:
    """A real bubblewrap sandbox (the sandbox and hostile tests), or a skip saying why not."""
    sandbox = get_sandbox("bubblewrap")
    assert isinstance(sandbox, BubblewrapSandbox)
    reason = sandbox.unavailable_reason()
    if reason:
        pytest.skip(reason)
    return sandbox


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every path the pipeline writes, moved into a temporary folder."""
    data = tmp_path / "data"
    monkeypatch.setenv("BENCH_DATA_DIR", str(data))
    monkeypatch.delenv("BENCH_ARTIFACTS_DIR", raising=False)
    monkeypatch.delenv("BENCH_WAREHOUSE", raising=False)
    return data


@pytest.fixture
def store(data_dir: Path) -> ArtifactStore:
    return ArtifactStore(data_dir / "artifacts")


@pytest.fixture
def resources(data_dir: Path) -> dict[str, dg.ConfigurableResource]:
    return {
        "artifact_store": ArtifactStoreResource(root=str(data_dir / "artifacts")),
        "warehouse": WarehouseResource(path=str(data_dir / "warehouse.duckdb")),
        "agent": AgentResource(),
        "sandbox": SandboxResource(),
        "sonar": SonarQubeResource(),
    }


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test() as inst:
        yield inst


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Longest first: the end-to-end Dagster tests, then the other slow ones, then the rest.

    Why: xdist hands tests out in collection order, so a two-minute test collected late
    runs alone at the end while the other workers idle; started first, the short tests
    fill in around it. (Ordering only: every test still runs, each in its own tmp dir.)
    """

    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("slow") is None:
            return 2
        return 0 if "tests/dagster/" in item.nodeid else 1

    items.sort(key=rank)
