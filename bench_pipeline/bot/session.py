"""The bot's hands and eyes on one page: read the playfield, press keys, record everything.

The playfield is read from a screenshot of the board: one sample (the mean colour of the
middle of each cell, away from grid lines) per cell, compared with the cell's own
background colour learnt before the first piece appeared. Screenshots work the same
for canvas (2D or WebGL), DOM and SVG boards, and see what a player sees.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from PIL import Image
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Frame as Frame_
from playwright.sync_api import Page

from bench_pipeline.bot.geometry import BoardGeometry, CanvasField, choose_board
from bench_pipeline.bot.observations import EventLog, Frame
from bench_pipeline.bot.pixel_field import field_from_pixels
from bench_pipeline.bot.timings import TIMINGS

SCREENSHOT_TIMEOUT_MS = TIMINGS.screenshot_timeout_ms
# How long a page that missed a query's timeout is given to answer a plain ping before it
# is called frozen: on a loaded machine a live page can miss one 3 s timeout.
ALIVE_PING_MS = TIMINGS.alive_ping_ms
# A page that keeps missing timeouts while it answers costs each read up to three timeouts:
# after this many the bot stops waiting on it (blind: play ends, the game is not blamed).
SLOW_ANSWERS_MAX = 3
KEY_HOLD_MS = TIMINGS.key_hold_ms
PIXEL_LOOK_EVERY_S = TIMINGS.pixel_look_every_s
DEFAULT_THRESHOLD = 40.0
# The lowest threshold: a cell's middle that differs from its background by less is not
# drawn on (anti-aliasing, a faint translucent ghost, an overlay's tint).
MIN_THRESHOLD = 18.0


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


def _navigating(error: Exception) -> bool:
    text = str(error).lower()
    return "destroyed" in text or "navigat" in text


def _timed_out(error: Exception) -> bool:
    return "timeout" in str(error).lower()


def _helper_broke(error: Exception) -> bool:
    """An error raised inside Playwright's page helper, not a page that froze, closed,
    crashed or navigated away."""
    text = str(error).lower()
    gone = any(word in text for word in ("timeout", "closed", "crash", "target"))
    return not (gone or _navigating(error))


class PageGone(Exception):
    """The page crashed, froze or closed: no more interaction is possible."""


class GameSession:
    def __init__(self, page: Page, log: EventLog) -> None:
        self.page = page
        # The frame the game lives in: the page itself, or a same-origin <iframe> that
        # holds the field (a page that only wraps the game). Queries and clicks go there.
        self.frame: Frame_ = page.main_frame
        self.log = log
        self.geometry: BoardGeometry | None = None
        self.reference: np.ndarray | None = None  # (rows, cols, 3) background per cell
        # The samples' median as seen, before odd cells took their row's colour: walls
        # drawn as cells beside the field are odd in every row, and only this shows them.
        self.seen_background: np.ndarray | None = None
        self.threshold = DEFAULT_THRESHOLD
        self._last: Frame | None = None
        self._slices: list[tuple[slice, slice]] = []
        # The last read's colours and distances per cell, for checks that need more than
        # the filled/empty mask (a piece fainter than the threshold).
        self.last_colours: np.ndarray | None = None
        self.last_distances: np.ndarray | None = None
        self._pixel_fields: dict[int, CanvasField] = {}  # canvas index -> last found
        self._pixel_looked: dict[int, float] = {}  # canvas index -> when last looked
        # Set once Playwright's helper in the page's world failed on a live page.
        self.plain_evaluation = False
        self._url = page.url  # the page last asked: a new one is waited for once
        self.slow_answers = 0  # timeouts of a page that still answered (a loaded machine)
        self._cdp: Any = None  # the DevTools session the code and state readers share

    def cdp(self) -> Any:
        """The page's DevTools (CDP) session, opened once; None where it cannot be (the
        readers of the game's code and state then give way to the screen alone)."""
        if self._cdp is None and not self.gone:
            try:
                self._cdp = self.page.context.new_cdp_session(self.page)
            except PlaywrightError as error:
                self.log.note(f"no DevTools session: {str(error).splitlines()[0][:120]}")
                self._cdp = False
        return self._cdp or None

    # ---- page state -------------------------------------------------------------------
    @property
    def gone(self) -> bool:
        return any(
            t is not None
            for t in (
                self.log.crashed_at,
                self.log.frozen_at,
                self.log.navigated_away_at,
                self.log.blind_at,
            )
        )

    def evaluate(self, script: str, default: Any = None, retried: bool = False) -> Any:
        """Run a probe query; a page that no longer answers marks the session frozen."""
        if self.gone:
            raise PageGone("page is gone")
        if self.plain_evaluation:
            return self._evaluate_plain(script, default)
        try:
            # wait_for_function has a timeout where evaluate has none: a frozen page
            # (an endless loop in its main thread) must not hang the bot.
            handle = self.frame.wait_for_function(
                f"() => {{ try {{ return {{v: ({script})}}; }} catch (e) {{ return {{v: null}}; }} }}",
                timeout=3000,
            )
            return handle.json_value()["v"]
        except PlaywrightError as error:
            if _navigating(error) and not self.gone and self.page.url != self._url:
                # The page was replaced by another of the same site that the bot
                # follows (log.follow_pages): ask the new one once it has loaded.
                self._url = self.page.url
                try:
                    self.page.wait_for_load_state("load", timeout=10000)
                except PlaywrightError as waited:
                    self._gone(waited)
                return self.evaluate(script, default)
            if _helper_broke(error) and self._answers():
                # Playwright's helper script in the page's own world broke (the game
                # replaced a built-in it uses, e.g. `class Map` at top level), yet the
                # page is alive: read it with plain evaluations from now on.
                value = self._evaluate_plain(script, default)
                self.plain_evaluation = True
                self.log.note(
                    "Playwright's page helper failed on this page "
                    f"({str(error).splitlines()[0][:160]}); it is alive, so the bot reads it "
                    "with plain evaluations (JSON text) from now on"
                )
                return value
            if _timed_out(error) and not retried and self._slow_not_frozen(error):
                return self.evaluate(script, default, retried=True)
            self._gone(error)
            return default

    def _answers(self, timeout_ms: float = 3000) -> bool:
        """Whether the page's main thread still answers, asked from Playwright's isolated
        world (which the page's own scripts cannot reach), with a timeout."""
        try:
            self.page.locator(":root").wait_for(state="attached", timeout=timeout_ms)
            return True
        except PlaywrightError:
            return False

    def _slow_not_frozen(self, error: Exception) -> bool:
        """After a timeout: does the page still answer a plain ping, given longer? On a
        loaded machine a live page can miss one timeout; a frozen main thread answers
        nothing. A page that answers is asked again once, not called frozen."""
        if not self._answers(ALIVE_PING_MS):
            return False
        if self.slow_answers >= SLOW_ANSWERS_MAX:
            self.log.blind_at = self.log.now()
            self.log.note(
                f"the page answers but missed {SLOW_ANSWERS_MAX + 1} timeouts: too slow to "
                "observe, play ends"
            )
            raise PageGone(str(error).splitlines()[0])
        self.slow_answers += 1
        self.log.note(
            f"the page missed a timeout but still answers: slow, not frozen "
            f"({str(error).splitlines()[0][:100]})"
        )
        return True

    def _evaluate_plain(self, script: str, default: Any) -> Any:
        """A probe query by page.evaluate, its value carried as JSON text encoded with the
        built-ins the probe kept. page.evaluate has no timeout, so the page is first asked,
        with one, whether it answers: a frozen page marks the session frozen."""
        if not self._answers():
            self._gone(PlaywrightError("Timeout 3000ms exceeded: the page stopped answering"))
        try:
            text = self.frame.evaluate(
                "() => { try { const encode = (window.__bench && window.__bench.encode) || "
                f"JSON.stringify; return encode({{v: ({script})}}); }} catch (e) {{ return null; }} }}"
            )
        except PlaywrightError as error:
            self._gone(error)
            return default
        if not isinstance(text, str):
            return default
        try:
            return json.loads(text).get("v", default)
        except (ValueError, AttributeError):
            return default

    def _gone(self, error: Exception) -> None:
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        if "Timeout" in text or "timeout" in text:
            if self.log.frozen_at is None:
                self.log.frozen_at = self.log.now()
                self.log.note(f"page stopped answering: {text}")
        elif self.log.crashed_at is None:
            self.log.crashed_at = self.log.now()
            self.log.note(f"page closed or crashed: {text}")
        raise PageGone(text) from error

    def press(self, key: str, purpose: str = "") -> None:
        if self.gone:
            raise PageGone("page is gone")
        self.log.actions.append((self.log.now(), key, purpose))
        try:
            # Held for a short moment, as a finger does: a game that polls the keys held
            # down once per frame (60 Hz) misses a key released in the same instant.
            self.page.keyboard.press(key, delay=KEY_HOLD_MS)
        except PlaywrightError as error:
            self._gone(error)

    def key_down(self, key: str, purpose: str = "") -> None:
        """Hold `key` down (until `key_up`): games that drop faster only while the key is
        held read the key's state, not its presses."""
        if self.gone:
            raise PageGone("page is gone")
        self.log.actions.append((self.log.now(), key, f"{purpose} (held)"))
        try:
            self.page.keyboard.down(key)
        except PlaywrightError as error:
            self._gone(error)

    def key_up(self, key: str) -> None:
        if self.gone:
            return
        try:
            self.page.keyboard.up(key)
        except PlaywrightError as error:
            self._gone(error)

    def wait(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    # ---- the playfield ---------------------------------------------------------------
    def locate(self) -> BoardGeometry | None:
        geometry = self._board_in(self.frame)
        if geometry is None and self.frame is self.page.main_frame:
            geometry = self._board_in_a_child_frame()
        if geometry is not None and geometry != self.geometry:
            self.geometry = geometry
            self.reference = self.seen_background = None
            self._slices = []
            self.log.note(
                f"playfield: {geometry.renderer} {geometry.cols}x{geometry.rows} at "
                f"{geometry.rect()} ({geometry.locator})"
            )
        return self.geometry

    def _board_in(self, frame: Frame_) -> BoardGeometry | None:
        """The field among `frame`'s candidates, in the page's coordinates."""
        previous, self.frame = self.frame, frame
        try:
            dx, dy = self.frame_offset()
            candidates = (
                self.evaluate("window.__bench ? window.__bench.candidates() : []", []) or []
            )
            draws: dict[int, list[Any]] = {}
            for cand in candidates:
                rect = cand.get("rect")
                if isinstance(rect, dict) and (dx or dy):
                    rect["x"], rect["y"] = rect["x"] + dx, rect["y"] + dy
                if cand.get("kind") == "canvas":
                    index = int(cand["index"])
                    draws[index] = (
                        self.evaluate(f"window.__bench.canvasDraws({index}, 3000)", []) or []
                    )
            return choose_board(candidates, draws, self._pixel_field)
        finally:
            self.frame = previous

    def _board_in_a_child_frame(self) -> BoardGeometry | None:
        """A page with no field of its own may wrap the game in a same-origin <iframe>
        (a full-window frame around game.html): the field is looked for in its frames, and
        the frame holding one becomes the game's frame."""
        origin = _origin(self.page.url)
        for child in self.page.main_frame.child_frames[:6]:
            if child.is_detached() or _origin(child.url) != origin:
                continue
            try:
                box = child.frame_element().bounding_box()
            except PlaywrightError:
                continue
            if not box or box["width"] < 150 or box["height"] < 200:
                continue
            geometry = self._board_in(child)
            if geometry is None:
                continue
            self.frame = child
            with contextlib.suppress(PlaywrightError):
                # Keys go to the focused frame: the game's frame takes the focus, as a
                # player's first click into it would give it.
                child.evaluate("() => { window.focus(); }")
            self.log.note(f"the game is in an <iframe> ({child.url}): the bot reads it there")
            return geometry
        return None

    def frame_offset(self) -> tuple[float, float]:
        """Where the game frame's content starts in the page (0, 0 for the page itself)."""
        if self.frame is self.page.main_frame:
            return 0.0, 0.0
        try:
            element = self.frame.frame_element()
            box = element.bounding_box()
            inner = element.evaluate("e => [e.clientLeft, e.clientTop]")
            scroll = self.page.evaluate("() => [window.scrollX, window.scrollY]")
        except PlaywrightError:
            return 0.0, 0.0
        if not box:
            return 0.0, 0.0
        return (
            box["x"] + float(inner[0]) + float(scroll[0]),
            box["y"] + float(inner[1]) + float(scroll[1]),
        )

    def refind_frame(self) -> None:
        """After a reload the game's <iframe> is a new frame: find it again."""
        if self.frame is not self.page.main_frame and self.frame.is_detached():
            self.frame = self.page.main_frame
            self._board_in_a_child_frame()

    def _pixel_field(self, cand: dict[str, Any]) -> CanvasField | None:
        """A field found in a canvas's screenshot (in canvas pixels), for a canvas whose
        draw calls show none (WebGL). The last one found is kept while a later screenshot
        shows none (a menu or an overlay drawn over the field for a moment)."""
        index, rect, backing = int(cand["index"]), cand["rect"], cand["backing"]
        # A screenshot and its analysis take a few hundred ms on a large canvas; the start
        # watch asks for the field every 0.15 s while none is known, and must keep watching.
        now = time.monotonic()
        if now - self._pixel_looked.get(index, -PIXEL_LOOK_EVERY_S) < PIXEL_LOOK_EVERY_S:
            return self._pixel_fields.get(index)
        self._pixel_looked[index] = now
        viewport = self.page.viewport_size or {"width": 1280, "height": 1100}
        x0, y0 = max(0.0, rect["x"]), max(0.0, rect["y"])
        x1 = min(float(viewport["width"]), rect["x"] + rect["w"])
        y1 = min(float(viewport["height"]), rect["y"] + rect["h"])
        if x1 - x0 < 40 or y1 - y0 < 80 or not backing.get("w") or not rect["w"]:
            return self._pixel_fields.get(index)
        try:
            png = self.page.screenshot(
                clip={"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0},
                timeout=SCREENSHOT_TIMEOUT_MS,
            )
        except PlaywrightError:
            return self._pixel_fields.get(index)
        image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
        found = field_from_pixels(image)
        if found is None:
            return self._pixel_fields.get(index)
        # Image pixels -> CSS pixels from the canvas's corner -> canvas (backing) pixels.
        css = image.shape[1] / (x1 - x0)
        sx, sy = backing["w"] / rect["w"], backing["h"] / rect["h"]
        field: CanvasField = (
            (found.x / css + x0 - rect["x"]) * sx,
            (found.y / css + y0 - rect["y"]) * sy,
            found.width / css * sx,
            found.height / css * sy,
            found.how,
            found.cols,
            found.rows,
        )
        self._pixel_fields[index] = field
        return field

    def _screenshot(self) -> np.ndarray:
        g = self.geometry
        assert g is not None
        clip = {"x": g.x, "y": g.y, "width": max(1.0, g.width), "height": max(1.0, g.height)}
        png: bytes | None = None
        last: Exception | None = None
        for timeout in (SCREENSHOT_TIMEOUT_MS, 2 * SCREENSHOT_TIMEOUT_MS):
            try:
                png = self.page.screenshot(
                    clip=clip, timeout=timeout, animations="allow", caret="initial"
                )
                break
            except PlaywrightError as error:
                if not _timed_out(error) or not self._slow_not_frozen(error):
                    self._gone(error)
                last = error
        if png is None:
            # The page answers but cannot be photographed in time: the bot is blind, the
            # game is not at fault.
            self.log.blind_at = self.log.now()
            self.log.note("screenshots keep timing out on a page that answers: play ends")
            raise PageGone(str(last).splitlines()[0] if last else "screenshot timed out")
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.float32)

    def screenshot_png(self) -> bytes | None:
        try:
            return self.page.screenshot(timeout=SCREENSHOT_TIMEOUT_MS)
        except PlaywrightError:
            return None

    def sample(self) -> np.ndarray:
        """Per cell, the mean colour of its middle and of nearly all of it: (rows, cols, 6).

        The middle is away from grid lines; the whole cell also sees pieces drawn as
        outlines with no fill. Both are scaled by 1/sqrt(2), so that a cell that changed
        alike in both is as far from its background as its colour changed."""
        image = self._screenshot()
        g = self.geometry
        assert g is not None
        height, width = image.shape[:2]
        if not self._slices:
            ch, cw = height / g.rows, width / g.cols
            for inset in (0.3, 0.08):
                for r in range(g.rows):
                    for c in range(g.cols):
                        y0, y1 = int(r * ch + ch * inset), int(r * ch + ch * (1 - inset)) + 1
                        x0, x1 = int(c * cw + cw * inset), int(c * cw + cw * (1 - inset)) + 1
                        self._slices.append((slice(y0, min(y1, height)), slice(x0, min(x1, width))))
        colours = np.array([image[ys, xs].reshape(-1, 3).mean(axis=0) for ys, xs in self._slices])
        middle, whole = np.split(colours / np.sqrt(2), 2)
        return np.concatenate([middle, whole], axis=1).reshape(g.rows, g.cols, 6)

    def learn_background(self, samples: list[np.ndarray]) -> None:
        """Per-cell background from samples taken while the field was (mostly) empty."""
        stack = np.stack(samples)
        median = np.median(stack, axis=0)
        self.seen_background = median
        # Cells that differ from their row's typical colour were covered (a piece, an
        # overlay): use the row's median colour for them instead.
        row_typical = np.median(median, axis=1, keepdims=True)
        far = np.linalg.norm(median - row_typical, axis=2) > DEFAULT_THRESHOLD
        self.reference = np.where(
            far[..., None], np.broadcast_to(row_typical, median.shape), median
        )

    def distances(self, colours: np.ndarray) -> np.ndarray:
        assert self.reference is not None
        return np.linalg.norm(colours - self.reference, axis=2)

    def tune_threshold(self, piece_distances: np.ndarray) -> None:
        """Half of how far a real piece is from the background: below that is a ghost."""
        if piece_distances.size:
            self.threshold = float(np.clip(0.5 * np.median(piece_distances), MIN_THRESHOLD, 90.0))

    def lower_threshold(self, piece_distances: np.ndarray) -> float | None:
        """A real piece fainter than the tuned threshold was seen: half of its distance.

        Returns the previous threshold when it was lowered, else None."""
        if not piece_distances.size:
            return None
        lowered = max(MIN_THRESHOLD, 0.5 * float(np.median(piece_distances)))
        if lowered >= self.threshold:
            return None
        previous, self.threshold = self.threshold, lowered
        return previous

    def read(self) -> Frame:
        colours = self.sample()
        if self.reference is None:
            self.learn_background([colours])
        distances = self.distances(colours)
        self.last_colours, self.last_distances = colours, distances
        filled = distances > self.threshold
        now = self.log.now()
        self.log.reads.append(now)
        frame = Frame(now, filled)
        if self._last is None or not np.array_equal(self._last.filled, filled):
            self.log.frames.append(frame)
        self._last = frame
        return frame

    def poll_numbers(self) -> None:
        numbers = self.evaluate("window.__bench ? window.__bench.numbers() : []", []) or []
        now = self.log.now()
        for item in numbers:
            self.log.numbers.append(
                (now, str(item["source"]), str(item.get("label", "")), int(item["value"]))
            )
