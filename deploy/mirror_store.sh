#!/bin/sh
# Mirror the artifact store, and a consistent snapshot of the warehouse, to object storage.
#
#     deploy/mirror_store.sh s3://my-bucket/bench          # with the aws CLI
#     deploy/mirror_store.sh gs://my-bucket/bench          # with gcloud storage
#     deploy/mirror_store.sh myremote:my-bucket/bench      # with rclone (any rclone remote)
#
# Run it after each sweep (when the warehouse job has finished), from cron, or as the
# `mirror` service of deploy/docker/docker-compose.yaml. Reads BENCH_DATA_DIR (default /data),
# BENCH_ARTIFACTS_DIR and BENCH_WAREHOUSE like the pipeline does.
#
# Why a mirror and not the live store: the store needs atomic rename and a file lock, which
# object storage (and FUSE mounts of it) do not give - docs/deploy.md, "Storage". The bucket is
# the backup and the place to share results; the shared POSIX volume stays the live store.
#
# What it guarantees: every record (records/<stage>/<run>.json) in the bucket is whole - the
# store replaces records by rename, and each record is read in one piece. Folders of runs
# still in progress may be copied half-written; the next mirror completes them. Nothing is
# deleted in the bucket (a store file removed by mistake stays recoverable there).
# POSIX sh on purpose: it runs in slim images (rclone/rclone, amazon/aws-cli) too.
set -eu

dest=${1:?usage: mirror_store.sh s3://bucket/prefix | gs://bucket/prefix | remote:path}
dest=${dest%/}
data=${BENCH_DATA_DIR:-/data}
artifacts=${BENCH_ARTIFACTS_DIR:-$data/artifacts}
warehouse=${BENCH_WAREHOUSE:-$data/warehouse.duckdb}

say() { printf '[mirror] %s\n' "$*" >&2; }

[ -d "$artifacts" ] || { say "no artifact store at $artifacts"; exit 2; }

# 1. The warehouse: copy the live file locally first, then upload the copy. `cp` opens the
# file once, so it reads one whole version even if a builder swaps a new one in meanwhile
# (the rename leaves our open file intact); an uploader that reopens the file per part could
# mix two versions. The builder checkpoints before its rename, so the file needs no WAL.
snapshot=""
if [ -f "$warehouse" ]; then
  tmpdir=$(mktemp -d)
  trap 'rm -rf "$tmpdir"' EXIT
  snapshot="$tmpdir/warehouse.duckdb"
  cp "$warehouse" "$snapshot"
fi
stamp=$(date -u +%Y%m%dT%H%M%SZ)

# 2. Excluded: temp files of writes in progress (.<name>.<random>.tmp), the warehouse's build
# copies and lock, and node_modules of builds (large, and `npm ci` recreates them).
case "$dest" in
  s3://*)
    say "aws s3 sync $artifacts -> $dest/artifacts"
    aws s3 sync "$artifacts" "$dest/artifacts" --no-progress \
      --exclude '*.tmp' --exclude '*.building-*' --exclude '*.lock' --exclude '*/node_modules/*'
    if [ -n "$snapshot" ]; then
      aws s3 cp "$snapshot" "$dest/warehouse/warehouse-$stamp.duckdb" --no-progress
      aws s3 cp "$snapshot" "$dest/warehouse/warehouse.duckdb" --no-progress
    fi
    ;;
  gs://*)
    say "gcloud storage rsync $artifacts -> $dest/artifacts"
    gcloud storage rsync --recursive "$artifacts" "$dest/artifacts" \
      --exclude='.*\.tmp$|.*\.building-.*|.*\.lock$|.*/node_modules/.*'
    if [ -n "$snapshot" ]; then
      gcloud storage cp "$snapshot" "$dest/warehouse/warehouse-$stamp.duckdb"
      gcloud storage cp "$snapshot" "$dest/warehouse/warehouse.duckdb"
    fi
    ;;
  *:*)
    # `rclone copy`, not `rclone sync`: sync would delete in the bucket what the store lacks.
    say "rclone copy $artifacts -> $dest/artifacts"
    rclone copy "$artifacts" "$dest/artifacts" \
      --exclude '*.tmp' --exclude '*.building-*' --exclude '*.lock' --exclude 'node_modules/**'
    if [ -n "$snapshot" ]; then
      rclone copyto "$snapshot" "$dest/warehouse/warehouse-$stamp.duckdb"
      rclone copyto "$snapshot" "$dest/warehouse/warehouse.duckdb"
    fi
    ;;
  *)
    say "unknown destination $dest: use s3://..., gs://... or an rclone remote (name:path)"
    exit 2
    ;;
esac
say "done${snapshot:+ (warehouse snapshot $stamp)}"
