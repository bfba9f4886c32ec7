"""Stage 3: install and build what each agent wrote, inside the sandbox."""

from typing import Any

import dagster as dg

from assets.agent_generation import agent_generation
from assets.automation import per_run_stage
from assets.metadata import log_step_summary, run_result
from assets.partitions import run_partitions
from assets.stage_checks import check_step, specs, stage_rules
from bench_pipeline import settings, stages
from bench_pipeline.agents.stage import NoGenerationRecord
from bench_pipeline.build.project import BuildResult
from bench_pipeline.build.stage import STAGE, run_build
from resources import ArtifactStoreResource, SandboxResource

# Bump when the build logic changes: every build (and what depends on it) becomes stale,
# the agent runs upstream do not.
BUILD_CODE_VERSION = "1"
CHECKS = stage_rules(STAGE)


@dg.asset(
    name=STAGE,
    partitions_def=run_partitions,
    deps=[agent_generation],
    group_name=stages.SANDBOXED_BUILD.group_name,
    kinds={"npm", "bubblewrap"},
    code_version=BUILD_CODE_VERSION,
    pool=stages.SANDBOXED_BUILD.pool,
    check_specs=specs(STAGE, CHECKS),
    automation_condition=per_run_stage,
    backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=10),
    description="Detect what the agent made (static site, npm project, TypeScript), install "
    "and build it in the sandbox with no network except an allowed install phase; record "
    "success, capped logs, duration, the served entry point and the output size.",
)
def sandboxed_build(
    context: dg.AssetExecutionContext,
    artifact_store: ArtifactStoreResource,
    sandbox: SandboxResource,
) -> dg.MaterializeResult:
    store = artifact_store.store()
    box = sandbox.sandbox()
    per_run: dict[str, dict[str, Any]] = {}
    missing: list[str] = []
    for run_id in context.partition_keys:
        try:
            record = run_build(
                run_id,
                store,
                box,
                toolchain_bin=settings.toolchain_bin(),
                install_network=sandbox.install_network,
                install_allow_hosts=sandbox.install_hosts(),
                timeout_s=sandbox.build_timeout_s,
            )
        except NoGenerationRecord as exc:
            missing.append(str(exc))
            continue
        except Exception as exc:  # one bad run must not fail the others of its chunk
            message = f"run {run_id}: sandboxed_build failed: {type(exc).__name__}: {exc}"
            context.log.error(message)
            record = {**BuildResult(False, "none", message).to_record(), "run_id": run_id}
            record.pop("log", None)
            store.write_record(STAGE, run_id, record)
        context.log.info(f"{run_id}: {record['message']}")
        per_run[run_id] = run_metadata(record)
    if missing:
        # Fail the step after the other runs went through: their outputs are stored, and a
        # retry reuses them (agent runs are never redone), so only the broken ones remain.
        raise dg.Failure(description="\n".join(missing), allow_retries=False)
    rows = [
        {"run": r, **{k: m[k] for k in ("build_ok", "kind", "entry_point", "output_bytes")}}
        for r, m in per_run.items()
    ]
    ok = sum(1 for r in rows if r["build_ok"])
    log_step_summary(context, f"sandboxed_build: {ok} of {len(rows)} runs built", rows)
    return run_result(
        context,
        store,
        STAGE,
        per_run,
        check_results=check_step(store, STAGE, context.partition_keys, CHECKS),
    )


def run_metadata(record: dict[str, Any]) -> dict[str, Any]:
    """What one run's partition shows: whether it built, what it is, and why not."""
    log = record.get("log_path")
    return {
        "build_ok": record.get("build_ok"),
        "kind": record.get("kind"),
        "message": record.get("message"),
        "entry_point": record.get("entry_point"),
        "output_bytes": record.get("output_bytes"),
        "duration_s": record.get("duration_s"),
        "failed_step": record.get("failed_step"),
        "timed_out": record.get("timed_out"),
        # Connections of the install step the egress proxy refused (see build.log).
        "egress_refused": record.get("egress_refused"),
        "log": dg.MetadataValue.path(str(log)) if log else None,
    }
