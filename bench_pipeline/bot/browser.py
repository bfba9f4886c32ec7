"""Find and launch the Chromium the bot drives."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# Without the background-networking flags Chromium floods a closed network with requests.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    # Games in background tabs must not be throttled while the bot waits on them.
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]


class BrowserMissingError(RuntimeError):
    pass


def chromium_executable() -> str | None:
    """$BENCH_CHROMIUM, else Debian's /usr/bin/chromium, else None (Playwright's own build)."""
    configured = os.environ.get("BENCH_CHROMIUM")
    if configured:
        if not Path(configured).is_file():
            raise BrowserMissingError(f"BENCH_CHROMIUM={configured} does not exist")
        return configured
    for candidate in (
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


MISSING_BROWSER_HELP = (
    "no Chromium found: install Debian's `chromium` (make setup does this as root), "
    "run `.venv/bin/playwright install chromium`, or set BENCH_CHROMIUM to a Chromium binary"
)
