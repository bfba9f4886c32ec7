"""Phase 1 of the bot's play: start the game.

Load (and reload a page that threw), fit the window, close overlays, type a name, find
the empty field, then start the game by watching, clicking start buttons, a menu or
start keys; the first piece tunes the cell threshold.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict

import numpy as np

from bench_pipeline.bot import board as B
from bench_pipeline.bot.core import SPAWN_ROWS, BotCore
from bench_pipeline.bot.geometry import BoardGeometry, trim_walls
from bench_pipeline.bot.readers.page_code import (
    StartCandidate,
    locate,
    read_listeners,
    start_candidates,
)
from bench_pipeline.bot.readers.state import StateReader
from bench_pipeline.bot.session import MIN_THRESHOLD
from bench_pipeline.bot.timings import TIMINGS

START_KEYS = ("Enter", " ", "s", "p", "ArrowDown", "n")
# What the bot types where a game asks for a player's name before it starts.
PLAYER_NAME = "Bot"
# A start key after which more than this share of the field reads filled lifted a cover.
OVERLAY_SHARE = 0.6
# A first piece may spawn above the field (rows -2, -3) and show only after a row or two
# of fall: the watch after a start button lasts that long. (An auto-start missed by the
# shorter first watch is caught by the start keys, which the game ignores or obeys.)
AUTO_WATCH_S = TIMINGS.auto_watch_s
START_WATCH_S = TIMINGS.start_watch_s
QUICK_WATCH_S = TIMINGS.quick_watch_s
# A game that throws while loading may do so only on some loads: reload up to this many
# times in all before judging it.
MAX_LOADS = 3
MAX_VIEWPORT_HEIGHT = 2400  # a taller page is read from its top 2400 px
# Clicks (or keys) tried from the page's structure when no start word led anywhere.
MAX_STRUCTURE_STARTS = 5


class StartPhase(BotCore):
    """Phase 1: start the game."""

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
        self.read_page_code()
        while True:
            last_load = self.loads >= MAX_LOADS
            threw = len(self.log.page_errors) > errors_before
            if self._start_once(quick=threw and not last_load):
                if self.loads > 1:
                    self.log.note(f"the game started on page load {self.loads}")
                if not self.handler_keys:
                    self.read_page_code()  # keys bound only when the game began
                self.attach_state_reader()
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
                self.s.refind_frame()
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
                self.s.frame.click(button["selector"], timeout=1500)
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
                self.s.frame.fill(box["selector"], PLAYER_NAME, timeout=1500)
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
            self.s.frame.press(fields[-1]["selector"], "Enter", timeout=1500)
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
        elif not quick and (tried := self._start_from_structure(before, button_watch)):
            self.start_mechanism = tried
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
                keys = self.keys.order(START_KEYS, "start")
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
            self.observe("starts", "pass", detail, at=self.started_at)
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
        self.observe("starts", "fail", "the field changed but no piece appeared")
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
                    s.frame.click(button["selector"], timeout=2000)
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

    def read_page_code(self) -> None:
        """Read the game's keyboard listeners from its code (CDP): the keys its handlers
        test, what each seems to do, and where they listen. Probes try those keys first;
        blind probing of the usual keys is the fallback. Read again once the game started
        (a game may bind its keys in its start function)."""
        cdp = self.s.cdp()
        if cdp is None or self.time_left() < 20:
            return
        try:
            report = read_listeners(self.s.page, cdp, budget_s=4.0)
        except Exception as error:  # the reader must never stop the bot
            self.log.note(f"reading the game's listeners failed: {error!r}"[:200])
            return
        self.listeners = report
        self.handler_keys.update({k.key: k.role for k in report.keys})
        self.keys = self.keys.with_handlers(self.handler_keys)
        page_wide = any(t.kind in ("window", "document", "body") for t in report.key_targets)
        own = [t for t in report.key_targets if t.kind in ("canvas", "input", "textarea")]
        self.key_target = own[0] if own and not page_wide else None
        hints = ", ".join(
            f"{'Space' if k.key == ' ' else k.key}={k.role}" for k in report.keys if k.role
        )
        where = ", ".join(sorted({t.kind for t in report.key_targets})) or "nowhere found"
        self.log.note(
            f"the game's keyboard handlers ({report.ms:.0f} ms): listen on {where}; keys "
            f"{sorted('Space' if k == ' ' else k for k in self.handler_keys) or 'none'}"
            + (f"; hints {hints}" if hints else "")
            + (f"; {'; '.join(report.failures[:2])}" if report.failures else "")
        )

    def attach_state_reader(self) -> None:
        """Find the game's own state (board, piece, score, game over) in its heap, now that
        it runs, and re-read it beside every read of the field from then on. One scan: it
        forces a full garbage collection, so it is never done while a probe is timed."""
        cdp = self.s.cdp()
        g = self.s.geometry
        if cdp is None or g is None or self.time_left() < 25:
            return
        reader = StateReader(self.s.page, cdp)
        try:
            description = reader.scan((g.rows, g.cols), budget_s=TIMINGS.state_scan_budget_s)
        except Exception as error:  # the reader must never stop the bot
            self.log.note(f"the state reader failed: {error!r}"[:200])
            return
        self.log.state = description
        boards = len(description.get("boards") or [])
        scalars = len(description.get("scalars") or [])
        scan_ms = max(reader.scan_ms, default=0.0)
        self.log.note(
            f"the game's own state: {boards} board and {scalars} number candidates "
            f"({scan_ms:.0f} ms scan)"
            + ("" if description.get("ok", True) else f"; {description.get('error')}")
        )
        if boards or scalars:
            self.state_reader = reader
            self.sample_state(force=True)

    def _start_from_structure(self, before: np.ndarray | None, watch: float) -> str | None:
        """Start the game the way a person would, whatever the words on the page: the
        elements with a click listener of their own, on or over the board first (an image
        button, a div overlay, a menu entry in any language), a name field to fill, the
        keys the handlers treat as a start (readers/page_code.py). The contract's form of
        what worked, else None."""
        cdp = self.s.cdp()
        if cdp is None or self.listeners is None or self.time_left() < 25:
            return None
        try:
            candidates = start_candidates(self.s.page, cdp, self.listeners, budget_s=3.0, limit=8)
        except Exception as error:
            self.log.note(f"no start candidates from the page's structure: {error!r}"[:200])
            return None
        tried = 0
        for cand in candidates:
            if tried >= MAX_STRUCTURE_STARTS or self.time_left() < 20:
                break
            if cand.action == "key" and cand.key in self.pause_keys:
                continue
            tried += 1
            self.log.note(
                f"trying {cand.action} {cand.name or cand.selector or cand.key!r} from the "
                f"page's structure ({'; '.join(cand.reasons[:2])})"[:300]
            )
            try:
                if cand.action == "key":
                    self._unfocus()
                    self.s.press(cand.key, "start (the handlers' start key)")
                elif cand.action == "fill":
                    target = locate(self.s.page, cand)
                    target.fill(PLAYER_NAME, timeout=1500)
                    if cand.submit:
                        submit = StartCandidate("click", cand.submit, cand.frame)
                        locate(self.s.page, submit).click(timeout=1500)
                    else:
                        target.press("Enter", timeout=1500)
                else:
                    locate(self.s.page, cand).click(timeout=2000)
            except Exception as error:
                self.log.note(f"{cand.action} failed: {str(error).splitlines()[0][:120]}")
                continue
            self._unfocus()
            located = self.s.geometry
            if self._locate() != located:
                before = self._learn_empty_field()
            if self._something_started(before, watch):
                if cand.action == "key":
                    return f"key:{'Space' if cand.key == ' ' else cand.key}"
                label = cand.name if cand.name and len(cand.name) <= 40 else cand.selector
                return f"click:{label}"
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
            self.s.frame.click(item["selector"], timeout=2000)
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
        dx, dy = self.s.frame_offset()  # the probe asks in the game frame's coordinates
        x, y = (g.x + g.width / 2 - dx, g.y + g.height / 2 - dy) if g is not None else (-1, -1)
        focused = self.s.evaluate(
            f"window.__bench ? window.__bench.focusField({x:.0f}, {y:.0f}, {str(blur).lower()}) : "
            "(document.activeElement && document.activeElement.blur && document.activeElement.blur(), null)"
        )
        if focused and not self.field_focused:
            self.field_focused = True
            self.log.note(f"the keyboard focus goes to the page's <{focused}>: focused it")
        target = self.key_target
        if target is not None and not focused:
            # The game listens for keys on this one element only (its handlers say so):
            # it gets the focus back after every click, as a player's click gives it.
            with contextlib.suppress(Exception):
                element = StartCandidate("click", target.selector, target.frame)
                locate(self.s.page, element).focus(timeout=1000)

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
