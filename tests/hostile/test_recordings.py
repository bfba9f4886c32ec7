"""Hostile recordings imported through `bench run` (the replay harness).

One experiment of eight runs, every one imported from `BENCH_REPLAY_DIR`: two honest
recordings of a real game, and six attacks on the import: a workspace that is a link to a
host folder of secrets, a file link to a secret, a transcript claiming 1e30 tokens, a
duration of 1e309 (infinity once parsed), a negative cost and a cost of "NaN". Each attack
must become that run's `error` record naming the run and the file; no byte of the secret may
reach the artifact store, the warehouse or the results site; and the honest runs, in the
same chunk, must still be built, played, measured and present in fct_runs.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from bench_pipeline import settings
from bench_pipeline.design import design_experiment, load_experiment
from bench_pipeline.runner import CHUNK

pytestmark = pytest.mark.slow

REPO = settings.project_root()
GAME = REPO / "tests" / "bot" / "games" / "canvas-basic"
TRANSCRIPT = REPO / "tests" / "agents" / "fake_cli" / "transcripts" / "claude_success.jsonl"
SECRET = b"bench-secret-recording-5d0c7f1e2a"
EXPERIMENT = """\
name: hostilerec
repeats: 4
axes:
  agent: {levels: [synthetic]}
  model: {levels: [claude-sonnet-4-6, claude-haiku-4-5], baseline: claude-sonnet-4-6}
designs:
  - type: main_effects
"""
# The role of each run, in the order the design lists them (the chunks' order).
ROLES = (
    "good",
    "workspace_link",
    "file_link",
    "tokens_1e30",
    "duration_1e309",
    "good",
    "negative_cost",
    "nan_cost",
)


def _metadata(model: str, **extra: Any) -> str:
    meta = {"agent": "claude-code", "model": model, "exit_code": 0, "duration_s": 48.2}
    return json.dumps({**meta, **extra})


def _record(root: Path, run_id: str, model: str, role: str, secrets: Path) -> Path:
    """One recording as another machine would leave it, with the attack of `role`."""
    run = root / run_id
    run.mkdir(parents=True)
    shutil.copyfile(TRANSCRIPT, run / "transcript.jsonl")
    metadata = _metadata(model)
    if role == "workspace_link":
        (run / "workspace").symlink_to(secrets)
    else:
        shutil.copytree(GAME, run / "workspace")
        (run / "workspace" / "expected.json").unlink()
    if role == "file_link":
        (run / "workspace" / "notes.txt").symlink_to(secrets / "id_rsa")
    elif role == "tokens_1e30":
        line = (
            '{"type": "assistant", "session_id": "s", "message": {"id": "msg_x", '
            '"content": [], "usage": {"input_tokens": 1e30, "output_tokens": 3}}}\n'
        )
        with (run / "transcript.jsonl").open("a") as handle:
            handle.write(line)
    elif role == "duration_1e309":
        # Raw JSON text: Python's json reads 1e309 as infinity without complaint.
        metadata = metadata.replace('"duration_s": 48.2', '"duration_s": 1e309')
    elif role == "negative_cost":
        metadata = _metadata(model, cost_usd=-3.5)
    elif role == "nan_cost":
        metadata = _metadata(model, cost_usd="NaN")
    (run / "metadata.json").write_text(metadata)
    return run


EXPECTED_PROBLEM = {
    "workspace_link": "workspace is a link to outside the recording",
    "file_link": "workspace/notes.txt is a link to outside the recording",
    "tokens_1e30": "transcript.jsonl: line 13: input_tokens is 1e+30, outside the sane range",
    "duration_1e309": "metadata.json: duration_s is inf, not a finite number",
    "negative_cost": "metadata.json: cost_usd is -3.5, outside the sane range",
    "nan_cost": "metadata.json: cost_usd must be a number, got 'NaN'",
}


def _holds_secret(path: Path) -> bool:
    """The file, or for an archive any member of it, holds the secret's bytes."""
    data = path.read_bytes()
    if SECRET in data:
        return True
    if path.name.endswith(".gz"):
        if SECRET in gzip.decompress(data):
            return True
        with tarfile.open(path, "r:gz") as tar:
            for member in tar.getmembers():
                handle = tar.extractfile(member)
                if handle is not None and SECRET in handle.read():
                    return True
    return False


def _sql(env: dict[str, str], query: str) -> list[dict[str, Any]]:
    result = subprocess.run(
        [str(Path(sys.executable).parent / "bench"), "sql", query, "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def test_hostile_recordings_through_bench_run(tmp_path: Path) -> None:
    secrets = tmp_path / "host-secrets"
    secrets.mkdir()
    (secrets / "id_rsa").write_bytes(SECRET)
    (secrets / "index.html").write_bytes(b"<!doctype html><title>x</title>" + SECRET)

    experiment_file = tmp_path / "hostilerec.yaml"
    experiment_file.write_text(textwrap.dedent(EXPERIMENT))
    design = design_experiment(load_experiment(experiment_file)).to_json_dict()
    models = {cell["cell_id"]: cell["config"]["model"] for cell in design["cells"]}
    runs = [(run["run_id"], models[run["cell_id"]]) for run in design["runs"]]
    assert len(runs) == len(ROLES) and CHUNK == 6  # runs 0-5: one chunk, 6-7: the next
    replay = tmp_path / "recordings"
    roles = {}
    for (run_id, model), role in zip(runs, ROLES, strict=True):
        _record(replay, run_id, model, role, secrets)
        roles[run_id] = role

    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(REPO / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    data = tmp_path / "data"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BENCH_", "DAGSTER_"))},
        "BENCH_DATA_DIR": str(data),
        "BENCH_REPLAY_DIR": str(replay),
        "DAGSTER_HOME": str(home),
    }
    bench = str(Path(sys.executable).parent / "bench")
    result = subprocess.run(
        [bench, "run", str(experiment_file), "--endurance-seconds", "3"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "failed" not in result.stderr, result.stderr[-3000:]

    rows = {
        row["run_id"]: row
        for row in _sql(
            env,
            "select run_id, status, agent_message, adapter, build_ok, entry_point_exists, "
            "gameplay_score, quality_score, score, cost_usd, input_tokens, output_tokens, "
            "duration_s from fct_runs",
        )
    }
    assert set(rows) == set(roles)
    for run_id, role in roles.items():
        row = rows[run_id]
        if role == "good":
            # Built, played and measured, in the same chunk as four attacks.
            assert row["status"] == "completed", row
            assert row["adapter"] == "replay" and row["build_ok"] is True
            assert row["entry_point_exists"] is True
            assert row["gameplay_score"] is not None and row["quality_score"] > 0
            assert row["input_tokens"] > 0 and 0 < row["cost_usd"] < 1
            continue
        assert row["status"] == "error", row
        recording = replay / run_id
        assert row["agent_message"].startswith(f"run {run_id}: recording {recording}: "), row
        assert EXPECTED_PROBLEM[role] in row["agent_message"], row
        # Nothing of the recording was imported: no page, so no quality credit either.
        assert row["entry_point_exists"] is False and row["quality_score"] == 0
        assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (0, 0, None)
        assert row["duration_s"] == 0

    # Every number in the warehouse is finite and sane, none NULL for want of a type.
    (check,) = _sql(
        env,
        "select count(*) filter (where input_tokens is null or duration_s is null) as nulls, "
        "max(input_tokens) as max_tokens, max(cost_usd) as max_cost, "
        "count(*) filter (where isinf(duration_s) or isnan(duration_s)) as non_finite "
        "from fct_runs",
    )
    assert check["nulls"] == 0 and check["non_finite"] == 0
    assert check["max_tokens"] < 10**9 and check["max_cost"] < 1

    # No byte of the secret anywhere the pipeline wrote: records, archives, workspaces,
    # the warehouse file and the results site.
    leaked = [str(p) for p in data.rglob("*") if p.is_file() and _holds_secret(p)]
    assert leaked == []
    assert (secrets / "id_rsa").read_bytes() == SECRET  # and the host folder is untouched
    assert sorted(p.name for p in secrets.iterdir()) == ["id_rsa", "index.html"]
