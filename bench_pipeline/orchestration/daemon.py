"""Dagster's daemon with a backfill daemon that looks every few seconds, not every 30.

Why: in Dagster 1.13 the backfill daemon sleeps a fixed 30 s between its iterations (the
constant `DEFAULT_DAEMON_INTERVAL_SECONDS` of `dagster._daemon.controller`, which the
backfill loop reads when it starts; no instance setting changes it). A sweep launched from
the UI waits for it twice - once for its runs to be submitted, once more for the warehouse
run after they end - which was 0-60 s, most of the orchestration overhead of a 20-run
sweep (docs/orchestration.md, "Where the time goes").

Two entry points, standing in for Dagster's own:

    python -m bench_pipeline.orchestration.daemon run [dagster-daemon run options]
    python -m bench_pipeline.orchestration.daemon dev [dagster dev options]

`run` is `dagster-daemon run` with the backfill interval set from BENCH_BACKFILL_INTERVAL_S
(default 5 s); a deployment runs it in place of `dagster-daemon run` (deploy/). `dev` is
`dagster dev` whose daemon child is started through `run`; `bench ui` uses it. An iteration
over no backfill is one query of the run storage, so a short interval costs nothing when
the instance is idle. Both reach into Dagster's private modules, and only here: if a
Dagster upgrade moves them, the commands still start, with Dagster's interval, and say so.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

INTERVAL_ENV = "BENCH_BACKFILL_INTERVAL_S"
DEFAULT_INTERVAL_S = 5.0
# Dagster's own daemon module, as `dagster dev` starts it: [python, -m, dagster._daemon, ...]
DAGSTER_DAEMON_MODULE = "dagster._daemon"
THIS_MODULE = "bench_pipeline.orchestration.daemon"


class IntervalError(ValueError):
    """BENCH_BACKFILL_INTERVAL_S is not a number of seconds from 1 to 30."""


def backfill_interval_s(environ: dict[str, str] | None = None) -> float:
    """The backfill daemon's interval: BENCH_BACKFILL_INTERVAL_S, else 5 s (1 to 30)."""
    raw = (os.environ if environ is None else environ).get(INTERVAL_ENV, "").strip()
    if not raw:
        return DEFAULT_INTERVAL_S
    try:
        seconds = float(raw)
    except ValueError:
        raise IntervalError(f"{INTERVAL_ENV}={raw!r} is not a number of seconds") from None
    # Below 1 s an iteration over a large backfill would run back to back; above 30 s it
    # would be slower than Dagster's own.
    if not 1 <= seconds <= 30:
        raise IntervalError(f"{INTERVAL_ENV}={raw!r}: give 1 to 30 seconds")
    return seconds


def set_backfill_interval(seconds: float) -> bool:
    """Make this process's backfill daemon sleep `seconds` between iterations.

    True when Dagster still has the constant this relies on; False (nothing changed) after
    an upgrade that removed it.
    """
    from dagster._daemon import controller

    if not isinstance(getattr(controller, "DEFAULT_DAEMON_INTERVAL_SECONDS", None), int | float):
        return False
    controller.DEFAULT_DAEMON_INTERVAL_SECONDS = seconds  # type: ignore[assignment]
    return True


def daemon_command(command: Sequence[str]) -> list[str]:
    """`command` with Dagster's daemon module replaced by this one (same arguments)."""
    args = list(command)
    for i in range(len(args) - 1):
        if args[i] == "-m" and args[i + 1] == DAGSTER_DAEMON_MODULE:
            args[i + 1] = THIS_MODULE
            break
    return args


def _run_daemon(argv: Sequence[str]) -> None:
    seconds = backfill_interval_s()
    if not set_backfill_interval(seconds):
        print(
            f"bench: this Dagster has no backfill interval to set; {INTERVAL_ENV} ignored",
            file=sys.stderr,
        )
    from dagster._daemon.cli import main

    sys.argv = ["dagster-daemon", *argv]
    main()


def _run_dev(argv: Sequence[str]) -> None:
    backfill_interval_s()  # a bad value stops here, not in the daemon child
    from dagster._cli import dev

    opener: Callable[..., Any] | None = getattr(dev, "open_ipc_subprocess", None)
    if opener is None:
        print(
            "bench: this Dagster starts its daemon another way; 30 s backfill interval",
            file=sys.stderr,
        )
    else:

        def open_with_our_daemon(command: Sequence[str], *args: Any, **kwargs: Any) -> Any:
            return opener(daemon_command(command), *args, **kwargs)

        dev.open_ipc_subprocess = open_with_our_daemon  # type: ignore[attr-defined]
    from dagster._cli import main

    # `dagster dev` is what this runs on purpose (the daemon child is ours, see above);
    # Dagster 1.13 asks for `dg dev` instead, which starts its daemon its own way.
    warnings.filterwarnings("ignore", message=r"Function `dev_command` is superseded")
    sys.argv = ["dagster", "dev", *argv]
    main()


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("run", "dev"):
        print(__doc__, file=sys.stderr)
        raise SystemExit(2)
    try:
        if args[0] == "run":
            _run_daemon(args)
        else:
            _run_dev(args[1:])
    except IntervalError as err:
        print(f"bench: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        # The stop `bench ui` sends (a SIGINT to the group, as Ctrl-C does): Dagster has
        # shut down what it could; a traceback would only look like a crash.
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
