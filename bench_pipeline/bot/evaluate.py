"""One evaluation: serve the game, open it in Chromium, play it, derive the verdicts.

A hard time cap holds whatever the game does, in two layers:

- `evaluate` runs the evaluation in a child process group of its own (`isolate.py`) and
  kills that group, the browser and everything else the evaluation started when the cap
  passes, whatever the child is doing; on SIGINT too. The verdicts then say the cap was
  reached.
- Inside the child (`evaluate_in_process`) a watchdog thread kills this evaluation's
  Chromium 5 s before the cap, so the blocked Playwright call fails and the verdicts are
  derived from what was recorded until then. A page that floods the browser's events
  leaves a backlog in Playwright's driver that Python would still be reading minutes
  later: the watchdog then kills the driver too, which drops the backlog.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from bench_pipeline.bot.browser import (
    CHROMIUM_ARGS,
    MISSING_BROWSER_HELP,
    BrowserMissingError,
    chromium_executable,
)
from bench_pipeline.bot.contain import Containment, contained_browser, install_guard
from bench_pipeline.bot.contract import BOT_VERSION, Calibration, Evaluation, contract_start
from bench_pipeline.bot.observations import ObservationLog, console_text
from bench_pipeline.bot.play import Bot
from bench_pipeline.bot.scratch import (
    CONSOLE_FILE,
    EVALUATION_FILE,
    OBSERVATIONS_FILE,
    kill_matching,
    write_atomic,
)
from bench_pipeline.bot.session import GameSession, PageGone
from bench_pipeline.bot.timings import TIMINGS
from bench_pipeline.bot.verdicts import judge
from bench_pipeline.bot.words import probe_script
from bench_pipeline.warehouse.budget import ArtifactBudget

PROBE = probe_script()  # probe.js with the word lists of words.json in place
HARD_CAP_S = TIMINGS.hard_cap_s
# Play ends this long after the endurance window's length from the evaluation's start:
# loading, the start and the top-out past the window fit in it, so an evaluation lasts at
# most about a minute (30 s window) whatever the game does. A game that took long to
# start gets a shortened top-out (or a window observed in part: INCONCLUSIVE), not a
# longer evaluation.
BEYOND_WINDOW_S = TIMINGS.beyond_window_s
# A shorter window (a quick demo run) keeps the contract window's budget: calibrating a
# slow game takes as long whatever the window.
CONTRACT_WINDOW_S = TIMINGS.contract_window_s
# Failed resource loads, and the browser's own word that the web-app manifest a page links
# could not be fetched: the browser's messages about missing files, not the game's code.
IGNORED_CONSOLE = ("Failed to load resource", "net::ERR_", "favicon", "Manifest fetch from")
# What the browser says when a sound cannot play: its file is missing (offline, or not in
# the checkout), autoplay is refused before a user gesture, or a pause() interrupted a
# play() still loading. Like a failed resource load, that is not the game's code failing.
IGNORED_PAGE_ERRORS = (
    "The play() request was interrupted",
    "play() failed because the user didn't interact",
    "no supported source",
    "The element has no supported sources",
)
# What Chromium logs when a page reaches for a local file; recorded as a blocked attempt.
FILE_ACCESS_MESSAGES = ("Not allowed to load local resource", 'URL scheme "file"')


def is_ignored_console(text: str) -> bool:
    """A console.error that is the browser reporting a missing file, not the game failing."""
    return any(marker in text for marker in IGNORED_CONSOLE)


def _kill_own_driver() -> int:
    """Kill the Playwright driver (node, `run-driver`) this process started; how many.

    Only called in an isolated evaluation's child, which runs one driver: in a process
    that evaluates several games at once this would end the others' drivers too."""
    killed = 0
    me = os.getpid()
    for pid_dir in Path("/proc").glob("[0-9]*"):
        try:
            stat_text = (pid_dir / "stat").read_text()
            parent = int(stat_text.rsplit(")", 1)[1].split()[1])
            if parent == me and b"run-driver" in (pid_dir / "cmdline").read_bytes():
                os.kill(int(pid_dir.name), signal.SIGKILL)
                killed += 1
        except (OSError, ValueError, IndexError):
            continue
    return killed


# After the watchdog killed the browser, the evaluation gets this long to notice before the
# driver is killed as well (a flood of events queued in the driver would keep it busy).
DRIVER_GRACE_S = 3.0


class _Watchdog:
    """Kills the evaluation's Chromium at the monotonic time `at`, and (`end_driver`) the
    Playwright driver `DRIVER_GRACE_S` later if the evaluation has not come back by then."""

    def __init__(self, marker: str, at: float, log: ObservationLog, end_driver: bool):
        self.marker, self.at, self.log, self.end_driver = marker, at, log, end_driver
        self.fired = threading.Event()
        self._cancelled = threading.Event()
        self._timers: list[threading.Timer] = []

    def start(self) -> None:
        self._later(max(0.0, self.at - time.monotonic()), self._fire)

    def _later(self, seconds: float, action: Callable[[], None]) -> None:
        if self._cancelled.is_set():
            return
        timer = threading.Timer(seconds, action)
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _fire(self) -> None:
        self.fired.set()
        self.log.note(f"hard time cap reached at {self.log.now():.0f}s: closing the browser")
        kill_matching(self.marker)
        if self.end_driver:
            self._later(DRIVER_GRACE_S, self._end_driver)

    def _end_driver(self) -> None:
        if not self._cancelled.is_set() and _kill_own_driver():
            self.log.note(
                f"the evaluation was still busy {DRIVER_GRACE_S:.0f}s after the browser was "
                "closed (events queued by the page): the browser driver was ended too"
            )

    def cancel(self) -> None:
        self._cancelled.set()
        for timer in self._timers:
            timer.cancel()


# Console messages of any kind in one second past which the bot stops listening to the
# console: every message crosses Playwright's driver into Python, and a page logging
# thousands per frame starves the bot's own calls (it never finds the field) and leaves a
# backlog that outlives the browser. What was heard until then is kept; the log says when.
CONSOLE_FLOOD_PER_S = 1000


def _attach_listeners(page, log: ObservationLog, containment: Containment | None = None) -> None:
    flood = {"since": 0.0, "count": 0}

    def on_console(message) -> None:
        now = log.now()
        if now - flood["since"] >= 1.0:
            flood["since"], flood["count"] = now, 0
        flood["count"] += 1
        if flood["count"] > CONSOLE_FLOOD_PER_S and log.console_muted_at is None:
            log.console_muted_at = now
            log.note(
                f"console flood: more than {CONSOLE_FLOOD_PER_S} messages in one second; "
                "the bot stopped listening to the console (later messages are not counted)"
            )
            # Unsubscribes: the driver stops sending console events at all.
            with contextlib.suppress(Exception):
                page.remove_listener("console", on_console)
        if message.type != "error":
            return
        text = message.text
        if containment is not None and any(m in text for m in FILE_ACCESS_MESSAGES):
            containment.record(log.now(), "file", text)
        if is_ignored_console(text):
            log.ignored_console.append((log.now(), text[:300]))
        else:
            log.console_errors.append((log.now(), text[:300]))

    def on_dialog(dialog) -> None:
        log.dialogs.append((log.now(), dialog.type, dialog.message[:200]))
        with contextlib.suppress(PlaywrightError):
            dialog.dismiss()

    def on_crash(_page) -> None:
        log.crashed_at = log.now()
        log.note("the page crashed")

    page.on("console", on_console)

    def on_page_error(error) -> None:
        text = str(error)[:300]
        if any(marker in text for marker in IGNORED_PAGE_ERRORS):
            log.ignored_console.append((log.now(), text))
        else:
            log.page_errors.append((log.now(), text))

    page.on("pageerror", on_page_error)
    page.on("dialog", on_dialog)
    page.on("crash", on_crash)

    def on_navigated(frame) -> None:
        if frame != page.main_frame:
            return
        url = frame.url.split("#", 1)[0]
        log.note(f"navigated to {frame.url}")
        if home["url"] is None:
            home["url"] = url
        elif url != home["url"] and log.navigated_away_at is None:
            if log.follow_pages > 0 and _same_site(url, home["url"]):
                # Before the game started, a page of the same site replacing the first
                # one is a step towards the game (a menu page whose Play button opens
                # game.html): the bot goes on there.
                log.follow_pages -= 1
                home["url"] = url
                log.note(
                    "a page of the same site replaced the first before the game started: followed it"
                )
                return
            # The game is gone: whatever is on screen now is another page.
            log.navigated_away_at = log.now()

    home: dict[str, str | None] = {"url": None}
    page.on("framenavigated", on_navigated)


def _same_site(url: str, home: str) -> bool:
    a, b = urlsplit(url), urlsplit(home)
    # Served games only: a file: URL has no host, and every file would be "the same site".
    return a.scheme in {"http", "https"} and (a.scheme, a.netloc) == (b.scheme, b.netloc)


def _play(bot: Bot) -> None:
    log = bot.log
    if not bot.start():
        log.note("no start mechanism produced a piece")
        return
    steps = (
        bot.observe_gravity,
        bot.discover_moves,
        bot.discover_soft_drop,
        bot.discover_hard_drop,
        bot.discover_rotate,
        bot.check_walls,
    )
    for step in steps:
        if bot.time_left() <= 0:
            return
        step()
    log.note(f"controls: {bot.controls}")
    bot.play_window()


def evaluate(
    target: str,
    endurance_s: float = 30.0,
    artifacts: Path | None = None,
    hard_cap_s: float = HARD_CAP_S,
    *,
    isolated: bool = True,
) -> Evaluation:
    """Evaluate one game (a directory or a loopback URL). Raises only when the bot cannot run.

    `isolated` (the default): in a child process group that ends at `hard_cap_s` whatever
    the page does (`isolate.py`). In-process (`isolated=False`, for tests that patch the
    bot) only the in-process watchdog holds the cap."""
    if isolated:
        from bench_pipeline.bot.isolate import evaluate_isolated

        return evaluate_isolated(target, endurance_s, artifacts, hard_cap_s)
    return evaluate_in_process(target, endurance_s, artifacts, hard_cap_s)


def evaluate_in_process(
    target: str,
    endurance_s: float = 30.0,
    artifacts: Path | None = None,
    hard_cap_s: float = HARD_CAP_S,
    *,
    workdir: Path | None = None,
    started: float | None = None,
    end_driver: bool = False,
) -> Evaluation:
    """The evaluation itself, in this process. `workdir`: the scratch folder to use (made
    and removed here when None); `started`: the monotonic time the cap counts from (an
    isolated evaluation's parent started the clock); `end_driver`: this process runs only
    this evaluation, so the watchdog may end the Playwright driver (see `_Watchdog`)."""
    started = time.monotonic() if started is None else started
    log = ObservationLog(endurance_s=endurance_s, target=target, bot_version=BOT_VERSION)
    bot: Bot | None = None
    loaded = False
    load_error: str | None = None
    own_workdir = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="bench-bot-")) if workdir is None else workdir
    workdir.mkdir(parents=True, exist_ok=True)
    screenshots: dict[str, bytes] = {}
    containment: Containment | None = None
    # 5 s before the cap: closing the browser and deriving the verdicts fit in them.
    watchdog = _Watchdog(str(workdir), started + hard_cap_s - 5.0, log, end_driver)
    try:
        with (
            sync_playwright() as p,
            contained_browser(
                target, workdir, chromium_executable() or p.chromium.executable_path
            ) as containment,
        ):
            url = containment.url
            try:
                context = p.chromium.launch_persistent_context(
                    str(workdir / "profile"),
                    executable_path=containment.executable,
                    headless=True,
                    args=CHROMIUM_ARGS + containment.extra_args,
                    viewport={"width": 1280, "height": 1100},
                    device_scale_factor=1,
                    service_workers="block",
                )
            except PlaywrightError as error:
                raise BrowserMissingError(
                    f"{MISSING_BROWSER_HELP} ({str(error).splitlines()[0]})"
                ) from error
            watchdog.start()
            try:
                install_guard(context, containment, log.now)
                context.add_init_script(PROBE)
                page = context.pages[0] if context.pages else context.new_page()
                _attach_listeners(page, log, containment)
                session = GameSession(page, log)
                # Play ends within the time budget, and early enough before the hard
                # cap to leave time for the verdicts.
                play_s = min(
                    max(endurance_s, CONTRACT_WINDOW_S) + BEYOND_WINDOW_S,
                    hard_cap_s - TIMINGS.cap_margin_s,
                )
                bot = Bot(session, endurance_s, started + play_s)
                try:
                    response = page.goto(url, wait_until="load", timeout=15000)
                    loaded = response is None or response.ok
                    if not loaded:
                        load_error = f"HTTP {response.status}"
                except PlaywrightError as error:
                    load_error = str(error).splitlines()[0]
                    loaded = "Timeout" in load_error  # slow 'load' event: the page is still there
                if loaded:
                    page.wait_for_timeout(400)
                    shot = session.screenshot_png()
                    if shot:
                        screenshots["01-loaded.png"] = shot
                    try:
                        _play(bot)
                    except PageGone as gone:
                        log.note(f"stopped interacting: {gone}")
                        bot.game_over_before_gone()
                    except Exception as error:
                        # A game the bot did not foresee must not crash the evaluation:
                        # what was observed until here still yields verdicts.
                        where = traceback.extract_tb(error.__traceback__)[-1]
                        log.note(
                            f"bot error, play stopped: {error!r} "
                            f"at {Path(where.filename).name}:{where.lineno}"
                        )
                    shot = session.screenshot_png()
                    if shot:
                        screenshots["02-end.png"] = shot
            finally:
                with contextlib.suppress(Exception):
                    context.close()
    except Exception as error:
        # Past the cap the browser (and perhaps the driver) was killed under Playwright's
        # feet: whatever it raises on the way out, the verdicts come from what was seen.
        if not watchdog.fired.is_set():
            raise
        log.note(f"after the cap: {type(error).__name__}: {str(error)[:200]}")
    finally:
        watchdog.cancel()
        if own_workdir:
            shutil.rmtree(workdir, ignore_errors=True)

    log.loaded, log.load_error = loaded, load_error
    if containment is not None:
        log.blocked_requests = containment.to_json().get("blocked_requests", [])
    if bot is not None:
        with contextlib.suppress(Exception):
            bot.scan_clears()  # the frames recorded after the last piece played
        bot.record_facts()
    log.duration_s = time.monotonic() - started
    judgement = judge(log)
    calibration = calibration_of(log, judgement.score_source)
    evaluation = Evaluation(
        target=target,
        calibration=calibration,
        results=judgement.results,
        duration_s=log.duration_s,
        notes=[f"{t:.2f}s {text}" for t, text in log.notes],
        containment=containment.to_json() if containment is not None else None,
    )
    if artifacts is not None:
        write_artifacts(artifacts, evaluation, log, screenshots)
    return evaluation


def calibration_of(log: ObservationLog, score_source: str | None) -> Calibration:
    """The contract's calibration, from the observation log."""
    calibration = Calibration()
    g = log.field_seen
    if g is not None:
        calibration.renderer = g.renderer
        calibration.cols, calibration.rows = g.cols, g.rows
        calibration.board_rect = {"x": g.x, "y": g.y, "w": g.width, "h": g.height}
        calibration.locator = g.locator
    calibration.start = contract_start(log.facts.start_mechanism)
    calibration.controls = dict(log.facts.controls)
    calibration.score_source = score_source
    return calibration


def write_artifacts(
    folder: Path,
    evaluation: Evaluation,
    log: ObservationLog,
    screenshots: dict[str, bytes],
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    # What an earlier evaluation left here must not count against this one's budget.
    for name in (OBSERVATIONS_FILE, CONSOLE_FILE):
        (folder / name).unlink(missing_ok=True)
    write_atomic(folder / EVALUATION_FILE, json.dumps(evaluation.to_json(), indent=2).encode())
    # In an artifact store, everything but evaluation.json counts against the run's
    # artifact budget (a refusal is noted in the run's REFUSED.txt); elsewhere (`bench
    # evaluate --artifacts`) it does not. Both logs are bounded in bytes whatever the page
    # did (observations.LIMITS), so a flood cannot fill the store.
    budget = ArtifactBudget.for_folder(folder)
    files = {
        # The one log the verdicts were derived from: `bench rejudge` derives them again.
        OBSERVATIONS_FILE: log.bounded_json().encode(),
        CONSOLE_FILE: console_text(log).encode(),
        **screenshots,
    }
    for name, data in files.items():
        if budget is None or budget.admit(name, len(data)) is None:
            write_atomic(folder / name, data)
