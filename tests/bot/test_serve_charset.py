"""The bot's server declares UTF-8 text as UTF-8, as the usual static hosts do.

A page with no <meta charset> is otherwise decoded as windows-1252: a Chinese game's
"开始游戏" button then reads "å¼€å§‹æ¸¸æˆ" to a player and to the bot's start-button search.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

from bench_pipeline.bot.serve import serve_directory


def _content_type(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.headers["Content-Type"]


def test_utf8_text_is_served_as_utf8_and_other_text_is_left_to_the_browser(
    tmp_path: Path,
) -> None:
    (tmp_path / "index.html").write_text(
        "<html><body><button>开始游戏</button></body></html>", encoding="utf-8"
    )
    (tmp_path / "game.js").write_text("const label = 'スタート';", encoding="utf-8")
    (tmp_path / "gbk.html").write_bytes("<meta charset=gbk><p>开始游戏</p>".encode("gbk"))
    (tmp_path / "tile.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    with serve_directory(tmp_path, as_is=True) as url:
        assert _content_type(url).lower() == "text/html; charset=utf-8"
        assert "charset=utf-8" in _content_type(url + "game.js").lower()
        # Bytes that are no UTF-8 keep the browser's own reading (their <meta charset>).
        assert "charset" not in _content_type(url + "gbk.html").lower()
        assert _content_type(url + "tile.png") == "image/png"
