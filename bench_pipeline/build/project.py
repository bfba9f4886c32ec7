"""Build what an agent wrote, inside a sandbox, into a folder the bot can play.

    result = build_project(workspace, get_sandbox("bubblewrap"), toolchain_bin=toolchain_bin())
    result.to_record()  # the sandboxed_build record

Every failure of the agent's project (bad package.json, compile errors, a hanging or
exploding build script, no page at all) is a `BuildResult` with `build_ok=False` and one
readable `message`; only a host that cannot sandbox at all raises (`SandboxUnavailable`),
because that is not the agent's fault and must not be recorded as if it were.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench_pipeline.build.detect import Project, detect_project, find_entry_point, folder_bytes
from bench_pipeline.sandbox.base import Sandbox, SandboxPolicy, SandboxResult, sandbox_path
from bench_pipeline.sandbox.egress import allow_hosts_for

NO_PROJECT = "no index.html, package.json or TypeScript found in the workspace"
NO_PAGE = "no index.html, dist/index.html or build/index.html to serve"
# Environment of every build command: no prompts, no nagging, nothing phoning home.
QUIET_NPM = {
    "npm_config_update_notifier": "false",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
    "NO_UPDATE_NOTIFIER": "1",
    "DISABLE_OPENCOLLECTIVE": "1",
}
# Lines that say why a step failed, most telling first: a compiler error, npm's own
# explanation (not its "code"/"path" bookkeeping lines), then anything saying error.
_ERROR_LINES = (
    re.compile(r"error TS\d+"),
    re.compile(r"npm error (?!code |path |command |errno |syscall |A complete log)"),
    re.compile(r"\berror\b|Error:", re.IGNORECASE),
)


def toolchain_bin() -> Path | None:
    """The pinned npm toolchain's .bin (tsc, esbuild, eslint), or None when not installed.

    BENCH_TOOLCHAIN_BIN moves it; the default is toolchain/node_modules/.bin at the project
    root (the checkout holding this package), where `make setup` installs it.
    """
    configured = os.environ.get("BENCH_TOOLCHAIN_BIN")
    path = (
        Path(configured)
        if configured
        else Path(__file__).resolve().parents[2] / "toolchain" / "node_modules" / ".bin"
    )
    return path.resolve() if path.is_dir() else None


@dataclass
class BuildStep:
    name: str  # "install" | "build" | "tsc"
    argv: list[str]
    exit_code: int | None
    duration_s: float
    timed_out: bool
    summary: str
    limit_hit: str | None = None
    ok: bool = False

    @classmethod
    def from_result(cls, name: str, result: SandboxResult) -> BuildStep:
        return cls(
            name=name,
            argv=result.argv,
            exit_code=result.exit_code,
            duration_s=round(result.duration_s, 3),
            timed_out=result.timed_out,
            summary=result.summary(),
            limit_hit=result.limit_hit,
            ok=result.ok,
        )


@dataclass
class BuildResult:
    build_ok: bool
    kind: str  # "static" | "npm" | "typescript" | "none"
    message: str
    steps: list[BuildStep] = field(default_factory=list)
    log: str = ""
    duration_s: float = 0.0
    served_dir: str | None = None  # absolute folder holding the entry index.html
    entry_point: str | None = None  # relative to the workspace
    output_bytes: int = 0
    project_dir: str = "."  # where package.json/tsconfig.json were, relative to the workspace
    sandbox: str | None = None
    # The install step's egress: allowed hosts, connections, refusals (None: no network used).
    egress: dict[str, Any] | None = None

    def to_record(self) -> dict[str, Any]:
        """A flat JSON-able dict: scalars plus the list of steps as plain dicts."""
        failed = next((s for s in self.steps if not s.ok), None)
        return {
            "build_ok": self.build_ok,
            "kind": self.kind,
            "message": self.message,
            "duration_s": round(self.duration_s, 3),
            "served_dir": self.served_dir,
            "entry_point": self.entry_point,
            "output_bytes": self.output_bytes,
            "project_dir": self.project_dir,
            "sandbox": self.sandbox,
            "step_count": len(self.steps),
            "failed_step": failed.name if failed else None,
            "timed_out": any(s.timed_out for s in self.steps),
            "limit_hit": next((s.limit_hit for s in self.steps if s.limit_hit), None),
            "steps": [asdict(s) for s in self.steps],
            # A JSON string like the agent's details: one warehouse schema for every record.
            "egress": json.dumps(self.egress, sort_keys=True) if self.egress else None,
            "egress_refused": (self.egress or {}).get("refused_total", 0),
            "log": self.log,
        }


def _tail(text: str, cap_bytes: int) -> str:
    """The end of `text` within cap_bytes of UTF-8: the error that stopped a build is last."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= cap_bytes:
        return text
    marker = f"[... {len(data) - cap_bytes} earlier bytes dropped ...]\n".encode()
    kept = data[len(data) - max(0, cap_bytes - len(marker)) :]
    return (marker + kept)[-cap_bytes:].decode("utf-8", errors="ignore")


def _egress_line(egress: dict[str, Any] | None) -> str:
    """The log's account of a step's network: what it was allowed and what was refused."""
    if egress is None:
        return ""
    allowed = ", ".join(egress.get("allowed_hosts", [])) or "none"
    refused = egress.get("refused", [])
    line = f"[egress: allowed hosts {allowed}; {egress.get('refused_total', 0)} refused"
    shown = "; ".join(f"{r['target']} ({r['reason']})" for r in refused[:5])
    return line + (f": {shown}" if shown else "") + "]\n"


def _error_line(result: SandboxResult) -> str | None:
    """The most telling line of a failed step (tsc errors go to stdout, npm's to stderr)."""
    for pattern in _ERROR_LINES:
        for text in (result.stdout, result.stderr):
            for line in text.splitlines():
                if pattern.search(line):
                    return line.strip()[:300]
    for text in (result.stderr, result.stdout):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines:
            return lines[-1][:300]
    return None


class _Builder:
    def __init__(
        self,
        project: Project,
        sandbox: Sandbox,
        *,
        toolchain: Path | None,
        install_network: bool,
        install_allow_hosts: Sequence[str],
        timeout_s: float,
        log_cap_bytes: int,
    ) -> None:
        self.project = project
        self.sandbox = sandbox
        self.toolchain = toolchain
        self.install_network = install_network
        self.install_allow_hosts = tuple(install_allow_hosts)
        self.egress: dict[str, Any] | None = None
        self.deadline = time.monotonic() + timeout_s
        self.log_cap_bytes = log_cap_bytes
        self.steps: list[BuildStep] = []
        self.logs: list[str] = []
        self.failure: str | None = None  # the message of the first failing step

    def _policy(self, *, network: bool, offline_npm: bool) -> SandboxPolicy:
        env = {"PATH": sandbox_path(*([self.toolchain] if self.toolchain else []))} | QUIET_NPM
        if offline_npm:
            # Without a network npm would retry for minutes; offline it says ENOTCACHED at once.
            env["npm_config_offline"] = "true"
        read_only: tuple[Path, ...] = ()
        if self.toolchain is not None:
            # .bin holds symlinks into its node_modules: the whole folder must be visible
            # (docker mounts only what it is given).
            parent = self.toolchain.parent
            read_only = (parent if self.toolchain.name == ".bin" else self.toolchain,)
        return SandboxPolicy(
            timeout_s=max(1.0, self.deadline - time.monotonic()),
            network=network,
            # Only the install step has network, and only to the registry through the
            # sandbox's filtering proxy.
            allowed_hosts=self.install_allow_hosts if network else (),
            output_cap_bytes=self.log_cap_bytes,
            env=env,
            read_only=read_only,
        )

    def step(self, name: str, argv: list[str], policy: SandboxPolicy) -> bool:
        if time.monotonic() >= self.deadline:
            self.failure = f"{name} skipped: the build time budget was used up"
            return False
        result = self.sandbox.run(argv, self.project.workspace, policy, cwd=self.project.root)
        step = BuildStep.from_result(name, result)
        self.steps.append(step)
        self.logs.append(
            f"$ {' '.join(argv)}\n{result.stdout}"
            + (f"\n{result.stderr}" if result.stderr else "")
            + f"\n[{step.summary}]\n"
            + _egress_line(result.egress)
        )
        if result.egress is not None:
            self.egress = result.egress
        if step.ok:
            return True
        self.failure = self._failure_message(name, argv, result)
        return False

    def _failure_message(self, name: str, argv: list[str], result: SandboxResult) -> str:
        command = {"install": " ".join(argv[:2]), "build": "npm run build"}.get(name, name)
        if result.error:
            return f"{command} could not run: {result.error}"
        if result.timed_out:
            return f"{command} hung: killed after the {result.duration_s:.0f} s time limit"
        if result.limit_hit and result.exit_code is None:
            return f"{command} killed: {result.limit_hit} limit hit"
        detail = _error_line(result)
        limit = f", {result.limit_hit} limit hit" if result.limit_hit else ""
        head = f"{command} failed (exit {result.exit_code}{limit})"
        if name == "tsc" and result.exit_code in (1, 2) and "error TS" in result.stdout:
            head = f"tsc reported type errors (exit {result.exit_code}{limit})"
        if name == "install" and not self.install_network:
            head += " without network (install_network=False)"
        return f"{head}: {detail}" if detail else head

    def run(self) -> bool:
        project = self.project
        if project.package_json is not None and project.has_dependencies:
            verb = "ci" if project.has_lock else "install"
            argv = ["npm", verb, "--no-audit", "--no-fund"]
            policy = self._policy(
                network=self.install_network, offline_npm=not self.install_network
            )
            if not self.step("install", argv, policy):
                return False
        if project.build_script is not None:
            return self.step(
                "build", ["npm", "run", "build"], self._policy(network=False, offline_npm=True)
            )
        if project.uses_tsc:
            tsc = self._tsc()
            if tsc is None:
                self.failure = (
                    "no TypeScript compiler: the pinned toolchain is not installed (make setup)"
                )
                return False
            files = [str(f) for f in project.ts_files]
            argv = [tsc, "-p", "."] if project.tsconfig else [tsc, *files]
            return self.step("tsc", argv, self._policy(network=False, offline_npm=True))
        return True

    def _tsc(self) -> str | None:
        """The pinned tsc (same compiler for every run), else one the project installed."""
        for folder in (self.toolchain, self.project.root / "node_modules" / ".bin"):
            if folder is not None and (folder / "tsc").exists():
                return str(folder / "tsc")
        return None


def build_project(
    workspace: Path,
    sandbox: Sandbox,
    *,
    toolchain_bin: Path | None,
    install_network: bool = True,
    install_allow_hosts: Sequence[str] | None = None,
    timeout_s: float = 300,
    log_cap_bytes: int = 200_000,
) -> BuildResult:
    """Build the agent's project in `workspace` with `sandbox`; see the module docstring.

    `install_allow_hosts`: the hosts the install step may reach (None:
    $BENCH_ALLOW_HOSTS_INSTALL, else the npm registry)."""
    start = time.monotonic()
    workspace = Path(workspace).resolve()
    backend = getattr(sandbox, "name", None)
    if not workspace.is_dir():
        return BuildResult(False, "none", f"workspace {workspace} does not exist", sandbox=backend)
    project = detect_project(workspace)
    kind = project.kind
    toolchain = Path(toolchain_bin).resolve() if toolchain_bin else None
    builder = _Builder(
        project,
        sandbox,
        toolchain=toolchain,
        install_network=install_network,
        install_allow_hosts=(
            allow_hosts_for("install") if install_allow_hosts is None else install_allow_hosts
        ),
        timeout_s=timeout_s,
        log_cap_bytes=log_cap_bytes,
    )
    if kind == "none":
        ok, failure = False, NO_PROJECT
    elif project.package_error is not None:
        ok, failure = False, project.package_error
    else:
        ok = builder.run()
        failure = builder.failure

    page = (
        find_entry_point(project, built=project.build_script is not None)
        if kind != "none"
        else None
    )
    served = page.parent if page is not None else None
    result = BuildResult(
        build_ok=ok and page is not None,
        kind=kind,
        message="",
        steps=builder.steps,
        log=_tail("".join(builder.logs), log_cap_bytes),
        served_dir=str(served) if served else None,
        entry_point=str(page.relative_to(workspace)) if page else None,
        output_bytes=folder_bytes(served) if served else 0,
        project_dir=str(project.root.relative_to(workspace)),
        sandbox=backend,
        egress=builder.egress,
    )
    result.message = _message(result, failure, project)
    result.duration_s = time.monotonic() - start
    return result


def _message(result: BuildResult, failure: str | None, project: Project) -> str:
    where = f" (in {project.subfolder}/)" if project.subfolder else ""
    if failure is not None:
        if result.entry_point:
            return f"{failure}; serving {result.entry_point} as it is"
        return failure
    if result.entry_point is None:
        ran = ", ".join(s.name for s in result.steps)
        return (
            f"{result.kind} project{where} built ({ran or 'nothing to run'}) but there is {NO_PAGE}"
        )
    ran = (
        f"{len(result.steps)} step{'s' * (len(result.steps) != 1)}"
        if result.steps
        else "nothing to build"
    )
    return f"{result.kind} project{where}: {ran}, serving {result.entry_point} ({result.output_bytes:,} bytes)"
