"""measure_quality on synthetic projects with hidden quality faults: real tools, real sandbox."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from bench_pipeline.quality import CONTRACT_KEYS, QualityReport, measure_quality
from bench_pipeline.quality.files import CopyLimits, copy_tree, entry_files
from bench_pipeline.sandbox import Sandbox
from tests.quality.conftest import make_game

pytestmark = pytest.mark.slow
Measure = Callable[..., QualityReport]


def test_clean_javascript_project(measured: Measure) -> None:
    data = measured("javascript").to_json()
    assert set(CONTRACT_KEYS) | {"quality_score", "unavailable"} <= set(data)
    assert data["build_ok"] is True
    assert data["eslint_errors"] == 0
    assert data["ts_compiles"] is None
    assert "not a TypeScript project" in data["unavailable"]["ts_compiles"]
    assert data["file_count"] > 1 and data["single_file"] is False
    assert data["bundle_bytes"] > 1000
    assert data["html_errors"] == 0
    assert data["duplication_pct"] == 0
    assert data["naming_consistency"] > 0.9
    assert data["quality_score"] >= 90
    # Every contract metric was measured except the type check of a JavaScript project.
    assert set(data["unavailable"]) == {"ts_compiles", "ts_errors"}


def test_lint_errors_are_counted_and_lower_the_score(measured: Measure) -> None:
    clean, faulty = measured("javascript"), measured("javascript", ("lint_errors",))
    assert faulty.metrics["eslint_errors"] > clean.metrics["eslint_errors"]
    assert faulty.quality_score < clean.quality_score


def test_typescript_type_errors_fail_the_type_check(measured: Measure) -> None:
    clean, faulty = measured("typescript"), measured("typescript", ("type_errors",))
    assert clean.metrics["ts_compiles"] is True and clean.metrics["ts_errors"] == 0
    assert faulty.metrics["ts_compiles"] is False and faulty.metrics["ts_errors"] >= 1
    assert faulty.quality_score < clean.quality_score


def test_deep_nesting_is_seen(measured: Measure) -> None:
    clean, faulty = measured("javascript"), measured("javascript", ("deep_nesting",))
    assert faulty.metrics["nesting_depth_max"] > clean.metrics["nesting_depth_max"]
    assert faulty.quality_score <= clean.quality_score


def test_magic_numbers_are_counted(measured: Measure) -> None:
    clean, faulty = measured("javascript"), measured("javascript", ("magic_numbers",))
    assert faulty.metrics["magic_numbers"] > clean.metrics["magic_numbers"]
    assert faulty.quality_score < clean.quality_score


def test_one_giant_file(measured: Measure) -> None:
    faulty = measured("javascript", ("one_giant_file",))
    assert faulty.metrics["file_count"] == 1
    assert faulty.metrics["single_file"] is True
    assert faulty.metrics["largest_file_share"] == 1.0
    assert faulty.quality_score <= measured("javascript").quality_score


def test_duplicated_file_raises_duplication(tmp_path: Path, sandbox: Sandbox) -> None:
    project = make_game(tmp_path, "javascript")
    shutil.copy(project / "src" / "game.js", project / "src" / "game_copy.js")
    report = measure_quality(project, sandbox)
    assert report.metrics["duplication_pct"] > 5
    assert report.metrics["file_count"] == 10


@pytest.mark.parametrize("entry", ["absolute", "relative", "served elsewhere"])
def test_pipeline_build_record_is_used(tmp_path: Path, sandbox: Sandbox, entry: str) -> None:
    """With a sandboxed_build record no build runs here: its verdict and page are used.

    The build stage writes the entry relative to the workspace and may serve from its own
    folder; the page must be found in either case (not resolved against the cwd)."""
    project = make_game(tmp_path, "javascript")
    served = project
    if entry == "served elsewhere":
        served = tmp_path / "pipeline" / "sandboxed_build" / "workspace"
        shutil.copytree(project, served)
    record = {
        "build_ok": False,
        "kind": "static",
        "message": "pretend it failed",
        "served_dir": str(served),
        "entry_point": str(project / "index.html") if entry == "absolute" else "index.html",
    }
    report = measure_quality(project, sandbox, build=record)
    assert report.metrics["build_ok"] is False
    assert "build" not in report.tool_seconds
    assert report.metrics["bundle_bytes"] > 1000
    assert report.to_json()["quality_breakdown"]["build_ok"] == 20.0


def test_agent_config_and_disable_comments_do_not_change_the_measure(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    (tmp_path / "index.html").write_text(
        "<!doctype html><html lang=en><head><title>t</title></head>"
        '<body><script type="module" src="main.js"></script></body></html>'
    )
    (tmp_path / "eslint.config.js").write_text("export default [{ ignores: ['**'] }];\n")
    (tmp_path / "main.js").write_text(
        "/* eslint-disable */\nvar x = 1;\nif (x == 2) { console.log(undefinedThing); }\n"
    )
    report = measure_quality(tmp_path, sandbox)
    # no-var, eqeqeq and no-undef fire despite the agent's config and disable comment.
    assert report.metrics["eslint_errors"] >= 3


def test_symlink_to_a_host_file_is_not_followed(tmp_path: Path, sandbox: Sandbox) -> None:
    project = make_game(tmp_path, "javascript")
    (project / "src" / "secret.js").symlink_to("/etc/shadow")
    report = measure_quality(project, sandbox)
    assert report.metrics["files_skipped"]["symlinks"] == 1
    assert report.metrics["file_count"] == 9


def test_the_copy_cap_never_drops_the_entry_page_or_what_it_loads(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "lib").mkdir(parents=True)
    (project / "index.html").write_text(
        '<link rel="stylesheet" href="/src/style.css"><script type="module" '
        'src="./src/main.js?v=2"></script><script src="https://cdn.example/x.js"></script>'
    )
    (project / "src" / "main.js").write_text(
        'import { a } from "./lib/a.js";\nconst b = await import("./lib/b");\n'
        'import "../../outside.js";\n'
    )
    (project / "src" / "lib" / "a.ts").write_text("export const a = 1;\n")  # .js -> .ts
    (project / "src" / "lib" / "b.js").write_text("export default 2;\n")
    (project / "src" / "style.css").write_text("body {}\n")
    (project / "package.json").write_text("{}")
    for i in range(50):
        (project / f"aaa-{i:02d}.js").write_text(f"export const v{i} = {i};\n")
    # A link on the way must not be followed, even when the page names it.
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key.js").write_text("SECRET")
    (project / "linked").symlink_to(tmp_path / "secret")
    (project / "index.html").write_text(
        (project / "index.html").read_text() + '<script src="linked/key.js"></script>'
    )
    assert entry_files(project) == [
        "index.html",
        "package.json",
        "src/style.css",
        "src/main.js",
        "src/lib/a.ts",
        "src/lib/b.js",
    ]
    stats = copy_tree(project, tmp_path / "copy", CopyLimits(max_files=10))
    assert stats.entry_files == entry_files(project)
    assert set(entry_files(project)) <= set(stats.copied)
    assert len(stats.copied) == 10 and stats.capped == 46
    assert any("copied first" in note for note in stats.notes())
    assert not (tmp_path / "copy" / "linked").exists()
