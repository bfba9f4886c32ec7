"""Shared helpers of the quality tests: synthetic projects and one measurement per project."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bench_pipeline.agents.synthetic.game import GameSpec, write_game
from bench_pipeline.quality import QualityReport, measure_quality
from bench_pipeline.sandbox import Sandbox, get_sandbox


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    box = get_sandbox("bubblewrap")
    reason = box.unavailable_reason()
    if reason:
        pytest.skip(reason)
    return box


def make_game(
    root: Path, language: str = "javascript", faults: tuple[str, ...] = (), seed: int = 1
) -> Path:
    """A synthetic Tetris project with the given hidden quality faults."""
    folder = root / f"{language}-{'-'.join(faults) or 'clean'}-{seed}"
    folder.mkdir(parents=True)
    spec = GameSpec(
        language=language,  # type: ignore[arg-type]
        renderer="canvas",
        controls="arrows",
        start="auto",
        quality_faults=frozenset(faults),
        seed=seed,
    )
    write_game(spec, folder)
    return folder


@pytest.fixture(scope="session")
def measured(
    tmp_path_factory: pytest.TempPathFactory, sandbox: Sandbox
) -> Callable[..., QualityReport]:
    """measured(language, faults) -> the report, computed once per session and project."""
    cache: dict[tuple[str, tuple[str, ...]], QualityReport] = {}
    root = tmp_path_factory.mktemp("games")

    def get(language: str = "javascript", faults: tuple[str, ...] = ()) -> QualityReport:
        key = (language, tuple(sorted(faults)))
        if key not in cache:
            cache[key] = measure_quality(make_game(root, language, key[1]), sandbox)
        return cache[key]

    return get
