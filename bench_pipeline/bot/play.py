"""The bot's play: start the game, discover controls, play with the heuristic, top out.

Every phase records what it saw as `Evidence` (per test) in addition to the raw event
log; `verdicts.py` turns evidence into verdicts. A phase that cannot go on (the page is
gone, time is up) stops; what was observed so far still counts.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from bench_pipeline.bot import board as B
from bench_pipeline.bot.geometry import BoardGeometry, trim_walls
from bench_pipeline.bot.session import MIN_THRESHOLD, Frame, GameSession
from bench_pipeline.bot.source_keys import KeyPrior, prior_from

LEFT_KEYS = ("ArrowLeft", "a", "j", "h")
RIGHT_KEYS = ("ArrowRight", "d", "l")
# Rotation is also found on Q/E and A/D (when the arrows move the piece), and last on
# Space, the period and comma keys and Control (tried only where the game's code mentions
# them, once the scan of its code is trusted).
ROTATE_KEYS = (
    "ArrowUp",
    "x",
    "z",
    "w",
    "q",
    "e",
    "a",
    "d",
    "i",
    "k",
    " ",
    ".",
    ",",
    "Control",
    "ArrowRight",
    "ArrowLeft",
)
DOWN_KEYS = ("ArrowDown", "s", "k", "j", " ", "w")  # Space: more often a hard drop; W: rare
HARD_DROP_KEYS = (" ", "ArrowUp", "w", "Enter", "i", "Shift")
START_KEYS = ("Enter", " ", "s", "p", "ArrowDown", "n")
# What the bot types where a game asks for a player's name before it starts.
PLAYER_NAME = "Bot"
# A start key after which more than this share of the field reads filled lifted a cover.
OVERLAY_SHARE = 0.6
SPAWN_ROWS = 5  # a new piece appears with cells in the top rows
AFTER_KEY_S = 0.07  # time for a game to react and render after a key
# A first piece may spawn above the field (rows -2, -3) and show only after a row or two
# of fall: the watch after a start button lasts that long. (An auto-start missed by the
# shorter first watch is caught by the start keys, which the game ignores or obeys.)
AUTO_WATCH_S = 1.6
START_WATCH_S = 2.4
QUICK_WATCH_S = 1.0  # on a load that threw, before loading again
# A game that throws while loading may do so only on some loads: reload up to this many
# times in all before judging it.
MAX_LOADS = 3
GRAVITY_WATCH_S = 5.0  # a piece still this long with no input: no gravity
MAX_VIEWPORT_HEIGHT = 2400  # a taller page is read from its top 2400 px
WALL_TURNS = 3  # turns tried against each wall once the walls were judged
HARD_DROP_TRIES = 3  # pieces a hard-drop key is tried on before it is left untried
SOFT_PRESSES_MAX = 8  # soft-drop presses a read, while the piece has that many rows to fall
EXTRA_PLAY_S = 8.0  # play past the endurance window while no row was completed yet
TOP_OUT_S = 7.5  # a top-out with a hard drop, watching its end included
TOP_OUT_MIN_S = 13.0  # the least time a top-out is given, with a hard drop
SOFT_TOP_OUT = 1.6  # soft-dropping to the top takes this many times as long
FINISH_AFTER_WINDOW_S = 20.0  # all play after the endurance window ends this soon after it
GAME_OVER_DIALOG = re.compile(
    r"game\s*over|you\s+los|game\s+ended|spiel\s+(vorbei|beendet)|juego\s+terminado|"
    r"fin\s+del\s+juego|fin\s+de\s+(la\s+)?partie|partie\s+termin|ゲームオーバー|游戏结束|"
    r"게임\s*(오버|종료|결과)|игра\s+окончена|конец\s+игры|вы\s+проиграли|поражение|"
    r"oyun\s+bitti|partita\s+finita|koniec\s+gry",
    re.IGNORECASE,
)


def faint_piece(
    distances: np.ndarray,
    colours: np.ndarray,
    filled: np.ndarray,
    stack: np.ndarray,
    floor: float = MIN_THRESHOLD,
) -> set[B.Cell] | None:
    """A whole piece drawn fainter than the threshold near the top of the field, if any.

    The cells are not `filled` but clearly drawn on (more than `floor` from their
    background), form a tetromino in the spawn rows, and share one colour (text or an
    animation would not); no visible cells are above them in their columns (that would
    make them the ghost of a piece still entering the field).
    """
    faint = (distances > floor) & ~filled & ~stack
    for group in B.components(faint):
        if len(group) != 4 or B.identify(group) is None:
            continue
        top = min(r for r, _ in group)
        if top >= SPAWN_ROWS:
            continue
        columns = sorted({c for _, c in group})
        if (filled[:top, columns] & ~stack[:top, columns]).any():
            continue
        cells = sorted(group)
        spread = max(
            float(np.linalg.norm(colours[a] - colours[b]))
            for a, b in itertools.combinations(cells, 2)
        )
        if spread > max(10.0, 0.2 * float(np.median([distances[c] for c in cells]))):
            continue
        return group
    return None


@dataclass
class Evidence:
    """What each test's judgement rests on: (time, outcome, detail) per test id."""

    items: dict[str, list[tuple[float, str, str]]] = field(
        default_factory=lambda: defaultdict(list)
    )

    def add(self, t: float, test: str, outcome: str, detail: str) -> None:
        self.items[test].append((round(t, 2), outcome, detail))

    def has(self, test: str, outcome: str) -> bool:
        return any(o == outcome for _, o, _ in self.items.get(test, []))

    def judged(self, test: str) -> bool:
        """A PASS or FAIL was already recorded for `test`."""
        return self.has(test, "pass") or self.has(test, "fail")

    def first(self, test: str, outcome: str) -> str | None:
        return next((d for _, o, d in self.items.get(test, []) if o == outcome), None)


class Bot:
    def __init__(self, session: GameSession, endurance_s: float, deadline: float) -> None:
        self.s = session
        self.log = session.log
        self.endurance_s = endurance_s
        self.deadline = deadline  # monotonic time by which play must end
        self.evidence = Evidence()
        self.controls: dict[str, str | None] = dict.fromkeys(
            ("left", "right", "down", "rotate", "hard_drop")
        )
        self.start_mechanism: str | None = None
        self.started_at: float | None = None  # log time of the first piece
        self.stack: np.ndarray | None = None
        self.gravity_s_per_row: float | None = None
        self.locks = 0
        self.lock_times: list[float] = []  # log time of each landing followed
        self.lines_cleared = 0  # rows the bot's model saw its pieces complete and clear
        self.clears_seen = 0  # rows seen cleared in the recorded frames (scan_clears)
        self._clears_scanned = 0  # log.frames index scan_clears has looked at
        self.last_frame: Frame | None = None
        self.score_source: str | None = None
        self.pauses: list[tuple[float, float]] = []  # game over -> restart, not a freeze
        self.clears_broken = False  # full rows were seen to stay: do not wait for clears
        self.first_game_over_at: float | None = None
        self.top_out_began: float | None = None  # log time the bot last began a top-out
        self.topping_out = False  # within a top-out: landings are not followed closely
        self.piece_seconds: list[float] = []  # how long each piece played took
        self.watch_faint = False  # after the threshold was tuned on the first piece
        self.loads = 1  # page loads it took to get a game that starts
        self.overlay: np.ndarray | None = None  # cells drawn over the field, not play
        self.down_held = False  # the soft drop works while the down key is held, not tapped
        self.field_focused = False  # the field's element took the keyboard focus
        self.name_given = False  # a name was typed into the form before the game
        # Taken for running because a still piece moved on a key: its gravity may still
        # wait for the game's start key ("Press Space to begin").
        self.started_by_nudge = False
        # A lattice that included a floor row or wall columns: (as located, trimmed).
        self.trimmed: tuple[BoardGeometry, BoardGeometry] | None = None
        # Probed keys that paused the game (pressed again, it went on): no control.
        self.pause_keys: set[str] = set()
        self.saw_ghost = False  # a ghost piece drawn as solid cells was seen (twice)
        self.ghost_places: set[frozenset[B.Cell]] = set()  # where ghost-like cells were seen
        self.last_piece_at: float | None = None  # log time the last piece played began
        # Which keys the page's code mentions: probes try those first (source_keys.py).
        self.keys = KeyPrior()

    # ---- small helpers ---------------------------------------------------------------
    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    def read(self) -> Frame:
        frame = self._masked(self.s.read())
        if self.watch_faint and self._lowered_for_faint_piece(frame):
            frame = self._masked(self.s.read())
        for _ in range(2):
            if self._settled(frame):
                break
            # Caught mid-animation (a piece gliding between cells, a flash): a moment
            # later the same piece is on whole cells.
            self.s.wait(0.04)
            frame = self._masked(self.s.read())
        self.last_frame = frame
        return frame

    def _masked(self, frame: Frame) -> Frame:
        """The frame without the cells of an overlay drawn over the field (a copy: the
        event log keeps what the screen showed)."""
        if self.overlay is None or frame.filled.shape != self.overlay.shape:
            return frame
        return Frame(frame.t, frame.filled & ~self.overlay)

    def _settled(self, frame: Frame) -> bool:
        """No loose group of more than four cells, nor four cells that are no tetromino:
        what a read taken while a piece glides from one cell to the next shows."""
        if self.stack is None:
            return True
        loose = frame.filled & ~self.stack
        if not loose.any() or loose.sum() > 12:
            return True  # nothing loose, or a wiped or changed field: not an animation
        return all(
            len(g) < 4 or (len(g) == 4 and B.identify(g) is not None) for g in B.components(loose)
        )

    def _lowered_for_faint_piece(self, frame: Frame) -> bool:
        """Lower the threshold when a piece fainter than it is entering the field.

        The threshold is half of how far the first piece is from the background, but one
        game's pieces can differ a lot in contrast (on a pastel board a Z is half as far
        from the background as a J): after a J first, every Z would fall unseen, and the
        field would look frozen. Only checked while no whole piece is visible."""
        distances, colours = self.s.last_distances, self.s.last_colours
        if distances is None or colours is None:
            return False
        stack = self.stack if self.stack is not None else self.empty()
        # A whole piece in the air is the falling one. A whole piece resting on the floor
        # or the stack may be one whose landing the bot did not follow (a probe kept it
        # busy): it is no reason not to look for a faint piece entering the field.
        loose = B.components(frame.filled & ~stack)
        if any(len(g) == 4 and B.drop(stack, g) != g for g in loose):
            return False
        if stack.sum() >= 4 and not (frame.filled & stack).any():
            return False  # the whole stack is gone from view: an overlay (a pause) covers it
        cells = faint_piece(distances, colours, frame.filled, stack)
        if cells is None:
            return False
        previous = self.s.lower_threshold(np.array([distances[c] for c in cells]))
        if previous is None:
            return False
        self.log.note(
            f"a {B.identify(cells)} piece fainter than the threshold at {sorted(cells)}: "
            f"threshold {previous:.0f} -> {self.s.threshold:.0f}"
        )
        return True

    def empty(self) -> np.ndarray:
        g = self.s.geometry
        assert g is not None
        return np.zeros((g.rows, g.cols), dtype=bool)

    def active(self, frame: Frame) -> set[B.Cell]:
        """The falling piece: the top-most group of cells not in the stack (ghosts are lower)."""
        stack = self.stack if self.stack is not None else self.empty()
        loose = frame.filled & ~stack
        groups = [g for g in B.components(loose) if len(g) <= 4]
        if not groups:
            return set()
        return min(groups, key=lambda g: (min(r for r, _ in g), -len(g)))

    def wait_piece(self, timeout: float, need: int = 4) -> set[B.Cell]:
        end = time.monotonic() + timeout
        cells: set[B.Cell] = set()
        while time.monotonic() < end and self.time_left() > 0:
            frame = self.read()
            cells = self.active(frame)
            if len(cells) >= need:
                return cells
            self.s.wait(0.05)
        return cells

    def press_and_read(self, key: str, purpose: str, wait: float = AFTER_KEY_S) -> Frame:
        self.s.press(key, purpose)
        self.s.wait(wait)
        return self.read()

    def press_until(
        self, key: str, purpose: str, done: Callable[[Frame], bool], timeout: float = 0.45
    ) -> Frame:
        """Press once, then read until `done` holds: some games redraw only on their tick.

        On a loaded machine a read can take a few hundred milliseconds: the wait is never
        shorter than three reads at the recent pace."""
        self.s.press(key, purpose)
        end = time.monotonic() + max(timeout, 3 * self._read_pace())
        self.s.wait(0.03)
        frame = self.read()
        while not done(frame) and time.monotonic() < end:
            self.s.wait(0.04)
            frame = self.read()
        return frame

    def _read_pace(self) -> float:
        """The median time between the last reads (seconds)."""
        reads = self.log.reads[-12:]
        if len(reads) < 3:
            return 0.1
        return float(np.median(np.diff(reads)))

    # ---- pauses -------------------------------------------------------------------
    def _falls(self, window: float) -> bool:
        """Within `window` s the piece falls (the same shape lower) or a new one appears
        higher up: gravity is running. A rotation or a one-off redraw (a pause banner) is
        not enough."""
        end = time.monotonic() + window
        first: set[B.Cell] | None = None
        while time.monotonic() < end and self.time_left() > 0:
            now = self.active(self.read())
            if len(now) == 4:
                if first is None:
                    first = now
                else:
                    shift = self._shift(first, now)
                    if (shift and shift[0] >= 1) or (
                        min(r for r, _ in now) < min(r for r, _ in first)
                    ):
                        return True
            self.s.wait(0.05)
        return False

    def _fall_window(self) -> float:
        return min(3.0, 2.5 * (self.gravity_s_per_row or 0.0) + 0.3)

    def _check_not_paused(self, key: str) -> bool:
        """After a probe of `key` that did not do what was tried: is gravity still
        running? A key that paused the game (P, Enter, Space in some games) is pressed
        again to resume it and remembered as no control; the still field meanwhile is the
        bot's doing, not a freeze. Only told where gravity was measured."""
        if not self.gravity_s_per_row or key in self.controls.values():
            return True
        if not self.keys.mentions(key):
            return True  # the game's code does not handle this key: it cannot pause it
        if self._falls(self._fall_window()):
            return True
        if len(self.active(self.read())) != 4 and self._falls(self._fall_window()):
            # No piece stood in the field: the game was between two pieces (a spawn delay,
            # a restart), and the next one came by itself. Pressed again now, the key would
            # get the blame for it and be taken for a pause toggle (a real game's rotate key).
            return True
        return self._toggle_back([key])

    def _toggle_back(self, keys: list[str]) -> bool:
        """Press each key once more (most suspect first): True, and the key recorded as a
        pause toggle, when gravity runs again after it."""
        still_since = self.log.frames[-1].t if self.log.frames else self.log.now()
        for key in keys:
            if self.time_left() < 5:
                return False
            self.s.press(key, "toggle back (did it pause the game?)")
            self.s.wait(0.1)
            if self._falls(self._fall_window()):
                self.pause_keys.add(key)
                self.pauses.append((still_since - 0.5, self.log.now()))
                self.log.note(
                    f"{'Space' if key == ' ' else key!r} paused the game: pressed again, it "
                    "went on (a pause toggle, not a control)"
                )
                return True
        return False

    def _resume(self) -> bool:
        """The field stands still though gravity was seen: one of the keys pressed just
        before (not a known control) may have paused the game; press them again."""
        if not self.gravity_s_per_row or not self.log.frames:
            return False
        since = self.log.frames[-1].t - 1.5
        known = set(self.controls.values())
        recent: list[str] = []
        for t, key, purpose in reversed(self.log.actions):
            if t < since:
                break
            if key not in known and key not in recent and not purpose.startswith("toggle"):
                recent.append(key)
        return bool(recent) and self._toggle_back(recent[:3])

    # ---- phase 1: start --------------------------------------------------------------
    def _something_started(self, before: np.ndarray | None, window: float) -> bool:
        """True when the field changes within `window` s (a piece appeared or moved)."""
        end = time.monotonic() + window
        while time.monotonic() < end:
            if self.s.geometry is None and self._locate() is None:
                self.s.wait(0.15)
                continue
            frame = self.read()
            if frame.filled.any() and (before is None or not np.array_equal(before, frame.filled)):
                return True
            before = frame.filled if before is None else before
            self.s.wait(0.1)
        return False

    def start(self) -> bool:
        """Start the game; a page that threw while loading and did not start is loaded
        again (up to MAX_LOADS in all): some bugs fire on a fraction of loads only."""
        errors_before = 0
        self.s.evaluate("window.__bench && window.__bench.collectSources()")
        self._fit_viewport()
        while True:
            last_load = self.loads >= MAX_LOADS
            threw = len(self.log.page_errors) > errors_before
            if self._start_once(quick=threw and not last_load):
                if self.loads > 1:
                    self.log.note(f"the game started on page load {self.loads}")
                return True
            threw = len(self.log.page_errors) > errors_before
            if not threw or last_load or self.time_left() < 30:
                return False
            errors_before = len(self.log.page_errors)
            self.loads += 1
            self.log.note(
                f"the page threw while loading and did not start: load {self.loads} of at "
                f"most {MAX_LOADS}"
            )
            try:
                self.s.page.reload(wait_until="load", timeout=10000)
            except Exception as error:
                self.log.note(f"reload failed: {str(error).splitlines()[0]}")
                return False
            self.s.wait(0.4)
            self.s.evaluate("window.__bench && window.__bench.lockScroll()")
            self.evidence.items.pop("starts", None)

    def _fit_viewport(self) -> None:
        """Make the window as tall as the page (within reason) and keep it from scrolling:
        keys that scroll a taller page would move the field under the bot's reads, and a
        field below the fold cannot be read at all."""
        page = self.s.page
        size = self.s.evaluate("window.__bench ? window.__bench.pageSize() : null")
        viewport = page.viewport_size
        if isinstance(size, list) and len(size) == 2 and viewport:
            height = min(int(size[1] or 0), MAX_VIEWPORT_HEIGHT)
            if height > viewport["height"]:
                with contextlib.suppress(Exception):
                    page.set_viewport_size({"width": viewport["width"], "height": height})
                    self.log.note(f"window made {height}px tall: the page is taller")
                    self.s.wait(0.2)
        self.s.evaluate("window.__bench && window.__bench.lockScroll()")

    def _locate(self) -> BoardGeometry | None:
        """Locate the field, without the floor row or wall columns found before."""
        g = self.s.locate()
        if g is not None and self.trimmed is not None and g == self.trimmed[0]:
            self.s.geometry = self.trimmed[1]
            self.s.reference = None
            self.s._slices = []
        return self.s.geometry

    def _trim_walls(self) -> None:
        """Drop an edge row or column drawn as a floor or wall (learnt background)."""
        s = self.s
        if s.geometry is None or s.seen_background is None:
            return
        found = trim_walls(s.geometry, s.seen_background, 40.0)
        if found is None:
            return
        trimmed, what = found
        self.log.note(
            f"playfield: {what} of the {s.geometry.cols}x{s.geometry.rows} lattice drawn as "
            f"floor or walls, the field is {trimmed.cols}x{trimmed.rows}"
        )
        self.trimmed = (s.geometry, trimmed)
        s.geometry, s.reference, s._slices = trimmed, None, []

    def _learn_empty_field(self) -> np.ndarray | None:
        s = self.s
        if s.geometry is None:
            return None
        samples = [s.sample()]
        s.wait(0.15)
        samples.append(s.sample())
        s.learn_background(samples)
        if self.trimmed is None:
            self._trim_walls()
            if self.trimmed is not None:
                return self._learn_empty_field()
        return self.read().filled

    def _dismiss_overlays(self) -> None:
        """Close a dialog covering the page (rules, intro): it catches the clicks meant
        for the Start button, and some games wait for it to close."""
        for _ in range(3):
            buttons = self.s.evaluate("window.__bench.overlayButtons()", []) or []
            if not buttons:
                return
            button = buttons[0]
            self.log.note(f"closing an overlay with its {button['text']!r} button")
            try:
                self.s.page.click(button["selector"], timeout=1500)
            except Exception as error:
                self.log.note(f"click failed: {str(error).splitlines()[0]}")
                return
            self._unfocus()
            self.s.wait(0.2)

    def _fill_name_form(self) -> bool:
        """Type a name into the empty text fields shown before the game (a player's name
        it asks for), once; with no start button on offer the form is sent with Enter
        (a name page that leads to the game's own page). True when it was sent."""
        if self.name_given:
            return False
        fields = self.s.evaluate("window.__bench.nameInputs()", []) or []
        if not fields:
            return False
        self.name_given = True
        page = self.s.page
        for box in fields:
            try:
                page.fill(box["selector"], PLAYER_NAME, timeout=1500)
            except Exception as error:
                self.log.note(f"typing a name failed: {str(error).splitlines()[0]}")
                return False
        self.log.note(
            f"typed {PLAYER_NAME!r} into {len(fields)} empty text field(s) "
            f"({', '.join(repr(f['text']) for f in fields)})"
        )
        if self.s.evaluate("window.__bench.startButtons()", []):
            return False
        try:
            page.press(fields[-1]["selector"], "Enter", timeout=1500)
            page.wait_for_load_state("load", timeout=5000)
        except Exception as error:
            self.log.note(f"sending the form failed: {str(error).splitlines()[0]}")
        self.s.wait(0.5)
        self.log.note("sent the form with Enter (no start button on offer)")
        return True

    def _start_once(self, quick: bool = False) -> bool:
        if self._start_attempt(quick, watch_auto=True):
            return True
        if self.start_mechanism != "auto" or self.time_left() < 20:
            return False
        # The field changed by itself (a score or title drawn late, a demo piece settling)
        # but no piece came of it: that was no start. Try the buttons and keys after all.
        self.log.note("the change seen was no running game: trying the start buttons and keys")
        self.start_mechanism = None
        self.evidence.items.pop("starts", None)
        return self._start_attempt(quick, watch_auto=False)

    def _start_attempt(self, quick: bool, watch_auto: bool) -> bool:
        s = self.s
        self._dismiss_overlays()
        self._locate()
        if self._fill_name_form():
            self._locate()  # the form led to the game's own page
        before = self._learn_empty_field()
        auto_watch, button_watch = (
            (QUICK_WATCH_S, QUICK_WATCH_S) if quick else (AUTO_WATCH_S, START_WATCH_S)
        )
        if watch_auto and self._something_started(before, auto_watch):
            self.start_mechanism = "auto"
        elif watch_auto and self._static_piece_moves():
            self.start_mechanism = "auto"
            self.started_by_nudge = True
        elif (clicked := self._click_start_buttons(before, button_watch)) is not None:
            self.start_mechanism = f"click:{clicked}"
        elif quick:
            return False  # a page that threw on load: load it again first
        else:
            menu = self._choose_menu_item()
            if menu is not None:
                # The field (or a Start button) may only now be shown: learn it again.
                self._dismiss_overlays()
                self._locate()
                before = self._learn_empty_field()
                if self._something_started(before, auto_watch):
                    self.start_mechanism = f"menu:{menu}"
                elif (clicked := self._click_start_buttons(before, button_watch)) is not None:
                    self.start_mechanism = f"menu:{menu} then click:{clicked}"
            if self.start_mechanism is None:
                keys = self.keys.order(START_KEYS)
                for i, key in enumerate(keys):
                    self._unfocus()
                    s.press(key, "start")
                    if self._something_started(before, 1.2):
                        if self.read().filled.mean() > OVERLAY_SHARE:
                            # Most of the field changed at once: what the key lifted was
                            # a cover ("press Enter to start"), and the empty cells are
                            # only now in sight.
                            self.log.note(f"{key!r} uncovered the field: learnt it again")
                            before = self._learn_empty_field()
                        if i + 1 < len(keys) and not self.wait_piece(3.0, need=3):
                            # The key changed the page (a hint redrawn, a sound toggled)
                            # but no piece came: the game's own start key may be next.
                            self.log.note(f"{key!r} changed the field but no piece came")
                            before = self.read().filled
                            continue
                        prefix = f"menu:{menu} then " if menu else ""
                        self.start_mechanism = f"{prefix}key:{'Space' if key == ' ' else key}"
                        break
                else:
                    if s.geometry is not None:
                        g = s.geometry
                        with contextlib.suppress(Exception):
                            s.page.mouse.click(g.x + g.width / 2, g.y + g.height / 2)
                        if self._something_started(before, 1.2):
                            self.start_mechanism = "click:playfield"
        if self.start_mechanism is None:
            return False
        self.log.note(f"started: {self.start_mechanism}")
        self._unfocus(blur=False)
        self._relearn_after_start()
        cells = self.wait_piece(4.0, need=3)
        detail = f"first piece {sorted(cells)}"
        if B.identify(cells) is None:
            # Three cells may be a piece still entering from above the field, or something
            # drawn late that is no piece at all: wait for a whole tetromino.
            whole = self.wait_piece(2.5, need=4)
            if B.identify(whole) is not None:
                cells, detail = whole, f"first piece {sorted(whole)}"
        if B.identify(cells) is None:
            # The first piece need not be a tetromino (games with pentominoes or longer
            # bars): a group of cells seen falling with no input shows the game running.
            cells = self._falling_group(3.0)
            detail = f"first piece {sorted(cells)} ({len(cells)} cells, seen falling)"
        if cells:
            self.started_at = self.log.now()
            self.log.follow_pages = 0  # from now on a page that leaves is gone
            self.evidence.add(self.started_at, "starts", "pass", detail)
            # The distances of the read that found the piece: a new screenshot could show
            # it a row lower, half of its cells background, and the threshold halved.
            distances = s.last_distances
            if distances is None:
                distances = s.distances(s.sample())
            s.tune_threshold(np.array([distances[r, c] for r, c in cells]))
            self.log.note(f"cell threshold {s.threshold:.0f} (half the first piece's distance)")
            self._mask_overlay(cells)
            self.watch_faint = True
            return True
        self.evidence.add(
            self.log.now(), "starts", "fail", "the field changed but no piece appeared"
        )
        return False

    def _mask_overlay(self, piece: set[B.Cell]) -> None:
        """Cells filled on three reads at the start that are not the first piece (nor next
        to where it was or fell meanwhile) are something drawn over the field (a score, a title), not
        play: they are masked from then on. With an empty stack at the start, a cell
        standing still off the piece can be nothing else."""
        if len(piece) != 4 or B.identify(piece) is None:
            return  # only a whole first piece tells what is not the piece
        s = self.s
        static = s.read().filled.copy()
        for _ in range(2):
            s.wait(0.25)
            static &= s.read().filled
        near = np.zeros_like(static)
        rows, cols = near.shape
        for r, c in piece:
            # Where it is, may have fallen to, or turned into: never masked.
            near[max(r - 1, 0) : min(r + 5, rows), max(c - 1, 0) : min(c + 2, cols)] = True
        static &= ~near
        # Only a few cells near the top: many or low ones would be a real stack.
        where = np.nonzero(static)[0]
        if 0 < static.sum() <= 3 * cols and where.max() < SPAWN_ROWS:
            self.overlay = static
            self.log.note(f"{int(static.sum())} cells drawn over the field masked (an overlay)")

    def _falling_group(self, timeout: float) -> set[B.Cell]:
        """A loose group of 1 to 9 cells seen lower, same shape and columns, on a later
        read (a falling piece that is no tetromino: a pentomino, a long bar, a single
        cell), else empty. A group of one or two cells must be seen at three rows."""
        end = time.monotonic() + timeout
        seen: dict[tuple[B.Piece, int], set[int]] = defaultdict(set)
        while time.monotonic() < end and self.time_left() > 0:
            frame = self.read()
            stack = self.stack if self.stack is not None else self.empty()
            for group in B.components(frame.filled & ~stack):
                if len(group) > 9:
                    continue
                key = (B.normalize(group), min(c for _, c in group))
                top = min(r for r, _ in group)
                rows = seen[key]
                if any(r < top for r in rows) and len(rows | {top}) >= (
                    2 if len(group) >= 3 else 3
                ):
                    return group
                rows.add(top)
            self.s.wait(0.1)
        return set()

    def _click_start_buttons(self, before: np.ndarray | None, watch: float) -> str | None:
        """Click each start button in turn; the text of the one after which the field
        changed, else None."""
        s = self.s
        tried: set[str] = set()
        # A click that shows another page (a game's screen behind a title card) may bring
        # the real Start button: its buttons are tried next, up to three steps.
        for _step in range(3):
            buttons = [
                b
                for b in s.evaluate("window.__bench.startButtons()", []) or []
                if b["selector"] not in tried
            ]
            moved_on = False
            for button in buttons:
                tried.add(button["selector"])
                self.log.note(f"trying start button {button['text']!r}")
                try:
                    s.page.click(button["selector"], timeout=2000)
                except Exception as error:
                    self.log.note(f"click failed: {str(error).splitlines()[0]}")
                    continue
                self._unfocus()
                located = s.geometry
                if self._locate() != located:
                    # The click showed another field (a menu page replaced by the game's
                    # own canvas, a modal opened): learn its empty cells and watch that one.
                    before = self._learn_empty_field()
                    moved_on = True
                if self._something_started(before, watch):
                    untried = [
                        b
                        for b in s.evaluate("window.__bench.startButtons()", []) or []
                        if b["selector"] not in tried
                    ]
                    if not untried or self._falls(3.0):
                        return str(button["text"])
                    # The page changed, but what it shows stands still and another start
                    # button is on offer (a title card led to a "Ready? Play" overlay with
                    # the first piece drawn behind it): that one is the start.
                    self.log.note("the field changed but nothing falls: the next start button")
                    before = self.read().filled
                    moved_on = True
                if moved_on:
                    break
            if not moved_on:
                return None
        return None

    def _choose_menu_item(self) -> str | None:
        """Choose the first entry of a game-mode menu (Marathon / Sprint, Easy / Hard): some
        games show the field and their Start button only after a mode was chosen."""
        items = self.s.evaluate("window.__bench.menuButtons()", []) or []
        if not items:
            return None
        item = items[0]
        self.log.note(
            f"choosing {item['text']!r} in a menu of {[i['text'] for i in items]} to reach the start"
        )
        try:
            self.s.page.click(item["selector"], timeout=2000)
        except Exception as error:
            self.log.note(f"click failed: {str(error).splitlines()[0]}")
            return None
        self._unfocus()
        self.s.wait(0.4)
        return str(item["text"])

    def _static_piece_moves(self) -> bool:
        """A game without gravity shows a piece that only moves on input: nudge it."""
        if self.s.geometry is None:
            return False
        before = self.read()
        if len(self.active(before)) != 4:
            return False
        for key in ("ArrowLeft", "ArrowRight", "a", "d", "j", "l"):
            after = self.press_and_read(key, "is a still piece alive?", 0.12)
            if not np.array_equal(after.filled, before.filled):
                self.log.note(f"the still piece moved on {key!r}: the game is running")
                return True
        return False

    def _unfocus(self, blur: bool = True) -> None:
        # After a click the button keeps focus, and Space would press it again; a field
        # that takes the focus itself (a canvas with a tabindex) gets it instead. Without
        # `blur`, an element the page focused itself keeps the focus.
        g = self.s.geometry
        x, y = (g.x + g.width / 2, g.y + g.height / 2) if g is not None else (-1, -1)
        focused = self.s.evaluate(
            f"window.__bench ? window.__bench.focusField({x:.0f}, {y:.0f}, {str(blur).lower()}) : "
            "(document.activeElement && document.activeElement.blur && document.activeElement.blur(), null)"
        )
        if focused and not self.field_focused:
            self.field_focused = True
            self.log.note(f"the keyboard focus goes to the page's <{focused}>: focused it")

    def _relearn_after_start(self) -> None:
        """Learn the background again: an overlay ("press Enter") may have covered it."""
        s = self.s
        before = (s.geometry, None if s.reference is None else s.reference.copy())
        self._locate()
        samples = []
        for _ in range(3):
            samples.append(s.sample())
            s.wait(0.08)
        s.learn_background(samples)
        if before[0] == s.geometry and before[1] is not None and s.reference is not None:
            # A few cells near the top that changed since the empty field was learnt are
            # the first piece (faint or outlined ones escape the row-colour check): keep
            # what was learnt before for them. Many or lower cells are a lifted overlay.
            changed = np.linalg.norm(s.reference - before[1], axis=2) > MIN_THRESHOLD
            rows = np.nonzero(changed)[0]
            if 0 < changed.sum() <= 8 and rows.max() < SPAWN_ROWS:
                s.reference = np.where(changed[..., None], before[1], s.reference)
        self.stack = self.empty()

    # ---- phase 2: controls -----------------------------------------------------------
    def fresh_piece(self, timeout: float = 7.0) -> set[B.Cell]:
        """A piece with four visible cells in the upper part of the field.

        Before any drop control is known, gravity alone brings the next piece: from low in
        the field that takes a few seconds (more on a loaded machine, where reads are
        slow). A field that has not changed for 3 s will bring none: give up then."""
        end = time.monotonic() + timeout
        began = self.log.now()
        extended = False
        while time.monotonic() < end and self.time_left() > 0:
            last_change = self.log.frames[-1].t if self.log.frames else began
            if self.log.now() - max(last_change, began) > 3.0:
                if self._resume():
                    began = self.log.now()
                    continue
                break
            cells = self.wait_piece(min(1.5, max(0.1, end - time.monotonic())))
            if not extended and len(cells) != 4 and self._big_piece_falling():
                # A piece that is no tetromino (5 or more cells) is on its way down: it
                # takes a whole fall before the next one comes.
                end, extended = end + 6.0, True
            if len(cells) == 4 and max(r for r, _ in cells) < (self.empty().shape[0] * 0.6):
                return cells
            if len(cells) == 4 and (self.controls["hard_drop"] or self.controls["down"]):
                self._set_aside(cells)
            elif len(cells) == 4 and not self.gravity_s_per_row:
                return cells  # nothing brings the next piece: use this one where it is
        return set()

    def _big_piece_falling(self) -> bool:
        """The last read shows a loose group of 5 to 9 cells: a piece of another size."""
        if self.last_frame is None:
            return False
        stack = self.stack if self.stack is not None else self.empty()
        loose = self.last_frame.filled & ~stack
        return any(5 <= len(g) <= 9 for g in B.components(loose))

    def observe_gravity(self) -> None:
        """Watch a piece with no input: it should fall. The rate is taken between two falls,
        since the first one comes at an arbitrary point of the game's tick."""
        cells = self.fresh_piece()
        if not cells:
            return
        top = min(r for r, _ in cells)
        t_start = time.monotonic()
        steps: list[tuple[float, int]] = []
        # Some games run their gravity off animation frames, and a slow page (a large
        # canvas redrawn every frame) falls a row in a few seconds: 5 s before a FAIL.
        while time.monotonic() - t_start < (3.0 if steps else GRAVITY_WATCH_S):
            now_cells = self.active(self.read())
            if len(now_cells) == 4 and B.normalize(now_cells) == B.normalize(cells):
                row = min(r for r, _ in now_cells)
                if row > (steps[-1][1] if steps else top):
                    steps.append((time.monotonic() - t_start, row))
                    if len(steps) >= 3:
                        break
            elif steps:
                break  # landed or replaced: what was seen is enough
            self.s.wait(0.04)
        if not steps and self.started_by_nudge:
            steps, top = self._fall_after_start_key()
        if not steps:
            self.evidence.add(
                self.log.now(),
                "gravity",
                "fail",
                f"the piece stayed in place for {GRAVITY_WATCH_S:.0f} s without input",
            )
            return
        rows = steps[-1][1] - top
        if len(steps) >= 2:
            (t1, r1), (t2, r2) = steps[0], steps[-1]
            self.gravity_s_per_row = (t2 - t1) / (r2 - r1)
        elif rows >= 2:
            # Two rows or more between two reads: a fast gravity (a row every 50 ms).
            self.gravity_s_per_row = steps[0][0] / rows
        else:
            self.gravity_s_per_row = max(steps[0][0], 0.5)
        self.evidence.add(
            self.log.now(),
            "gravity",
            "pass",
            f"fell {rows} row(s) in {steps[-1][0]:.2f}s without input "
            f"(~{self.gravity_s_per_row:.2f}s per row)",
        )

    def _fall_after_start_key(self) -> tuple[list[tuple[float, int]], int]:
        """A piece shown and movable before the game began ("Press Space to begin"): its
        gravity starts with the start key. Space and Enter are pressed once each; a piece
        then falling two rows with no further input shows the game was started by that key
        (one row could be a soft drop). Returns the fall's steps and the piece's top row."""
        self.started_by_nudge = False  # asked once
        for key in (" ", "Enter"):
            self._unfocus()
            pressed_at = self.log.now()
            self.s.press(key, "does the still piece wait for a start key?")
            cells = self.wait_piece(1.5)
            if len(cells) != 4:
                continue
            top = min(r for r, _ in cells)
            t_start = time.monotonic()
            steps: list[tuple[float, int]] = []
            while time.monotonic() - t_start < 3.0 and len(steps) < 3:
                now_cells = self.active(self.read())
                if len(now_cells) != 4 or B.normalize(now_cells) != B.normalize(cells):
                    break
                row = min(r for r, _ in now_cells)
                if row > (steps[-1][1] if steps else top):
                    steps.append((time.monotonic() - t_start, row))
                self.s.wait(0.04)
            if len(steps) >= 2:
                name = "Space" if key == " " else key
                self.start_mechanism = f"key:{name}"
                # The game began with the key: the endurance window opens there (the
                # still piece before it was no freeze), and the page may have moved the
                # field as its start hint went away.
                self.started_at = pressed_at
                self.log.note(
                    f"the still piece began to fall after {name!r}: the game was started by it"
                )
                self._relearn_after_start()
                return steps, top
        return [], 0

    def _shift(self, before: set[B.Cell], after: set[B.Cell]) -> tuple[int, int] | None:
        """(drow, dcol) when `after` is `before` translated (same shape), else None."""
        if len(before) != 4 or len(after) != 4 or B.normalize(before) != B.normalize(after):
            return None
        return (
            min(r for r, _ in after) - min(r for r, _ in before),
            min(c for _, c in after) - min(c for _, c in before),
        )

    def discover_moves(self) -> None:
        """Left, then right; a left probe put off because the piece was against the left
        wall (a game spawning in the top-left corner) is made once right is known."""
        self._read_key_prior()
        left, right = self.keys.order(LEFT_KEYS), self.keys.order(RIGHT_KEYS)
        deferred = not self.discover_horizontal("left", left, -1, defer=True)
        self.discover_horizontal("right", right, +1)
        if deferred:
            self.discover_horizontal("left", left, -1)
        if self.keys.confirm([self.controls["left"], self.controls["right"]]):
            self.log.note(
                "the game's code mentions the movement keys found: keys it does not mention "
                "are not probed"
            )

    def _not_probed(self, keys: tuple[str, ...]) -> str:
        """What a FAIL's reason says of the candidate keys left untried."""
        if not self.keys.trusted:
            return ""
        skipped = [k for k in self.keys.unmentioned(keys) if k not in self.controls.values()]
        if not skipped:
            return ""
        names = ", ".join("Space" if k == " " else k for k in skipped)
        return f" ({names}: not in the game's code, not probed)"

    def _read_key_prior(self) -> None:
        """The page's code, collected by the probe since the start (a moment at most)."""
        if self.keys.known:
            return
        # Collected on the first page; a page followed since (a menu page's Play button
        # opened the game's page) has not begun: begin it now (a no-op when begun).
        self.s.evaluate("window.__bench && window.__bench.collectSources()")
        end = time.monotonic() + 1.0
        text = None
        while time.monotonic() < end:
            text = self.s.evaluate("window.__bench ? window.__bench.sourceText : null")
            if text is not None:
                break
            self.s.wait(0.1)
        self.keys = prior_from(text)
        if self.keys.known:
            self.log.note(f"read {len(self.keys.text or ''):,} characters of the page's code")

    def _away_from_wall(self, cells: set[B.Cell], sign: int) -> set[B.Cell] | None:
        """The piece, moved off the wall on the side `sign` when it touches it (with the
        opposite control, if known); None when it touches it and cannot be moved off."""
        cols = self.empty().shape[1]
        at_wall = (
            (min(c for _, c in cells) == 0) if sign < 0 else (max(c for _, c in cells) == cols - 1)
        )
        if not at_wall:
            return cells
        away = self.controls["right" if sign < 0 else "left"]
        if away is None or away in self.pause_keys:
            return None
        for _ in range(2):
            self.s.press(away, "off the wall")
            self.s.wait(0.03)
        now = self.active(self.press_and_read(away, "off the wall"))
        if len(now) == 4 and B.normalize(now) == B.normalize(cells) and now != cells:
            return now
        return None

    def discover_horizontal(
        self, name: str, keys: list[str], sign: int, defer: bool = False
    ) -> bool:
        """False only when `defer` and the piece stood against that wall: not tried."""
        for key in keys:
            if key in self.pause_keys:
                continue
            cells = self.fresh_piece()
            if not cells:
                return True
            moved_off = self._away_from_wall(cells, sign)
            if moved_off is None:
                if defer:
                    self.log.note(f"move {name}: the piece is against the {name} wall; later")
                    return False
                self.log.note(f"move {name}: the piece is against the {name} wall")
                return True
            cells = moved_off

            def moved(frame: Frame, cells: set[B.Cell] = cells) -> bool:
                shift = self._shift(cells, self.active(frame))
                return bool(shift and shift[1] * sign >= 1)

            after = self.active(self.press_until(key, f"try {name}", moved))
            shift = self._shift(cells, after)
            if shift and shift[1] * sign >= 1:
                self.controls[name] = key
                self.evidence.add(
                    self.log.now(),
                    f"move_{name}",
                    "pass",
                    f"{key!r} moved the piece {shift[1]:+d} column(s)",
                )
                return True
            self._check_not_paused(key)
        self.evidence.add(
            self.log.now(), f"move_{name}", "fail", f"none of {list(keys)} moved the piece {name}"
        )
        return True

    def discover_rotate(self) -> None:
        if self.controls["rotate"] is not None:
            return  # a probe for another control turned the piece
        tried = 0
        keys = [
            k
            for k in self.keys.to_try(ROTATE_KEYS)
            if k not in self.controls.values() and k not in self.pause_keys
        ]  # not the keys known to move or drop the piece, or to pause the game
        for index, key in enumerate(keys):
            # A piece that lands (and is replaced) before the press shows says nothing
            # about the key: try it again on the next piece. The likeliest key (the first
            # one the game's code mentions) gets a second piece even when the first did
            # not turn: with fewer keys probed, one misread must not decide the verdict.
            lowered = False
            chances = 2 if index == 0 and self.keys.known and self.keys.mentions(key) else 1
            for _ in range(3 + chances - 1):
                cells = self._rotatable_piece()
                if not cells:
                    return
                outcome = self._try_rotate(key, cells)
                if outcome == "turned":
                    return
                if outcome == "kept" and self._lower_to_rotate(cells, lowered):
                    lowered = True
                    continue
                if outcome == "kept":
                    chances -= 1
                    if chances:
                        self.log.note(f"rotate: {key!r} did not turn the piece; once more")
                        lowered = False
                        continue
                    tried += 1
                    self._check_not_paused(key)
                    break
                self.log.note(f"rotate: the piece was replaced while trying {key!r}; again")
        if tried:
            self.evidence.add(
                self.log.now(),
                "rotate",
                "fail",
                "no key changed a piece's orientation" + self._not_probed(ROTATE_KEYS),
            )

    def _lower_to_rotate(self, cells: set[B.Cell], lowered: bool) -> bool:
        """A piece in the top two rows may not turn because the turned shape would reach
        above the field (an I piece lying in row 0): soft-drop it two rows and try the same
        key again, once. True when it was lowered."""
        if lowered or min(r for r, _ in cells) >= 2 or not self.controls["down"]:
            return False
        for _ in range(2):
            self.s.press(self.controls["down"], "lower the piece to rotate it")
            self.s.wait(0.04)
        self.log.note("rotate: the piece was at the top of the field; tried again lower down")
        return True

    def _rotatable_piece(self) -> set[B.Cell]:
        """A fresh piece that can show a rotation: not an O, with a few rows to fall.

        An O cannot show a rotation, and a piece about to land (on a stack the control
        probes piled up under the spawn) is replaced by the next one while the press is
        read. Six tries, as three O pieces in a row do come up."""
        for _ in range(6):
            cells = self.fresh_piece()
            if not cells:
                return set()
            usable = B.identify(cells) != "O"
            if usable and self._room(cells) >= 3:
                return cells
            if not self._set_aside(cells):
                return cells if usable else set()
        return set()

    def _set_aside(self, cells: set[B.Cell]) -> bool:
        """Get rid of a piece that is of no use for a probe, where the heuristic puts it
        (without rotating): dropped where it spawns, pieces pile up under the spawn and
        leave the next ones no room. False when nothing brings the next piece."""
        if not (self.controls["hard_drop"] or self.controls["down"] or self.gravity_s_per_row):
            return False
        self.sync_stack(cells)
        assert self.stack is not None
        target = B.best_placement(self.stack, cells, can_rotate=False)
        if target is not None:
            cells = self.steer(cells, target)
        self.drop_or_wait(cells, hurry=True)  # where it lands matters, how fast it falls not
        return True

    def _steer_for_probe(self, cells: set[B.Cell], room: int = 3) -> set[B.Cell]:
        """Move a probe piece (not rotating it) to where the heuristic would put it, when
        it keeps `room` rows to fall there: the probes' pieces then build rows that can be
        completed, instead of a pile under the spawn."""
        if not (self.controls["left"] and self.controls["right"]):
            return cells
        self.sync_stack(cells)
        assert self.stack is not None
        target = B.best_placement(self.stack, cells, can_rotate=False)
        if target is None:
            return cells
        top = min(r for r, _ in cells)
        if min(r for r, _ in target.landed) - top < room:
            return cells
        return self.steer(cells, target)

    def _room(self, cells: set[B.Cell]) -> int:
        """Rows the piece can still fall before it rests on the stack."""
        self.sync_stack(cells)
        assert self.stack is not None
        landing = B.drop(self.stack, cells)
        return min(r for r, _ in landing) - min(r for r, _ in cells)

    def _try_rotate(self, key: str, cells: set[B.Cell]) -> str:
        """'turned' (and the control is recorded), 'kept' (the key did not rotate the
        piece) or 'replaced' (the piece is not whole or another one is there now:
        nothing can be told)."""
        before_shape = B.normalize(cells)

        def turned(frame: Frame, shape: B.Piece = before_shape) -> bool:
            now = self.active(frame)
            return len(now) == 4 and B.normalize(now) != shape

        after = self.active(self.press_until(key, "try rotate", turned))
        if not self._same_piece_turned(cells, after):
            # A piece that glides between orientations (an eased SVG or DOM transition)
            # reads as another shape, or not whole, halfway: judge the shape it settles in.
            after = self._settled_piece(after)
        if self._same_piece_turned(cells, after):
            self.controls["rotate"] = key
            self.evidence.add(
                self.log.now(), "rotate", "pass", f"{key!r} turned a {B.identify(cells)} piece"
            )
            return "turned"
        shift = self._shift(cells, after)
        if shift and shift[0] >= 3:
            self.log.note(f"{key!r} dropped the piece instead of rotating it")
            return "kept"
        if len(after) != 4 or B.identify(after) != B.identify(cells):
            return "replaced"  # landed (the next piece not whole yet) or another piece
        if shift is not None and shift[0] < 0:
            return "replaced"  # the same shape higher up: the next piece
        return "kept"

    @staticmethod
    def _same_piece_turned(cells: set[B.Cell], after: set[B.Cell]) -> bool:
        return (
            len(after) == 4
            and B.normalize(after) != B.normalize(cells)
            and B.identify(after) == B.identify(cells)
        )

    def _settled_piece(self, last: set[B.Cell], limit: float = 0.4) -> set[B.Cell]:
        """The active piece once two reads in a row show it whole in the same shape (it
        may have fallen between them), or the last read after `limit` seconds."""
        end = time.monotonic() + limit
        while time.monotonic() < end and self.time_left() > 0:
            self.s.wait(0.05)
            now = self.active(self.read())
            if len(now) == 4 and len(last) == 4 and B.normalize(now) == B.normalize(last):
                return now
            last = now
        return last

    def discover_soft_drop(self) -> None:
        for key in self.keys.to_try(DOWN_KEYS):
            if key in self.controls.values() or key in self.pause_keys:
                continue
            cells = self.fresh_piece()
            if not cells:
                return
            top = min(r for r, _ in cells)
            t0 = time.monotonic()
            if self.controls["hard_drop"] is None and self._drops_at_once(key, cells):
                # One press put the piece on its landing cells: the game's down key is a
                # hard drop (the lock may follow later). Soft drop is another key.
                self.controls["hard_drop"] = key
                continue
            for _ in range(2):
                self.s.press(key, "try soft drop")
                self.s.wait(0.04)
            self.s.wait(0.06)
            elapsed = time.monotonic() - t0
            after = self.active(self.read())
            shift = self._shift(cells, after)
            if shift and shift[0] >= 1:
                by_gravity = elapsed / self.gravity_s_per_row if self.gravity_s_per_row else 0.0
                if shift[0] >= by_gravity + 1:
                    self.controls["down"] = key
                    self.evidence.add(
                        self.log.now(),
                        "soft_drop",
                        "pass",
                        f"{key!r}: {shift[0]} rows in {elapsed:.2f}s (gravity: {by_gravity:.1f})",
                    )
                    return
            elif after and min(r for r, _ in after) < top:
                continue  # a new piece: this key dropped it all the way (a hard drop)
            self._check_not_paused(key)
            if key not in self.pause_keys:
                if self._held_drop(key):
                    return
                # Two taps of a pause toggle leave the game running; one held press
                # pauses it.
                self._check_not_paused(key)
        self.evidence.add(
            self.log.now(),
            "soft_drop",
            "fail",
            "no key moved the piece down faster than gravity" + self._not_probed(DOWN_KEYS),
        )

    def _held_drop(self, key: str, hold_s: float = 0.45) -> bool:
        """Hold `key` down for a moment: some games drop faster only while it is held
        (they read the key's state on their own tick, and a tap falls between ticks)."""
        start = self.active(self.read())
        if len(start) != 4 or self._room(start) < 4:
            return False
        t0 = time.monotonic()
        self.s.key_down(key, "try soft drop")
        try:
            self.s.wait(hold_s)
            after = self.active(self.read())
        finally:
            self.s.key_up(key)
        elapsed = time.monotonic() - t0
        shift = self._shift(start, after)
        by_gravity = elapsed / self.gravity_s_per_row if self.gravity_s_per_row else 0.0
        if not (shift and shift[0] >= by_gravity + 2):
            return False
        self.controls["down"] = key
        self.down_held = True
        self.evidence.add(
            self.log.now(),
            "soft_drop",
            "pass",
            f"{key!r} held down: {shift[0]} rows in {elapsed:.2f}s (gravity: {by_gravity:.1f})",
        )
        return True

    def _drops_at_once(self, key: str, cells: set[B.Cell]) -> bool:
        """Press `key` once: True (and the hard drop recorded) when the piece is then on
        its predicted landing cells; a soft drop moves it a row or so."""
        self.sync_stack(cells)
        assert self.stack is not None
        landing = B.drop(self.stack, cells)
        rows = min(r for r, _ in landing) - min(r for r, _ in cells)
        merged = self.stack | B.mask_of(landing, self.stack.shape)
        cleared, n = B.clear_full_rows(merged)

        def landed(frame: Frame) -> bool:
            return self._landed_at_once(frame, cells, rows, merged, cleared if n else None)

        if rows < 4:
            self.s.press(key, "try soft drop")
            self.s.wait(0.04)
            return False
        # Read for a moment: the piece may glide down in an animation.
        t0 = time.monotonic()
        if not landed(self.press_until(key, "try soft drop", landed, timeout=0.3)):
            return False
        if self._gravity_could_land(rows, time.monotonic() - t0):
            return False
        self.evidence.add(
            self.log.now(),
            "hard_drop",
            "pass",
            f"{key!r} dropped the piece {rows} rows at once (tried as a soft drop)",
        )
        self.after_landing(landing)
        return True

    def discover_hard_drop(self) -> None:
        if self.controls["hard_drop"] is not None:
            return  # the down key turned out to be a hard drop
        untried: list[str] = []
        for key in self.keys.to_try(HARD_DROP_KEYS):
            if (
                key
                in (
                    self.controls["left"],
                    self.controls["right"],
                    self.controls["rotate"],
                    self.controls["down"],
                )
                or key in self.pause_keys
            ):
                continue
            tried = None
            for _ in range(HARD_DROP_TRIES):
                cells = self.fresh_piece()
                if not cells:
                    return
                tried = self.try_hard_drop(key, self._steer_for_probe(cells))
                if tried is not None:
                    break
                # Too close to the stack to tell a hard drop from a soft one: let this
                # piece land and try the key on the next one.
                self.drop_or_wait(cells)
            if tried is None:
                untried.append(key)
                continue
            if tried:
                self.controls["hard_drop"] = key
                return
            self._check_not_paused(key)
        if untried:
            # A key never pressed on a piece with room to fall says nothing: no FAIL.
            self.log.note(f"hard drop: {untried} could not be tried (no piece with room below it)")
            return
        self.evidence.add(
            self.log.now(),
            "hard_drop",
            "fail",
            "no key dropped a piece to its landing row at once" + self._not_probed(HARD_DROP_KEYS),
        )

    def try_hard_drop(self, key: str, cells: set[B.Cell]) -> bool | None:
        """True when `key` put the piece on its landing cells at once, False when it did
        not, None when the piece had too little room below it to tell."""
        self.sync_stack(cells)
        assert self.stack is not None
        landing = B.drop(self.stack, cells)
        rows = min(r for r, _ in landing) - min(r for r, _ in cells)
        if rows < 3:
            return None  # too close to the floor to tell a hard drop from a soft one
        merged = self.stack | B.mask_of(landing, self.stack.shape)
        cleared, n = B.clear_full_rows(merged)

        def landed(frame: Frame) -> bool:
            return self._landed_at_once(frame, cells, rows, merged, cleared if n else None)

        t0 = time.monotonic()
        frame = self.press_until(key, "try hard drop", landed, timeout=0.35)
        if landed(frame):
            if self._gravity_could_land(rows, time.monotonic() - t0):
                return None  # the piece falls so fast that gravity alone got it there
            self.evidence.add(
                self.log.now(),
                "hard_drop",
                "pass",
                f"{key!r} dropped the piece {rows} rows at once",
            )
            self.after_landing(landing)
            return True
        self._turned_by(key, cells, frame, "pressed while probing for a hard drop")
        return False

    def _gravity_could_land(self, rows: int, elapsed: float) -> bool:
        """Gravity alone moves the piece `rows` rows within `elapsed` s (a game that drops a
        row every 50 ms): its landing then shows no hard drop."""
        per_row = self.gravity_s_per_row
        if not per_row or rows * per_row > elapsed:
            return False
        self.log.note(
            f"the piece landed {rows} rows lower within {elapsed:.2f}s, but gravity alone "
            f"falls a row every {per_row:.2f}s: no sign of a hard drop"
        )
        return True

    def _landed_at_once(
        self,
        frame: Frame,
        cells: set[B.Cell],
        rows: int,
        merged: np.ndarray,
        cleared: np.ndarray | None,
    ) -> bool:
        """The piece is on its landing cells (maybe with the next piece at the top, maybe
        where the old one was), or the rows it completed are already gone; and the piece
        is not simply where it was or a little lower. A ghost drawn as solid cells sits on
        the landing cells before any key is pressed: it must not pass for the piece."""
        if not (
            self._matches(frame, merged, ghost_first=False)
            or (cleared is not None and self._matches(frame, cleared, ghost_first=False))
        ):
            return False
        shift = self._shift(cells, self.active(frame))
        return not (shift is not None and shift[1] == 0 and 0 <= shift[0] < rows)

    def _turned_by(self, key: str, cells: set[B.Cell], frame: Frame, how: str) -> None:
        """A probe key for another control that turned the piece where it was is the
        rotate key (Space rotates in some games, and is tried as a hard drop first)."""
        if self.controls["rotate"] is not None or key in self.controls.values():
            return
        after = self.active(frame)
        shift = self._shift(cells, after)
        if (
            len(after) == 4
            and B.identify(cells) not in (None, "O")
            and B.identify(after) == B.identify(cells)
            and B.normalize(after) != B.normalize(cells)
            and shift is None
            and abs(min(r for r, _ in after) - min(r for r, _ in cells)) <= 2
        ):
            self.controls["rotate"] = key
            self.evidence.add(
                self.log.now(),
                "rotate",
                "pass",
                f"{key!r} turned a {B.identify(cells)} piece ({how})",
            )

    # ---- phase 3: play ---------------------------------------------------------------
    def _matches(self, frame: Frame, expected: np.ndarray, ghost_first: bool = True) -> bool:
        """The frame is `expected` plus at most one new piece near the top (and that
        piece's ghost, where a game draws it as solid cells). Without `ghost_first`, a new
        piece whose ghost is not drawn yet will do: the caller knows the old piece left."""
        missing = expected & ~frame.filled
        if missing.any():
            return False
        extra = frame.filled & ~expected
        rows = np.nonzero(extra)[0]
        if extra.sum() <= 4 and (rows.size == 0 or rows.max() < SPAWN_ROWS + 2):
            # Where ghosts are solid, the piece still falling above its own ghost looks
            # like a landed piece and a new one: a new piece shows its ghost too, unless
            # it is already where it would land.
            if not self.saw_ghost or not ghost_first or not extra.any():
                return True
            piece = B.cells_of(extra)
            return B.drop(expected, piece) == piece
        if extra.sum() > 8:
            return False
        pieces = [
            g for g in B.components(extra) if len(g) == 4 and min(r for r, _ in g) < SPAWN_ROWS
        ]
        if not pieces:
            return False
        piece = min(pieces, key=lambda g: min(r for r, _ in g))
        rest = frame.filled & ~B.mask_of(piece, extra.shape)
        ghost = B.ghost_of(rest, piece, extra & rest)
        return ghost is not None and int(extra.sum()) == 8

    def _without_ghost(self, rest: np.ndarray, piece: set[B.Cell], known: np.ndarray) -> np.ndarray:
        """`rest` (the field without the falling piece) without that piece's ghost, when it
        is drawn as solid cells: only cells not in the `known` stack can be the ghost."""
        if len(piece) != 4:
            return rest
        ghost = B.ghost_of(rest, piece, rest & ~known)
        if ghost is None:
            return rest
        if not self.saw_ghost:
            # A piece that landed unseen right under the next one of its kind (probes drop
            # pieces where they spawn) looks exactly like a ghost once: a ghost is only
            # taken as the game's when seen in two places, as it moves with its piece.
            self.ghost_places.add(frozenset(ghost))
            if len(self.ghost_places) >= 2:
                self.saw_ghost = True
                self.log.note(
                    f"the piece's ghost is drawn as solid cells at {sorted(ghost)}: not stack"
                )
        return rest & ~B.mask_of(ghost, rest.shape)

    def after_landing(self, landed: set[B.Cell], wait: float = 2.0) -> None:
        """After a piece was dropped: follow lock, line clears and the next spawn."""
        assert self.stack is not None
        if self.topping_out:
            # Nothing is judged on a top-out's pieces but the end: the next piece is
            # watched for briefly, not as long as a landing that may show a clear.
            wait = min(wait, 0.8)
        merged = self.stack | B.mask_of(landed, self.stack.shape)
        # Only rows this piece completed are expected to clear: rows a broken game left
        # full before are part of its stack now.
        new_full = merged.all(axis=1) & ~self.stack.all(axis=1)
        n = int(new_full.sum())
        cleared = np.vstack([np.zeros((n, merged.shape[1]), dtype=bool), merged[~new_full]])
        end = time.monotonic() + wait
        outcome: str | None = None  # "cleared" | "kept" (full rows still there) | "placed"
        frame = self.last_frame
        while time.monotonic() < end and self.time_left() > 0:
            frame = self.read()
            if n and self._spawned(frame, cleared):
                outcome = "cleared"
                break
            if self._spawned(frame, merged):
                outcome = "kept" if n else "placed"
                if not n or self.clears_broken:
                    break
                # Full rows still on screen: a clear animation, or no clear at all. Watch on.
            self.s.wait(0.05)
        self.locks += 1
        self.lock_times.append(self.log.now())
        if frame is None or outcome is None:
            if frame is not None:
                self._resync(frame)
            return
        new = frame.filled & ~(cleared if outcome == "cleared" else merged)
        rows = np.nonzero(new)[0]
        self.evidence.add(
            self.log.now(), "spawn", "pass", f"new piece in rows {rows.min()}-{rows.max()}"
        )
        if outcome == "cleared":
            self.lines_cleared += n
            self.evidence.add(
                self.log.now(),
                "line_clear",
                "pass",
                f"{n} full row(s) vanished and the rows above moved down",
            )
        elif outcome == "kept" and not self.clears_broken:
            self.clears_broken = True
            self.evidence.add(
                self.log.now(),
                "line_clear",
                "fail",
                f"{n} full row(s) still there {wait:.1f}s after the piece completed them",
            )
        self.stack = cleared if outcome == "cleared" else merged
        if len(self.evidence.items.get("lock", [])) < 3:
            # Lock: the landed cells are still there a moment after the next piece appeared.
            settle = time.monotonic() + 0.25
            later = self.read()
            while time.monotonic() < settle:
                self.s.wait(0.04)
                later = self.read()
            still = outcome == "cleared" or all(later.filled[r, c] for r, c in landed if r >= 0)
            if not still and later.filled.sum() < 0.5 * self.stack.sum():
                # Most of the stack went with it: the field was wiped (a game over that
                # restarts at once), which says nothing about this piece's lock.
                self.log.note("the field was wiped just after a landing: lock not judged")
                return
            self.evidence.add(
                self.log.now(),
                "lock",
                "pass" if still else "fail",
                "landed piece stayed in place after the next piece appeared"
                if still
                else "landed piece moved or vanished after the next piece appeared",
            )

    def _spawned(self, frame: Frame, expected: np.ndarray) -> bool:
        """`expected` is on screen and a new piece has appeared near the top."""
        return self._matches(frame, expected) and bool((frame.filled & ~expected).any())

    def _resync(self, frame: Frame) -> None:
        """Our model of the stack disagrees with the field: rebuild it from what is seen."""
        filled = frame.filled.copy()
        groups = B.components(filled)
        top_piece = [g for g in groups if len(g) <= 4 and min(r for r, _ in g) < SPAWN_ROWS]
        for group in top_piece[:1]:
            for r, c in group:
                filled[r, c] = False
            known = self.stack if self.stack is not None else np.zeros_like(filled)
            filled = self._without_ghost(filled, group, known)
        self.stack = filled
        self.log.note("resynchronised the stack with the field")

    def drop_or_wait(self, cells: set[B.Cell], hurry: bool = False) -> None:
        if self.controls["hard_drop"]:
            self.drop_piece(cells)
        else:
            self.wait_piece_lands(cells, presses=4 if hurry else 2)

    def drop_piece(self, cells: set[B.Cell]) -> None:
        self.sync_stack(cells)
        assert self.stack is not None
        landing = B.drop(self.stack, cells)
        self.s.press(self.controls["hard_drop"] or " ", "hard drop")
        self.s.wait(0.05)
        self.after_landing(landing)

    def wait_piece_lands(self, cells: set[B.Cell], limit: float = 8.0, presses: int = 2) -> None:
        """No hard drop: soft-drop (or let gravity do it) until the piece lands."""
        assert self.stack is not None
        if not (self.controls["down"] or self.gravity_s_per_row):
            return  # no gravity and no down key: this piece will never land
        end = time.monotonic() + limit
        landing = B.drop(self.stack, cells)
        stuck_after = max(1.2, 2.5 * (self.gravity_s_per_row or 0.0))
        held = self.down_held and self.controls["down"]
        if held:
            self.s.key_down(held, "soft drop")
        try:
            landing = self._follow_fall(
                cells, landing, end, stuck_after, presses=0 if held else presses
            )
        finally:
            if held:
                self.s.key_up(held)
        self.after_landing(landing, wait=max(2.0, 2.5 * (self.gravity_s_per_row or 0.5)))

    def _follow_fall(
        self,
        cells: set[B.Cell],
        landing: set[B.Cell],
        end: float,
        stuck_after: float,
        presses: int,
    ) -> set[B.Cell]:
        """Read until the piece reaches its landing cells, soft-dropping it with `presses`
        presses a read; returns where it landed."""
        assert self.stack is not None
        current = cells
        last_move = time.monotonic()
        while time.monotonic() < end and self.time_left() > 0:
            if time.monotonic() - last_move > stuck_after:
                break  # it no longer moves: landed and waiting to lock, or the game is over
            if presses and self.controls["down"]:
                # Two presses a read in play, or as many as the piece has rows to fall but
                # one: more could push the next piece down before it is seen. Topping out
                # judges nothing on the pieces: it hurries.
                rows_left = min(r for r, _ in landing) - min(r for r, _ in current)
                count = max(presses, min(rows_left - 1, SOFT_PRESSES_MAX))
                if self.topping_out:
                    count = max(presses, rows_left + 2)  # where the next one goes is no matter
                for _ in range(count):
                    self.s.press(self.controls["down"], "soft drop")
                    self.s.wait(0.02)
            frame = self.read()
            now = self.active(frame)
            if now == landing or (
                len(now) == 4 and min(r for r, _ in now) < min(r for r, _ in current) - 2
            ):
                break
            if all(frame.filled[r, c] for r, c in landing) and not (set(now) - landing):
                break
            if len(now) == 4:
                if now != current:
                    last_move = time.monotonic()
                current = now
                landing = B.drop(self.stack, now)
            self.s.wait(0.05)
        return landing

    def steer(self, cells: set[B.Cell], target: B.Placement) -> set[B.Cell]:
        if self.controls["rotate"] and B.normalize(cells) != target.shape:
            for _ in range(3):
                now = self.active(self.press_and_read(self.controls["rotate"], "rotate"))
                if len(now) == 4:
                    cells = now
                if B.normalize(cells) == target.shape:
                    break
        for _ in range(3):
            dx = target.left - min(c for _, c in cells)
            key = self.controls["right"] if dx > 0 else self.controls["left"]
            if dx == 0 or key is None:
                break
            for i in range(abs(dx)):
                self.s.press(key, "move")
                if i % 2:
                    self.read()  # keep the reads flowing during long moves
            self.s.wait(0.04)
            now = self.active(self.read())
            if len(now) == 4:
                cells = now
        return cells

    def sync_stack(self, cells: set[B.Cell]) -> None:
        """The stack is what the field shows minus the falling piece: a model that drifted
        (a piece we did not see land, a clear we missed) is corrected at every piece."""
        if self.last_frame is not None:
            filled = self.last_frame.filled
            rest = filled & ~B.mask_of(cells, filled.shape)
            known = self.stack if self.stack is not None else np.zeros_like(filled)
            self.stack = self._without_ghost(rest, set(cells), known)

    def play_piece(self, topping_out: bool = False) -> bool:
        began = self.log.now()
        played = self._play_piece(topping_out)
        self.scan_clears()
        if played:
            self.last_piece_at = began
            if not topping_out:
                self.piece_seconds.append(self.log.now() - began)
        return played

    @property
    def rows_cleared(self) -> int:
        """Rows cleared as far as the bot can tell, by its model or in the frames."""
        return max(self.lines_cleared, self.clears_seen)

    def scan_clears(self) -> None:
        """Look through the frames recorded since the last scan for a row clear.

        The model of the stack follows the bot's own pieces: a landing it did not follow
        (a ghost taken for the piece, a pause, a piece it never saw land) leaves it unable
        to say that a row cleared, although the screen showed it. The recorded frames
        show it regardless: a full row gone and the rows above moved down."""
        frames = self.log.frames
        start = self.started_at if self.started_at is not None else float("inf")
        for i in range(max(self._clears_scanned, 1) - 1, len(frames) - 1):
            before = frames[i]
            full = before.filled.all(axis=1)
            if before.t < start or not full.any() or frames[i + 1].filled[full].all():
                continue  # only the last frame that shows the full rows
            for after in frames[i + 1 : i + 8]:
                if after.t - before.t > 2.0:
                    break
                if after.filled[full].all():
                    continue
                n = B.row_clear_between(before.filled, after.filled, SPAWN_ROWS)
                if n:
                    self.clears_seen += n
                    if not self.evidence.has("line_clear", "pass"):
                        rows = ", ".join(str(r) for r in np.nonzero(full)[0])
                        self.evidence.add(
                            after.t,
                            "line_clear",
                            "pass",
                            f"row(s) {rows} full at {before.t:.2f}s, gone at {after.t:.2f}s with "
                            "the rows above moved down (seen in the recorded frames)",
                        )
                break
        self._clears_scanned = len(frames)

    def _play_piece(self, topping_out: bool) -> bool:
        if topping_out and (self.controls["hard_drop"] or self.controls["down"]):
            # Topping out needs no whole piece: one that spawns above the field and shows
            # a row at a time is dropped as soon as a cell of it shows.
            cells = self.wait_piece(2.5, need=1)
            if 0 < len(cells) < 4:
                return self._drop_partial_piece()
        else:
            cells = self.wait_piece(2.5)
        if len(cells) != 4:
            return False
        self.sync_stack(cells)
        if not topping_out:
            cells = self._steer_to_best(cells)
        self.drop_or_wait(cells, hurry=topping_out)
        return True

    def _steer_to_best(self, cells: set[B.Cell]) -> set[B.Cell]:
        """Steer the piece to the heuristic's best placement with the controls known."""
        if self.stack is None or not (self.controls["left"] or self.controls["right"]):
            return cells
        target = B.best_placement(self.stack, cells, can_rotate=self.controls["rotate"] is not None)
        return cells if target is None else self.steer(cells, target)

    def _drop_partial_piece(self) -> bool:
        """Drop a piece only partly in view (topping out), with the hard drop or a burst of
        soft drops: nothing is judged on it. False when the field did not react (the game
        may be over)."""
        before = self.read().filled
        if self.controls["hard_drop"]:
            self.s.press(self.controls["hard_drop"], "hard drop (top-out)")
        else:
            assert self.controls["down"] is not None
            for _ in range(self.empty().shape[0] // 2):
                self.s.press(self.controls["down"], "soft drop (top-out)")
                self.s.wait(0.01)
        self.s.wait(0.25)
        frame = self.read()
        if np.array_equal(before, frame.filled):
            return False
        self._resync(frame)
        return True

    def check_walls(self) -> None:
        if not (self.controls["left"] and self.controls["right"]):
            return
        for name, key, wall in (
            ("left", self.controls["left"], 0),
            ("right", self.controls["right"], None),
        ):
            cells = self.fresh_piece()
            if not cells:
                return
            cols = self.empty().shape[1]
            wall_col = 0 if wall == 0 else cols - 1
            for _ in range(cols + 2):
                self.s.press(key, f"push {name} wall")
                self.s.wait(0.03)
            self.s.wait(0.08)
            frame = self.read()
            after = self.active(frame)
            top_before = min(r for r, _ in cells)
            if after and min(r for r, _ in after) < top_before:
                # A new piece higher up: the pushed one landed meanwhile. Not a wall verdict.
                self.log.note(f"walls: the piece landed while pushing {name}; not judged")
                continue
            if len(after) == 4 and B.normalize(after) == B.normalize(cells):
                edge = min(c for _, c in after) if wall == 0 else max(c for _, c in after)
                if edge == wall_col:
                    self.evidence.add(
                        self.log.now(), "walls", "pass", f"stopped at the {name} wall"
                    )
                else:
                    self.log.note(f"walls: piece stopped at column {edge} pushing {name}")
            elif len(after) < 4 and self._loose_cells(frame) >= 4:
                # Cells enough for a piece, in no group of four: another shape (a piece of
                # five cells, leftovers merged with it), not a piece pushed out of view.
                self.log.note(f"walls: no four-cell piece to judge after pushing {name}")
            elif len(after) < 4:
                self.evidence.add(
                    self.log.now(),
                    "walls",
                    "fail",
                    f"pushing {name}, the piece left the field ({len(after)} of 4 cells visible)",
                )
            else:
                self.evidence.add(
                    self.log.now(),
                    "walls",
                    "fail",
                    f"pushing {name}, the piece changed shape at the wall (wrapped?)",
                )
            if len(after) == 4:
                after = self._turn_at_wall(key, after)
            if len(after) == 4:
                self._set_aside(after)
            else:
                self.drop_or_wait(cells)

    def _turn_at_wall(self, push: str, cells: set[B.Cell]) -> set[B.Cell]:
        """Turn a piece that rests against a wall, pushing it back after each turn: a
        narrow orientation against the wall has no room to turn into a wide one, so a game
        without wall kicks meets a blocked rotation here, as a player soon does. Some games
        throw on one (no_errors); a bot that never blocks a turn would never see it.
        Returns the piece's cells afterwards (fewer than four if it could not be found)."""
        rotate = self.controls["rotate"]
        if rotate is None or self._room(cells) < 4:
            return cells
        for _ in range(WALL_TURNS):
            self.s.press(rotate, "turn against the wall")
            self.s.wait(0.03)
            self.s.press(push, "back against the wall")
            self.s.wait(0.03)
        self.s.wait(0.08)
        return self.active(self.read())

    def _loose_cells(self, frame: Frame) -> int:
        stack = self.stack if self.stack is not None else self.empty()
        return int((frame.filled & ~stack).sum())

    def stack_height(self) -> int:
        if self.stack is None or not self.stack.any():
            return 0
        return self.stack.shape[0] - int(np.nonzero(self.stack.any(axis=1))[0].min())

    # ---- phase 4: endurance window and top-out ---------------------------------------
    def game_over_signal(self) -> str | None:
        """A visible game-over message or a game-over dialog, if any."""
        text = self.s.evaluate("window.__bench ? window.__bench.gameOverText() : null")
        if text:
            return str(text)
        for _t, _kind, message in self.log.dialogs:
            if GAME_OVER_DIALOG.search(message):
                return f"dialog:{message[:60]}"
        return None

    def field_static(self, seconds: float) -> bool:
        """True when nothing changes on the field for `seconds` (no piece spawns or falls)."""
        first = self.read().filled
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.s.wait(0.1)
            if not np.array_equal(self.read().filled, first):
                return False
        return True

    def restart(self) -> bool:
        """Start again after a game over: a start button, the start key, else a reload."""
        mechanism = self.start_mechanism or "auto"
        self.log.note(f"restarting (the game was started by {mechanism})")
        attempts: list[Callable[[], None]] = []
        self._dismiss_overlays()
        for button in self.s.evaluate("window.__bench.startButtons()", []) or []:
            attempts.append(lambda b=button: self._click(b["selector"]))
        if mechanism.startswith("key:"):
            key = mechanism.removeprefix("key:")
            attempts.append(lambda k=key: self.s.press(" " if k == "Space" else k, "restart"))
        attempts.append(lambda: self.s.press("Enter", "restart"))
        attempts.append(self._reload)
        ended = self.read().filled.copy()
        for attempt in attempts:
            attempt()
            self.s.wait(0.3)
            self.stack = self.empty()
            cells = self.wait_piece(1.5, need=3)
            if cells and self._new_game(ended, cells):
                self._resync(self.read())
                return True
        return False

    def _new_game(self, ended: np.ndarray, cells: set[B.Cell]) -> bool:
        """After a restart attempt: the field was cleared, or a piece is where the ended
        game's field had nothing. A few loose cells at the top of the ended game's own
        field are not a new game: a key that did not restart it leaves that field as it
        was, and taking it for a new game had the rest of the window counted as a freeze."""
        now = self.read().filled
        if now.shape != ended.shape:
            return True
        if int(ended.sum()) - int(now.sum()) >= 4:
            return True
        return any(not ended[r, c] for r, c in cells)

    def _click(self, selector: str) -> None:
        try:
            self.s.page.click(selector, timeout=1500)
        except Exception as error:
            self.log.note(f"click failed: {str(error).splitlines()[0]}")
        self._unfocus()

    def _reload(self) -> None:
        """Games that start on load restart only by reloading: the page is the same game."""
        self.log.note("reloading the page to play again")
        try:
            self.s.page.reload(wait_until="load", timeout=10000)
        except Exception as error:
            self.log.note(f"reload failed: {str(error).splitlines()[0]}")
            return
        self.s.wait(0.4)
        self.s.evaluate("window.__bench && window.__bench.lockScroll()")
        if self.start_mechanism and self.start_mechanism.startswith("click:"):
            for button in self.s.evaluate("window.__bench.startButtons()", []) or []:
                self._click(button["selector"])
                break
        elif self.start_mechanism and self.start_mechanism.startswith("key:"):
            key = self.start_mechanism.removeprefix("key:")
            self.s.press(" " if key == "Space" else key, "start after reload")

    def play_window(self) -> None:
        """Play through the endurance window and top the game out at its end.

        The top-out is timed to end with the window (then the game is restarted if time
        is left), so that an evaluation lasts about the window rather than the window and
        a top-out after it. A game that completed no row yet is first played on past the
        window for a while (EXTRA_PLAY_S): calibrating a slow game's controls can take
        most of the window, and `line_clear` (and a score that counts only lines) needs
        some real play. Everything after the window ends by FINISH_AFTER_WINDOW_S."""
        assert self.started_at is not None
        window_end = self.log.t0 + self.started_at + self.endurance_s
        finish_by = min(window_end + FINISH_AFTER_WINDOW_S, self.deadline)
        budget = self.top_out_budget()
        if not self._play_until(window_end - budget):
            return
        if self.rows_cleared == 0 and not self.clears_broken:
            # Leave the top-out a hard-dropped one's minimum: a slow one still ends in a
            # game over (and is never cut below its minimum, below). Not a soft-dropped
            # one's: that left games without a hard drop, whose calibration is the
            # slowest, no extra play at all, and so no completed row.
            extra_end = min(window_end + EXTRA_PLAY_S, finish_by - TOP_OUT_MIN_S)
            if not self._play_until(extra_end, until_a_line=True):
                return
        self.s.poll_numbers()
        if self.evidence.judged("game_over"):
            # The game already ended in play (and was restarted): a second top-out would
            # judge game_over again on a game the bot's restart may have left in another
            # state (a reload, a key that is not the game's restart key).
            self.log.note("no top-out: game_over was already judged in play")
            self._play_until(window_end)
            return
        self.log.note(
            f"topping out ({budget:.0f}s budgeted, {window_end - time.monotonic():.1f}s of the window left)"
        )
        # A soft-dropped top-out can take 20 s: it is never cut shorter than its
        # minimum, so that game_over is still observed.
        least = TOP_OUT_MIN_S * budget / TOP_OUT_S
        self.top_out_began = self.log.now()
        self.topping_out = True
        try:
            self.top_out(max(finish_by - time.monotonic(), least))
        finally:
            self.topping_out = False
        self.s.poll_numbers()
        if time.monotonic() > window_end - 1.0:
            return
        # Time is left in the window (the game ended, or the top of the field was emptied
        # with no game over): start again if it ended, and play the window out, so that
        # endurance is judged on the whole window.
        if self.first_game_over_at is None or self._restart_after_game_over():
            self._play_until(window_end)

    def top_out_budget(self) -> float:
        """Seconds a top-out takes: dropping pieces on one column until the stack reaches
        the top, then watching the end."""
        return TOP_OUT_S if self.controls["hard_drop"] else TOP_OUT_S * SOFT_TOP_OUT

    def _restart_after_game_over(self) -> bool:
        """Restart a game that ended; from the last piece played (or the last change of the
        field, if earlier) to the restart is recorded as a game over, not a freeze."""
        over_at = self.first_game_over_at
        assert over_at is not None
        since = min(
            t
            for t in (
                over_at,
                self.last_piece_at,
                self.log.frames[-1].t if self.log.frames else None,
            )
            if t is not None
        )
        if not self.restart():
            self.log.note("the game could not be restarted")
            return False
        self.pauses.append((since - 0.5, self.log.now()))
        self.first_game_over_at = None
        return True

    def _play_until(self, end: float, until_a_line: bool = False) -> bool:
        """Play pieces with the heuristic until the monotonic time `end` (or, with
        `until_a_line`, until a row is completed). False when play cannot go on: the field
        no longer reacts, or the game ended and could not be restarted."""
        last_numbers = 0.0
        misses = 0
        while time.monotonic() < end and self.time_left() > 0:
            if until_a_line and (self.rows_cleared or self.clears_broken):
                return True
            if end - time.monotonic() < self._piece_seconds():
                # Too little time for another piece: a piece begun now would end after
                # `end` and stretch the evaluation. Watch the field until then.
                self._observe_until(end)
                return True
            if time.monotonic() - last_numbers > 1.0:
                self.s.poll_numbers()
                last_numbers = time.monotonic()
            if self.stalled():
                self.log.note("the field no longer reacts to input: stopping play")
                return False
            if self.play_piece():
                misses = 0
                continue
            misses += 1
            signal = self.game_over_signal()
            if signal or misses >= 2:
                if self.first_game_over_at is None:
                    # A stack at the top that stopped changing is a game that ended when
                    # the field last changed; the seconds the bot took to tell are no freeze.
                    high = self.stack is not None and self.stack_height() >= len(self.stack) - 4
                    last_change = self.log.frames[-1].t if self.log.frames else None
                    self._mark_over(last_change if high else None)
                self.log.note(f"play stopped before the window closed ({signal or 'no new piece'})")
                if signal and self.stack_height() >= self.empty().shape[0] - 4:
                    self.evidence.add(
                        self.log.now(),
                        "game_over",
                        "pass",
                        f"stack reached the top and the game showed {signal}",
                    )
                if not self._restart_after_game_over():
                    return False
                misses = 0
        return True

    def _piece_seconds(self) -> float:
        """How long playing one piece has taken lately (the median of the last few)."""
        times = self.piece_seconds[-6:]
        return float(np.median(times)) if times else 1.0

    def _observe_until(self, end: float) -> None:
        while time.monotonic() < end - 0.05 and self.time_left() > 0:
            self.read()
            self.s.wait(min(0.1, max(0.0, end - time.monotonic())))

    def top_out(self, limit: float = 14.0) -> None:
        """Drop pieces without steering until the stack reaches the top, then watch the end."""
        rows = self.empty().shape[0]
        end = time.monotonic() + min(limit, self.time_left())
        peak = 0
        lines_before = self.rows_cleared
        while time.monotonic() < end and not self.stalled():
            signal = self.game_over_signal()
            height = self.stack_height()
            peak = max(peak, height)
            if peak >= rows - 6 and self._still_at_the_top():
                # Keys kept being pressed and nothing moved any more: no piece spawns (an
                # end panel over the field can look like cells that never fall).
                detail = f" and the game showed {signal}" if signal else ""
                self.evidence.add(
                    self.log.now(),
                    "game_over",
                    "pass",
                    f"stack {peak}/{rows} high, then the field stopped changing{detail}",
                )
                self._mark_over(self.log.frames[-1].t if self.log.frames else None)
                return
            if signal and peak >= rows - 6:
                self.evidence.add(
                    self.log.now(), "game_over", "pass", f"stack {peak}/{rows} high, then {signal}"
                )
                self._mark_over()
                return
            if not self.play_piece(topping_out=True):
                high = peak >= rows - 6
                if high and self.field_static(max(2.0, 4 * (self.gravity_s_per_row or 0.0))):
                    signal = self.game_over_signal()
                    detail = f" and the game showed {signal}" if signal else ""
                    self.evidence.add(
                        self.log.now(),
                        "game_over",
                        "pass",
                        f"stack reached the top, pieces stopped spawning{detail}",
                    )
                    # The game ended when the field last changed, not when the bot had
                    # watched it stand still long enough to say so: that wait is no freeze.
                    self._mark_over(self.log.frames[-1].t if self.log.frames else None)
                    return
                continue
            wiped = self.stack_height() <= 3 and self.rows_cleared == lines_before
            if peak >= rows - 5 and wiped:
                if (signal := self.game_over_signal()) is not None:
                    self.evidence.add(
                        self.log.now(), "game_over", "pass", f"stack {peak}/{rows}, then {signal}"
                    )
                    self._mark_over()
                    return
                wiped_at = self.log.frames[-1].t if self.log.frames else self.log.now()
                if not self._play_goes_on():
                    # The field emptied and nothing came after: the game ended (a form
                    # for a name, a menu) without words the bot knows.
                    self.evidence.add(
                        self.log.now(),
                        "game_over",
                        "pass",
                        f"stack {peak}/{rows}, then the field was emptied and no piece came",
                    )
                    self._mark_over(wiped_at)
                    return
                self.evidence.add(
                    self.log.now(),
                    "game_over",
                    "fail",
                    "the field was emptied at the top and play went on with no game-over state",
                )
                return
        self.log.note(f"top-out ended with the stack {peak}/{rows} high")

    def _play_goes_on(self) -> bool:
        """After the field emptied at the top: does a new piece come and fall by itself?"""
        window = max(3.0, 4 * (self.gravity_s_per_row or 0.5))
        if len(self.wait_piece(window)) != 4:
            return False
        if self._falls(max(1.5, 2.5 * (self.gravity_s_per_row or 0.5))):
            return True
        if not self.evidence.has("gravity", "fail"):
            return False
        # A game without gravity (judged under `gravity`) goes on when the new piece
        # answers the movement keys: waiting for it to fall would call every wipe an end.
        for key in (self.controls["down"], self.controls["left"], self.controls["right"]):
            if not key:
                continue
            before = self.active(self.read())
            after = self.active(self.press_and_read(key, "does the new piece answer a key?"))
            if len(before) == 4 and len(after) == 4 and after != before:
                return True
        return False

    def _still_at_the_top(self) -> bool:
        """The field has not changed for a while (four gravity rows, at least 2.5 s)
        although keys were pressed meanwhile."""
        if not self.log.frames:
            return False
        last_change = self.log.frames[-1].t
        still = max(2.5, 4 * (self.gravity_s_per_row or 0.0))
        presses = sum(1 for t, _k, _p in self.log.actions if t > last_change + 0.3)
        return self.log.now() - last_change >= still and presses >= 2

    def stalled(self, seconds: float = 6.0) -> bool:
        """The field has not changed for `seconds` although keys were pressed meanwhile."""
        if not self.log.frames:
            return False
        last_change = self.log.frames[-1].t
        if self.log.now() - last_change <= seconds:
            return False
        if self._resume():
            return False
        if sum(1 for t, _k, _p in self.log.actions if t > last_change + 0.5) < 3:
            self.nudge()  # make sure it is the game that does not react, not the bot idling
        return sum(1 for t, _k, _p in self.log.actions if t > last_change + 0.5) >= 3

    def nudge(self) -> None:
        """Press the movement keys once each and read: a living game shows something."""
        for key in (self.controls["left"], self.controls["right"], self.controls["down"]):
            if key:
                self.press_and_read(key, "is the game still alive?", 0.1)

    def game_over_before_gone(self) -> None:
        """The page stopped answering (a loop of dialogs at the end, say) right after a
        game-over dialog while the stack was at the top: that was the game over."""
        if self.evidence.judged("game_over"):
            return
        frame = self.last_frame
        if frame is None or not frame.filled.any():
            return
        rows = frame.filled.shape[0]
        height = rows - int(np.nonzero(frame.filled.any(axis=1))[0].min())
        if max(height, self.stack_height()) < rows - 4:
            return
        for t, _kind, message in self.log.dialogs:
            if t >= frame.t - 3.0 and GAME_OVER_DIALOG.search(message):
                self.evidence.add(
                    t,
                    "game_over",
                    "pass",
                    f"stack {height}/{rows} high, then dialog:{message[:60]!r} "
                    "(and the page stopped answering)",
                )
                self._mark_over()
                return

    def _mark_over(self, at: float | None = None) -> None:
        if self.first_game_over_at is None:
            self.first_game_over_at = self.log.now() if at is None else at
