"""measure_quality never raises for a strange project: it says what it could not measure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench_pipeline.quality import CONTRACT_KEYS, QualityReport, measure_quality
from bench_pipeline.sandbox import Sandbox

pytestmark = pytest.mark.slow
PAGE = (
    "<!doctype html><html lang=en><head><title>t</title></head>"
    '<body><script src="main.js"></script></body></html>\n'
)


def check_contract(report: QualityReport) -> dict:
    data = report.to_json()
    assert set(CONTRACT_KEYS) | {"quality_score", "unavailable"} <= set(data)
    assert 0 <= data["quality_score"] <= 100
    for key in CONTRACT_KEYS:
        if data[key] is None:
            assert data["unavailable"].get(key), f"{key} is null without a reason"
    return data


def test_empty_folder(tmp_path: Path, sandbox: Sandbox) -> None:
    data = check_contract(measure_quality(tmp_path, sandbox))
    assert data["file_count"] == 0
    assert data["build_ok"] is False
    # Nothing to find fault in is not clean code: no page to serve, no quality credit.
    assert data["quality_score"] == 0.0
    assert data["has_entry_point"] is False and data["entry_point"] is None
    assert data["unavailable"]["entry_point"].startswith("no entry point: ")
    assert data["quality_breakdown"]["entry_point"] == 100.0
    assert any(note.startswith("no quality credit") for note in data["notes"])
    assert data["eslint_errors"] is None
    assert "no JavaScript" in data["unavailable"]["eslint_errors"]
    assert data["html_errors"] is None and data["bundle_bytes"] is None


def test_binary_files_only(tmp_path: Path, sandbox: Sandbox) -> None:
    (tmp_path / "sprite.png").write_bytes(os.urandom(5000))
    (tmp_path / "main.js").write_bytes(b"\x00\x01\x02" + os.urandom(3000))
    data = check_contract(measure_quality(tmp_path, sandbox))
    assert data["file_count"] == 0
    assert data["files_skipped"]["binary"] == 1
    assert any("binary" in note for note in data["notes"])


def test_five_megabyte_minified_bundle(tmp_path: Path, sandbox: Sandbox) -> None:
    body = "var a=[" + ",".join(str(i % 97) for i in range(1_400_000)) + "];"
    (tmp_path / "main.js").write_text(body[:5_000_000] + "0];")
    (tmp_path / "index.html").write_text(PAGE)
    data = check_contract(measure_quality(tmp_path, sandbox))
    assert data["files_skipped"]["large"] == 1
    assert data["file_count"] == 0
    # The bundle is what the browser downloads: the big file counts there.
    assert data["bundle_bytes"] is not None and data["bundle_bytes"] > 1_000_000
    assert data["quality_breakdown"]["bundle_bytes"] == 5.0


def test_syntax_errors_everywhere(tmp_path: Path, sandbox: Sandbox) -> None:
    (tmp_path / "index.html").write_text(PAGE)
    for i in range(5):
        (tmp_path / f"f{i}.js").write_text(f"function broken{i}( {{ if (x {{ return ]]]\n")
    (tmp_path / "types.ts").write_text("let x: = ;\ninterface {\n")
    data = check_contract(measure_quality(tmp_path, sandbox))
    assert data["eslint_errors"] >= 6
    assert data["eslint_parse_errors"] >= 6
    assert data["parse_errors"] == 6
    assert data["ts_compiles"] is False
    assert any("syntax errors" in note for note in data["notes"])


def test_three_thousand_tiny_files_are_capped(tmp_path: Path, sandbox: Sandbox) -> None:
    (tmp_path / "index.html").write_text(PAGE)
    (tmp_path / "main.js").write_text("export const main = 1;\n")
    for i in range(3000):
        folder = tmp_path / "gen" / f"d{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{i}.js").write_text(f"export const value{i} = {i};\n")
    data = check_contract(measure_quality(tmp_path, sandbox))
    assert data["files_skipped"]["capped"] > 0
    assert data["file_count"] <= 1000
    assert any("cap" in note for note in data["notes"])


def test_ten_thousand_files_keep_the_entry_page(tmp_path: Path, sandbox: Sandbox) -> None:
    """10,000 files that sort before index.html: both copy caps (the analysis copy and the
    CLI's own build copy) used to fill up before reaching the page, which was then measured
    as a failed build without one."""
    (tmp_path / "index.html").write_text(
        "<!doctype html><html lang=en><head><title>t</title>"
        '<link rel="stylesheet" href="zz/style.css"></head>'
        '<body><script type="module" src="zz/main.js"></script></body></html>\n'
    )
    (tmp_path / "zz").mkdir()
    (tmp_path / "zz" / "main.js").write_text('import { board } from "./board.js";\nboard();\n')
    (tmp_path / "zz" / "board.js").write_text("export function board() {\n  return 1;\n}\n")
    (tmp_path / "zz" / "style.css").write_text("body { margin: 0; }\n")
    for i in range(10_000):
        (tmp_path / f"asset-{i:05d}.json").write_text(f'{{"n": {i}}}\n')
    data = check_contract(measure_quality(tmp_path, sandbox))
    assert data["build_ok"] is True, data["notes"]
    assert data["has_entry_point"] is True and data["entry_point"] == "index.html"
    assert data["files_skipped"]["capped"] > 9000  # the cap was hit, and said so
    assert data["files_skipped"]["entry_files"] == 4
    assert any("copied first" in note for note in data["notes"])
    assert any(note.startswith("build copy capped") for note in data["notes"])
    assert data["html_errors"] is not None  # the page itself was measured
    assert data["file_count"] == 2 and data["eslint_errors"] is not None
    assert data["quality_breakdown"]["build_ok"] == 0.0
    assert data["quality_score"] > 50


def test_no_javascript_at_all(tmp_path: Path, sandbox: Sandbox) -> None:
    (tmp_path / "index.html").write_text(
        "<!doctype html><html lang=en><head><title>t</title></head><body><p>hi</body></html>\n"
    )
    (tmp_path / "style.css").write_text("p { color: red; }\n")
    data = check_contract(measure_quality(tmp_path, sandbox))
    assert data["file_count"] == 0
    assert data["build_ok"] is True
    assert data["html_errors"] is not None
    assert data["bundle_bytes"] > 0
    for key in ("eslint_errors", "function_length_max", "duplication_pct", "magic_numbers"):
        assert data[key] is None and "no JavaScript" in data["unavailable"][key]


def test_tool_timeout_is_a_reason_not_a_crash(tmp_path: Path, sandbox: Sandbox) -> None:
    (tmp_path / "index.html").write_text(PAGE)
    (tmp_path / "main.js").write_text("export const main = 1;\n")
    data = check_contract(measure_quality(tmp_path, sandbox, tool_timeout_s=0.05))
    assert data["eslint_errors"] is None
    assert "timed out" in data["unavailable"]["eslint_errors"]


def test_missing_toolchain(tmp_path: Path, sandbox: Sandbox) -> None:
    (tmp_path / "main.js").write_text("export const main = 1;\n")
    data = check_contract(measure_quality(tmp_path, sandbox, toolchain=tmp_path / "nowhere"))
    assert data["file_count"] == 1
    assert "toolchain" in data["unavailable"]["eslint_errors"]


def test_not_a_folder_raises(tmp_path: Path, sandbox: Sandbox) -> None:
    with pytest.raises(NotADirectoryError):
        measure_quality(tmp_path / "missing", sandbox)
