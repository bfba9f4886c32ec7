"""`bench worker`: one of several processes, on any machines, running one sweep together.

Workers share only the object store (BENCH_ARTIFACTS_URL) and the Dagster instance's
Postgres database. Each one:

1. designs the experiment (under an advisory lock, so that the design file in the bucket
   is merged by one worker at a time) and registers its runs in the claims table;
2. loops: claims the next runs nobody holds (claims.py), pulls what the bucket has of them,
   executes each per-run stage in process (a Dagster run per stage and range of runs, on
   the shared instance, tagged with the worker's name), pushes what the stage wrote, and
   marks the runs done (or failed, with the reason);
3. when nothing is left to claim, updates the columnar mirror in the bucket and builds its
   own warehouse from the bucket's Parquet (under the warehouse lock, one builder at a
   time across machines), then the effects analysis and the results site.

A run is executed by one worker: claims are atomic, and a worker checks that it still
holds a run before each stage (a claim can be taken over only once it has expired).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from bench_pipeline import settings, stages
from bench_pipeline.sharing.claims import (
    DONE,
    FAILED,
    Claims,
    Heartbeat,
    advisory_lock,
    postgres_dsn,
)
from bench_pipeline.sharing.remote import MirrorSync, RemoteStore

WORKER_TAG = "bench/worker"
WAREHOUSE_LOCK = "bench:warehouse"
# Runs a worker claims at once: the Dagster runs of its stages cover them together.
DEFAULT_BATCH = 2
# A claim not renewed for this long is taken over by another worker (its worker is dead).
DEFAULT_LEASE_S = 900.0


def default_name() -> str:
    """host-pid-random: unique even for two workers of one host (a pod's host is its name)."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"


@dataclass
class WorkerSummary:
    experiment: str
    worker: str
    runs: int
    executed: list[str] = field(default_factory=list)  # runs this worker completed
    failed: list[str] = field(default_factory=list)  # one line per range of runs that failed
    taken_over: list[str] = field(default_factory=list)  # "run (from worker)"
    lost: list[str] = field(default_factory=list)  # runs another worker took over from us
    claims: dict[str, int] = field(default_factory=dict)  # status -> runs, at the end
    mirror: MirrorSync | None = None
    warehouse: Path | None = None
    tables: dict[str, int] = field(default_factory=dict)


def build_from_remote(
    remote: RemoteStore,
    dsn: str,
    instance: dg.DagsterInstance,
    progress: Callable[[str], None],
    tags: dict[str, str],
) -> tuple[MirrorSync, dg.ExecuteInProcessResult]:
    """Update the bucket's columnar mirror and build this machine's warehouse from it,
    with the effects analysis and the results site: the last step of `run_main`, with the
    records read from the bucket."""
    from bench_pipeline.orchestration.project import load_project
    from bench_pipeline.runner import QUIET
    from bench_pipeline.warehouse.artifacts import ArtifactStore
    from bench_pipeline.warehouse.build import SOURCE_SCHEMAS

    store = ArtifactStore(settings.artifacts_dir())
    # One builder at a time across machines: the sync and the build see the same parts.
    with advisory_lock(dsn, WAREHOUSE_LOCK, on_wait=progress):
        sync = remote.sync_mirror(store, SOURCE_SCHEMAS)
        progress(f"columnar mirror in {remote.url}: {sync.describe()}")
        project = load_project()
        result = dg.materialize(
            project.across_run_assets,
            instance=instance,
            resources=project.resources,
            run_config=QUIET,
            tags=tags,
            raise_on_error=False,
        )
    return sync, result


def run_worker(
    experiment_file: Path,
    instance: dg.DagsterInstance,
    remote: RemoteStore,
    *,
    name: str | None = None,
    batch: int = DEFAULT_BATCH,
    lease_s: float = DEFAULT_LEASE_S,
    endurance_s: float | None = None,
    retry_failed: bool = False,
    build: bool = True,
    progress: Callable[[str], None] = print,
) -> WorkerSummary:
    # Imported here so that the CLI starts fast.
    from bench_pipeline.design import load_experiment
    from bench_pipeline.orchestration.project import load_project
    from bench_pipeline.runner import (
        CHUNK,
        QUIET,
        RANGE_END,
        RANGE_START,
        check_result,
        chunked,
        contiguous_ranges,
        failure_text,
        owner_tags,
        start_up,
    )
    from bench_pipeline.warehouse.artifacts import ArtifactStore

    if batch < 1:
        raise ValueError(f"--batch must be at least 1, not {batch}")
    if lease_s <= 0:
        raise ValueError(f"--lease-seconds must be positive, not {lease_s}")
    name = name or default_name()
    endurance = settings.bot_endurance_s() if endurance_s is None else endurance_s
    experiment = load_experiment(experiment_file)  # refuse a bad file before anything runs
    dsn = postgres_dsn(instance)
    remote.check()
    start_up(instance, progress)
    store = ArtifactStore(settings.artifacts_dir())
    claims = Claims(dsn)
    claims.setup()
    project = load_project()
    resources = project.resources
    stage_assets_by_name = project.stage_assets
    run_partitions = project.run_partitions
    experiment_design = stage_assets_by_name["experiment_design"]
    bot_evaluation = stage_assets_by_name["bot_evaluation"]
    run_stages = project.per_run_assets
    all_assets = project.all_assets
    # The claims decide who executes what: the daemon must never retry a worker's run.
    base_tags = {"bench/experiment": experiment.name, WORKER_TAG: name, "dagster/max_retries": "0"}
    summary = WorkerSummary(experiment=experiment.name, worker=name, runs=0)

    progress(f"worker {name}: designing {experiment.name} from {experiment_file}")
    # The design file in the bucket merges earlier designs (retired runs stay addressable):
    # one worker at a time reads, merges and writes it.
    with advisory_lock(dsn, f"bench:design:{experiment.name}", on_wait=progress):
        with contextlib.suppress(FileNotFoundError):
            remote.download(
                store.design_path(experiment.name).relative_to(store.root).as_posix(),
                store.design_path(experiment.name),
            )
        result = dg.materialize(
            all_assets,
            selection=[experiment_design],
            instance=instance,
            resources=resources,
            run_config={
                **QUIET,
                "ops": {"experiment_design": {"config": {"experiment": str(experiment_file)}}},
            },
            tags={**base_tags, **owner_tags()},
        )
        check_result(result, "experiment_design")
        remote.push_file(store, store.design_path(experiment.name))
    ordered = [
        k
        for k in instance.get_dynamic_partitions(run_partitions.name)
        if k.startswith(f"{experiment.name}.")
    ]
    summary.runs = len(ordered)
    # Runs complete before any worker (a `bench run` on this instance) are not redone.
    complete = stages.complete_runs(
        {
            s: instance.get_materialized_partitions(stage_assets_by_name[s].key)
            for s in stages.COMPLETES_RUN
        }
    )
    added = claims.register(experiment.name, ordered, complete)
    if retry_failed:
        progress(f"{claims.retry_failed(experiment.name)} failed runs claimable again")
    progress(f"{len(ordered)} runs, {added} new in the claims table; claiming {batch} at a time")

    bot_config = {"ops": {"bot_evaluation": {"config": {"endurance_seconds": endurance}}}}
    position = {key: i for i, key in enumerate(ordered)}
    with Heartbeat(dsn, name, interval_s=max(1.0, min(60.0, lease_s / 5))):
        while True:
            got = claims.claim(experiment.name, name, batch, lease_s)
            if not got:
                break
            for claim in got:
                if claim.taken_from:
                    summary.taken_over.append(f"{claim.run_id} (from {claim.taken_from})")
                    progress(f"took over {claim.run_id}: {claim.taken_from} stopped beating")
                fetched = remote.pull_run(store, claim.run_id)
                if fetched:
                    progress(f"{claim.run_id}: pulled {fetched} files the bucket had of it")
            wanted = {c.run_id for c in got}
            for first, last in chunked(ordered, contiguous_ranges(ordered, wanted), CHUNK):
                runs = ordered[position[first] : position[last] + 1]
                progress(f"worker {name}: runs {first} … {last}")
                failure = None
                for stage in run_stages:
                    held = claims.mine(name, runs)
                    if held != set(runs):
                        lost = sorted(set(runs) - held)
                        summary.lost.extend(lost)
                        failure = f"claims taken over by another worker: {', '.join(lost)}"
                        break
                    result = dg.materialize(
                        all_assets,
                        selection=[stage],
                        instance=instance,
                        resources=resources,
                        run_config={**QUIET, **(bot_config if stage is bot_evaluation else {})},
                        tags={
                            RANGE_START: first,
                            RANGE_END: last,
                            **base_tags,
                            **owner_tags(),
                        },
                        raise_on_error=False,
                    )
                    # What the stage wrote goes to the bucket, a failed step's records too.
                    for run_id in runs:
                        remote.push_run(store, run_id)
                    if not result.success:
                        failure = (
                            f"{stage.key.to_user_string()}: {failure_text(result)} "
                            f"(Dagster run {result.run_id})"
                        )
                        break
                if failure is None:
                    summary.executed.extend(claims.finish(name, runs, DONE))
                else:
                    claims.finish(name, runs, FAILED, failure)
                    summary.failed.append(f"runs {first} … {last}: {failure}")
                    progress(f"failed: {failure}")
    summary.claims = claims.counts(experiment.name)
    claims.close()
    others = summary.claims.get("claimed", 0)
    progress(
        f"worker {name}: nothing left to claim; executed {len(summary.executed)} runs"
        + (f"; {others} still running on other workers" if others else "")
    )
    if not build:
        return summary
    progress("updating the columnar mirror in the bucket and the warehouse from it")
    summary.mirror, result = build_from_remote(
        remote, dsn, instance, progress, {**base_tags, **owner_tags()}
    )
    check_result(result, "warehouse")
    for mat in result.get_asset_materialization_events():
        metadata = mat.materialization.metadata
        key = mat.asset_key.to_user_string()
        if key == "warehouse_sources":
            summary.warehouse = Path(str(metadata["path"].value))
            summary.tables |= {
                k.removeprefix("rows/"): int(v.value)
                for k, v in metadata.items()
                if k.startswith("rows/")
            }
        elif "dagster/row_count" in metadata:
            summary.tables[key] = int(metadata["dagster/row_count"].value)
    summary.warehouse = summary.warehouse or settings.warehouse_path()
    return summary
