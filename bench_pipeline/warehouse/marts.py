"""The marts the effects analysis writes from Python (not SQL files), with their types.

The warehouse builder keeps them across rebuilds (they are not its to drop), and the
analysis writes them with exactly these columns (docs/interfaces.md §5 for mart_main_effects).
"""

# What the effects marts' intervals and tests are, as their method columns say.
EFFECT_CI_METHOD = (
    "95 % t interval of an OLS coefficient (statsmodels OLS.conf_int, classical standard "
    "errors): the difference in mean against the baseline, other axes held equal"
)
INTERACTION_TEST_METHOD = (
    "nested-model F test (the interaction's columns added to the main-effects model), "
    "p-values adjusted as in `correction` of mart_main_effects"
)

MART_SCHEMAS: dict[str, dict[str, str]] = {
    "mart_main_effects": {
        "experiment": "VARCHAR",
        "metric": "VARCHAR",
        "axis": "VARCHAR",
        "level": "VARCHAR",
        "baseline": "VARCHAR",
        "estimate": "DOUBLE",
        "std_error": "DOUBLE",
        "t_value": "DOUBLE",
        "ci_low": "DOUBLE",
        "ci_high": "DOUBLE",
        "p_value": "DOUBLE",
        "p_adjusted": "DOUBLE",
        "significant": "BOOLEAN",
        "meaningful": "BOOLEAN",
        "n_level": "INTEGER",
        "n_baseline": "INTEGER",
        "noise_sd": "DOUBLE",
        "correction": "VARCHAR",
        # How ci_low / ci_high were computed (EFFECT_CI_METHOD): an analyst reading the
        # table should not need the code to know.
        "ci_method": "VARCHAR",
        # Whether the effect may be the bot's rather than the games'
        # (bench_pipeline/analysis/instrument.py; docs/analysis.md, *Instrument bias*).
        "instrument_suspect": "BOOLEAN",
        "instrument_note": "VARCHAR",
        "instrument_axis": "BOOLEAN",
    },
    "mart_interactions": {
        "experiment": "VARCHAR",
        "metric": "VARCHAR",
        "axes": "VARCHAR",
        "order": "INTEGER",
        "df": "DOUBLE",
        "f_value": "DOUBLE",
        "p_value": "DOUBLE",
        "p_adjusted": "DOUBLE",
        "significant": "BOOLEAN",
        "test_method": "VARCHAR",
    },
    "mart_effect_noise": {
        "experiment": "VARCHAR",
        "metric": "VARCHAR",
        "n_runs": "INTEGER",
        "n_cells": "INTEGER",
        "noise_sd": "DOUBLE",
        "noise_df": "DOUBLE",
        "repeats_per_cell": "DOUBLE",
        "effect_size": "DOUBLE",
        "repeats_needed": "INTEGER",
        "detectable_effect": "DOUBLE",
        "reason": "VARCHAR",
    },
    "mart_not_estimable": {
        "experiment": "VARCHAR",
        "metric": "VARCHAR",
        "term": "VARCHAR",
        "reason": "VARCHAR",
    },
}
