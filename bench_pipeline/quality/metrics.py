"""Code-quality metrics of one agent project, every tool run sandboxed and time-capped.

    report = measure_quality(project_dir, get_sandbox("bubblewrap"))
    report.to_json()  # the `bench quality --json` object (docs/quality.md, docs/interfaces.md §6)

The project is copied into a work folder we own (the agent's tree stays untouched), and
each tool - ESLint, tsc, the analyzer (js/analyze.mjs), jscpd, html-validate, esbuild -
runs there without network under the same pinned toolchain. A tool that fails, hangs or
has nothing to look at leaves its metrics None with the reason in `unavailable`: a bad
project is a result, never an exception.

Why one module of ~630 lines: it is one pipeline over one work folder (copy, run each tool,
read its output into the report), and each tool's part is a short function next to the
others that share the folder, the sandbox and the time cap.
"""

from __future__ import annotations

import html.parser
import json
import re
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_pipeline.build import build_project, toolchain_bin
from bench_pipeline.quality.files import (
    HTML_SUFFIXES,
    TS_SUFFIXES,
    CopyLimits,
    copy_tree,
    source_files,
)
from bench_pipeline.quality.score import DEFAULT_WEIGHTS, ScoreWeights, quality_breakdown
from bench_pipeline.quality.score import quality_score as compute_score
from bench_pipeline.sandbox.base import Sandbox, SandboxPolicy, SandboxResult, sandbox_path

JS_DIR = Path(__file__).resolve().parent / "js"
# The keys of docs/interfaces.md §6 besides quality_score and unavailable, in that order.
CONTRACT_KEYS = (
    "eslint_errors",
    "eslint_warnings",
    "ts_compiles",
    "build_ok",
    "bundle_bytes",
    "function_length_max",
    "nesting_depth_max",
    "naming_consistency",
    "file_count",
    "duplication_pct",
    "html_errors",
    "magic_numbers",
)
NOT_TYPESCRIPT = "not a TypeScript project (JavaScript is not type-checked)"
NO_SOURCES = "no JavaScript or TypeScript source files"
_COMPLEXITY = re.compile(r"Cognitive Complexity from (\d+) to")
_TS_ERROR = re.compile(r"error TS\d+")
_DEFAULT_TSCONFIG = {
    # For a TypeScript project without a tsconfig: what a modern browser project uses.
    "compilerOptions": {
        "target": "ES2020",
        "module": "ESNext",
        "moduleResolution": "bundler",
        "lib": ["ES2020", "DOM", "DOM.Iterable"],
        "strict": True,
        "noEmit": True,
        "skipLibCheck": True,
        "allowImportingTsExtensions": True,
    },
    "include": ["**/*.ts", "**/*.tsx", "**/*.mts", "**/*.cts"],
    "exclude": ["node_modules"],
}


@dataclass
class QualityReport:
    metrics: dict[str, Any] = field(default_factory=dict)  # contract keys + extra ones
    unavailable: dict[str, str] = field(default_factory=dict)  # metric -> why it is None
    tool_seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what was skipped or capped
    weights: ScoreWeights = DEFAULT_WEIGHTS

    @property
    def quality_score(self) -> float:
        return compute_score(self.metrics, self.weights)

    def to_json(self) -> dict[str, Any]:
        """The contract object: quality_score, the contract keys, the extras, unavailable."""
        data: dict[str, Any] = {"quality_score": self.quality_score}
        data.update({key: self.metrics.get(key) for key in CONTRACT_KEYS})
        data.update({k: v for k, v in self.metrics.items() if k not in data})
        data["quality_breakdown"] = quality_breakdown(self.metrics, self.weights)
        data["unavailable"] = dict(self.unavailable)
        data["tool_seconds"] = {k: round(v, 3) for k, v in self.tool_seconds.items()}
        data["notes"] = list(self.notes)
        return data


def _tail(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else "..." + text[-limit:]


def _failure(result: SandboxResult) -> str:
    """Why a tool run gave no usable output, in one line."""
    if result.error:
        return f"could not run: {result.error}"
    if result.timed_out:
        return f"timed out after {result.duration_s:.0f} s"
    if result.limit_hit:
        return f"{result.limit_hit} limit hit"
    detail = _tail(result.stderr or result.stdout)
    return f"exit {result.exit_code}" + (f": {detail}" if detail else "")


class _PageScan(html.parser.HTMLParser):
    """The local scripts and stylesheets a page loads, and its inline code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[tuple[str, bool]] = []  # (src, is a module)
        self.styles: list[str] = []
        self.inline_bytes = 0
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k.lower(): (v or "") for k, v in attrs}
        if tag == "script":
            src = values.get("src", "")
            self._in_script = not src
            if src:
                self.scripts.append((src, values.get("type", "").lower() == "module"))
        elif tag == "link" and "stylesheet" in values.get("rel", "").lower() and values.get("href"):
            self.styles.append(values["href"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.inline_bytes += len(data.encode())


def _local(site: Path, page: Path, reference: str) -> Path | None:
    """The file inside `site` that `reference` (from `page`) names, or None if remote/outside."""
    if re.match(r"^([a-z][a-z0-9+.-]*:|//)", reference, re.IGNORECASE):
        return None  # http:, data:, protocol-relative: not part of the project's bundle
    reference = reference.split("#")[0].split("?")[0]
    if not reference:
        return None
    base = site if reference.startswith("/") else page.parent
    candidate = (base / reference.lstrip("/")).resolve()
    root = site.resolve()
    if candidate != root and root not in candidate.parents:
        return None
    return candidate if candidate.is_file() else None


class _Measurer:
    def __init__(
        self,
        project: Path,
        sandbox: Sandbox,
        *,
        build: Mapping[str, Any] | None,
        toolchain: Path | None,
        tool_timeout_s: float,
        work: Path,
        install_network: bool,
        build_timeout_s: float,
    ) -> None:
        self.project = project
        self.sandbox = sandbox
        self.build = build
        self.toolchain = toolchain
        self.timeout = tool_timeout_s
        self.work = work
        self.install_network = install_network
        self.build_timeout_s = build_timeout_s
        self.src = work / "src"
        self.out = work / "out"
        self.report = QualityReport()
        self.sources: list[str] = []
        self.copied: list[str] = []
        self.build_record: dict[str, Any] = {}

    # --- helpers -------------------------------------------------------------------------

    @property
    def m(self) -> dict[str, Any]:
        return self.report.metrics

    def missing(self, reason: str, *keys: str) -> None:
        for key in keys:
            self.m[key] = None
            self.report.unavailable[key] = reason

    def bin(self, name: str) -> str:
        assert self.toolchain is not None
        return str(self.toolchain / "node_modules" / ".bin" / name)

    def run(self, tool: str, argv: list[str], *, cwd: Path | None = None) -> SandboxResult:
        """One tool run in the sandbox: no network, only the work folder writable."""
        assert self.toolchain is not None
        policy = SandboxPolicy(
            timeout_s=self.timeout,
            network=False,
            memory_mb=3072,
            max_processes=64,
            output_cap_bytes=200_000,
            read_only=(self.toolchain, JS_DIR),
            env={
                "PATH": sandbox_path(self.toolchain / "node_modules" / ".bin"),
                "QUALITY_TOOLCHAIN": str(self.toolchain),
                "NO_COLOR": "1",
            },
        )
        started = time.monotonic()
        try:
            return self.sandbox.run(argv, self.work, policy, cwd=cwd or self.src)
        finally:
            self.report.tool_seconds[tool] = (
                self.report.tool_seconds.get(tool, 0.0) + time.monotonic() - started
            )

    # --- the stages ----------------------------------------------------------------------

    def measure(self) -> QualityReport:
        stats = copy_tree(self.project, self.src)
        self.out.mkdir(parents=True, exist_ok=True)
        self.copied = stats.copied
        self.sources = source_files(stats.copied)
        self.report.notes.extend(stats.notes())
        self.m["file_count"] = len(self.sources)
        self.m["files_skipped"] = stats.to_json()
        self._link_node_modules()
        reason = self.sandbox.unavailable_reason()
        if self.toolchain is None or not (self.toolchain / "node_modules" / ".bin").is_dir():
            reason = reason or "the pinned toolchain is not installed (make setup)"
        if reason:
            self._all_missing(reason)
            return self.report
        for stage in (
            self._build,
            self._eslint,
            self._typescript,
            self._analyze,
            self._duplication,
            self._html,
            self._bundle,
        ):
            try:
                stage()
            except Exception as error:  # one broken tool must not sink the other metrics
                self.report.notes.append(f"{stage.__name__.strip('_')} failed: {error!r}")
        for key in CONTRACT_KEYS:
            if key not in self.m:
                self.missing("not measured (the tool failed)", key)
        return self.report

    def _all_missing(self, reason: str) -> None:
        for key in CONTRACT_KEYS:
            if key != "file_count":
                self.missing(reason, key)

    def _link_node_modules(self) -> None:
        """Let tsc/esbuild resolve the packages the pipeline installed, without copying them."""
        for package in [p for p in self.copied if p.endswith("package.json")]:
            folder = Path(package).parent
            installed = self.project / folder / "node_modules"
            if len(folder.parts) <= 1 and installed.is_dir() and not installed.is_symlink():
                (self.src / folder / "node_modules").symlink_to(installed.resolve())

    def _build(self) -> None:
        record = dict(self.build) if self.build is not None else None
        if record is None:
            started = time.monotonic()
            target = self.work / "build"
            stats = copy_tree(
                self.project,
                target,
                CopyLimits(
                    max_files=5000,
                    max_file_bytes=50_000_000,
                    max_total_bytes=200_000_000,
                    suffixes=None,
                    skip_dirs=frozenset({"node_modules", ".git"}),
                ),
            )
            if stats.capped or stats.walk_capped:
                self.report.notes.append(
                    f"build copy capped: {stats.capped} file(s) left out, the entry page and "
                    f"the {len(stats.entry_files)} file(s) it loads copied first"
                )
            bin_dir = toolchain_bin()
            result = build_project(
                target,
                self.sandbox,
                toolchain_bin=bin_dir,
                install_network=self.install_network,
                timeout_s=self.build_timeout_s,
            )
            record = result.to_record()
            self.report.tool_seconds["build"] = time.monotonic() - started
        self.build_record = record
        build_ok = record.get("build_ok")
        self.m["build_ok"] = build_ok if isinstance(build_ok, bool) else None
        if self.m["build_ok"] is None:
            self.report.unavailable["build_ok"] = "the build record has no build_ok"
        self.m["build_kind"] = record.get("kind")
        if build_ok is False and record.get("message"):
            self.report.notes.append(f"build failed: {record['message']}")
        self._entry_point(record)

    def _entry_point(self, record: Mapping[str, Any]) -> None:
        """No page to serve, no game: such a project gets no quality credit (score.py).
        A record that does not say (no `entry_point` key) leaves it unknown, not absent."""
        if "entry_point" not in record:
            self.m["entry_point"] = self.m["has_entry_point"] = None
            self.report.unavailable["entry_point"] = "the build record has no entry_point"
            return
        entry = record.get("entry_point")
        found = isinstance(entry, str) and bool(entry)
        self.m["entry_point"] = entry if found else None
        self.m["has_entry_point"] = found
        if not found:
            why = record.get("message") or "the build found no index.html to serve"
            self.report.unavailable["entry_point"] = f"no entry point: {why}"
            self.report.notes.append(f"no quality credit: there is no page to serve ({why})")

    def _eslint(self) -> None:
        if not self.sources:
            self.missing(NO_SOURCES, "eslint_errors", "eslint_warnings", "cognitive_complexity_max")
            return
        output = self.out / "eslint.json"
        result = self.run(
            "eslint",
            [
                self.bin("eslint"),
                "--no-config-lookup",
                "--config",
                str(JS_DIR / "eslint.config.mjs"),
                "--no-inline-config",  # an agent's eslint-disable comments do not count
                "--no-warn-ignored",
                "--format",
                "json",
                "--output-file",
                str(output),
                ".",
            ],
        )
        try:
            files = json.loads(output.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            reason = f"eslint failed: {_failure(result)}"
            self.missing(reason, "eslint_errors", "eslint_warnings", "cognitive_complexity_max")
            return
        errors = warnings = parse_errors = 0
        complexity: list[int] = []
        for entry in files:
            for message in entry.get("messages", []):
                found = _COMPLEXITY.search(message.get("message", ""))
                if message.get("ruleId") == "sonarjs/cognitive-complexity" and found:
                    complexity.append(int(found.group(1)))
                    continue  # a measurement, not a finding
                if message.get("fatal"):
                    parse_errors += 1
                if message.get("severity") == 2:
                    errors += 1
                elif message.get("severity") == 1:
                    warnings += 1
        self.m["eslint_errors"] = errors
        self.m["eslint_warnings"] = warnings
        self.m["eslint_parse_errors"] = parse_errors
        self.m["eslint_files"] = len(files)
        # Functions with no branching at all are not reported: their complexity is 0.
        self.m["cognitive_complexity_max"] = max(complexity, default=0)

    def _typescript(self) -> None:
        ts_files = [p for p in self.sources if Path(p).suffix.lower() in TS_SUFFIXES]
        if not ts_files:
            self.missing(NOT_TYPESCRIPT, "ts_compiles", "ts_errors")
            return
        configs = sorted(
            (p for p in self.copied if Path(p).name == "tsconfig.json"),
            key=lambda p: (len(Path(p).parts), p),
        )
        if configs:
            config = self.src / configs[0]
        else:
            config = self.src / "tsconfig.quality.json"
            config.write_text(json.dumps(_DEFAULT_TSCONFIG), encoding="utf-8")
        self.m["ts_config"] = configs[0] if configs else "default (none in the project)"
        result = self.run(
            "tsc",
            [self.bin("tsc"), "--noEmit", "--pretty", "false", "-p", str(config)],
            cwd=config.parent,
        )
        errors = len(_TS_ERROR.findall(result.stdout + result.stderr))
        if result.ok:
            self.m["ts_compiles"], self.m["ts_errors"] = True, 0
        elif result.exit_code is not None and errors and not result.error:
            self.m["ts_compiles"], self.m["ts_errors"] = False, errors
        else:
            self.missing(f"tsc failed: {_failure(result)}", "ts_compiles", "ts_errors")

    def _analyze(self) -> None:
        keys = (
            "function_length_max",
            "nesting_depth_max",
            "naming_consistency",
            "magic_numbers",
            "modules",
            "single_file",
            "largest_file_share",
            "source_lines",
        )
        if not self.sources:
            self.missing(NO_SOURCES, *keys)
            return
        listing = self.out / "files.txt"
        listing.write_text("\n".join(self.sources) + "\n", encoding="utf-8")
        output = self.out / "analysis.json"
        result = self.run(
            "analyze", ["node", str(JS_DIR / "analyze.mjs"), str(listing), str(output)]
        )
        try:
            data = json.loads(output.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.missing(f"code analysis failed: {_failure(result)}", *keys)
            return
        for key in (*keys, "function_count", "parse_errors", "identifier_count"):
            self.m[key] = data.get(key)
        if data.get("naming_consistency") is None:
            self.missing("no declared identifiers", "naming_consistency")
        if data.get("largest_file_share") is None:
            self.report.unavailable["largest_file_share"] = "no file with code"
        if data.get("failures"):
            self.report.notes.append(f"analysis skipped {len(data['failures'])} unreadable files")
        if data.get("parse_errors"):
            self.report.notes.append(
                f"{data['parse_errors']} file(s) have syntax errors: "
                "their structure metrics come from the parser's recovery"
            )

    def _duplication(self) -> None:
        if not self.sources:
            self.missing(NO_SOURCES, "duplication_pct")
            return
        report_dir = self.out / "jscpd"
        result = self.run(
            "jscpd",
            [
                self.bin("jscpd"),
                "--min-tokens",
                "50",
                "--reporters",
                "json",
                "--output",
                str(report_dir),
                "--format",
                "javascript,typescript,jsx,tsx",
                "--ignore",
                "**/node_modules/**,**/*.d.ts",
                "--silent",
                ".",
            ],
        )
        report = report_dir / "jscpd-report.json"
        if result.ok and not report.exists():
            # jscpd writes no report when no file is long enough to hold a clone (its
            # --min-lines): nothing is duplicated.
            self.m["duplication_pct"], self.m["duplicated_lines"] = 0.0, 0
            return
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
            total = data["statistics"]["total"]
        except (OSError, ValueError, KeyError, TypeError):
            self.missing(f"jscpd failed: {_failure(result)}", "duplication_pct")
            return
        self.m["duplication_pct"] = round(float(total.get("percentage", 0.0)), 2)
        self.m["duplicated_lines"] = total.get("duplicatedLines")

    def _html(self) -> None:
        pages = [p for p in self.copied if Path(p).suffix.lower() in HTML_SUFFIXES]
        if not pages:
            self.missing("no HTML files", "html_errors")
            return
        config = self.out / "htmlvalidate.json"
        config.write_text(json.dumps({"extends": ["html-validate:recommended"]}), "utf-8")
        result = self.run(
            "html-validate",
            [self.bin("html-validate"), "--config", str(config), "--formatter", "json", *pages],
        )
        try:
            data = json.loads(result.stdout or "[]") if not result.timed_out else None
        except ValueError:
            data = None
        if not isinstance(data, list) or result.exit_code not in (0, 1):
            self.missing(f"html-validate failed: {_failure(result)}", "html_errors")
            return
        self.m["html_errors"] = sum(int(entry.get("errorCount", 0)) for entry in data)
        self.m["html_warnings"] = sum(int(entry.get("warningCount", 0)) for entry in data)

    def _bundle(self) -> None:
        record = self.build_record
        served = record.get("served_dir")
        if not served or not Path(served).is_dir():
            why = record.get("message") or "no page"
            self.missing(f"the build produced no page to serve: {why}", "bundle_bytes")
            return
        site = Path(served).resolve()
        if site != self.work.resolve() and self.work.resolve() not in site.parents:
            # The pipeline's build folder: copy what a browser would load into our work folder.
            copy = self.work / "site"
            copy_tree(
                site,
                copy,
                CopyLimits(
                    max_file_bytes=50_000_000,
                    max_total_bytes=200_000_000,
                    suffixes=None,
                    skip_dirs=frozenset({"node_modules", ".git"}),
                ),
            )
            site = copy
        # The record names the entry relative to the workspace (or absolute, from older
        # records); the served folder is the one that holds it, so its name is what counts.
        entry = record.get("entry_point")
        page = site / Path(entry).name if entry else site / "index.html"
        if not page.is_file():
            page = site / "index.html"
        if not page.is_file():
            self.missing("no index.html in the served folder", "bundle_bytes")
            return
        self._measure_bundle(site, page)

    def _measure_bundle(self, site: Path, page: Path) -> None:
        scan = _PageScan()
        text = page.read_text(encoding="utf-8", errors="replace")
        scan.feed(text)
        page_bytes = len(text.encode())
        entries = [p for p in (_local(site, page, s) for s, _ in scan.scripts) if p]
        styles = [p for p in (_local(site, page, s) for s in scan.styles) if p]
        module = any(is_module for _, is_module in scan.scripts)
        fixed = page_bytes + scan.inline_bytes
        if not entries and not styles:
            self.m["bundle_bytes"] = fixed
            self.m["bundle_method"] = "page only (no local scripts or stylesheets)"
            return
        bundle_dir = self.out / "bundle"
        argv = [
            self.bin("esbuild"),
            "--bundle",
            "--minify",
            "--log-level=error",
            f"--outdir={bundle_dir}",
            f"--outbase={site}",
            "--entry-names=[dir]/[name]",
            "--loader:.png=file",
            "--loader:.svg=file",
            "--loader:.woff2=file",
            *(["--format=esm"] if module else []),
            *(str(p) for p in dict.fromkeys(entries + styles)),
        ]
        result = self.run("esbuild", argv, cwd=site)
        if result.ok and bundle_dir.is_dir():
            size = sum(f.stat().st_size for f in bundle_dir.rglob("*") if f.is_file())
            self.m["bundle_bytes"] = fixed + size
            self.m["bundle_method"] = "esbuild --bundle --minify of the page's scripts and styles"
            return
        # esbuild could not bundle it (unresolvable imports, odd loaders): the served files.
        self.report.notes.append(f"esbuild could not bundle the page: {_failure(result)}")
        served = 0
        for path in site.rglob("*"):
            if "node_modules" in path.parts or path.is_symlink() or not path.is_file():
                continue
            if path.suffix.lower() in {".js", ".mjs", ".css", ".html", ".htm"}:
                served += path.stat().st_size
        self.m["bundle_bytes"] = served
        self.m["bundle_method"] = "served folder's JS, CSS and HTML bytes (esbuild failed)"


def measure_quality(
    project: Path,
    sandbox: Sandbox,
    *,
    build: Mapping[str, Any] | None = None,
    toolchain: Path | None = None,
    tool_timeout_s: float = 60,
    work_dir: Path | None = None,
    install_network: bool = False,
    build_timeout_s: float = 180,
    weights: ScoreWeights = DEFAULT_WEIGHTS,
) -> QualityReport:
    """Measure the code quality of the agent project in `project` (left untouched).

    `build` is the pipeline's sandboxed_build record when it already built the project
    (build_ok, served_dir, entry_point); without it a copy is built here with
    `build_project` (network for npm install only if `install_network`). `toolchain` is
    the folder holding the pinned node_modules (default: the one `make setup` installs).
    Every tool gets `tool_timeout_s`. The work folder is made under `work_dir` (default:
    the system temp folder) and removed afterwards. Raises only for a `project` that is
    not a folder; whatever the folder holds becomes metrics or reasons.
    """
    project = Path(project).resolve()
    if not project.is_dir():
        raise NotADirectoryError(f"{project} is not a folder")
    if toolchain is None:
        bin_dir = toolchain_bin()
        toolchain = bin_dir.parent.parent if bin_dir is not None else None
    if work_dir is not None:
        work_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-quality-", dir=work_dir))
    started = time.monotonic()
    try:
        measurer = _Measurer(
            project,
            sandbox,
            build=build,
            toolchain=toolchain.resolve() if toolchain else None,
            tool_timeout_s=tool_timeout_s,
            work=work,
            install_network=install_network,
            build_timeout_s=build_timeout_s,
        )
        report = measurer.measure()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report.weights = weights
    report.tool_seconds["total"] = time.monotonic() - started
    return report
