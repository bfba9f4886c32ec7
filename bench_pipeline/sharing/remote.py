"""The artifact store on object storage, through fsspec (s3fs for s3://, gcsfs for gs://, ...).

Why not mount the bucket and keep using files: object stores have no rename and no lock
(docs/deploy.md). So the stages keep working in a local scratch store (BENCH_ARTIFACTS_DIR)
exactly as on one machine, and this module moves whole files between it and the bucket,
which holds the same layout under BENCH_ARTIFACTS_URL:

    designs/, records/<stage>/<run_id>.json, runs/<run_id>/..., journal/<table>/<run>~<token>,
    columnar/<table>/part-*.parquet, columnar/_id, quarantine/, bot_accuracy/

- `push_run` after a stage: the run's records and run folder (new or changed files only),
  then its journal markers, always after the files they name: an object appears whole
  (a PUT is atomic), so a builder that sees a marker finds the file it names.
- `pull_run` before a run's stages: what the bucket has of it (an agent run another worker
  finished before it died is reused, not paid for again).
- `sync_mirror` builds the columnar mirror in the bucket: under a lock across machines
  (the caller's; see claims.advisory_lock) the local columnar/ is made equal to the
  bucket's, the records the bucket's journal names are pulled and compacted locally
  (columnar.compact), the new parts are uploaded, the parts a merge replaced are deleted,
  and only then the markers read are deleted. A crash anywhere leaves markers that the
  next sync reads again (rows written twice, at a higher sequence number: harmless) or a
  merged part beside the parts it replaced, which the next sync deletes.

What is never pushed: symlinks (an agent's workspace may point anywhere), node_modules
(large; `npm ci` makes them again), temp files of writes in progress, lock files.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import fsspec

from bench_pipeline.warehouse import columnar
from bench_pipeline.warehouse.accuracy import FOLDER as ACCURACY_FOLDER
from bench_pipeline.warehouse.artifacts import JOURNAL, MARKER_SEP, ArtifactStore
from bench_pipeline.warehouse.integrity import QuarantinedRecord

URL_ENV = "BENCH_ARTIFACTS_URL"
# Small folders every warehouse build reads beside the records: pulled whole.
SHARED_FOLDERS = ("designs", ACCURACY_FOLDER)
ID_FILE = "_id"


class RemoteStoreError(RuntimeError):
    """The object store cannot be used: a bad URL, a missing bucket, no connection."""


def _skipped(rel: PurePosixPath) -> bool:
    name = rel.name
    return (
        "node_modules" in rel.parts
        or name.endswith((".tmp", ".lock"))
        or ".building-" in name
        or name.startswith(".nfs")
    )


def _local_files(root: Path, top: Path) -> Iterator[tuple[Path, str]]:
    """(path, path relative to `root`) of each regular file under `top`, links not followed."""
    if not top.is_dir() or top.is_symlink():
        return
    for folder, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = [d for d in dirs if d != "node_modules"]
        for name in files:
            path = Path(folder) / name
            rel = PurePosixPath(path.relative_to(root).as_posix())
            if _skipped(rel):
                continue
            try:
                if stat.S_ISREG(path.lstat().st_mode):
                    yield path, str(rel)
            except OSError:
                continue  # gone since the listing


@dataclass
class MirrorSync:
    """What one `sync_mirror` did."""

    records_pulled: int = 0
    records_gone: int = 0  # noted runs whose file is no longer in the bucket: tombstones
    markers_read: int = 0
    parts_downloaded: int = 0
    parts_uploaded: list[str] = field(default_factory=list)
    parts_deleted: list[str] = field(default_factory=list)
    quarantined: list[QuarantinedRecord] = field(default_factory=list)
    compaction: columnar.Compaction | None = None

    def describe(self) -> str:
        return (
            f"{self.markers_read} journal markers read, {self.records_pulled} files pulled, "
            f"{self.records_gone} gone; parts: {self.parts_downloaded} downloaded, "
            f"{len(self.parts_uploaded)} uploaded, {len(self.parts_deleted)} deleted"
        )


class RemoteStore:
    """The bucket side of an artifact store, addressed by a URL like s3://bucket/prefix.

    Endpoint and credentials come from the library's usual sources (for S3: AWS_ENDPOINT_URL,
    AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION, or the pod's IAM role).
    """

    def __init__(self, url: str, **storage_options: object) -> None:
        url = url.strip().rstrip("/")
        if "://" not in url:
            raise RemoteStoreError(
                f"{URL_ENV}={url!r} is not an object store URL: write it like "
                "s3://bucket/prefix (or gs://bucket/prefix); a folder is BENCH_ARTIFACTS_DIR"
            )
        try:
            # Listings must never come from a cache: other workers change the bucket.
            self.fs, root = fsspec.core.url_to_fs(
                url, skip_instance_cache=True, use_listings_cache=False, **storage_options
            )
        except (ImportError, ValueError) as error:
            raise RemoteStoreError(f"{URL_ENV}={url!r}: {error}") from None
        self.url = url
        self.root = root.rstrip("/")
        self.local = "file" in (
            self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,)
        )
        # rel path -> (mtime_ns, size) of the local file when it was last pushed or pulled:
        # what the bucket already has, so an unchanged file is not sent again.
        self._known: dict[str, tuple[int, int]] = {}

    @classmethod
    def from_env(cls) -> RemoteStore | None:
        url = os.environ.get(URL_ENV, "").strip()
        return cls(url) if url else None

    # -- plumbing -------------------------------------------------------------------------

    def _remote(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def _rel(self, path: str) -> str | None:
        prefix = self.root + "/"
        return path[len(prefix) :] if path.startswith(prefix) else None

    def check(self) -> None:
        """Fail with a readable message when the bucket cannot be reached or does not exist."""
        if self.local:
            self.fs.makedirs(self.root, exist_ok=True)
            return
        bucket = self.root.split("/", 1)[0]
        self.fs.invalidate_cache()
        try:
            # A listing, not `exists`, which answers False for a server it cannot reach.
            self.fs.ls(bucket, detail=False)
        except FileNotFoundError:
            raise RemoteStoreError(
                f"{self.url}: the bucket {bucket!r} does not exist; create it first "
                f"(e.g. `aws s3 mb s3://{bucket}`)"
            ) from None
        except Exception as error:  # botocore's connection and credential errors
            raise RemoteStoreError(
                f"cannot use the object store of {self.url}: {type(error).__name__}: {error} "
                "(for S3: check AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
            ) from None

    def find(self, rel_prefix: str) -> dict[str, int]:
        """rel path -> size of every object under `rel_prefix` (a folder)."""
        self.fs.invalidate_cache()
        try:
            found = self.fs.find(self._remote(rel_prefix), detail=True)
        except FileNotFoundError:
            return {}
        out = {}
        for path, info in found.items():
            rel = self._rel(path)
            if rel is not None and info.get("type", "file") == "file":
                out[rel] = int(info.get("size") or 0)
        return out

    def names(self, rel_folder: str) -> list[str]:
        """Names directly under a folder of the bucket."""
        self.fs.invalidate_cache()
        try:
            entries = self.fs.ls(self._remote(rel_folder), detail=False)
        except FileNotFoundError:
            return []
        return sorted(PurePosixPath(str(e).rstrip("/")).name for e in entries)

    def read_bytes(self, rel: str) -> bytes:
        return self.fs.cat_file(self._remote(rel))

    def upload(self, local: Path, rel: str) -> None:
        info = local.stat()
        self.fs.put_file(str(local), self._remote(rel))
        self._known[rel] = (info.st_mtime_ns, info.st_size)

    def download(self, rel: str, local: Path) -> None:
        """The object at `rel` into `local`, atomically (a temp file, then a rename).
        Raises FileNotFoundError when the bucket has no such object."""
        parts = PurePosixPath(rel).parts
        if not parts or ".." in parts or PurePosixPath(rel).is_absolute():
            raise RemoteStoreError(f"refusing an object path outside the store: {rel!r}")
        local.parent.mkdir(parents=True, exist_ok=True)
        tmp = local.with_name(f".{local.name}.{secrets.token_hex(4)}.tmp")
        try:
            self.fs.get_file(self._remote(rel), str(tmp))
            os.replace(tmp, local)
        finally:
            tmp.unlink(missing_ok=True)
        info = local.stat()
        self._known[rel] = (info.st_mtime_ns, info.st_size)

    def delete(self, rels: Iterable[str]) -> None:
        paths = [self._remote(r) for r in rels]
        for rel in rels:
            self._known.pop(rel, None)
        if not paths:
            return
        try:
            self.fs.rm(paths)
        except FileNotFoundError:  # a local file system refuses the whole list for one
            for path in paths:
                with contextlib.suppress(FileNotFoundError):
                    self.fs.rm_file(path)

    def _unchanged(self, path: Path, rel: str) -> bool:
        try:
            info = path.lstat()
        except OSError:
            return False
        return self._known.get(rel) == (info.st_mtime_ns, info.st_size)

    def _upload_changed(self, files: Iterable[tuple[Path, str]]) -> int:
        sent = 0
        for path, rel in files:
            if not self._unchanged(path, rel):
                self.upload(path, rel)
                sent += 1
        return sent

    # -- runs -----------------------------------------------------------------------------

    def push_run(self, store: ArtifactStore, run_id: str) -> int:
        """Send what the scratch store has of `run_id` (records, run folder) that the bucket
        does not have yet, then the run's journal markers. Returns the files sent."""
        root = store.root
        files = []
        records = root / "records"
        if records.is_dir():
            for stage in sorted(p.name for p in records.iterdir() if p.is_dir()):
                path = store.record_path(stage, run_id)
                if path.is_file() and not path.is_symlink():
                    files.append((path, path.relative_to(root).as_posix()))
        files.extend(_local_files(root, store.run_dir(run_id)))
        sent = self._upload_changed(files)
        return sent + self.push_markers(store, {run_id})

    def push_markers(self, store: ArtifactStore, run_ids: set[str] | None = None) -> int:
        """Move the local journal's markers (of `run_ids`, or all) to the bucket. A marker
        whose file is gone locally (moved to the quarantine, set aside) deletes it in the
        bucket first, so that the bucket's next compaction writes the tombstone."""
        folder = store.root / JOURNAL
        if not folder.is_dir():
            return 0
        moved = 0
        for table_dir in sorted(folder.iterdir()):
            if not table_dir.is_dir():
                continue
            for entry in sorted(os.scandir(table_dir), key=lambda e: e.name):
                run_id, sep, _ = entry.name.rpartition(MARKER_SEP)
                if not sep or (run_ids is not None and run_id not in run_ids):
                    continue
                source = columnar.source_path(store, table_dir.name, run_id)
                if not os.path.lexists(source):
                    self.delete([source.relative_to(store.root).as_posix()])
                self.fs.pipe_file(self._remote(f"{JOURNAL}/{table_dir.name}/{entry.name}"), b"")
                os.unlink(entry.path)
                moved += 1
        return moved

    @staticmethod
    def _noted_runs(store: ArtifactStore) -> set[str]:
        folder = store.root / JOURNAL
        if not folder.is_dir():
            return set()
        return {
            entry.name.rpartition(MARKER_SEP)[0]
            for table_dir in folder.iterdir()
            if table_dir.is_dir()
            for entry in os.scandir(table_dir)
            if MARKER_SEP in entry.name
        }

    def pull_run(self, store: ArtifactStore, run_id: str) -> int:
        """Fetch what the bucket has of `run_id` into the scratch store (every stage's record
        and its run folder), so its next stage finds its inputs. Returns the files fetched."""
        fetched = 0
        for stage in self.names("records"):
            path = store.record_path(stage, run_id)
            rel = path.relative_to(store.root).as_posix()
            try:
                self.download(rel, path)
                fetched += 1
            except FileNotFoundError:
                continue
        run_rel = store.run_dir(run_id).relative_to(store.root).as_posix()
        for rel, size in self.find(run_rel).items():
            local = store.root / rel
            if _skipped(PurePosixPath(rel)):
                continue
            if self._unchanged(local, rel) and local.stat().st_size == size:
                continue
            self.download(rel, local)
            fetched += 1
        return fetched

    def pull_folder(self, store: ArtifactStore, rel_folder: str) -> int:
        """Fetch a small folder whole (designs, bot accuracy files)."""
        found = self.find(rel_folder)
        for rel in found:
            self.download(rel, store.root / rel)
        return len(found)

    def push_file(self, store: ArtifactStore, path: Path) -> None:
        self.upload(path, path.relative_to(store.root).as_posix())

    # -- the columnar mirror ----------------------------------------------------------------

    def _remote_parts(self) -> dict[str, dict[str, columnar.Part]]:
        """table -> part name -> Part (its path is the bucket's rel path)."""
        out: dict[str, dict[str, columnar.Part]] = {}
        for rel in self.find(columnar.MIRROR):
            path = PurePosixPath(rel)
            match = columnar.PART_NAME.match(path.name)
            if match and len(path.parts) == 3:
                part = columnar.Part(Path(rel), int(match[1]), int(match[2]))
                out.setdefault(path.parts[1], {})[path.name] = part
        return out

    def sync_mirror(
        self, store: ArtifactStore, schemas: Mapping[str, Mapping[str, str]]
    ) -> MirrorSync:
        """Bring the bucket's columnar mirror up to date with its journal, and leave the
        scratch store's mirror equal to it (ready for build_warehouse).

        The caller holds a lock that every other builder of this bucket respects (a file
        lock is not enough: builders run on other machines); see claims.advisory_lock.
        """
        result = MirrorSync()
        root = store.root
        # What this scratch noted but did not push (a push that failed): the bucket first.
        for run_id in self._noted_runs(store):
            self.push_run(store, run_id)

        # 1. The local mirror := the bucket's (a merged part that a crash left beside the
        #    parts it replaced is deleted: they must never be read together).
        remote = self._remote_parts()
        for items in remote.values():
            stale = [
                name
                for name, p in items.items()
                if any(
                    q is not p and q.first_seq <= p.first_seq and p.last_seq <= q.last_seq
                    for q in items.values()
                )
            ]
            self.delete(str(items[name].path) for name in stale)
            result.parts_deleted.extend(str(items[name].path) for name in stale)
            for name in stale:
                del items[name]
        local_tables = set(columnar.tables(root)) | set(remote)
        for table in local_tables:
            wanted = remote.get(table, {})
            for part in columnar.parts(root, table):
                if part.path.name not in wanted:
                    part.path.unlink()
            for name, part in wanted.items():
                target = root / columnar.MIRROR / table / name
                if not target.is_file():
                    self.download(str(part.path), target)
                    result.parts_downloaded += 1
        id_rel = f"{columnar.MIRROR}/{ID_FILE}"
        try:
            self.download(id_rel, root / columnar.MIRROR / ID_FILE)
            has_id = True
        except FileNotFoundError:
            has_id = False

        # 2. The records the bucket's journal names, as the bucket has them now.
        markers = list(self.find(JOURNAL))
        noted: set[tuple[str, str]] = set()
        for rel in markers:
            path = PurePosixPath(rel)
            run_id, sep, _ = path.name.rpartition(MARKER_SEP)
            if len(path.parts) == 3 and sep:  # anything else names no file: just deleted
                noted.add((path.parts[1], run_id))
        for table, run_id in sorted(noted):
            try:
                source = columnar.source_path(store, table, run_id)
            except ValueError:  # a name that can be no run's: nothing to read
                continue
            rel = source.relative_to(root).as_posix()
            try:
                self.download(rel, source)
                result.records_pulled += 1
            except FileNotFoundError:
                if os.path.lexists(source):
                    source.unlink()
                result.records_gone += 1
            store.note_change(table, run_id)
        result.markers_read = len(markers)
        for folder in SHARED_FOLDERS:
            self.pull_folder(store, folder)

        # 3. Compact here; what the compaction quarantined leaves the bucket the same way.
        result.compaction = columnar.compact(store, schemas, quarantined=result.quarantined)
        for entry in result.quarantined:
            moved = Path(entry.moved_to)
            for path in (moved, moved.with_name(moved.name + ".reason.json")):
                if path.is_file():
                    self.push_file(store, path)
            self.delete([Path(entry.path).relative_to(root).as_posix()])
        self.push_markers(store)  # the quarantine's own notes: read by the next sync

        # 4. New parts up, then replaced parts away, then the markers read.
        local = {
            part.path.relative_to(root).as_posix(): part.path
            for table in columnar.tables(root)
            for part in columnar.parts(root, table)
        }
        known = {str(p.path) for items in remote.values() for p in items.values()}
        for rel in sorted(set(local) - known):
            self.upload(local[rel], rel)
            result.parts_uploaded.append(rel)
        gone = sorted(known - set(local))
        self.delete(gone)
        result.parts_deleted.extend(gone)
        if not has_id:
            columnar.mirror_id(root)
            self.upload(root / columnar.MIRROR / ID_FILE, id_rel)
        self.delete(markers)
        return result
