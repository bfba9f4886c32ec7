"""Past one machine: workers that share only an object store and the Postgres instance.

- `remote.py`: the artifact store on object storage (fsspec: s3://, gs://, ...). Each
  worker keeps a local scratch store; what a stage wrote is pushed after it, what a run
  needs is pulled before it, and the columnar mirror's Parquet parts live in the bucket.
- `claims.py`: which worker executes which run (a claims table and advisory locks in the
  shared Postgres database of the Dagster instance).
- `worker.py`: `bench worker`, the loop that claims runs, executes their stages and
  updates the warehouse from the bucket's Parquet.

docs/deploy.md, "Object storage", says how a team runs it.
"""
