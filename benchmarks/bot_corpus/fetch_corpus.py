"""Recreate the checkouts of the real-game corpus from `manifest.yaml`.

Each game is `repo@commit`; its tree at that commit is written to `<target>/<id>/` (default
`$BENCH_CORPUS_DIR`, else /work/corpus). The commit is read from a local bare mirror when
one exists (`<mirrors>/<owner>+<name>/…`, any git directory below it), otherwise the
repository is cloned from GitHub. Only the files of that one commit are written: no `.git`,
so a checkout is inert data for the bot to serve. Nothing here is ever committed.

    .venv/bin/python benchmarks/bot_corpus/fetch_corpus.py [--target DIR] [--only ID ...]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.yaml"
DEFAULT_TARGET = Path("/work/corpus")
DEFAULT_MIRRORS = Path("/work/.mirror")


@dataclass(frozen=True)
class Game:
    id: str
    repo: str
    commit: str


@dataclass
class Outcome:
    game: Game
    ok: bool
    how: str


def read_manifest(path: Path) -> list[Game]:
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("games"), list):
        raise ValueError(f"{path}: expected a top-level `games:` list")
    return [Game(str(g["id"]), str(g["repo"]), str(g["commit"])) for g in data["games"]]


def _git(args: Sequence[str], git_dir: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    cmd = ["git"] + ([f"--git-dir={git_dir}"] if git_dir else []) + list(args)
    return subprocess.run(cmd, capture_output=True, check=False)


def find_mirror(mirrors: Path, repo: str) -> Path | None:
    """The git directory of a local mirror of `repo`, if any (bare or with a work tree)."""
    base = mirrors / repo.replace("/", "+")
    if not base.is_dir():
        return None
    for head in sorted(base.rglob("HEAD"), key=lambda p: len(p.parts)):
        git_dir = head.parent
        if (git_dir / "objects").is_dir() and _git(
            ["rev-parse", "--git-dir"], git_dir
        ).returncode == 0:
            return git_dir
    return None


def _extract(git_dir: Path, commit: str, dest: Path) -> str | None:
    """Write the tree of `commit` into `dest`; None on success, else the reason."""
    # Files missing from a snapshot (very large blobs) make `git archive` fail; ls-tree and
    # cat-file per blob let the rest through, and the skipped paths are reported.
    listing = _git(["ls-tree", "-r", "-z", commit], git_dir)
    if listing.returncode != 0:
        return f"commit {commit[:12]} not in {git_dir}: {listing.stderr.decode().strip()[:200]}"
    missing: list[str] = []
    archive = _git(["archive", "--format=tar", commit], git_dir)
    if archive.returncode == 0:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(dest, filter="data")
        return None
    for entry in listing.stdout.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        path = raw_path.decode()
        if kind != "blob" or mode == "120000":  # submodules and symlinks are not game files
            continue
        blob = _git(["cat-file", "blob", sha], git_dir)
        if blob.returncode != 0:
            missing.append(path)
            continue
        out = (dest / path).resolve()
        if not out.is_relative_to(dest.resolve()):
            return f"path {path!r} leaves the checkout"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(blob.stdout)
    if missing:
        print(f"  note: {len(missing)} file(s) absent from the snapshot: {', '.join(missing[:5])}")
    return None


def materialise(game: Game, target: Path, mirrors: Path, clone: bool = True) -> Outcome:
    dest = target / game.id
    git_dir = find_mirror(mirrors, game.repo)
    tmp_clone: Path | None = None
    how = f"mirror {git_dir}" if git_dir else f"clone https://github.com/{game.repo}"
    if git_dir is None:
        if not clone:
            return Outcome(game, False, "no local mirror and cloning is off")
        tmp_clone = Path(tempfile.mkdtemp(prefix="corpus-clone-"))
        res = _git(
            ["clone", "--bare", "--quiet", f"https://github.com/{game.repo}", str(tmp_clone)]
        )
        if res.returncode != 0:
            shutil.rmtree(tmp_clone, ignore_errors=True)
            return Outcome(game, False, f"clone failed: {res.stderr.decode().strip()[:200]}")
        git_dir = tmp_clone
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{game.id}-", dir=target))
        why = _extract(git_dir, game.commit, staging)
        if why:
            shutil.rmtree(staging, ignore_errors=True)
            return Outcome(game, False, why)
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
        return Outcome(game, True, how)
    finally:
        if tmp_clone:
            shutil.rmtree(tmp_clone, ignore_errors=True)


def fetch_all(
    games: Iterable[Game], target: Path, mirrors: Path, clone: bool = True
) -> list[Outcome]:
    target.mkdir(parents=True, exist_ok=True)
    outcomes = []
    for game in games:
        outcome = materialise(game, target, mirrors, clone)
        state = "ok  " if outcome.ok else "FAIL"
        print(f"{state} {game.id:<28} {game.repo}@{game.commit[:12]}  ({outcome.how})")
        outcomes.append(outcome)
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument(
        "--target", type=Path, default=Path(os.environ.get("BENCH_CORPUS_DIR") or DEFAULT_TARGET)
    )
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--no-clone", action="store_true", help="use local mirrors only")
    parser.add_argument("--only", nargs="*", default=None, help="game ids to fetch")
    args = parser.parse_args(argv)
    games = read_manifest(args.manifest)
    if args.only:
        games = [g for g in games if g.id in set(args.only)]
    outcomes = fetch_all(games, args.target, args.mirrors, clone=not args.no_clone)
    failed = [o for o in outcomes if not o.ok]
    print(f"{len(outcomes) - len(failed)} of {len(outcomes)} games materialised in {args.target}")
    if failed:
        print("could not get: " + ", ".join(f"{o.game.id} ({o.how})" for o in failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
