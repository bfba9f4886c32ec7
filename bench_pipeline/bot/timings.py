"""Every waiting time and time budget of the bot, in one named structure.

The phases used to keep their own constants at their tops; a change to one (a longer
watch for a slow start) could not be seen beside the budget it eats into. The modules
still export their old names (tests and benchmarks import them), each bound to a field
here. Seconds unless the name says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timings:
    # --- the evaluation's budget (evaluate.py) --------------------------------------------
    hard_cap_s: float = 60.0  # the evaluation ends here whatever the game does
    contract_window_s: float = 30.0  # the endurance window the contract names
    # Play ends this long after the window's length from the evaluation's start: loading,
    # the start and the top-out past the window fit in it.
    beyond_window_s: float = 18.0
    # Play ends at least this long before the hard cap: closing the browser and writing the
    # evidence fit in it, and a page call that hangs meets the watchdog first.
    cap_margin_s: float = 12.0
    # --- reading and pressing (session.py, core.py) ---------------------------------------
    after_key_s: float = 0.07  # time for a game to react and render after a key
    key_hold_ms: int = 30  # longer than one 60 Hz frame, shorter than any auto-repeat delay
    screenshot_timeout_ms: int = 2500
    # A page that missed a query's timeout gets this long to answer a plain ping before it is
    # called frozen: on a loaded machine a live page can miss one 3 s timeout.
    alive_ping_ms: int = 6000
    pixel_look_every_s: float = 1.0  # at most one look per canvas for a field in its pixels
    # --- the start (start.py) ---------------------------------------------------------
    # A first piece may spawn above the field and show only after a row or two of fall:
    # the watch after a start button lasts that long.
    auto_watch_s: float = 1.6
    start_watch_s: float = 2.4
    quick_watch_s: float = 1.0  # on a load that threw, before loading again
    # --- controls (controls.py) -------------------------------------------------------
    gravity_watch_s: float = 5.0  # a piece still this long with no input: no gravity
    # --- the window and the top-out (endurance.py) ------------------------------------
    extra_play_s: float = 8.0  # play past the window while no row was completed yet
    top_out_s: float = 7.5  # a top-out with a hard drop, watching its end included
    top_out_min_s: float = 13.0  # the least time a top-out is given, with a hard drop
    soft_top_out: float = 1.6  # soft-dropping to the top takes this many times as long
    finish_after_window_s: float = 20.0  # all play after the window ends this soon after it
    # --- the state reader (readers/state.py) --------------------------------------------
    state_sample_every_s: float = 0.25  # the game's own state is re-read at most this often
    # One heap scan, after the start: past it, what was found so far (a page too busy to be
    # read gives no state rather than eat the window).
    state_scan_budget_s: float = 4.0
    # A sample that took longer than this (a page whose main thread is busy) spaces the next
    # ones out, so that reading the state never slows the reads a probe is timed by.
    state_sample_slow_s: float = 0.05


TIMINGS = Timings()
