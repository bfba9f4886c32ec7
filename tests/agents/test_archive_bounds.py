"""The workspace archive bounds what every later stage unpacks on the host: files, apparent
bytes, depth and path length when it is made, and the same again when it is unpacked."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from bench_pipeline.agents import stage
from bench_pipeline.agents.stage import ArchiveTooBig, archive_workspace, extract_workspace

MIB = 1024 * 1024


def test_sparse_files_count_their_full_length_and_skips_are_listed_briefly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stage, "ARCHIVE_MAX_TOTAL_BYTES", 10 * MIB)
    monkeypatch.setattr(stage, "ARCHIVE_MAX_FILES", 150)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for i in range(3):
        with open(workspace / f"sparse{i}.bin", "wb") as fh:
            fh.truncate(4 * MIB)  # 4 MiB apparent, nothing on disk
    for i in range(400):
        (workspace / f"f{i:03}.js").write_text("x")
    deep = workspace.joinpath(*["d"] * 70)
    deep.mkdir(parents=True)
    (deep / "lost.js").write_text("x")

    made = archive_workspace(workspace, tmp_path / "ws.tar.gz")

    # Two of the three sparse files fit the 10 MiB by apparent size; 150 files are listed
    # at most, so one sparse file less is archived.
    assert made["workspace_bytes"] <= 10 * MIB
    assert made["files"] == 149
    skipped = made["skipped_files"]
    assert len(skipped) == stage.ARCHIVE_LISTED_SKIPS + 1
    assert skipped[-1].startswith("... and ") and skipped[-1].endswith("more files skipped")
    assert any("deeper than 64 folders" in s for s in skipped) or "more" in skipped[-1]
    target = tmp_path / "out"
    extract_workspace(tmp_path / "ws.tar.gz", target)
    assert sum(p.stat().st_size for p in target.rglob("*") if p.is_file()) <= 10 * MIB


def _tar(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_unpacking_stops_at_the_bounds_whoever_made_the_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stage, "ARCHIVE_MAX_FILES", 10)
    monkeypatch.setattr(stage, "ARCHIVE_MAX_TOTAL_BYTES", 1000)
    many, big = tmp_path / "many.tar.gz", tmp_path / "big.tar.gz"
    _tar(many, {f"f{i}": b"" for i in range(20)})
    _tar(big, {"a": bytes(600), "b": bytes(600)})
    with pytest.raises(ArchiveTooBig, match="more than 10 files"):
        extract_workspace(many, tmp_path / "t1")
    assert len(list((tmp_path / "t1").iterdir())) == 10
    with pytest.raises(ArchiveTooBig, match="more than 1000 bytes"):
        extract_workspace(big, tmp_path / "t2")
    assert [p.name for p in (tmp_path / "t2").iterdir()] == ["a"]
