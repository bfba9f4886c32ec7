"""Machinery every page of the site shares: the Jinja2 environment with its formatting
filters, the `_Site` writer that renders pages and copies evidence on a few threads, and
small helpers several pages use.
"""

from __future__ import annotations

import math
import os
import shutil
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from bench_pipeline.analysis.render import p_text
from bench_pipeline.report import readings
from bench_pipeline.report.data import Row
from bench_pipeline.report.run_state import PENDING_STATES, RunInfo

IO_THREADS = 4
IO_BACKLOG = 256
HERE = Path(__file__).parent


# ------------------------------------------------------------------------------------------
# Formatting filters


def _num(value: Any, digits: int | None = None) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if digits is not None:
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return readings.fmt(float(value))


def _money(value: Any) -> str:
    if value is None:
        return "–"
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:.3f}"


def _seconds(value: Any) -> str:
    if value is None:
        return "–"
    if value >= 3600:
        return f"{value / 3600:.1f} h"
    if value >= 120:
        return f"{value / 60:.1f} min"
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.0f} %"


def _bytes(value: Any) -> str:
    if value is None:
        return "–"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value} B"


def _yesno(value: Any) -> str:
    return "–" if value is None else ("yes" if value else "no")


def _sortv(value: Any) -> str:
    """data-v for numeric sorting: empty for missing values (sorted last)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int | float) and math.isfinite(value):
        return repr(float(value))
    return ""


_BADGES: dict[str, Markup] = {}


def _badge(verdict: str | None) -> Markup:
    """A verdict as a badge (a filter, not a macro: 16 per run page)."""
    if not verdict:
        return Markup('<span class="muted">–</span>')
    if verdict not in _BADGES:
        _BADGES[verdict] = Markup(
            f'<span class="badge v-{escape(verdict.lower())}">{escape(verdict)}</span>'
        )
    return _BADGES[verdict]


def _state_badge(run: RunInfo) -> Markup:
    kind = "ok" if run.state == "ok" else "pending" if run.state in PENDING_STATES else "bad"
    return Markup(f'<span class="badge s-{kind}">{escape(run.state)}</span>')


def _table_start(
    table_id: str, caption: str, sortable: bool = False, filter: bool = False
) -> Markup:
    """A table in a horizontally scrolling, labelled, focusable region, with its caption."""
    i = escape(table_id)
    classes = ' class="sortable"' if sortable else ""
    data = " data-filter" if filter else ""
    return Markup(
        f'<div class="table-wrap" role="region" aria-labelledby="{i}-cap" tabindex="0">\n'
        f'<table id="{i}"{classes}{data}>\n<caption id="{i}-cap">{escape(caption)}</caption>'
    )


TABLE_END = Markup("</table>\n</div>")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        num=_num,
        money=_money,
        secs=_seconds,
        pct=_pct,
        size=_bytes,
        yesno=_yesno,
        sortv=_sortv,
        ptext=p_text,
        signed=lambda v: readings.amount("", v, signed=True),
        interval=readings.interval_text,
        badge=_badge,
        state_badge=_state_badge,
    )
    env.globals.update(table_start=_table_start, table_end=TABLE_END)
    return env


# ------------------------------------------------------------------------------------------
# The writer


def _write_page(path: Path, data: bytes, old: Path | None) -> None:
    """Write a page; a page the previous site has byte for byte is hard-linked from it
    instead (a nightly rebuild rewrites only the pages that changed)."""
    if old is not None:
        try:
            if old.stat().st_size == len(data) and old.read_bytes() == data:
                os.link(old, path)
                return
        except OSError:
            pass
    path.write_bytes(data)


def _copy_file(src: Path, dst: Path, old: Path | None) -> None:
    """Copy evidence with its modification time; an unchanged file (same size and time as
    the previous site's copy) is hard-linked from the previous site instead of copied.
    Links point only between site folders, never into the artifact store."""
    st = src.stat()
    if old is not None:
        try:
            prev = old.stat()
            if prev.st_size == st.st_size and prev.st_mtime_ns == st.st_mtime_ns:
                os.link(old, dst)
                return
        except OSError:
            pass
    shutil.copyfile(src, dst)
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


@dataclass
class _Site:
    """Renders pages and hands file writes and copies to a few threads: they are system
    calls that release the GIL, so they overlap with the rendering (thousands of files)."""

    root: Path  # the staging folder
    env: jinja2.Environment
    title: str
    common: dict[str, Any]
    pages: int = 0
    bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    previous: Path | None = None  # the site being replaced: unchanged files are linked from it
    _pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(IO_THREADS))
    _pending: list[Future[None]] = field(default_factory=list)
    _dirs: set[Path] = field(default_factory=set)

    def _folder(self, path: Path) -> None:
        if path.parent not in self._dirs:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._dirs.add(path.parent)

    def _submit(self, fn: Any, *args: Any) -> None:
        self._pending.append(self._pool.submit(fn, *args))
        if len(self._pending) > 4 * IO_BACKLOG:  # bound the memory held by queued pages
            self._drain(IO_BACKLOG)

    def _drain(self, keep: int = 0) -> None:
        done, self._pending = (
            self._pending[: len(self._pending) - keep],
            self._pending[-keep:] if keep else [],
        )
        for future in done:
            future.result()  # re-raises the first failed write here

    def _old(self, rel: str) -> Path | None:
        return self.previous / rel if self.previous is not None else None

    def write(self, rel: str, template: str, **context: Any) -> None:
        depth = rel.count("/")
        html = self.env.get_template(template).render(
            **self.common, root="../" * depth, rel=rel, **context
        )
        data = html.encode("utf-8")
        path = self.root / rel
        self._folder(path)
        self._submit(_write_page, path, data, self._old(rel))
        self.pages += 1
        self.bytes += len(data)

    def copy(self, src: Path, rel: str, size: int) -> None:
        """Copy an evidence file into the site (new file, default permissions)."""
        dst = self.root / rel
        self._folder(dst)
        self._submit(_copy_file, src, dst, self._old(rel))
        self.bytes += size

    def close(self) -> None:
        try:
            self._drain()
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)


# ------------------------------------------------------------------------------------------
# Shared by several pages


def _group(rows: Iterable[Row], key: str = "experiment") -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        out[r[key]].append(r)
    return out


def _level(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
