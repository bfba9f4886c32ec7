"""The sane range of every number an agent run reports (tokens, cost, time, turns).

Recordings, transcripts and agent output are written by programs we do not control. A
number outside these ranges is not a measurement but a broken or hostile file: `1e30`
tokens would price to trillions of dollars and overflow the warehouse's BIGINT, `1e309`
seconds parses as infinity, which no JSON record can hold. Such a number makes the run an
`error` naming the file; it is never clamped into something that looks measured.

The ceilings are far above any real run (a month-long session, a hundred billion tokens,
$100,000), so a real run never trips them.
"""

from __future__ import annotations

import math
from typing import Any

MAX_TOKENS = 100_000_000_000  # per count; a long Claude session reads ~1e8 cached tokens
MAX_COST_USD = 100_000.0
MAX_DURATION_S = 30 * 24 * 3600.0
MAX_TURNS = 1_000_000
MAX_EXIT_CODE = 2**31 - 1  # exit codes and negated signal numbers fit in 32 bits


def number_problem(
    name: str, value: Any, upper: float, *, integer: bool = False, lower: float = 0.0
) -> str | None:
    """Why `value` is not a finite number in [lower, upper] (an integer if asked), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        kind = "an integer" if integer else "a number"
        return f"{name} must be {kind}, got {value!r}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{name} is {value!r}, not a finite number"
    if integer and isinstance(value, float) and not value.is_integer():
        return f"{name} must be an integer, got {value!r}"
    if not lower <= value <= upper:
        return f"{name} is {value!r}, outside the sane range {lower:g} to {upper:g}"
    return None


def outcome_problems(
    *,
    usage: Any,
    duration_s: Any,
    exit_code: Any,
) -> list[str]:
    """What is out of range in an agent outcome's numbers (an empty list when all are sane)."""
    problems = [
        number_problem(name, getattr(usage, name), MAX_TOKENS, integer=True)
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
    ]
    problems.append(number_problem("turns", usage.turns, MAX_TURNS, integer=True))
    problems.append(number_problem("tool_calls", usage.tool_calls, MAX_TURNS, integer=True))
    if usage.cost_usd is not None:
        problems.append(number_problem("cost_usd", usage.cost_usd, MAX_COST_USD))
    problems.append(number_problem("duration_s", duration_s, MAX_DURATION_S))
    if exit_code is not None:
        problems.append(
            number_problem(
                "exit_code", exit_code, MAX_EXIT_CODE, integer=True, lower=-MAX_EXIT_CODE
            )
        )
    return [p for p in problems if p is not None]
