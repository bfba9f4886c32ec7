"""The real-game corpus manifest (benchmarks/bot_corpus/manifest.yaml) and its fetcher.

The manifest holds facts only (repository, commit, labels); the games themselves live outside
the repository. These tests check the manifest's schema and that `fetch_corpus.py` writes a
game's tree at the pinned commit from a local bare mirror, without running any game.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from bench_pipeline.bot.contract import CONTROL_NAMES, TEST_IDS

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "benchmarks" / "bot_corpus"
MANIFEST = CORPUS / "manifest.yaml"

# Kept for independent checks of the bot: never part of this corpus (nor forks of them).
RESERVED = {
    "jakesgordon/javascript-tetris",
    "melcor76/js-tetris",
    "kubowania/tetris",
    "codeexplainedrepo/tetris-javascript",
    "meth-meth-method/tetris",
    "nhairetdin/tetris-svg",
    "batin-cetin/tetris",
    "tclokie/single-line-tetris",
    "sasurai-usagi3/tetris",
    "rwxdelir/mtwain-js",
}
FIELDS = {
    "id",
    "repo",
    "commit",
    "serve",
    "split",
    "renderer",
    "start",
    "controls",
    "board",
    "theme",
    "author",
    "tests",
    "uncertain",
    "notes",
}
AUTHORS = {"human", "ai-claude-code", "ai-codex", "ai-cursor", "ai-copilot", "ai-other"}
START = re.compile(r"^(auto|click:.+|key:.+|overlay:.+( then click:.+)?)$")


def _load_fetcher() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_corpus", CORPUS / "fetch_corpus.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["fetch_corpus"] = module
    spec.loader.exec_module(module)
    return module


fetch_corpus = _load_fetcher()


def _games() -> list[dict]:
    data = yaml.safe_load(MANIFEST.read_text())
    assert isinstance(data, dict) and isinstance(data.get("games"), list)
    return data["games"]


def test_manifest_entries_have_exactly_the_documented_fields() -> None:
    games = _games()
    assert games, "the manifest lists no game"
    for game in games:
        assert set(game) == FIELDS, f"{game.get('id')}: fields {sorted(set(game) ^ FIELDS)}"
        assert re.fullmatch(r"[a-z0-9-]+", game["id"]), game["id"]
        assert re.fullmatch(r"[0-9a-f]{40}", game["commit"]), game["id"]
        assert re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", game["repo"]), game["id"]
        assert game["renderer"] in {"canvas", "dom", "svg", "webgl"}, game["id"]
        assert game["theme"] in {"light", "dark"}, game["id"]
        assert game["author"] in AUTHORS, game["id"]
        assert START.match(game["start"]), f"{game['id']}: start {game['start']!r}"
        assert set(game["controls"]) == set(CONTROL_NAMES), game["id"]
        assert all(v is None or isinstance(v, str) for v in game["controls"].values())
        cols, rows = game["board"]["cols"], game["board"]["rows"]
        assert isinstance(cols, int) and isinstance(rows, int) and cols > 0 and rows > 0
        serve = Path(game["serve"])
        assert not serve.is_absolute() and ".." not in serve.parts, game["id"]
        assert isinstance(game["notes"], str) and game["notes"].strip(), game["id"]


def test_every_game_has_sixteen_pass_or_fail_labels_and_reasoned_doubts() -> None:
    for game in _games():
        assert list(game["tests"]) == list(TEST_IDS), game["id"]
        assert set(game["tests"].values()) <= {"PASS", "FAIL"}, game["id"]
        uncertain = game["uncertain"]
        assert isinstance(uncertain, dict), game["id"]
        for test, reason in uncertain.items():
            assert test in TEST_IDS, f"{game['id']}: uncertain names unknown test {test}"
            assert isinstance(reason, str) and len(reason) > 10, f"{game['id']}: {test}"


def test_board_size_and_loads_label_agree() -> None:
    for game in _games():
        ten_by_twenty = game["board"] == {"cols": 10, "rows": 20}
        if not ten_by_twenty:
            assert game["tests"]["loads"] == "FAIL", f"{game['id']}: a non-10x20 board loads"


def test_ids_and_repositories_are_unique_and_none_is_reserved() -> None:
    games = _games()
    ids = [g["id"] for g in games]
    assert len(ids) == len(set(ids))
    pinned = [(g["repo"], g["serve"]) for g in games]
    assert len(pinned) == len(set(pinned)), "the same game is listed twice"
    for game in games:
        assert game["repo"].lower() not in RESERVED, f"{game['id']} uses a reserved repository"


def test_split_follows_the_rule_written_in_the_manifest() -> None:
    text = MANIFEST.read_text()
    assert "int(sha256(repo).hexdigest(), 16) % 3 == 0" in text
    for game in _games():
        digest = int(hashlib.sha256(game["repo"].encode()).hexdigest(), 16)
        expected = "heldout" if digest % 3 == 0 else "tune"
        assert game["split"] == expected, game["id"]


def _git(*args: str, cwd: Path | None = None) -> str:
    env_args = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    res = subprocess.run(
        ["git", *env_args, *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return res.stdout.strip()


@pytest.fixture
def mirrored_repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A bare mirror at <mirrors>/someone+game with two commits; returns mirrors, old, new."""
    work = tmp_path / "work"
    (work / "web").mkdir(parents=True)
    _git("init", "-q", str(work))
    (work / "web" / "index.html").write_text("<canvas></canvas>v1")
    (work / "README.md").write_text("first")
    _git("add", "-A", cwd=work)
    _git("commit", "-q", "-m", "one", cwd=work)
    old = _git("rev-parse", "HEAD", cwd=work)
    (work / "web" / "index.html").write_text("<canvas></canvas>v2")
    (work / "web" / "game.js").write_text("// later")
    _git("add", "-A", cwd=work)
    _git("commit", "-q", "-m", "two", cwd=work)
    new = _git("rev-parse", "HEAD", cwd=work)
    mirrors = tmp_path / "mirrors"
    _git("clone", "-q", "--bare", str(work), str(mirrors / "someone+game" / "repo"))
    return mirrors, old, new


def test_fetch_materialises_the_pinned_commit_from_a_local_bare_mirror(
    tmp_path: Path, mirrored_repo: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    mirrors, old, _new = mirrored_repo
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(
        yaml.safe_dump({"games": [{"id": "old-one", "repo": "someone/game", "commit": old}]})
    )
    target = tmp_path / "corpus"
    status = fetch_corpus.main(
        ["--manifest", str(manifest), "--target", str(target), "--mirrors", str(mirrors)]
    )
    assert status == 0
    checkout = target / "old-one"
    # The tree of the pinned (older) commit, not the mirror's HEAD, and no git metadata.
    assert (checkout / "web" / "index.html").read_text() == "<canvas></canvas>v1"
    assert not (checkout / "web" / "game.js").exists()
    assert not (checkout / ".git").exists()
    out = capsys.readouterr().out
    assert "old-one" in out and "1 of 1 games materialised" in out


def test_fetch_refetch_replaces_a_stale_checkout(
    tmp_path: Path, mirrored_repo: tuple[Path, str, str]
) -> None:
    mirrors, old, new = mirrored_repo
    target = tmp_path / "corpus"
    (target / "g").mkdir(parents=True)
    (target / "g" / "stale.txt").write_text("left over")
    game = fetch_corpus.Game("g", "someone/game", new)
    outcome = fetch_corpus.materialise(game, target, mirrors, clone=False)
    assert outcome.ok, outcome.how
    assert not (target / "g" / "stale.txt").exists()
    assert (target / "g" / "web" / "game.js").read_text() == "// later"
    assert old != new


def test_fetch_reports_games_it_cannot_get_and_keeps_going(
    tmp_path: Path, mirrored_repo: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    mirrors, old, _new = mirrored_repo
    manifest = tmp_path / "manifest.yaml"
    games = [
        {"id": "no-mirror", "repo": "nobody/absent", "commit": "0" * 40},
        {"id": "bad-commit", "repo": "someone/game", "commit": "f" * 40},
        {"id": "fine", "repo": "someone/game", "commit": old},
    ]
    manifest.write_text(yaml.safe_dump({"games": games}))
    target = tmp_path / "corpus"
    status = fetch_corpus.main(
        [
            "--manifest",
            str(manifest),
            "--target",
            str(target),
            "--mirrors",
            str(mirrors),
            "--no-clone",
        ]
    )
    assert status == 1
    out = capsys.readouterr().out
    assert "could not get: no-mirror" in out and "bad-commit" in out
    assert (target / "fine" / "web" / "index.html").is_file()
    assert not (target / "no-mirror").exists() and not (target / "bad-commit").exists()
    # No half-written staging directories are left behind.
    assert sorted(p.name for p in target.iterdir()) == ["fine"]
