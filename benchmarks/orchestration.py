"""Where the time goes between "Launch" and "warehouse updated" (docs/orchestration.md).

Starts `bench ui` (`dagster dev`: webserver, daemon, code server) on a temporary
DAGSTER_HOME that holds the project's dagster_home/dagster.yaml (or --dagster-yaml), waits
until the daemon is up, then launches `sweep_job` through GraphQL the way the launchpad's
Launch button does, for a throwaway experiment of --runs runs of the synthetic agent with
the bot's endurance window at --endurance seconds. It waits until the sweep's backfill has
built the warehouse after every run, then --settle seconds more (the automation sensor
may build it again), stops the UI and reads the instance's run records and event logs:

- the wall time from Launch to the end of the run that last updated the warehouse (its
  marts and the site included);
- the same wall time split so that the parts add up (each instant counted once, under the
  first of these going on): stage steps executing (their own work, STEP_START →
  STEP_SUCCESS), step subprocesses starting (multiprocess executor: STEP_WORKER_STARTING →
  STEP_START), run workers starting (RUN_STARTING → "Started process for run": the
  process; → RUN_START: the code location loaded; → first step), time inside runs between
  steps, runs ending, runs created and queued, and time with no run at all (waiting for
  the daemon's next backfill iteration);
- the sum of the steps' own time per stage, and per Dagster run its queueing, start-up,
  steps and overhead share;
- overhead share = 1 - (time during which a stage step was executing) / wall;
- how many times the warehouse was built, and by whom (the sweep's backfill, the
  automation sensor, `bench run`, ...), from the runs' tags.

Then the same for `bench run` on the same experiment (in process, no daemon), unless
--skip-bench-run; with --beside-ui also a `bench run` of a second experiment on the UI's
instance while its daemon and automation sensor run. Prints figures; asserts nothing: the
machine is shared and noisy, so compare the overhead shares more than the seconds. About
10-20 minutes for 20 runs on 2 cores.

    .venv/bin/python benchmarks/orchestration.py [--runs 20] [--endurance 1]
        [--skip-bench-run] [--beside-ui] [--dagster-yaml dagster_home/dagster.yaml] [--keep]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
from dagster._core.instance.ref import InstanceRef
from dagster._core.scheduler.instigation import InstigatorType
from sqlalchemy.exc import OperationalError

from bench_pipeline import settings

ROOT = settings.project_root()
BIN = Path(sys.executable).parent
PER_RUN_STAGES = (
    "run_spec",
    "agent_generation",
    "sandboxed_build",
    "bot_evaluation",
    "quality_metrics",
)
WAREHOUSE_STEP = "warehouse"
ET = dg.DagsterEventType
STEP_BEGIN = {ET.STEP_START, ET.STEP_RESTARTED}
STEP_END = {ET.STEP_SUCCESS, ET.STEP_FAILURE, ET.STEP_UP_FOR_RETRY, ET.STEP_SKIPPED}
RUN_END = {ET.RUN_SUCCESS, ET.RUN_FAILURE, ET.RUN_CANCELED}
# Exclusive split of the wall time: at each instant, the first of these that is going on.
CATEGORIES = (
    ("steps", "stage steps executing (their own work)"),
    ("step_process", "step processes starting (multiprocess executor: import, code load)"),
    ("run_start", "run workers starting (process, imports, code load, run init)"),
    ("in_run", "inside a run, between steps (pool waits, executor)"),
    ("run_end", "runs ending (after their last step)"),
    ("queued", "runs created and queued (→ launched by the run queue)"),
    ("idle", "no run at all (launch, backfill / sensor iterations)"),
)
LAUNCH = """
mutation Launch($params: ExecutionParams!) {
  launchPipelineExecution(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}
"""
DAEMONS = "{ instance { daemonHealth { allDaemonStatuses { daemonType required healthy } } } }"
REPOSITORY = (
    "{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } } } } }"
)


# --------------------------------------------------------------------------- the experiment


def write_experiment(folder: Path, runs: int, name: str = "orchestration") -> Path:
    """`runs` runs of the synthetic agent: two models (so the effects analysis has something
    to estimate) when the count is even, one cell otherwise."""
    if runs < 1:
        raise SystemExit(f"--runs must be at least 1 (got {runs})")
    models = settings.experiments_dir() / "models.yaml"
    if runs % 2 == 0:
        axes = (
            "  agent: {levels: [synthetic]}\n"
            "  model: {levels: [claude-sonnet-4-6, claude-haiku-4-5], baseline: claude-sonnet-4-6}\n"
        )
        repeats = runs // 2
    else:
        axes, repeats = "  agent: {levels: [synthetic]}\n", runs
    path = folder / f"{name}.yaml"
    path.write_text(
        f"name: {name}\nrepeats: {repeats}\nseed: 0\nmodels_file: {models}\n"
        f"axes:\n{axes}designs:\n  - type: main_effects\n"
    )
    return path


def make_home(folder: Path, dagster_yaml: Path) -> Path:
    home = folder / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(dagster_yaml, home / "dagster.yaml")
    return home


# --------------------------------------------------------------------------- the UI


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def graphql(port: int, query: str, variables: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query, "variables": variables or {}}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def wait_for(what: str, timeout_s: float, probe: Callable[[], object], every_s: float = 2.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        # Not up yet, or SQLite busy while the daemon writes: ask again.
        with contextlib.suppress(OSError, KeyError, TypeError, OperationalError):
            value = probe()
            if value:
                return value
        time.sleep(every_s)
    raise SystemExit(f"timed out after {timeout_s:.0f} s waiting for {what}")


@contextlib.contextmanager
def bench_ui(home: Path, env: dict[str, str], log_path: Path):
    """`bench ui` on a free port, in its own session so that it stops with everything it
    started; yields the port."""
    port = _free_port()
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [str(BIN / "bench"), "ui", "--port", str(port)],
            env={**env, "DAGSTER_HOME": str(home)},
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield port
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            with contextlib.suppress(ProcessLookupError):  # children that outlived the stop
                os.killpg(process.pid, signal.SIGKILL)


def instance_at(home: Path) -> dg.DagsterInstance:
    return dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home)))


def _busy(instance: dg.DagsterInstance) -> bool:
    live = [
        dg.DagsterRunStatus.QUEUED,
        dg.DagsterRunStatus.NOT_STARTED,
        dg.DagsterRunStatus.STARTING,
        dg.DagsterRunStatus.STARTED,
        dg.DagsterRunStatus.CANCELING,
    ]
    return bool(instance.get_runs_count(dg.RunsFilter(statuses=live)))


def sweep_through_ui(
    folder: Path, experiment: Path, env: dict[str, str], dagster_yaml: Path, args
) -> tuple[dg.DagsterInstance, float, tuple[float, float] | None]:
    """Launch the sweep like the launchpad does; returns the instance, the launch time and,
    with --beside-ui, when the `bench run` of a second experiment on the same instance
    (the UI's daemon and automation sensor still running) started and ended."""
    home = make_home(folder / "ui", dagster_yaml)
    log_path = folder / "ui" / "ui.log"
    started = time.monotonic()
    with bench_ui(home, env, log_path) as port:
        where = wait_for(
            "the UI to load the project",
            300,
            lambda: graphql(port, REPOSITORY)["data"]["repositoriesOrError"]["nodes"][0],
        )

        def daemons_up() -> bool:
            statuses = graphql(port, DAEMONS)["data"]["instance"]["daemonHealth"]
            return all(s["healthy"] for s in statuses["allDaemonStatuses"] if s["required"])

        wait_for("the daemon's heartbeats", 300, daemons_up)
        print(f"UI and daemon up after {time.monotonic() - started:.0f} s (not counted)")
        params = {
            "selector": {
                "repositoryLocationName": where["location"]["name"],
                "repositoryName": where["name"],
                "pipelineName": "sweep_job",
            },
            "mode": "default",
            "runConfigData": {
                "ops": {
                    "experiment_design": {"config": {"experiment": str(experiment), "launch": True}}
                }
            },
            "executionMetadata": {"tags": []},
        }
        launched_at = time.time()
        answer = graphql(port, LAUNCH, {"params": params})["data"]["launchPipelineExecution"]
        if answer["__typename"] != "LaunchRunSuccess":
            raise SystemExit(f"launch refused: {answer}")
        print(f"launched sweep_job run {answer['run']['runId']}")
        instance = instance_at(home)

        def sweep_done() -> bool:
            backfills = [
                b for b in instance.get_backfills() if b.backfill_timestamp >= launched_at - 1
            ]
            finished = backfills and all(
                b.status.value not in ("REQUESTED", "CANCELING", "FAILING") for b in backfills
            )
            return bool(finished) and not _busy(instance)

        wait_for("the sweep's backfill", args.timeout, sweep_done, every_s=5)
        print(
            f"backfill done {time.time() - launched_at:.0f} s after Launch; settling "
            f"{args.settle:.0f} s (automation sensor ticks)"
        )
        time.sleep(args.settle)
        wait_for("runs started while settling", args.timeout, lambda: not _busy(instance), 5)
        beside = None
        if args.beside_ui:
            second = write_experiment(folder, args.runs, "orchestration_beside")
            print(f"`bench run` of a second experiment with the UI open; then {args.settle:.0f} s")
            beside = bench_run(home, second, env, args.endurance)
            time.sleep(args.settle)
            wait_for("runs started while settling", args.timeout, lambda: not _busy(instance), 5)
    return instance, launched_at, beside


def bench_run(
    home: Path, experiment: Path, env: dict[str, str], endurance: float
) -> tuple[float, float]:
    """`bench run` of `experiment` on the instance in `home`; returns when it started and
    ended."""
    started = time.time()
    with (home.parent / f"bench_run_{experiment.stem}.log").open("w") as log:
        result = subprocess.run(
            [str(BIN / "bench"), "run", str(experiment), "--endurance-seconds", str(endurance)],
            env={**env, "DAGSTER_HOME": str(home)},
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
        )
    ended = time.time()
    if result.returncode:
        print(f"`bench run` exited {result.returncode}; see {log.name}")
    return started, ended


# --------------------------------------------------------------------------- the analysis


@dataclass
class RunTimes:
    run_id: str
    job: str
    who: str
    partitions: str
    created: float
    starting: float | None = None
    process_up: float | None = None
    started: float | None = None
    ended: float | None = None
    steps: list[tuple[str, float, float]] = field(default_factory=list)  # key, begin, end
    workers: list[tuple[str, float, float]] = field(default_factory=list)  # step process start

    @property
    def first_step(self) -> float | None:
        times = [b for _, b, _ in self.workers] + [b for _, b, _ in self.steps]
        return min(times) if times else None

    @property
    def last_step(self) -> float | None:
        return max((e for _, _, e in self.steps), default=None)

    def step_keys(self) -> set[str]:
        return {key for key, _, _ in self.steps}


def who_launched(tags: dict[str, str], job: str) -> str:
    # The automation sensor emits backfills too: its runs carry both tags.
    if tags.get("dagster/from_automation_condition") or "dagster/sensor_name" in tags:
        return "automation sensor"
    if "dagster/backfill" in tags:
        return "backfill"
    if "dagster/schedule_name" in tags:
        return f"schedule {tags['dagster/schedule_name']}"
    if "bench/pid" in tags:
        return "bench run"
    if job == "sweep_job":
        return "Launch (UI)"
    return "other"


def read_runs(instance: dg.DagsterInstance, since: float) -> list[RunTimes]:
    after = datetime.fromtimestamp(since - 1, tz=UTC)
    records = instance.get_run_records(dg.RunsFilter(created_after=after))
    runs = []
    for record in sorted(records, key=lambda r: r.create_timestamp):
        run = record.dagster_run
        tags = dict(run.tags)
        start, end = (
            tags.get("dagster/asset_partition_range_start"),
            tags.get("dagster/asset_partition_range_end"),
        )
        partitions = f"{start} … {end}" if start else tags.get("dagster/partition", "")
        times = RunTimes(
            run.run_id,
            run.job_name,
            who_launched(tags, run.job_name),
            partitions.replace("orchestration.", ""),
            record.create_timestamp.timestamp(),
        )
        launched_by_queue = False
        open_steps: dict[str, float] = {}
        open_workers: dict[str, float] = {}
        for entry in instance.all_logs(run.run_id):
            event = entry.dagster_event
            if event is None:
                continue
            kind, at, step = event.event_type, entry.timestamp, entry.step_key or ""
            if kind in (ET.RUN_ENQUEUED, ET.RUN_STARTING):
                launched_by_queue = True
                times.starting = at if kind == ET.RUN_STARTING else times.starting
            elif kind == ET.ENGINE_EVENT and entry.message.startswith("Started process for run"):
                times.process_up = at
            elif kind == ET.RUN_START:
                times.started = at
                # Executed in process (`bench run`): no queue and no launcher, so the time
                # from its creation on is the run starting.
                if not launched_by_queue:
                    times.starting = times.created
            elif kind in RUN_END:
                times.ended = at
            elif kind == ET.STEP_WORKER_STARTING:
                open_workers[step] = at
            elif kind in STEP_BEGIN:
                if step in open_workers:
                    times.workers.append((step, open_workers.pop(step), at))
                open_steps[step] = at
            elif kind in STEP_END and step in open_steps:
                times.steps.append((step, open_steps.pop(step), at))
        runs.append(times)
    return runs


def _union(intervals: Iterable[tuple[float, float]]) -> float:
    total, reach = 0.0, -math.inf
    for begin, end in sorted(intervals):
        if end <= reach:
            continue
        total += end - max(begin, reach)
        reach = end
    return total


def split_wall(runs: list[RunTimes], begin: float, end: float) -> dict[str, float]:
    """The wall time [begin, end] split by what is going on (CATEGORIES, first match wins)."""
    spans: list[tuple[int, float, float]] = []
    rank = {name: i for i, (name, _) in enumerate(CATEGORIES)}
    for run in runs:
        close = run.ended or end
        launched = run.starting or close
        spans.append((rank["queued"], run.created, launched))
        first = run.first_step
        if first is not None:
            spans.append((rank["run_start"], launched, first))
        spans.append((rank["in_run"], first or launched, close))
        if run.last_step is not None:
            spans.append((rank["run_end"], run.last_step, close))
        spans += [(rank["step_process"], b, e) for _, b, e in run.workers]
        spans += [(rank["steps"], b, e) for _, b, e in run.steps]
    cuts = sorted({begin, end, *(t for _, b, e in spans for t in (b, e) if begin < t < end)})
    totals = dict.fromkeys(rank, 0.0)
    for left, right in itertools.pairwise(cuts):
        middle = (left + right) / 2
        active = [r for r, b, e in spans if b <= middle < e]
        totals[CATEGORIES[min(active)][0] if active else "idle"] += right - left
    return totals


def warehouse_builds(runs: list[RunTimes]) -> list[RunTimes]:
    return [r for r in runs if WAREHOUSE_STEP in r.step_keys()]


def sweep_end(runs: list[RunTimes], own: Callable[[RunTimes], bool]) -> float:
    """When the warehouse was updated after every run: the end of the last run of the sweep
    itself (`own`), or of the first warehouse build after the last per-run step if that
    came later (another path built it)."""
    per_run = [e for r in runs for k, _, e in r.steps if k in PER_RUN_STAGES]
    last_stage = max(per_run, default=0.0)
    ends = [r.ended or 0.0 for r in runs if own(r)]
    after = [r for r in warehouse_builds(runs) if r.first_step and r.first_step >= last_stage]
    if after:
        ends.append(min(after, key=lambda r: r.first_step or 0.0).ended or 0.0)
    return max(ends)


def report(title: str, runs: list[RunTimes], begin: float, end: float) -> None:
    wall = end - begin
    print(f"\n=== {title}")
    print(f"wall time, Launch → warehouse updated: {wall:7.1f} s")
    in_window = [r for r in runs if r.created <= end]
    steps = [(k, b, e) for r in in_window for k, b, e in r.steps if b < end]
    busy = _union((max(b, begin), min(e, end)) for _, b, e in steps)
    print(f"stage steps executing (union):        {busy:7.1f} s")
    print(f"overhead share = 1 - steps/wall:      {1 - busy / wall:7.1%}")
    print("\nwhere the wall time goes (each instant counted once):")
    for name, label in CATEGORIES:
        seconds = split_wall(in_window, begin, end)[name]
        print(f"  {seconds:7.1f} s  {seconds / wall:6.1%}  {label}")
    print("\nsteps' own time per stage (sum over steps; steps of parallel runs overlap):")
    per_stage: dict[str, list[float]] = defaultdict(list)
    for key, b, e in steps:
        per_stage[key].append(e - b)
    for key, times in per_stage.items():
        print(f"  {sum(times):7.1f} s  {len(times):3d} step(s)  {key}")
    print(f"  {sum(sum(t) for t in per_stage.values()):7.1f} s  total")
    print(
        "\nper Dagster run, seconds: queued = created → launched; start = launched → first "
        "step,\nof which proc = the run worker's process up (python, dagster), load = code "
        "location\nloaded and run started (RUN_START); steps = own time of its steps; stepproc = "
        "step\nsubprocesses starting; overhead = 1 - steps / total"
    )
    print(
        f"  {'run':8} {'who':12} {'job':15} {'partitions':14} {'queued':>6} {'start':>6}"
        f" {'proc':>5} {'load':>5} {'steps':>6} {'stepproc':>8} {'total':>6} {'overhead':>8}"
    )
    previous_end: float | None = None
    gaps = []
    for run in in_window:
        close = run.ended or end
        launched = run.starting or close
        proc = f"{run.process_up - launched:5.1f}" if run.process_up else ""
        load = f"{run.started - run.process_up:5.1f}" if run.process_up and run.started else ""
        first = run.first_step
        own = _union((b, e) for _, b, e in run.steps)
        worker = sum(e - b for _, b, e in run.workers)
        total = close - run.created
        print(
            f"  {run.run_id[:8]} {run.who[:12]:12} {run.job[:15]:15} {run.partitions[:14]:14}"
            f" {launched - run.created:6.1f} {(first or close) - launched:6.1f}"
            f" {proc:>5} {load:>5} {own:6.1f} {worker:8.1f}"
            f" {total:6.1f} {1 - own / total if total else 0:8.0%}"
        )
        if previous_end is not None and run.created > previous_end:
            gaps.append(run.created - previous_end)
        previous_end = max(previous_end or 0.0, close)
    if gaps:
        print(
            f"gaps with no run between one run's end and the next run's creation: "
            f"{len(gaps)}, {sum(gaps):.1f} s in all ({', '.join(f'{g:.0f}' for g in gaps)})"
        )
    builds = warehouse_builds(runs)
    print(f"\nwarehouse built {len(builds)} time(s) (runs that executed the `warehouse` step):")
    for who, n in Counter(r.who for r in builds).items():
        print(f"  {n} by {who}")
    for run in builds:
        at = (run.first_step or run.created) - begin
        where = "after" if run.first_step and run.first_step > end else "before"
        print(f"    run {run.run_id[:8]} ({run.who}) started it at +{at:.0f} s, {where} the end")


def sensor_ticks(instance: dg.DagsterInstance, begin: float, end: float) -> None:
    """The sensors' ticks in [begin, end]: how often the daemon evaluated them, for how long
    in all (CPU taken from the steps on a small machine), and the runs they requested."""
    for state in instance.all_instigator_state(instigator_type=InstigatorType.SENSOR):
        ticks = instance.get_ticks(
            state.instigator_origin_id, state.selector_id, after=begin, before=end
        )
        if ticks:
            busy = sum(t.end_timestamp - t.timestamp for t in ticks if t.end_timestamp)
            requested = sum(len(t.run_ids) for t in ticks)
            print(
                f"sensor {state.instigator_name}: {len(ticks)} tick(s), {busy:.1f} s evaluating "
                f"in all, {requested} run(s) requested"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--endurance", type=float, default=1.0, help="bot endurance window, seconds"
    )
    parser.add_argument("--dagster-yaml", type=Path, default=ROOT / "dagster_home" / "dagster.yaml")
    parser.add_argument(
        "--settle", type=float, default=75.0, help="seconds to watch after the backfill ends"
    )
    parser.add_argument("--timeout", type=float, default=5400.0)
    parser.add_argument("--skip-ui", action="store_true", help="measure only `bench run`")
    parser.add_argument("--skip-bench-run", action="store_true")
    parser.add_argument(
        "--beside-ui",
        action="store_true",
        help="also `bench run` a second experiment on the UI's instance while its daemon runs "
        "(do the automation sensor's conditions build the warehouse between its chunks?)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    if not args.dagster_yaml.is_file():
        raise SystemExit(f"--dagster-yaml: no such file: {args.dagster_yaml}")

    folder = Path(tempfile.mkdtemp(prefix="bench-orchestration-"))
    print(
        f"{args.runs} runs, bot endurance {args.endurance:g} s, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}; folder {folder}"
    )
    try:
        experiment = write_experiment(folder, args.runs)
        if not args.skip_ui:
            env = {
                **os.environ,
                "BENCH_DATA_DIR": str(folder / "ui" / "data"),
                "BENCH_BOT_ENDURANCE_S": f"{args.endurance:g}",
            }
            instance, launched, beside = sweep_through_ui(
                folder, experiment, env, args.dagster_yaml, args
            )
            runs = [r for r in read_runs(instance, launched) if not beside or r.created < beside[0]]
            sweep = {r.run_id for r in runs if r.who in ("Launch (UI)", "backfill")}
            end = sweep_end(runs, lambda r: r.run_id in sweep)
            report(f"UI Launch → backfill ({args.dagster_yaml})", runs, launched, end)
            for backfill in instance.get_backfills():
                if backfill.backfill_timestamp >= launched - 1:
                    done = getattr(backfill, "backfill_end_timestamp", None)
                    when = f", marked so at +{done - launched:.0f} s" if done else ""
                    print(f"backfill {backfill.backfill_id}: {backfill.status.value}{when}")
            sensor_ticks(instance, launched, end)
            if beside:
                runs = read_runs(instance, beside[0])
                report("`bench run` beside an open `bench ui` (daemon, sensor)", runs, *beside)
                sensor_ticks(instance, *beside)
        if not args.skip_bench_run:
            env = {
                **os.environ,
                "BENCH_DATA_DIR": str(folder / "bench_run" / "data"),
                "BENCH_BOT_ENDURANCE_S": f"{args.endurance:g}",
            }
            home = make_home(folder / "bench_run", args.dagster_yaml)
            started, ended = bench_run(home, experiment, env, args.endurance)
            runs = read_runs(instance_at(home), started)
            report("`bench run` (in process, no daemon)", runs, started, ended)
            from bench_pipeline.runner import CHUNK

            print(
                f"`bench run` by its code: {math.ceil(args.runs / CHUNK)} chunk run(s) of at "
                f"most {CHUNK} runs, then one run that builds the warehouse once; a daemon on "
                "the same instance (a `bench ui` left open) could add sensor builds between "
                "chunks (--beside-ui measures that)."
            )
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
