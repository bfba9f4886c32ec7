"""Back-off for failures worth retrying (a rate limit, a browser that crashed)."""

from __future__ import annotations

import random


def backoff_seconds(
    attempt: int, base_s: float, cap_s: float = 900.0, rng: random.Random | None = None
) -> float:
    """Exponential back-off with ±20 % jitter: attempt 0 waits about `base_s`, then ×2 each
    time, never more than `cap_s`. Jitter keeps many rate-limited runs from retrying in step."""
    delay = min(cap_s, base_s * 2 ** max(0, attempt))
    jitter = (rng or random).uniform(0.8, 1.2)
    return round(min(cap_s, delay * jitter), 3)
