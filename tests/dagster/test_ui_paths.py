"""Every UI path the docs write is one a user can click in this Dagster UI.

The docs write a UI path in bold, step by step: **Jobs** → **`sweep_job`** → **Materialize ▾**
→ **Open launchpad** (▾: the small arrow beside a button). This test reads every such path
from README.md and docs/*.md, clicks it step by step in headless Chromium against a real
`dagster-webserver` on this project (workspace.yaml, DAGSTER_HOME in a temporary folder), then
checks that the page shows what the sentence around it promises. A path the docs change is
therefore clicked as written; a path without a check here, or a check whose path the docs no
longer name, fails the fast tests below.

The webserver runs without a daemon: runs launched here stay queued and nothing executes.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import pytest
import yaml
from playwright.sync_api import Browser, Locator, Page, Response, expect, sync_playwright

from bench_pipeline import settings
from bench_pipeline.bot.browser import CHROMIUM_ARGS, chromium_executable
from tests.dagster.test_ui import _free_port
from tests.dagster.test_ui import _graphql as graphql

REPO = settings.project_root()
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

# The left navigation of Dagster 1.13; "Assets" and "Launchpad" were names of older versions.
NAVIGATION = ("Overview", "Runs", "Catalog", "Jobs", "Automation", "Lineage", "Deployment")
OLD_NAMES = ("Assets", "Launchpad")
DROPDOWN = " ▾"  # a step "X ▾" is the arrow button right of the button labelled X

BOLD_PATH = re.compile(r"\*\*[^*\n]+\*\*(?:\s+→\s+\*\*[^*\n]+\*\*)+")
BOLD_STEP = re.compile(r"\*\*([^*\n]+)\*\*")
# A path written without bold (so not clicked by this test): a navigation name, then an arrow.
PLAIN_PATH = re.compile(r"(?<![*\w])(" + "|".join(NAVIGATION + OLD_NAMES) + r")(?![*\w])\s+→\s+\S+")

# The benchmark runs (`runs` partitions) the instance holds; their bot results are Unsynced.
RUN, OTHER_RUN = "ui-paths-r0001", "ui-paths-r0002"
CHART = "ui-paths.main_effects"  # the chart stored in mart_main_effects' metadata


@dataclass
class DocPath:
    steps: tuple[str, ...]
    sentences: list[str] = field(default_factory=list)  # "file:line: text" where it is written


def _modal(page):
    """The open modal dialogs. A dropdown menu is a (non-modal) dialog too, and it may still
    be closing when the modal opens: its "Open launchpad" item would match the filter."""
    return page.locator('[role="dialog"][aria-modal="true"]')


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def doc_paths() -> dict[tuple[str, ...], DocPath]:
    """Every bold UI path of the docs, with where each is written."""
    found: dict[tuple[str, ...], DocPath] = {}
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in BOLD_PATH.finditer(text):
            steps = tuple(s.strip().strip("`").strip() for s in BOLD_STEP.findall(match[0]))
            where = f"{doc.relative_to(REPO)}:{_line_of(text, match.start())}"
            sentence = " ".join(match[0].split())
            found.setdefault(steps, DocPath(steps)).sentences.append(f"{where}: {sentence}")
    return found


# ---------------------------------------------------------------------------------------------
# What each documented path must lead to. Keys are the paths exactly as the docs write them.
# ---------------------------------------------------------------------------------------------


@dataclass
class Ui:
    base: str
    port: int
    backfill_id: str  # one backfill the fixture launched
    screenshots: Path  # where a failing page is saved

    def graphql(self, query: str, variables: dict | None = None) -> dict:
        return _graphql(self.port, query, variables)

    def run(self, run_id: str) -> dict:
        return self.graphql(
            "query Run($id: ID!) { runOrError(runId: $id) { ... on Run "
            "{ status runConfigYaml tags { key value } } } }",
            {"id": run_id},
        )["data"]["runOrError"]


class Recorder:
    """The GraphQL mutations a page sent, with their answers (read once the page is done)."""

    def __init__(self, page: Page) -> None:
        self.responses: list[Response] = []
        page.on("response", self._on_response)

    def _on_response(self, response: Response) -> None:
        if "/graphql" in response.url and "mutation" in (response.request.post_data or ""):
            self.responses.append(response)

    def answers(self, operation: str) -> list[dict]:
        return [
            response.json()
            for response in self.responses
            if json.loads(response.request.post_data or "{}").get("operationName") == operation
        ]


Check = Callable[[Page, Ui, Recorder], None]
CHECKS: dict[tuple[str, ...], Check] = {}


def check(*steps: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        CHECKS[steps] = fn
        return fn

    return register


def _exactly(label: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*{re.escape(label)}\s*$")


def _editor_line(dialog: Locator, starts: str) -> Locator:
    return dialog.locator(".CodeMirror-line").filter(has_text=re.compile(rf"^\s*{starts}"))


def _replace_in_editor(page: Page, dialog: Locator, key: str, old: str, new: str) -> None:
    """Edit the launchpad's YAML as a user does: double-click the value, type the new one."""
    line = _editor_line(dialog, f"{key}:")
    line.get_by_text(old, exact=True).dblclick()
    page.keyboard.type(new)
    expect(_editor_line(dialog, f"{key}: {new}")).to_have_count(1)


def _launched_run(page: Page, recorder: Recorder, click: Callable[[], None]) -> str:
    with page.expect_response(lambda r: "LaunchPipelineExecution" in (r.request.post_data or "")):
        click()
    answer = recorder.answers("LaunchPipelineExecution")[-1]["data"]["launchPipelineExecution"]
    assert answer["__typename"] == "LaunchRunSuccess", answer
    return answer["run"]["id"]


@check("Jobs", "sweep_job", "Materialize ▾", "Open launchpad")
def _sweep_launchpad(page: Page, ui: Ui, recorder: Recorder) -> None:
    # "set `experiment` to an experiment name or file and click **Materialize**"
    dialog = _modal(page).filter(has_text="Launchpad")
    expect(dialog).to_be_visible()
    expect(_editor_line(dialog, "experiment: demo")).to_have_count(1)
    expect(_editor_line(dialog, "launch: true")).to_have_count(1)
    _replace_in_editor(page, dialog, "experiment", "demo", "smoke")
    button = dialog.get_by_role("button").filter(has_text=_exactly("Materialize"))
    run = ui.run(_launched_run(page, recorder, button.click))
    assert re.search(r"experiment: smoke\b", run["runConfigYaml"]), run
    assert re.search(r"launch: true\b", run["runConfigYaml"]), run
    assert run["status"] == "QUEUED", run  # no daemon here: the sweep never executes


@check("Runs", "Backfills")
def _backfills(page: Page, ui: Ui, recorder: Recorder) -> None:
    expect(page.get_by_role("tab", name="Backfills")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_text(ui.backfill_id, exact=True)).to_be_visible()


@check("Catalog", "bot_evaluation", "Partitions")
def _partitions(page: Page, ui: Ui, recorder: Recorder) -> None:
    # "shows each run's status"; "marks each affected run **Unsynced** (..., then a run)"
    expect(page.get_by_role("tab", name="Partitions")).to_have_attribute("aria-selected", "true")
    page.get_by_text(RUN, exact=True).first.click()
    expect(page.get_by_text(re.compile(r"^Unsynced"))).to_be_visible()
    expect(page.get_by_text("Materialized", exact=True).first).to_be_visible()


def _tick(page: Page, dialog: Locator, *runs: str) -> None:
    """'tick the runs under "Select a partition"' of the Materialize… dialog."""
    dialog.get_by_text("Select a partition or create one").click()
    for run in runs:
        page.get_by_role("menuitem").filter(has=page.get_by_role("checkbox", name=run)).click()
    dialog.get_by_text(re.compile("^Launch runs to materialize")).click()  # closes the list
    count = f"{len(runs)} partition" + ("s" if len(runs) > 1 else "")
    expect(dialog.get_by_text(count, exact=True)).to_be_visible()


@check("Catalog", "bot_evaluation", "Materialize…")
def _backfill_of_runs(page: Page, ui: Ui, recorder: Recorder) -> None:
    # "tick the runs under "Select a partition", **Launch backfill**"; "each backfill run
    # covers up to ten runs"
    dialog = _modal(page).filter(has_text="Launch runs to materialize bot_evaluation")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_text("maximum of 10 partitions per run")).to_be_visible()
    _tick(page, dialog, RUN, OTHER_RUN)
    with page.expect_response(lambda r: "LaunchPartitionBackfill" in (r.request.post_data or "")):
        dialog.get_by_role("button", name="Launch backfill").click()
    answer = recorder.answers("LaunchPartitionBackfill")[-1]["data"]["launchPartitionBackfill"]
    assert answer["__typename"] == "LaunchBackfillSuccess", answer
    backfill = ui.graphql(
        "query B($id: String!) { partitionBackfillOrError(backfillId: $id) "
        "{ ... on PartitionBackfill { partitionNames assetSelection { path } } } }",
        {"id": answer["backfillId"]},
    )["data"]["partitionBackfillOrError"]
    assert sorted(backfill["partitionNames"]) == [RUN, OTHER_RUN], backfill
    assert backfill["assetSelection"] == [{"path": ["bot_evaluation"]}], backfill


@check("Catalog", "agent_generation", "Materialize… ▾", "Open launchpad")
def _agent_rerun(page: Page, ui: Ui, recorder: Recorder) -> None:
    # "pick the run under *Partition*, set `rerun: true` in the config and click **Materialize**"
    dialog = _modal(page).filter(has_text="Launchpad")
    expect(dialog).to_be_visible()
    dialog.get_by_role("combobox", name="Partition").click()
    page.get_by_role("menuitem", name=RUN, exact=True).click()
    expect(_editor_line(dialog, "rerun: false")).to_have_count(1)
    _replace_in_editor(page, dialog, "rerun", "false", "true")
    button = dialog.get_by_role("button").filter(has_text=_exactly("Materialize"))
    run = ui.run(_launched_run(page, recorder, button.click))
    assert re.search(r"rerun: true\b", run["runConfigYaml"]), run
    assert {"key": "dagster/partition", "value": RUN} in run["tags"], run
    assert run["status"] == "QUEUED", run  # queued, never executed: no agent runs here


@check("Catalog", "agent_generation", "Materialize…")
def _agent_materialize(page: Page, ui: Ui, recorder: Recorder) -> None:
    # "tick the run under "Select a partition", **Launch 1 run**"
    dialog = _modal(page).filter(has_text="Launch runs to materialize agent_generation")
    expect(dialog).to_be_visible()
    _tick(page, dialog, RUN)
    button = dialog.get_by_role("button", name="Launch 1 run", exact=True)
    run = ui.run(_launched_run(page, recorder, button.click))
    assert {"key": "dagster/partition", "value": RUN} in run["tags"], run
    assert run["status"] == "QUEUED", run  # queued, never executed: no agent runs here


@check("Lineage", "Materialize all… ▾", "Materialize unsynced")
def _materialize_unsynced(page: Page, ui: Ui, recorder: Recorder) -> None:
    # "it judges each asset as a whole, so it does not list a per-run stage whose runs are
    # unsynced": the run's bot_evaluation is Unsynced (see the Partitions check), yet absent.
    dialog = _modal(page).filter(has_text="Materialize unsynced assets")
    expect(dialog.get_by_text("fct_runs", exact=True).first).to_be_visible()  # never materialized
    expect(dialog.get_by_text("bot_evaluation", exact=True)).to_have_count(0)


def _running_switch(page: Page) -> Locator:
    return page.get_by_role("row").filter(has_text=_exactly("Running")).get_by_role("checkbox")


@check("Automation", "automation_condition_sensor")
def _sensor(page: Page, ui: Ui, recorder: Recorder) -> None:
    # "shows its ticks and its **Running** switch" (on: "running by default")
    expect(page.get_by_text("Sensor in", exact=False).first).to_be_visible()
    expect(_running_switch(page)).to_be_checked()


@check("Automation", "new_model_backfill_schedule", "Preview tick result", "Continue")
def _schedule_preview(page: Page, ui: Ui, recorder: Recorder) -> None:
    # "the `sweep_job` request, or why it skips with what it would cost": nobody has swept
    # the standard sweep on this fresh instance, so it skips (spending is always asked for).
    dialog = _modal(page).filter(has_text="Preview tick result")
    expect(dialog.get_by_text("nobody has swept standard", exact=False).first).to_be_visible(
        timeout=90_000
    )
    expect(dialog.get_by_text("at the registry's prices", exact=False).first).to_be_visible()
    dialog.get_by_role("button", name="Close").click()
    # "The schedule's page also shows its **Running** switch."
    expect(_running_switch(page)).to_be_checked()


@check("Deployment", "Code locations", "Reload")
def _reload(page: Page, ui: Ui, recorder: Recorder) -> None:
    deadline = time.monotonic() + 60
    while not recorder.answers("ReloadRepositoryLocationMutation"):
        assert time.monotonic() < deadline, "clicking Reload sent no reload request"
        page.wait_for_timeout(250)
    answer = recorder.answers("ReloadRepositoryLocationMutation")[-1]["data"]
    entry = answer["reloadRepositoryLocation"]
    assert entry["__typename"] == "WorkspaceLocationEntry", entry
    expect(
        page.get_by_text(re.compile(r"^(\d+ seconds?|a few seconds) ago$")).first
    ).to_be_visible()


@check("Deployment", "Concurrency")
def _pools(page: Page, ui: Ui, recorder: Recorder) -> None:
    # "`bench ui`, `bench run` and `bench pools` store these limits in the instance" (the
    # fixture ran `bench pools`)
    tab = page.get_by_role("tab", name="Concurrency", exact=True)
    expect(tab).to_have_attribute("aria-selected", "true")
    for pool in ("agents", "builds", "browser", "warehouse"):
        expect(page.get_by_text(pool, exact=True).first).to_be_visible()


@check("Catalog", "mart_main_effects", "[Show Markdown]")
def _chart(page: Page, ui: Ui, recorder: Recorder) -> None:
    image = page.get_by_role("dialog").locator(f'img[alt="{CHART}"]')
    expect(image).to_be_visible()
    assert image.evaluate("i => i.src.startsWith('data:image/png') && i.naturalWidth > 0")


# Sentences of the docs (whitespace aside) checked the same way: the steps that reach the page
# (a documented path's beginning), then what the sentence says.
SENTENCES: dict[str, tuple[tuple[str, ...], Check]] = {}


def _bare_materialize(page: Page, ui: Ui, recorder: Recorder) -> None:
    run = ui.run(_launched_run(page, recorder, _find(page, "Materialize", first=False).click))
    assert run["status"] == "QUEUED", run
    # The button sends no config of its own: the job's defaults are what the run executes.
    from bench_pipeline.definitions import defs

    launched = yaml.safe_load(run["runConfigYaml"]) or {}
    resolved = dg.validate_run_config(defs.resolve_job_def("sweep_job"), launched)
    config = resolved["ops"]["experiment_design"]["config"]
    assert (config["experiment"], config["launch"]) == ("demo", True)
    # The launch-time settings at the environment's defaults (docs/orchestration.md).
    assert config["bot_endurance_s"] == settings.checked_bot_endurance_s()
    assert config["dry_run"] is False and config["only_models"] == []


SENTENCES[
    "The **Materialize** button of the job page itself launches at once with the defaults (`demo`)."
] = (("Jobs", "sweep_job"), _bare_materialize)


# ---------------------------------------------------------------------------------------------
# Fast: the docs and the checks agree.
# ---------------------------------------------------------------------------------------------


def test_every_documented_ui_path_has_a_check_and_every_check_a_path() -> None:
    paths = doc_paths()
    assert paths, "no bold UI path found in the docs"
    unchecked = [p.sentences[0] for s, p in paths.items() if s not in CHECKS]
    assert not unchecked, (
        "these UI paths of the docs have no check in tests/dagster/test_ui_paths.py "
        "(add one to CHECKS, after clicking them in the UI):\n" + "\n".join(unchecked)
    )
    unused = [" → ".join(s) for s in CHECKS if s not in paths]
    assert not unused, "no doc writes these checked UI paths any more:\n" + "\n".join(unused)
    for steps, path in paths.items():
        assert steps[0] in NAVIGATION, f"{path.sentences[0]}: must start at the navigation"
    # The paths issue 15 is about: the launchpad from the job page, in the README and the guide.
    launch = paths[("Jobs", "sweep_job", "Materialize ▾", "Open launchpad")].sentences
    assert {s.split(":")[0] for s in launch} >= {"README.md", "docs/orchestration.md"}


def test_every_checked_sentence_is_in_the_docs() -> None:
    docs = " ".join(" ".join(doc.read_text(encoding="utf-8").split()) for doc in DOCS)
    missing = [sentence for sentence in SENTENCES if sentence not in docs]
    assert not missing, "no doc says this any more (update SENTENCES):\n" + "\n".join(missing)


def test_no_ui_path_is_written_outside_bold() -> None:
    """A path in plain text would escape the browser test below."""
    plain = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in PLAIN_PATH.finditer(text):
            plain.append(f"{doc.relative_to(REPO)}:{_line_of(text, match.start())}: {match[0]}")
    assert not plain, "write UI paths as **A** → **B** so they are tested:\n" + "\n".join(plain)


def test_the_sweep_jobs_description_names_a_documented_path() -> None:
    """The job page shows this description; its path must be one the docs (and so the browser
    test) have."""
    from bench_pipeline.definitions import defs

    description = defs.resolve_job_def("sweep_job").description or ""
    named = [
        tuple(m[0].split(" → "))
        for m in re.finditer(r"(?:" + "|".join(NAVIGATION) + r") → \w+", description)
    ]
    assert named, description
    for steps in named:
        assert steps in doc_paths(), (
            f"{' → '.join(steps)} (sweep_job's description) is not in the docs"
        )


# ---------------------------------------------------------------------------------------------
# Slow: click every path in Chromium.
# ---------------------------------------------------------------------------------------------


def _graphql(port: int, query: str, variables: dict | None = None) -> dict:
    return graphql(port, query, variables, timeout=30)


def _png() -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(3, 2))
    axes.bar(["a", "b"], [1.0, 2.0])
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()


def _seed(home: Path, data: Path, env: dict[str, str]) -> None:
    """The state the documented pages talk about: two registered runs whose bot results are
    from an older bot (so Unsynced), the effects mart with a chart, the pools `bench pools`
    sets."""
    from assets.effects_analysis.assets import _image

    subprocess.run(
        [str(Path(sys.executable).with_name("bench")), "pools"],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    chart = data / f"{CHART}.png"
    chart.parent.mkdir(parents=True, exist_ok=True)
    chart.write_bytes(_png())
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions("runs", [RUN, OTHER_RUN])
        for run in (RUN, OTHER_RUN):
            for asset in ("run_spec", "sandboxed_build", "bot_evaluation"):
                instance.report_runless_asset_event(
                    dg.AssetMaterialization(
                        asset, partition=run, tags={"dagster/code_version": "an-older-version"}
                    )
                )
        instance.report_runless_asset_event(
            dg.AssetMaterialization(
                "mart_main_effects",
                metadata={f"chart/ui-paths/{CHART}": dg.MetadataValue.md(_image(chart))},
            )
        )


LAUNCH_BACKFILL = """
mutation Backfill($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
  }
}
"""


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory, dagster_webserver: Path) -> Iterator[Ui]:
    tmp = tmp_path_factory.mktemp("ui_paths")
    home = tmp / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    env = {**os.environ, "DAGSTER_HOME": str(home), "BENCH_DATA_DIR": str(tmp / "data")}
    _seed(home, tmp / "data", env)
    port = _free_port()
    log_path = tmp / "webserver.log"
    log = log_path.open("w")
    webserver = Path(sys.executable).with_name("dagster-webserver")
    process = subprocess.Popen(
        [str(webserver), "-w", str(REPO / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its code server stops with it
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                nodes = _graphql(port, "{ assetNodes { assetKey { path } } }")["data"]["assetNodes"]
                if nodes:
                    break
            except (OSError, KeyError, TypeError):
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the webserver did not start:\n" + log_path.read_text()[-3000:])
            time.sleep(0.5)
        launched = _graphql(
            port,
            LAUNCH_BACKFILL,
            {"params": {"assetSelection": [{"path": ["bot_evaluation"]}], "partitionNames": [RUN]}},
        )["data"]["launchPartitionBackfill"]
        assert launched["__typename"] == "LaunchBackfillSuccess", launched
        yield Ui(f"http://127.0.0.1:{port}", port, launched["backfillId"], tmp)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        log.close()


def _find(page: Page, label: str, first: bool, timeout_s: float = 45) -> Locator:
    """What a user clicks for one step: a navigation entry first, then a tab, a menu item, a
    button or a link showing exactly that label; "X ▾" is the arrow button right of button X."""
    exact = _exactly(label.removesuffix(DROPDOWN))
    if first:
        options = [page.get_by_role("navigation").get_by_text(label, exact=True)]
    elif label.endswith(DROPDOWN):
        options = [page.locator("button").filter(has_text=exact)]
    else:
        options = [
            page.get_by_role("tab", name=label, exact=True),
            page.get_by_role("menuitem").filter(has_text=exact),
            page.get_by_role("dialog").get_by_role("button").filter(has_text=exact),
            page.locator("button").filter(has_text=exact),
            page.get_by_text(label, exact=True),
        ]
    deadline = time.monotonic() + timeout_s
    while True:
        for option in options:
            visible = option.filter(visible=True)
            if visible.count():
                target = visible.first
                if label.endswith(DROPDOWN):
                    target = target.locator("xpath=following::button[1]")
                return target
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing labelled {label!r} to click on {page.url}")
        page.wait_for_timeout(250)


def _unchecked(page: Page, ui: Ui, recorder: Recorder) -> None:
    raise AssertionError(
        f"clicked through to {page.url}, but no check in CHECKS says what the docs promise there"
    )


def _checked_page(browser: Browser, ui: Ui, steps: tuple[str, ...], verify: Check) -> None:
    # Tall: the catalog draws only the rows in view.
    page = browser.new_page(viewport={"width": 1400, "height": 2000})
    page.set_default_timeout(45_000)
    # Dagster's first-visit "Join the community" dialog covers the page once.
    skip = page.get_by_role("button", name="Skip", exact=True)
    page.add_locator_handler(skip, lambda: skip.click())
    recorder = Recorder(page)
    try:
        page.goto(ui.base + "/")
        for index, step in enumerate(steps):
            _find(page, step, first=index == 0).click()
        verify(page, ui, recorder)
    except Exception:
        shot = ui.screenshots / ("_".join(re.sub(r"\W+", "", s) for s in steps) + ".png")
        with contextlib.suppress(Exception):
            page.screenshot(path=str(shot))
        raise AssertionError(f"screenshot: {shot}\n{traceback.format_exc(limit=4)}") from None
    finally:
        page.close()


@pytest.mark.slow
def test_every_documented_ui_path_can_be_clicked(ui: Ui, chromium: str) -> None:
    """Each bold path of the docs, then each sentence of SENTENCES, in one browser; every
    failure is reported with the doc lines it comes from."""
    work = [
        (steps, CHECKS.get(steps, _unchecked), path.sentences)
        for steps, path in doc_paths().items()
    ]
    work += [(steps, fn, [sentence]) for sentence, (steps, fn) in SENTENCES.items()]
    failures = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_ARGS)
        try:
            for steps, fn, sentences in work:
                try:
                    _checked_page(browser, ui, steps, fn)
                except AssertionError as error:
                    failures.append(
                        f"{' → '.join(steps)}\n  written at: "
                        + "\n    ".join(sentences)
                        + f"\n  {error}"
                    )
        finally:
            browser.close()
    assert not failures, "\n".join(failures)
