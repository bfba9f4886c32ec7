"""The bot's words live in one file (words.json) that the page probe and Python both read:
every fragment means the same in JavaScript and in Python, and the probe gets the lists."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from bench_pipeline.bot import words as W


def test_every_list_compiles_in_python_and_the_probe_carries_them() -> None:
    assert set(W.words()) >= {"game_over", "start", "close", "score_label", "not_score"}
    for name, fragments in W.words().items():
        assert fragments, name
        for fragment in fragments:
            re.compile(fragment, re.IGNORECASE)
    script = W.probe_script()
    assert W.PLACEHOLDER not in script
    assert json.dumps(W.words()["game_over"], ensure_ascii=False) in script


@pytest.mark.skipif(shutil.which("node") is None, reason="node is installed by make setup")
def test_each_list_matches_the_same_text_in_javascript_and_python() -> None:
    samples = {
        "game_over": ["GAME OVER", "Spiel vorbei!", "游戏结束", "Игра окончена", "press start"],
        "score_label": ["Score", "Punkte", "スコア", "Level", "Lines"],
        "not_score": ["Level", "High score", "Zeit", "Score"],
        "lines_label": ["Lines", "Zeilen", "消除", "Score"],
        "close": ["close", "Got it", "知道了", "Start"],
    }
    script = (
        "const W = JSON.parse(process.argv[1]); const S = JSON.parse(process.argv[2]); const out = {};"
        "for (const k in S) out[k] = S[k].map((t) => new RegExp(W[k].join('|'), 'iu').test(t));"
        "console.log(JSON.stringify(out));"
    )
    node = subprocess.run(
        ["node", "-e", script, json.dumps(W.words()), json.dumps(samples)],
        capture_output=True,
        text=True,
        check=True,
    )
    in_js = json.loads(node.stdout)
    for name, texts in samples.items():
        in_python = [W.pattern(name).search(t) is not None for t in texts]
        assert in_js[name] == in_python, name
    assert in_js["game_over"] == [True, True, True, True, False]
