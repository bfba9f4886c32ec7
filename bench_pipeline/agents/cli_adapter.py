"""Shared machinery of the adapters that run an agent CLI (Claude Code, Codex, any command).

One run: resolve the executable on PATH, prepare a private HOME beside the workspace, run
the CLI under the sandbox with the network on (the agent must reach its model API), stream
its stdout into the transcript file and through a usage meter, stop it from the line hook
when the running cost passes the budget or the turns pass the limit, and turn what
happened into an `AgentOutcome` with one readable message.

Subclasses only say how to build the argv and the environment, and which meter reads the
output (`CliAdapter.build`).
"""

from __future__ import annotations

import abc
import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench_pipeline import settings
from bench_pipeline.agents.base import AgentAdapter, AgentOutcome, AgentSetupError, AgentTask
from bench_pipeline.agents.transcripts import Prices, UsageMeter
from bench_pipeline.sandbox import fdtree
from bench_pipeline.sandbox.base import Sandbox, SandboxPolicy, SandboxResult, sandbox_path
from bench_pipeline.sandbox.egress import allow_hosts_for

# A folder we created as an agent HOME carries this marker; only such a folder is ever
# emptied for a fresh run (a retry must not inherit the previous attempt's sessions).
HOME_MARKER = ".bench-agent-home"
# Agents run npm installs and dev servers: more room than the build-step defaults.
AGENT_MEMORY_MB = 8192
AGENT_MAX_PROCESSES = 512
# A long session prints megabytes of stream-json (tool results carry whole files). Kept in
# memory: 2 MB per stream; the transcript file keeps up to 20x that; killed past 60 MB.
AGENT_OUTPUT_CAP_BYTES = 2_000_000
AGENT_OUTPUT_KILL_BYTES = 60_000_000
STDERR_TAIL_CHARS = 600


def host_env(names: Iterable[str]) -> dict[str, str]:
    """The named variables of the harness's own environment that are set (and not empty)."""
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def allowed_hosts(harness: str, *base_url_vars: str) -> tuple[str, ...]:
    """The harness's egress allow-list (`BENCH_ALLOW_HOSTS_<HARNESS>` or its default), plus
    the host of an API endpoint moved by one of `base_url_vars` (ANTHROPIC_BASE_URL ...)."""
    hosts = list(allow_hosts_for(harness))
    for name in base_url_vars:
        parsed = urlsplit(os.environ.get(name, ""))
        if parsed.hostname:
            port = parsed.port or (80 if parsed.scheme == "http" else 443)
            hosts.append(f"{parsed.hostname}:{port}")
    return tuple(dict.fromkeys(hosts))


def resolve_executable(name: str, install_hint: str) -> Path:
    """The absolute path of the CLI `name`, or AgentSetupError saying how to fix it.

    A bare name is looked for first among the pinned CLIs that `make setup` installs
    (`settings.agent_cli_bin()`: the version the project pins wins over whatever happens to
    be on PATH), then on the harness's PATH. The sandbox starts from a clean environment,
    so the CLI is passed by absolute path.
    """
    if os.sep in name:
        path = Path(name).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return path.absolute()
        raise AgentSetupError(f"`{name}` is not an executable file: {install_hint}")
    pinned = settings.agent_cli_bin() / name
    if pinned.is_file() and os.access(pinned, os.X_OK):
        return pinned
    found = shutil.which(name)
    if found is None:
        raise AgentSetupError(
            f"`{name}` not found on PATH nor in {settings.agent_cli_bin()}: {install_hint}"
        )
    return Path(found).absolute()


def prompt_arg(prompt: str) -> str:
    """The prompt as a command-line argument: one starting with "-" (a markdown list) would be
    read as an option, so it gets a leading newline, which the model does not care about."""
    return "\n" + prompt if prompt.startswith("-") else prompt


def agent_home(task: AgentTask) -> Path:
    """A fresh per-run HOME beside (never inside) the workspace: the CLI's config, sessions
    and caches go there, not into the project the agent builds (nor the user's real HOME)."""
    home = task.transcript_path.parent / "home"
    workspace = task.workspace.resolve()
    if home.resolve().is_relative_to(workspace):
        home = workspace.parent / f"{workspace.name}.home"
    if home.exists():
        if not (home / HOME_MARKER).is_file() and any(home.iterdir()):
            raise AgentSetupError(
                f"{home} exists and was not created by the harness; refusing to reuse it as "
                "the agent's HOME (move it away)"
            )
        # What an agent left in its HOME may be as deep or long-named as it likes.
        fdtree.remove_tree(home)
    home.mkdir(parents=True)
    (home / HOME_MARKER).write_text("per-run HOME of an agent CLI; deleted on the next run\n")
    return home


def stderr_tail(text: str, limit: int = STDERR_TAIL_CHARS) -> str:
    """The last non-blank lines of stderr on one line (the error is usually at the end)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    tail = " | ".join(lines[-5:])
    return tail if len(tail) <= limit else "…" + tail[-(limit - 1) :]


@dataclass
class CliPlan:
    """How to run one CLI for one task: what the adapter's `build` returns."""

    label: str  # the CLI's name in messages ("claude")
    argv: list[str]  # argv[0] absolute
    meter: UsageMeter
    env: dict[str, str] = field(default_factory=dict)
    # Expected output format in words, for "printed no ... events"; None: plain text is fine.
    structured: str | None = None
    # Called after every line (after the meter): an adapter's extra live reading.
    on_line: Callable[[], None] | None = None
    # Called once after the CLI ended, before the outcome is judged.
    finish: Callable[[], None] | None = None
    # Facts for the outcome details (never secrets).
    details: dict[str, Any] = field(default_factory=dict)
    # Appended to a failure message (e.g. which credential variable was missing).
    failure_hint: str = ""
    # The only hosts the CLI may reach, through the sandbox's egress proxy (its model API).
    allowed_hosts: tuple[str, ...] = ()
    # Services the harness runs for this run, reached by name through the proxy.
    local_services: dict[str, str] = field(default_factory=dict)


# A model id "scripted-<scenario>" is played by the scripted model API (scripted_server.py)
# instead of a vendor's: the CLI runs for real, its model is a script.
SCRIPTED_PREFIX = "scripted-"
# The name the CLI is given for that API: .invalid never resolves, so nothing but the
# harness's own server can answer to it (the egress proxy maps it; sandbox/egress.py).
SCRIPTED_HOST = "model-api.scripted.invalid"
SCRIPTED_PORT = 80
# Retries each CLI makes against the scripted API (its own defaults: Claude Code 10 with
# growing waits, Codex 5 per stream): enough for the retry scenarios, few enough that a
# persistent fault ends a run in seconds.
SCRIPTED_MAX_RETRIES = 3


@dataclass(frozen=True)
class ScriptedApi:
    """Where a scripted run's CLI finds its model API, and which model name it is told."""

    base_url: str  # "http://model-api.scripted.invalid"
    service: str  # the proxy's mapping: "model-api.scripted.invalid:80"
    address: str  # where the server really listens: "127.0.0.1:PORT"
    scenario: str


def scripted_scenario(model: str) -> str | None:
    """The scenario of a scripted model id ("scripted-success" -> "success"), else None."""
    return model[len(SCRIPTED_PREFIX) :] if model.startswith(SCRIPTED_PREFIX) else None


class _Limits:
    """The line hook: feed the meter, then stop the run when a limit of the cell is passed."""

    def __init__(self, task: AgentTask, plan: CliPlan, prices: Prices) -> None:
        self.task = task
        self.plan = plan
        self.prices = prices
        self.kind: str | None = None  # "budget" | "max_turns" once stopped
        self.internal_error: str | None = None

    def __call__(self, line: str) -> str | None:
        meter = self.plan.meter
        try:
            meter.feed(line)
            if self.plan.on_line is not None:
                self.plan.on_line()
            cost = meter.running_cost(self.prices)
        except Exception as exc:  # a parser bug must not kill the reader loop of the sandbox
            self.internal_error = f"{type(exc).__name__}: {exc}"
            return None
        if meter.finished:
            # The CLI is reporting its end: its own totals (Claude 2.x counts the prompt as a
            # turn, so num_turns is one more than the replies) are for `judge`, not a reason
            # to kill a run that is exiting anyway.
            return None
        budget = self.task.budget_usd
        if cost is not None and cost > budget:
            self.kind = "budget"
            return f"budget exceeded: ${cost:.2f} of ${budget:.2f}"
        if meter.turns > self.task.max_turns:
            self.kind = "max_turns"
            return f"max turns exceeded: {meter.turns} of {self.task.max_turns}"
        return None


def run_cli(task: AgentTask, sandbox: Sandbox, plan: CliPlan, home: Path) -> AgentOutcome:
    """Run `plan` under `sandbox` for `task` and judge what happened."""
    prices = Prices.of(task)
    env = {"HOME": str(home), "PATH": sandbox_path(Path(plan.argv[0]).parent), **plan.env}
    policy = SandboxPolicy(
        timeout_s=task.time_limit_s,
        # Egress through the sandbox's filtering proxy to the plan's hosts only; the host's
        # own network (its loopback services, its Unix sockets) is never reachable.
        network=True,
        allowed_hosts=plan.allowed_hosts,
        memory_mb=AGENT_MEMORY_MB,
        max_processes=AGENT_MAX_PROCESSES,
        output_cap_bytes=AGENT_OUTPUT_CAP_BYTES,
        output_kill_bytes=AGENT_OUTPUT_KILL_BYTES,
        env=env,
        # Visible anyway under bubblewrap (the host is read-only); docker mounts only these.
        read_only=[_install_root(Path(plan.argv[0]))],
        writable=[home],
        local_services=plan.local_services,
    )
    task.transcript_path.parent.mkdir(parents=True, exist_ok=True)
    # The sandbox appends to the transcript file; a retry starts from an empty one.
    task.transcript_path.unlink(missing_ok=True)
    limits = _Limits(task, plan, prices)
    result = sandbox.run(
        plan.argv,
        task.workspace,
        policy,
        cwd=task.workspace,
        on_stdout_line=limits,
        stdout_file=task.transcript_path,
    )
    if plan.finish is not None:
        plan.finish()
    return judge(task, plan, result, limits, prices, env)


def _install_root(executable: Path) -> Path:
    """What the sandbox must see of the CLI's install: the whole pinned node_modules for a
    pinned CLI (`codex` is a node script that starts the binary of a sibling package),
    else the folder of the resolved executable."""
    pinned = settings.agent_cli_bin()
    if executable.parent == pinned:
        return pinned.parent.resolve()
    return executable.resolve().parent


def judge(
    task: AgentTask,
    plan: CliPlan,
    result: SandboxResult,
    limits: _Limits,
    prices: Prices,
    env: Mapping[str, str],
) -> AgentOutcome:
    """Status and message from the sandbox result and what the meter read, in that order:
    the harness's own stops first, then the CLI's output, then its exit code."""
    meter = plan.meter
    usage = meter.usage(prices)
    label = plan.label
    tail = stderr_tail(result.stderr)
    cost_text = f"${usage.cost_usd:.2f}" if usage.cost_usd is not None else "cost unknown"
    budget_hit = False

    if result.error:
        status, message = "error", f"{label} could not be started: {result.error}"
    elif result.stopped and limits.kind == "budget":
        status, message, budget_hit = "budget_exceeded", f"{label} stopped: {result.stopped}", True
    elif result.stopped and limits.kind == "max_turns":
        status, message = "max_turns", f"{label} stopped: {result.stopped}"
    elif result.timed_out:
        status = "timed_out"
        message = f"{label} killed after the {task.time_limit_s:.0f} s time limit ({cost_text})"
    elif result.exit_code is None:
        status = "failed"
        message = f"{label} was killed by the sandbox ({result.limit_hit or 'unknown'} limit)"
    elif plan.structured and meter.events == 0 and result.exit_code != 0:
        status = "failed"
        message = f"{label} exited with code {result.exit_code} before any event: " + (
            tail or _first_line(meter) or "no output"
        )
    elif plan.structured and meter.events == 0:
        status = "error"
        first = _first_line(meter)
        message = (
            f"{label} printed no {plan.structured} events; first line: {first!r}"
            if first
            else f"{label} printed nothing on stdout" + (f"; stderr: {tail}" if tail else "")
        )
    elif meter.limit_hit == "max_turns":
        status, message = "max_turns", f"{label} stopped itself at the {task.max_turns} turn limit"
    elif meter.limit_hit == "budget":
        status, message, budget_hit = "budget_exceeded", f"{label} stopped at its budget", True
    elif result.exit_code != 0:
        # What the CLI reported in its stream first (stream-json puts API errors there), then
        # its stderr, where crashes and usage errors go.
        reason = "; ".join(meter.errors[-3:])
        if tail:
            reason = f"{reason} | stderr: {tail}" if reason else tail
        status = "failed"
        message = f"{label} exited with code {result.exit_code}: {reason or 'no error text'}"
    elif meter.is_error:
        status = "failed"
        message = f"{label} reported an error: " + "; ".join(meter.errors[-3:])
    else:
        status, message = "completed", _completed_message(label, meter, usage, cost_text)

    if status == "completed" and usage.cost_usd is not None and usage.cost_usd > task.budget_usd:
        # The budget could only be checked at the end (prices unknown while streaming, or the
        # final event alone pushed it over): the run still spent more than it was allowed.
        status, budget_hit = "budget_exceeded", True
        message = f"{label} finished but spent {cost_text} of its ${task.budget_usd:.2f} budget"
    if status == "failed" and result.limit_hit and result.exit_code is not None:
        message = f"{message} ({result.limit_hit} limit hit)"
    if status == "failed" and plan.failure_hint:
        message = f"{message} ({plan.failure_hint})"

    details: dict[str, Any] = {
        "argv": list(plan.argv),
        "executable": plan.argv[0],
        "env_keys": sorted(env),  # names only: values may be credentials
        "sandbox": result.to_json(),
        "transcript": str(task.transcript_path),
        "meter": meter.summary(),
        **plan.details,
    }
    if result.stopped:
        details["stop_reason"] = result.stopped
    if result.egress is not None:
        # Which hosts the agent was allowed, and every connection the proxy refused.
        details["egress"] = result.egress
    if tail:
        details["stderr_tail"] = tail
    if limits.internal_error:
        details["meter_internal_error"] = limits.internal_error
    priced = getattr(meter, "priced_cost", None)
    if callable(priced):
        details["priced_cost_usd"] = priced(prices)
    return AgentOutcome(
        status=status,  # type: ignore[arg-type]
        message=message,
        usage=usage,
        exit_code=result.exit_code,
        duration_s=result.duration_s,
        budget_hit=budget_hit,
        transcript_lines=meter.lines,
        details=details,
    )


def _first_line(meter: UsageMeter) -> str:
    return (meter.first_line or "")[:120]


def _completed_message(label: str, meter: UsageMeter, usage: Any, cost_text: str) -> str:
    source = f" ({usage.cost_source})" if usage.cost_usd is not None else ""
    text = (
        f"{label} finished: {usage.turns} turns, {usage.tool_calls} tool calls, "
        f"{usage.input_tokens} in / {usage.output_tokens} out tokens, {cost_text}{source}"
    )
    if meter.format == "claude_stream_json" and meter.result_event is None:
        text += "; no result event (transcript cut short?), cost priced from tokens"
    if meter.format == "unknown":
        text = f"{label} finished (exit 0); plain-text output: tokens and cost unknown"
    return text


class CliAdapter(AgentAdapter, abc.ABC):
    """An adapter that runs a command-line agent under the sandbox (see the module doc)."""

    @abc.abstractmethod
    def build(self, task: AgentTask, home: Path, scripted: ScriptedApi | None = None) -> CliPlan:
        """The argv, environment and meter for `task` (its model API the scripted one when
        `scripted` is given); raise AgentSetupError if impossible."""

    def run(self, task: AgentTask, sandbox: Sandbox) -> AgentOutcome:
        home = agent_home(task)
        name = scripted_scenario(task.model)
        if name is None:
            return run_cli(task, sandbox, self.build(task, home), home)
        # Imported here: only scripted runs need the server (and the game it writes).
        from bench_pipeline.agents.scripted_server import ScriptedModelServer, scenario

        try:
            script = scenario(name)
        except ValueError as exc:
            # The cell's bad model, not the machine's: this run is an error, the sweep goes on.
            return AgentOutcome(status="error", message=f"model {task.model!r}: {exc}")
        with ScriptedModelServer(script) as server:
            host, port = server.address
            api = ScriptedApi(
                base_url=f"http://{SCRIPTED_HOST}",
                service=f"{SCRIPTED_HOST}:{SCRIPTED_PORT}",
                address=f"{host}:{port}",
                scenario=name,
            )
            plan = self.build(task, home, api)
            plan.local_services[api.service] = api.address
            outcome = run_cli(task, sandbox, plan, home)
            # What the script played: requests, faults answered, replies served.
            outcome.details["scripted_api"] = server.report()
        return outcome
