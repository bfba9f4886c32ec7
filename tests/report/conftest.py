"""One fake warehouse and one site per test session (per xdist worker): ~15 s to make."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench_pipeline.report import SiteSummary, build_site
from tests.report.fake_site import FakeWarehouse, make_warehouse

PAGE_SIZE = 50
# A screenshot-looking symlink to a file outside the store: it must never be published.
LEAKED_NAME = "03-leak.png"


@dataclass(frozen=True)
class Site:
    fake: FakeWarehouse
    summary: SiteSummary
    out: Path


@pytest.fixture(scope="session")
def fake(tmp_path_factory: pytest.TempPathFactory) -> FakeWarehouse:
    root = tmp_path_factory.mktemp("report-warehouse")
    warehouse = make_warehouse(root, runs=100)
    outside = root / "secret.png"
    shutil.copyfile(
        warehouse.artifacts / "runs" / warehouse.failed_build / "agent_generation" / "prompt.md",
        outside,
    )
    shots = warehouse.artifacts / "runs" / warehouse.run_ids[-2] / "bot_evaluation"
    shots.mkdir(parents=True, exist_ok=True)
    (shots / LEAKED_NAME).symlink_to(outside)
    return warehouse


@pytest.fixture(scope="session")
def site(fake: FakeWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Site:
    out = tmp_path_factory.mktemp("report-site") / "site"
    summary = build_site(fake.db, fake.artifacts, out, page_size=PAGE_SIZE)
    return Site(fake, summary, out)
