"""`bench`: the command line of the benchmark pipeline.

Why one module of ~900 lines: it is the one typer app, a short function per command
(docs/interfaces.md lists them) that parses options and imports its work lazily, so that
`bench --help` and the quick commands start fast; the work itself lives in the stages'
packages.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bench_pipeline import settings

app = typer.Typer(
    help="Benchmark of AI coding agents building a browser Tetris: design experiments, "
    "run the pipeline, query the warehouse.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
out = Console()
err = Console(stderr=True)

EXIT_BAD_INPUT = 2
# `bench sql`'s default time limit: minutes of an analyst's patience, far more than any
# query over 100,000 runs takes, and `range(1e15)` no longer runs until someone kills it.
SQL_TIMEOUT_S = 300.0

# Dagster flags beta parameters we use on purpose (backfill_policy); users need not see it.
warnings.filterwarnings("ignore", message=".*is currently in beta.*")


def _fail(message: str, code: int = 1) -> typer.Exit:
    # Messages quote levels like [low, high]: escape them so rich does not read markup.
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def _json_default(value: Any) -> Any:
    if isinstance(value, dt.date | dt.datetime | dt.time | dt.timedelta):
        return str(value)
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def _finite(value: Any) -> tuple[Any, int]:
    """`value` with every NaN or infinite float replaced by None, and how many were."""
    if isinstance(value, float):
        return (value, 0) if math.isfinite(value) else (None, 1)
    if isinstance(value, dict):
        pairs = [(k, _finite(v)) for k, v in value.items()]
        return {k: v for k, (v, _) in pairs}, sum(n for _, (_, n) in pairs)
    if isinstance(value, list | tuple):
        items = [_finite(v) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    return value, 0


def _print_json(value: Any) -> int:
    """`value` as one line of strict JSON on stdout; returns how many NaN or infinite floats
    became null (Python would print them as bare `NaN`/`Infinity`, which no JSON parser but
    Python's reads)."""
    clean, replaced = _finite(value)
    sys.stdout.write(json.dumps(clean, default=_json_default, allow_nan=False) + "\n")
    return replaced


def _show(value: Any) -> str:
    """A value as it is written in an experiment file (YAML's true/false)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _ensure_dagster_home() -> Path:
    home = settings.dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    config = home / "dagster.yaml"
    project = settings.project_root() / "dagster_home" / "dagster.yaml"
    if not config.exists() and project.is_file():
        # Without one, Dagster silently uses its bare defaults (no run queue limit, no run
        # monitoring, telemetry on) and warns in every process it starts. The project's
        # settings are what its commands and docs assume; say once what is used, and where.
        shutil.copyfile(project, config)
        err.print(
            f"DAGSTER_HOME={home} had no dagster.yaml: using the project's settings (SQLite "
            f"storage in that folder, at most 4 runs at once, run monitoring), copied from "
            f"{project} to {config}; edit it there",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    return home


def _pool_limits(file: Path | None) -> list:
    """The limits to store: this machine's (or `file`'s), with BENCH_POOL_* over either."""
    from bench_pipeline.orchestration import file_pool_limits, pool_limits

    try:
        return pool_limits() if file is None else file_pool_limits(file)
    except ValueError as error:  # a bad BENCH_POOL_* value or pools file
        raise _fail(str(error), EXIT_BAD_INPUT) from None


def _fit_pools(file: Path | None = None) -> list[str]:
    """Give the instance's pools limits fitted to this machine, or those of a pools file,
    which replace limits set in the UI (see `bench pools`)."""
    limits = _pool_limits(file)  # before the instance: bad input fails fast
    import dagster as dg

    from bench_pipeline.orchestration import apply_pool_limits

    with dg.DagsterInstance.get() as instance:
        return apply_pool_limits(instance, limits, force=file is not None)


@app.command()
def pools(
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            help="A reviewed pools file (deploy/pools.yaml): store its limits, replacing any "
            "set in the UI. BENCH_POOL_<NAME> still overrides an entry.",
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Change nothing: print the pools whose limit on the instance differs from "
            "the file's (or this machine's) and exit 1; exit 0 when in sync.",
        ),
    ] = False,
) -> None:
    """Show (and store in the Dagster instance) how many steps of each kind run at once."""
    from bench_pipeline.orchestration import POOLS

    # A bad pools file is refused before anything is written to DAGSTER_HOME (one line,
    # the home left as it was).
    _pool_limits(file)
    _ensure_dagster_home()
    if check:
        import dagster as dg

        from bench_pipeline.orchestration import check_pool_limits

        limits = _pool_limits(file)
        with dg.DagsterInstance.get() as instance:
            drift = check_pool_limits(instance, limits)
        wanted = file if file is not None else "this machine's limits"
        if drift:
            for line in drift:
                out.print(line, highlight=False, markup=False)
            raise _fail(f"{len(drift)} pool(s) differ from {wanted}")
        out.print(f"{len(limits)} pool(s) as in {wanted}", highlight=False, markup=False)
        return
    table = Table(title=f"concurrency pools (DAGSTER_HOME={settings.dagster_home()})")
    for column in ("pool", "limit", "what it bounds"):
        table.add_column(column)
    for line in _fit_pools(file):
        pool, rest = line.split(": ", 1)
        table.add_row(pool, rest, POOLS[pool])
    out.print(table)
    if file is None:
        out.print("change one with BENCH_POOL_<NAME>=N, or in the UI: Deployment → Concurrency")
    else:
        out.print(f"limits of {file}; change one there and run this again")
    # What the pools would be asked to run next without anyone launching it.
    for line in _automation_lines():
        out.print(f"automation: {line}", highlight=False, markup=False)


def _automation_outlook() -> tuple[dict[str, Any], list[str]]:
    import dagster as dg

    from bench_pipeline.orchestration.project import automation_outlook

    with dg.DagsterInstance.get() as instance:
        return automation_outlook(instance)


def _automation_lines() -> list[str]:
    return _automation_outlook()[1]


@app.command()
def status(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """What the automation would launch next without anyone asking, and what it would cost
    at the registry's prices: the nightly new-model schedule and the automation sensor."""
    _ensure_dagster_home()
    outlook, lines = _automation_outlook()
    if as_json:
        sys.stdout.write(json.dumps(outlook, default=_json_default) + "\n")
        return
    out.print(f"DAGSTER_HOME={settings.dagster_home()}", highlight=False, markup=False)
    for line in lines:
        out.print(line, highlight=False, markup=False)
    estimate = outlook["schedule"]["estimate"]
    if estimate:
        for model in estimate["by_model"]:
            out.print(
                f"  {model['model']} ({model['agent']}): {model['runs']} runs x "
                f"${model['usd_per_run']:.2f} = ${model['usd']:.2f} (caps ${model['cap_usd']:.2f}; "
                f"tokens: {model['basis']})",
                highlight=False,
                markup=False,
            )


@app.command()
def design(
    experiment_file: Annotated[
        Path, typer.Argument(help="Experiment YAML (see docs/experiments.md).")
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the design as one JSON object.")
    ] = False,
) -> None:
    """Design an experiment file into cells and runs (nothing is written)."""
    from bench_pipeline.design import DesignError, design_experiment, load_experiment

    try:
        experiment = load_experiment(experiment_file)
        result = design_experiment(experiment)
    except DesignError as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    if as_json:
        _print_json(result.to_json_dict())
        return
    # Sixteen columns do not fit a terminal: each cell is shown as its difference from the
    # baseline, which is also how a designed experiment is read.
    baseline = experiment.baseline_config()
    table = Table(
        title=f"{result.experiment}: {len(result.cells)} cells × {experiment.repeats} repeats "
        f"= {len(result.runs)} runs"
    )
    table.add_column("cell_id", no_wrap=True)
    table.add_column("designs")
    table.add_column("differs from the baseline in")
    for cell in result.cells:
        diff = [f"{a}={_show(v)}" for a, v in cell.config.items() if v != baseline.get(a)]
        table.add_row(cell.cell_id, ", ".join(cell.designs), ", ".join(diff) or "(baseline)")
    out.print(table)
    out.print(
        "baseline: " + ", ".join(f"{a}={_show(v)}" for a, v in baseline.items()), highlight=False
    )
    counts = ", ".join(f"{k}: {v}" for k, v in result.counts_by_design().items())
    out.print(f"cells per design: {counts} (a cell shared by designs counts once in the total)")


@app.command(
    help="Run read-only SQL on the DuckDB warehouse (no file, network or extension access)."
    "\n\n"
    f"Warehouse: {settings.warehouse_path()} (set BENCH_WAREHOUSE or BENCH_DATA_DIR to move it)."
)
def sql(
    query: Annotated[
        str, typer.Argument(help='SQL to run, e.g. "select * from stg_runs limit 5".')
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON list, one object per row.")
    ] = False,
    db: Annotated[Path | None, typer.Option(help="Warehouse file (default: see above).")] = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0,
            envvar="BENCH_SQL_TIMEOUT_S",
            help="Stop the query after this many seconds (0: no limit).",
        ),
    ] = SQL_TIMEOUT_S,
) -> None:
    import duckdb

    from bench_pipeline.warehouse.build import QueryTimeout, WarehouseLockedError
    from bench_pipeline.warehouse.build import query as run_query

    path = db or settings.warehouse_path()
    try:
        columns, rows = run_query(path, query, timeout_s=timeout or None)
    except (FileNotFoundError, WarehouseLockedError, QueryTimeout) as error:
        raise _fail(str(error)) from None
    except ValueError as error:  # an empty query
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    except duckdb.Error as error:
        # Refused host access (COPY TO, ATTACH, read_text, INSTALL, SET) lands here too.
        raise _fail(str(error).splitlines()[0], EXIT_BAD_INPUT) from None
    if as_json:
        objects = [dict(zip(columns, row, strict=True)) for row in rows]
        replaced = _print_json(objects)
        if replaced:
            err.print(f"note: {replaced} NaN or infinite values printed as null", highlight=False)
        return
    table = Table(caption=f"{len(rows)} rows")
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    out.print(table)


SHELL_BANNER = """\
Warehouse {path}, opened read-only: nobody is locked out, the pipeline included.
  con     a read-only DuckDB connection to it     duckdb  the duckdb module
Query it:  con.sql("select run_id, status, score from fct_runs limit 5").show()
Tables:    con.sql("show tables").show()      To pandas: con.sql("...").df()
Ctrl-D leaves. A warehouse the pipeline swapped in since shows after you reconnect
(close first: DuckDB hands an open file's connection back):
  con.close(); con = duckdb.connect("{path}", read_only=True)"""


@app.command(
    help="Open the warehouse read-only for exploring: the duckdb command-line tool when one is "
    "on PATH, else a Python prompt with a read-only connection `con`. Read-only connections "
    "never lock out `bench sql`, other analysts or the pipeline."
    "\n\n"
    f"Warehouse: {settings.warehouse_path()} (set BENCH_WAREHOUSE or BENCH_DATA_DIR to move it)."
)
def shell(
    db: Annotated[Path | None, typer.Option(help="Warehouse file (default: see above).")] = None,
    python: Annotated[
        bool, typer.Option("--python", help="A Python prompt even when duckdb is on PATH.")
    ] = False,
) -> None:
    import code
    import shutil

    from bench_pipeline.warehouse.build import WarehouseLockedError, connect_read_only

    path = db or settings.warehouse_path()
    if not path.is_file():  # the words of `bench sql` (warehouse.build.query)
        raise _fail(f"no warehouse at {path}: run `make run` (or `bench run`) first")
    path = path.resolve()
    try:
        # Opened here for the duckdb tool too: a locked file then gets our advice, not
        # the tool's bare lock error.
        con = connect_read_only(path, sandboxed=False)
    except WarehouseLockedError as error:
        raise _fail(str(error)) from None
    duckdb_tool = None if python else shutil.which("duckdb")
    if duckdb_tool is not None:
        con.close()
        os.execv(duckdb_tool, [duckdb_tool, "-readonly", str(path)])
    import duckdb

    if sys.stdin.isatty():
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (line editing and history at the prompt)
    try:
        code.interact(
            banner=SHELL_BANNER.format(path=path),
            local={"con": con, "duckdb": duckdb},
            exitmsg="",
        )
    finally:
        con.close()


# Seconds `dagster dev` gets to stop its webserver, daemon and code servers after a stop
# signal before `bench ui` kills what is left (it usually needs a few).
UI_STOP_GRACE_S = 40.0
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _live_group_members(pgid: int) -> list[int]:
    """The processes of group `pgid` that still run (zombies, already dead, are left out)."""
    proc = Path("/proc")
    if not proc.is_dir():  # no /proc: all we can ask is whether the group still exists
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        return [pgid]
    members = []
    for stat in proc.glob("[0-9]*/stat"):
        try:
            # After the command's closing parenthesis: state, ppid, pgrp, ...
            state, _ppid, group = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue  # the process ended while we read
        if int(group) == pgid and state != "Z":
            members.append(int(stat.parent.name))
    return members


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


def _wait_group_gone(pgid: int, deadline: float) -> bool:
    while _live_group_members(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


def _run_until_stopped(command: list[str], cwd: Path) -> int:
    """Run `command` in a process group of its own until it exits or a stop signal comes.

    A stop signal (SIGINT, SIGTERM, SIGHUP) reaches the whole group as a SIGINT, which is
    what Ctrl-C on `dagster dev` in a terminal does and what it shuts down cleanly on. Why
    not exec `dagster dev`: a background job inherits SIGINT ignored, and `dagster dev`
    then ignores SIGTERM too (it gives SIGTERM the handler SIGINT has). Our handlers reset
    to the default on exec, so the children take SIGINT again. What is still alive
    UI_STOP_GRACE_S later, or at a second stop signal, is killed. Returns the exit code.
    """
    child: subprocess.Popen[bytes] | None = None
    stop: dict[str, Any] = {"signals": [], "at": None, "forwarded": False}

    def forward() -> None:
        assert child is not None
        if not stop["forwarded"]:
            stop["forwarded"] = True
            _signal_group(child.pid, signal.SIGINT)
        elif len(stop["signals"]) > 1:  # asked twice: stop at once
            _signal_group(child.pid, signal.SIGKILL)

    def on_stop(signum: int, _frame: object) -> None:
        stop["signals"].append(signum)
        stop["at"] = stop["at"] or time.monotonic()
        if child is not None:
            forward()

    for signum in _STOP_SIGNALS:
        if signum == signal.SIGHUP and signal.getsignal(signum) == signal.SIG_IGN:
            continue  # started under nohup: keep running when the terminal goes
        signal.signal(signum, on_stop)
    # Its own group: a stop reaches dagster dev's children too, and never the shell that
    # started us (a non-interactive shell's background jobs share its group).
    child = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL, process_group=0)
    if stop["signals"]:  # a signal came while it was starting
        forward()
    announced = killed = False
    while True:
        try:
            code = child.wait(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            pass
        if stop["at"] is None:
            continue
        if not announced:
            announced = True
            name = signal.Signals(stop["signals"][0]).name
            err.print(f"[cyan]•[/] {name}: stopping the Dagster UI (a second signal kills it)")
        if not killed and time.monotonic() - stop["at"] > UI_STOP_GRACE_S:
            err.print(f"[yellow]dagster dev did not stop in {UI_STOP_GRACE_S:.0f} s: killing it")
            _signal_group(child.pid, signal.SIGKILL)
            killed = True
    # dagster dev is gone; a child it left behind (a code server, a run worker) is not.
    if not _wait_group_gone(child.pid, time.monotonic() + 5):
        _signal_group(child.pid, signal.SIGTERM)
        if not _wait_group_gone(child.pid, time.monotonic() + 5):
            _signal_group(child.pid, signal.SIGKILL)
            _wait_group_gone(child.pid, time.monotonic() + 5)
    if killed or len(stop["signals"]) > 1:
        return 1
    if code < 0:  # killed by a signal someone sent it directly
        return 128 - code
    return code


@app.command()
def ui(
    port: Annotated[int, typer.Option(help="Port of the web UI.")] = 3000,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
) -> None:
    """Open the Dagster UI (dagster dev) on this project. Ctrl-C, or kill -INT / -TERM of
    its PID, stops it and every process it started."""
    # Stop on SIGINT and SIGTERM while getting ready too, also as a background job, which
    # inherits SIGINT ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    from bench_pipeline.orchestration.daemon import IntervalError, backfill_interval_s

    try:
        backfill_interval_s()
    except IntervalError as bad:
        err.print(f"[red]error:[/] {escape(str(bad))}")
        raise typer.Exit(2) from None
    home = _ensure_dagster_home()
    for line in _fit_pools():
        out.print(f"pool {line}")
    import dagster as dg

    from bench_pipeline.runner import start_up

    with dg.DagsterInstance.get() as instance:
        start_up(instance, lambda m: err.print(f"[cyan]•[/] {escape(m)}"))
    # `dagster dev`, whose daemon looks at backfills every BENCH_BACKFILL_INTERVAL_S (5 s)
    # instead of Dagster's fixed 30 s (bench_pipeline/orchestration/daemon.py).
    command = [
        sys.executable,
        "-m",
        "bench_pipeline.orchestration.daemon",
        "dev",
        "-w",
        str(settings.project_root() / "workspace.yaml"),
    ]
    out.print(f"Dagster UI on http://{host}:{port} (DAGSTER_HOME={home}); Ctrl-C stops it")
    raise typer.Exit(
        _run_until_stopped([*command, "-h", host, "-p", str(port)], settings.project_root())
    )


# Defaults as in bench_pipeline.report.site (PAGE_SIZE, ARCHIVE_MAX_BYTES): importing the
# report package costs seconds, which `bench --help` must not pay; a test keeps them equal.
REPORT_PAGE_SIZE = 200
REPORT_ARCHIVE_MAX_MB = 5.0


@app.command(
    short_help="Build the static results site (leaderboard, compare, run detail, methodology, "
    "bot accuracy) from the warehouse: `bench report --out DIR [--db PATH] [--artifacts DIR]`; "
    "`bench report --help` lists every option.",
    help="Build the static results site (leaderboard, comparisons, one page per run, "
    "methodology, bot accuracy) from the warehouse; it opens from disk or any static host. "
    "See docs/report.md.",
    # -h as well: the argparse parser this command replaced accepted it.
    context_settings={"help_option_names": ["--help", "-h"]},
)
def report(
    site_dir: Annotated[
        Path,
        typer.Option(
            "--out",
            metavar="DIR",
            help="Folder to write the site into (created; an earlier site there is replaced).",
        ),
    ],
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            metavar="PATH",
            help="Warehouse file (default: $BENCH_WAREHOUSE or data/warehouse.duckdb).",
        ),
    ] = None,
    artifacts: Annotated[
        Path | None,
        typer.Option(
            "--artifacts",
            metavar="DIR",
            help="Artifact store (default: $BENCH_ARTIFACTS_DIR or data/artifacts).",
        ),
    ] = None,
    title: Annotated[str, typer.Option("--title", metavar="TITLE", help="Site title.")] = (
        "bench_pipeline results"
    ),
    page_size: Annotated[
        int, typer.Option("--page-size", metavar="N", help="Runs per page of the runs index.")
    ] = REPORT_PAGE_SIZE,
    archive_max_mb: Annotated[
        float,
        typer.Option(
            "--archive-max-mb",
            metavar="MB",
            help="Copy workspace archives up to this size (MB) into the site; larger ones are "
            "named, not copied.",
        ),
    ] = REPORT_ARCHIVE_MAX_MB,
) -> None:
    from bench_pipeline.report.command import report_command

    raise typer.Exit(
        report_command(
            site_dir,
            db=db,
            artifacts=artifacts,
            title=title,
            page_size=page_size,
            archive_max_mb=archive_max_mb,
        )
    )


@app.command()
def evaluate(
    target: Annotated[str, typer.Argument(help="A game directory or an http://127.0.0.1:… URL.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object on stdout.")
    ] = False,
    artifacts: Annotated[
        Path | None, typer.Option(help="Keep screenshots, the event log and console messages here.")
    ] = None,
    endurance_seconds: Annotated[
        float, typer.Option(help="Length of the endurance window.")
    ] = 30.0,
    hard_cap_seconds: Annotated[
        float | None,
        typer.Option(
            help="The evaluation and everything it started end by then, whatever the page "
            "does (default: BENCH_BOT_HARD_CAP_S, else 60; at least 15)."
        ),
    ] = None,
) -> None:
    """Play one Tetris game with the bot and print the sixteen verdicts."""
    from bench_pipeline.bot.browser import BrowserMissingError
    from bench_pipeline.bot.evaluate import evaluate as run_evaluation
    from bench_pipeline.bot.isolate import EvaluationCrashed
    from bench_pipeline.bot.serve import TargetError

    try:
        cap = (
            settings.bot_hard_cap_s()
            if hard_cap_seconds is None
            else settings.check_bot_hard_cap(hard_cap_seconds, "--hard-cap-seconds")
        )
    except ValueError as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    # SIGTERM ends the evaluation as Ctrl-C does: its browser killed, its scratch removed.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        result = run_evaluation(target, endurance_seconds, artifacts, cap)
    except (TargetError, BrowserMissingError, EvaluationCrashed) as error:
        raise _fail(str(error)) from None
    except KeyboardInterrupt:
        raise _fail(
            "interrupted: the evaluation was stopped, its browser ended and its scratch "
            "folders removed; no verdicts",
            130,
        ) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    if as_json:
        _print_json(result.to_json())
        return
    _print_evaluation(target, result.to_json())


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _print_evaluation(target: str, data: dict) -> None:
    cal = data["calibration"]
    out.print(f"[bold]{target}[/]: gameplay score {data['gameplay_score']} ({data['duration_s']}s)")
    out.print(
        f"renderer={cal['renderer']} grid={cal['grid']} start={cal['start']} "
        f"score={cal['score_source']}",
        highlight=False,
    )
    out.print(f"controls: {cal['controls']}", highlight=False)
    colours = {"PASS": "green", "FAIL": "red", "INCONCLUSIVE": "yellow"}
    table = Table()
    table.add_column("test")
    table.add_column("verdict")
    table.add_column("why")
    for test, verdict in data["tests"].items():
        table.add_row(test, f"[{colours[verdict]}]{verdict}[/]", escape(data["reasons"][test]))
    out.print(table)


@app.command()
def rejudge(
    path: Annotated[
        Path,
        typer.Argument(help="An observations.json, or a folder: every observations.json below it."),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per log on stdout, a line each.")
    ] = False,
) -> None:
    """Derive the sixteen verdicts again from saved observation logs, with no browser
    (docs/bot.md, *The observation log*)."""
    from bench_pipeline.bot.rejudge import LogError, find_logs, read_log
    from bench_pipeline.bot.rejudge import rejudge as rejudge_log

    try:
        paths = find_logs(path)
    except LogError as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    bad = 0
    for found in paths:
        try:
            log = read_log(found)
        except LogError as error:
            err.print(f"[red]error[/]: {escape(str(error))}")
            bad += 1
            continue
        data = rejudge_log(log).to_json()
        data["observations"] = str(found)
        data["observed_by"] = log.bot_version
        if as_json:
            _print_json(data)
        elif len(paths) == 1:
            _print_evaluation(log.target or str(found), data)
        else:
            verdicts = " ".join(v[0] for v in data["tests"].values())
            out.print(f"{data['gameplay_score']:6.2f}  {verdicts}  {escape(str(found))}")
    if bad:
        raise typer.Exit(EXIT_BAD_INPUT)


@app.command()
def run(
    experiment_file: Annotated[Path, typer.Argument(help="Experiment YAML to run.")] = Path(
        "experiments/demo.yaml"
    ),
    endurance_seconds: Annotated[
        float, typer.Option(help="Seconds of continuous play for the bot's endurance test.")
    ] = 30.0,
) -> None:
    """Run the main job: design the experiment; per run the agent, the sandboxed build and
    the bot; then build the warehouse."""
    from bench_pipeline.design import DesignError

    try:
        settings.bot_hard_cap_s()  # read by the bot's step: a bad value is said up front
    except ValueError as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    _ensure_dagster_home()
    _fit_pools()
    import dagster as dg

    from bench_pipeline.runner import run_main

    try:
        with dg.DagsterInstance.get() as instance:
            summary = run_main(
                experiment_file.resolve(),
                instance,
                progress=lambda m: err.print(f"[cyan]•[/] {escape(m)}"),
                endurance_s=endurance_seconds,
            )
    except DesignError as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    except RuntimeError as error:
        raise _fail(str(error)) from None
    out.print(
        f"[bold green]done[/]: {summary.experiment}: {summary.runs} runs ({summary.new_runs} new)"
    )
    table = Table(title="warehouse tables")
    table.add_column("table")
    table.add_column("rows", justify="right")
    for name, rows in summary.tables.items():
        table.add_row(name, str(rows))
    out.print(table)
    _print_results(summary.warehouse, summary.experiment)
    out.print(f"warehouse: {summary.warehouse}")
    out.print(
        'query it:  bench sql "select run_id, status, build_ok, gameplay_score, cost_usd '
        'from fct_runs"'
    )
    if summary.site is not None:
        out.print(f"site:      {summary.site.as_uri()}  (open it in a browser; no server)")
    for line in summary.repaired:
        out.print(f"recomputed {escape(line)} (its record had been quarantined)")
    for line in summary.quarantined:
        # Named on stdout and stderr: the next `bench run` computes that stage again.
        err.print(f"[yellow]quarantined[/]: {escape(line)}")
    out.print(f"UI:        bench ui  (DAGSTER_HOME={settings.dagster_home()})")
    if summary.failed:
        for line in summary.failed:
            err.print(f"[red]failed[/]: {escape(line)}")
        raise typer.Exit(1)


@app.command()
def worker(
    experiment_file: Annotated[Path, typer.Argument(help="Experiment YAML to run.")],
    endurance_seconds: Annotated[
        float | None,
        typer.Option(
            help="Seconds of continuous play for the bot's endurance test "
            "(default: BENCH_BOT_ENDURANCE_S, else 30)."
        ),
    ] = None,
    batch: Annotated[int, typer.Option(help="Runs to claim at once.")] = 2,
    lease_seconds: Annotated[
        float,
        typer.Option(help="A claim whose worker has been silent this long is taken over."),
    ] = 900.0,
    name: Annotated[
        str | None, typer.Option(help="This worker's name in the claims (default host-pid-random).")
    ] = None,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Make the sweep's failed runs claimable again.")
    ] = False,
    build_warehouse: Annotated[
        bool,
        typer.Option("--warehouse/--no-warehouse", help="Update the warehouse at the end."),
    ] = True,
) -> None:
    """One of several workers running a sweep together through an object store
    (BENCH_ARTIFACTS_URL) and the Dagster instance's Postgres; see docs/deploy.md."""
    from bench_pipeline.design import DesignError
    from bench_pipeline.sharing.claims import WorkerSetupError
    from bench_pipeline.sharing.remote import URL_ENV, RemoteStore, RemoteStoreError

    try:
        remote = RemoteStore.from_env()
    except RemoteStoreError as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    if remote is None:
        raise _fail(
            f"`bench worker` needs {URL_ENV}, the shared object store (e.g. "
            "s3://bucket/bench/artifacts; endpoint and keys from AWS_ENDPOINT_URL, "
            "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); on one machine use `bench run`",
            EXIT_BAD_INPUT,
        )
    _ensure_dagster_home()
    _fit_pools()
    import dagster as dg

    from bench_pipeline.sharing.worker import run_worker

    try:
        with dg.DagsterInstance.get() as instance:
            summary = run_worker(
                experiment_file.resolve(),
                instance,
                remote,
                name=name,
                batch=batch,
                lease_s=lease_seconds,
                endurance_s=endurance_seconds,
                retry_failed=retry_failed,
                build=build_warehouse,
                progress=lambda m: err.print(f"[cyan]•[/] {escape(m)}"),
            )
    except (DesignError, RemoteStoreError, WorkerSetupError, ValueError) as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    except RuntimeError as error:
        raise _fail(str(error)) from None
    out.print(
        f"[bold green]done[/]: worker {escape(summary.worker)}: {summary.experiment}: "
        f"executed {len(summary.executed)} of {summary.runs} runs; claims "
        + ", ".join(f"{k} {v}" for k, v in sorted(summary.claims.items())),
        highlight=False,
    )
    for line in summary.taken_over:
        out.print(f"took over {escape(line)}")
    if summary.warehouse is not None:
        out.print(f"warehouse: {summary.warehouse} (built from the bucket's Parquet)")
    for line in summary.failed:
        err.print(f"[red]failed[/]: {escape(line)}")
    if summary.failed or summary.lost:
        raise typer.Exit(1)


def _number(value: Any, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _print_results(db: Path, experiment: str) -> None:
    """The leaderboard and the strongest effects on the score, straight from the marts."""
    from bench_pipeline.warehouse.build import query

    _, models = query(
        db,
        "select model, n_scored, score_mean, score_ci_low, score_ci_high, gameplay_score_mean, "
        "quality_score_mean, cost_usd_mean from mart_leaderboard_models "
        'where experiment = ? order by "rank"',
        [experiment],
    )
    board = Table(title=f"leaderboard: {experiment} (mean score, 95 % interval)")
    for column in ("model", "runs", "score", "interval", "gameplay", "quality", "cost $"):
        board.add_column(column, justify="left" if column == "model" else "right")
    for model, n, mean, low, high, gameplay, quality, cost in models:
        board.add_row(
            model,
            str(n),
            _number(mean),
            f"{_number(low)} … {_number(high)}",
            _number(gameplay),
            _number(quality),
            _number(cost, 2),
        )
    out.print(board)
    _, effects = query(
        db,
        "select axis, level, baseline, estimate, ci_low, ci_high, p_adjusted, meaningful "
        "from mart_main_effects where experiment = ? and metric = 'score' "
        "and estimate is not null order by abs(estimate) desc limit 5",
        [experiment],
    )
    table = Table(title="strongest effects on the score (vs the baseline; Holm-adjusted p)")
    for column in ("axis = level", "vs", "effect", "95 % interval", "p adj", "meaningful"):
        table.add_column(column)
    for axis, level, baseline, estimate, low, high, p_adj, meaningful in effects:
        table.add_row(
            f"{axis} = {level}",
            str(baseline),
            f"{estimate:+.1f}",
            f"{_number(low)} … {_number(high)}",
            _number(p_adj, 4),
            "yes" if meaningful else "no",
        )
    out.print(table)
    _print_instrument_suspects(db, experiment)


def _print_instrument_suspects(db: Path, experiment: str) -> None:
    """The effects on the score that may be the bot's, with their notes (docs/analysis.md,
    *Instrument bias*): the strongest effects above are not the agents' when they are."""
    import duckdb

    from bench_pipeline.warehouse.build import query

    try:
        _, notes = query(
            db,
            "select instrument_note from mart_main_effects where experiment = ? "
            "and metric = 'score' and instrument_suspect order by abs(estimate) desc",
            [experiment],
        )
    except duckdb.Error:  # a mart written before the flag existed: nothing to say
        return
    for (note,) in notes:
        out.print(f"instrument? {escape(str(note))}", highlight=False)


@app.command()
def quality(
    directory: Annotated[Path, typer.Argument(help="The project folder to measure.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object on stdout.")
    ] = False,
    install_network: Annotated[
        bool, typer.Option(help="Let the build's npm install use the network.")
    ] = False,
    tool_timeout: Annotated[float, typer.Option(help="Seconds each tool may run.")] = 60.0,
) -> None:
    """Measure the code quality of one project (ESLint, tsc, build, bundle, structure) and
    print the 0-100 quality score."""
    from bench_pipeline.quality import CONTRACT_KEYS, measure_quality
    from bench_pipeline.sandbox import get_sandbox

    if not directory.is_dir():
        raise _fail(f"{directory} is not a directory", EXIT_BAD_INPUT)
    report = measure_quality(
        directory,
        get_sandbox("bubblewrap"),
        install_network=install_network,
        tool_timeout_s=tool_timeout,
    )
    data = report.to_json()
    if as_json:
        _print_json(data)
        return
    out.print(f"[bold]{escape(str(directory))}[/]: quality score {data['quality_score']}")
    table = Table()
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("penalty", justify="right")
    table.add_column("note")
    breakdown = data["quality_breakdown"]
    # The contract keys (docs/quality.md) plus the extras a reader asks about first.
    for key in (
        *CONTRACT_KEYS,
        "ts_errors",
        "cognitive_complexity_max",
        "single_file",
        "entry_point",
    ):
        value = data.get(key)
        table.add_row(
            key,
            "-" if value is None else escape(str(value)),
            str(breakdown.get(key, "")),
            escape(data["unavailable"].get(key, "")),
        )
    out.print(table)
    for note in data["notes"]:
        err.print(f"[yellow]note[/]: {escape(note)}")


@app.command()
def analyze(
    runs_file: Annotated[
        Path,
        typer.Argument(help="CSV or Parquet table with one row per run (docs/interfaces.md §4)."),
    ],
    metric: Annotated[str, typer.Option(help="Numeric column to analyse, e.g. score.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object on stdout.")
    ] = False,
    baseline: Annotated[
        list[str] | None,
        typer.Option(
            "--baseline",
            help="AXIS=LEVEL, repeatable. Default: the axis's most frequent level.",
        ),
    ] = None,
    axis: Annotated[
        list[str] | None,
        typer.Option(
            "--axis",
            help="Analyse exactly these axis columns (repeatable). Default: every column "
            "that is neither an id nor a numeric metric.",
        ),
    ] = None,
    correction: Annotated[
        str, typer.Option(help="holm (family-wise error) or bh (false discovery rate).")
    ] = "holm",
    effect_size: Annotated[
        float, typer.Option(help="Effect, in the metric's units, that the power figure targets.")
    ] = 5.0,
) -> None:
    """Main effects, interactions, noise and power of the axes on one metric (docs/analysis.md)."""
    from bench_pipeline.analysis import AnalysisInputError, read_runs
    from bench_pipeline.analysis import analyze as run_analysis
    from bench_pipeline.analysis.render import report_lines

    baselines: dict[str, str] = {}
    for item in baseline or []:
        name, sep, level = item.partition("=")
        if not sep or not name.strip():
            raise _fail(f"--baseline {item!r}: expected AXIS=LEVEL", EXIT_BAD_INPUT)
        baselines[name.strip()] = level.strip()
    try:
        report = run_analysis(
            read_runs(runs_file),
            metric,
            axes=axis or None,
            baselines=baselines,
            correction=correction,
            effect_size=effect_size,
        )
    except AnalysisInputError as error:
        raise _fail(f"{runs_file}: {error}", EXIT_BAD_INPUT) from None
    if as_json:
        _print_json(report.to_dict())
        return
    for style, text in report_lines(report):
        out.print(escape(text), style=style or None, highlight=False, soft_wrap=True)


warehouse_app = typer.Typer(
    help="The DuckDB warehouse: rebuild it in full from the artifact store.",
    no_args_is_help=True,
)
app.add_typer(warehouse_app, name="warehouse")


@warehouse_app.command(
    "rebuild",
    help="Rebuild every warehouse table from the artifact store (BENCH_ARTIFACTS_DIR, now "
    f"{settings.artifacts_dir()}) into the warehouse (BENCH_WAREHOUSE, now "
    f"{settings.warehouse_path()}): every raw table from the columnar mirror, every SQL model "
    "in full, every data test on every row. Records the mirror does not hold yet (a store of "
    "JSON records only) are compacted first. Exit 0 on success, 1 when a blocking data test "
    "fails (the old warehouse stays live), 2 for a store that cannot be read.",
)
def warehouse_rebuild(
    scan: Annotated[
        bool,
        typer.Option(
            "--scan",
            help="Also list every record file and compact those that changed without a journal "
            "note (edited by hand, or written by an older version). Costs a stat per file.",
        ),
    ] = False,
    artifacts: Annotated[
        Path | None, typer.Option(help="Artifact store (default: see above).")
    ] = None,
    db: Annotated[Path | None, typer.Option(help="Warehouse file (default: see above).")] = None,
) -> None:
    import duckdb

    from bench_pipeline.warehouse.artifacts import ArtifactStore
    from bench_pipeline.warehouse.build import BlockingTestFailure, build_warehouse

    root = artifacts or settings.artifacts_dir()
    path = db or settings.warehouse_path()
    if not root.is_dir():
        raise _fail(f"no artifact store at {root}: set BENCH_ARTIFACTS_DIR", EXIT_BAD_INPUT)
    started = time.monotonic()
    try:
        build = build_warehouse(
            ArtifactStore(root), path, settings.sql_models_dir(), full=True, scan=scan
        )
    except BlockingTestFailure as failure:
        raise _fail(str(failure)) from None
    except (ValueError, OSError) as error:  # a design file that cannot be read, a bad path
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    except duckdb.Error as error:  # e.g. a mirror part whose pages are damaged (footer intact)
        raise _fail(f"the rebuild failed: {str(error).splitlines()[0]}") from None
    for entry in build.quarantined:
        err.print(f"[yellow]quarantined[/] {escape(entry.describe())}")
    for notice in build.notices:
        err.print(f"[yellow]note[/] {escape(notice)}", soft_wrap=True)
    if build.undocumented:
        shown = ", ".join(build.undocumented[:8]) + (" …" * (len(build.undocumented) > 8))
        err.print(
            f"[yellow]warning[/] {len(build.undocumented)} column(s) have no comment (add a "
            f"`-- column:` line to the model's header): {escape(shown)}"
        )
    counts = {t.name: t.rows for t in build.tables}
    out.print(
        f"warehouse {path} rebuilt in {time.monotonic() - started:.1f} s: "
        f"{counts.get('fct_runs', 0)} runs, {counts.get('fct_test_results', 0)} verdicts, "
        f"{len(build.tables)} tables and views, {len(build.quarantined)} records quarantined, "
        f"{len(build.notices)} problems of the store skipped or repaired",
        highlight=False,
    )


if __name__ == "__main__":
    app()
