"""Stage 3, sandboxed build: install and build what the agent wrote, from its archive.

The build never touches the agent's own output: it unpacks `workspace.tar.gz` into
`runs/<run_id>/sandboxed_build/workspace/` (derived, so it may be thrown away and redone
at any time) and builds there under the sandbox. A failed build is a result: the record
says so and why, and the bot later scores whatever page it left (maybe none).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_pipeline import stages
from bench_pipeline.agents.stage import ARCHIVE, NoGenerationRecord, extract_workspace
from bench_pipeline.agents.stage import STAGE as GENERATION_STAGE
from bench_pipeline.build.project import build_project
from bench_pipeline.sandbox.base import Sandbox
from bench_pipeline.warehouse.artifacts import ArtifactStore, atomic_write_bytes

STAGE = stages.SANDBOXED_BUILD.name


def run_build(
    run_id: str,
    store: ArtifactStore,
    sandbox: Sandbox,
    *,
    toolchain_bin: Path | None,
    install_network: bool,
    timeout_s: float,
    install_allow_hosts: Sequence[str] | None = None,
) -> dict[str, Any]:
    generation = store.read_record(GENERATION_STAGE, run_id)
    archive = store.run_dir(run_id, GENERATION_STAGE) / ARCHIVE
    if generation is None or not archive.is_file():
        raise NoGenerationRecord(
            f"run {run_id}: no agent_generation record or workspace archive at {archive}; "
            "materialize agent_generation for this run first"
        )
    build_dir = store.run_dir(run_id, STAGE)
    workspace = build_dir / "workspace"
    extract_workspace(archive, workspace)
    result = build_project(
        workspace,
        sandbox,
        toolchain_bin=toolchain_bin,
        install_network=install_network,
        install_allow_hosts=install_allow_hosts,
        timeout_s=timeout_s,
    )
    record = result.to_record()
    log = str(record.pop("log", "") or "")
    atomic_write_bytes(build_dir / "build.log", log.encode())
    record.update(
        {
            "run_id": run_id,
            "experiment": generation.get("experiment"),
            "agent_status": generation.get("status"),
            "sandbox": sandbox.name,
            "log_path": str(build_dir / "build.log"),
            "log_tail": log[-2000:],
        }
    )
    store.write_record(STAGE, run_id, record)
    return record
