"""Stage 6: effects analysis (statsmodels) over `fct_runs`, written back as marts.

One step analyses every experiment and outcome and writes the four marts together (they
describe the same fit), with the charts in the artifact store and in the UI.
"""

import base64

import dagster as dg

from assets.automation import whole_warehouse
from assets.metadata import table_preview
from bench_pipeline import stages
from bench_pipeline.analysis.stage import METRICS, run_effects_analysis
from bench_pipeline.warehouse.catalog import apply_comments, table_docs
from bench_pipeline.warehouse.marts import MART_SCHEMAS
from bench_pipeline.warehouse.writer import replace_table, updating
from resources import ArtifactStoreResource, WarehouseResource

# Bump when the statistics change: the marts become stale, the agent runs do not.
# 2: the INCONCLUSIVE share as an outcome, and the instrument flags of mart_main_effects.
ANALYSIS_CODE_VERSION = "2"
# Charts shown inline per experiment in the UI (all of them are in the artifact store).
INLINE_CHARTS = ("score",)


class EffectsAnalysisConfig(dg.Config):
    charts: bool = True
    score_effect_size: float = METRICS["score"]


def _image(path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f"![{path.stem}](data:image/png;base64,{data})"


@dg.multi_asset(
    name="effects_analysis",
    specs=[
        dg.AssetSpec(
            key=name,
            # fct_runs: what is analysed; mart_bot_accuracy_groups: the bot's accuracy per
            # renderer that the instrument notes cite.
            deps=["fct_runs", "mart_bot_accuracy_groups"],
            group_name=stages.EFFECTS_ANALYSIS.group_name,
            kinds={"python", "duckdb"},
            code_version=ANALYSIS_CODE_VERSION,
            automation_condition=whole_warehouse,
            description=description,
        )
        for name, description in {
            "mart_main_effects": "Per experiment, outcome, axis and level: the difference "
            "from the baseline with its 95 % interval and corrected p-value (OLS on runs), "
            "and whether an effect on the scores may be the bot's (instrument_suspect).",
            "mart_interactions": "Two- and three-way interactions (Type II F tests) that "
            "the design can estimate.",
            "mart_effect_noise": "Within-cell noise from the repeats and the repeats per "
            "cell needed to detect a given effect (power 0.8, alpha 0.05).",
            "mart_not_estimable": "What could not be estimated, and why.",
        }.items()
    ],
    pool=stages.EFFECTS_ANALYSIS.pool,
)
def effects_analysis(
    context: dg.AssetExecutionContext,
    config: EffectsAnalysisConfig,
    artifact_store: ArtifactStoreResource,
    warehouse: WarehouseResource,
):
    store = artifact_store.store()
    metrics = {**METRICS, "score": config.score_effect_size}
    outcome = run_effects_analysis(warehouse.db_path(), store, metrics, charts=config.charts)
    with updating(warehouse.db_path()) as con:
        for name, frame in outcome.tables.items():
            replace_table(con, name, frame, MART_SCHEMAS[name])
        # A replaced table loses its comments: write the marts' again (catalog.py).
        apply_comments(con, table_docs(), only=outcome.tables)
    for failed in outcome.errors:
        context.log.warning(f"{failed.experiment} / {failed.metric}: {failed.error}")

    effects = outcome.tables["mart_main_effects"]
    strongest = (
        effects[effects["metric"] == "score"]
        .assign(size=lambda f: f["estimate"].abs())
        .sort_values("size", ascending=False)
        .head(10)
    )
    charts = {
        f"chart/{a.experiment}/{kind}": dg.MetadataValue.md(_image(path))
        for a in outcome.analyses
        if a.metric in INLINE_CHARTS
        for kind, path in a.charts.items()
    }
    yield dg.MaterializeResult(
        asset_key="mart_main_effects",
        metadata={
            "dagster/row_count": len(effects),
            "experiments": int(effects["experiment"].nunique()),
            "significant": int(effects["significant"].eq(True).sum()),
            "meaningful": int(effects["meaningful"].eq(True).sum()),
            "instrument_suspect": int(effects["instrument_suspect"].eq(True).sum()),
            "strongest_on_score": table_preview(
                strongest[
                    [
                        "experiment",
                        "axis",
                        "level",
                        "baseline",
                        "estimate",
                        "ci_low",
                        "ci_high",
                        "p_adjusted",
                        "meaningful",
                    ]
                ]
                .round(3)
                .to_dict("records"),
                10,
            ),
            "charts_dir": dg.MetadataValue.path(str(store.root / "analysis")),
            **charts,
        },
    )
    interactions = outcome.tables["mart_interactions"]
    extra = {
        "mart_interactions": {"significant": int(interactions["significant"].fillna(False).sum())},
        "mart_effect_noise": {},
        "mart_not_estimable": {"errors": len(outcome.errors)},
    }
    for name, metadata in extra.items():
        table = outcome.tables[name]
        yield dg.MaterializeResult(
            asset_key=name,
            metadata={
                "dagster/row_count": len(table),
                **metadata,
                "preview": table_preview(table.round(4).to_dict("records"), 30),
            },
        )
