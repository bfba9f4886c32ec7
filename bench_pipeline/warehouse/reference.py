"""Reference tables the SQL models join to: constants that SQL cannot compute itself.

They are built from Python on every warehouse build (they are tiny), so they never go
stale against the code they mirror:

- `ref_student_t(df, t975)`: the 97.5 % quantile of Student's t for 1..1000 degrees of
  freedom. DuckDB has no t quantile function, and a 95 % interval over a handful of
  repeats needs it (with 3 repeats t975(2) = 4.30, not 1.96). Beyond 1000 the models
  fall back to 1.96 (t975(1000) = 1.962).
- `ref_axes(position, axis, kind, default_json, description)`: the axis catalogue of
  `bench_pipeline.design.axes`, so that SQL can name what differs from the defaults.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from bench_pipeline.design.axes import AXES

T_MAX_DF = 1000
# The normal quantile the models use once df exceeds T_MAX_DF (documented in the docs).
Z975 = 1.96


def student_t_table(max_df: int = T_MAX_DF) -> pd.DataFrame:
    # stdtrit is the function scipy.stats.t.ppf evaluates (same values to the bit); it is
    # imported here and from scipy.special because scipy.stats takes seconds to import, and
    # `bench sql` (which imports the build module) should not pay for it at all.
    from scipy.special import stdtrit

    df = np.arange(1, max_df + 1, dtype=np.int32)
    return pd.DataFrame({"df": df, "t975": stdtrit(df, 0.975).astype(np.float64)})


def axes_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "position": np.arange(1, len(AXES) + 1, dtype=np.int32),
            "axis": list(AXES),
            "kind": [a.kind for a in AXES.values()],
            # JSON text, the form a cell's config_json holds its values in.
            "default_json": [json.dumps(a.default) for a in AXES.values()],
            "description": [a.description for a in AXES.values()],
        }
    )


def reference_tables() -> dict[str, pd.DataFrame]:
    """Every reference table, by name: the build creates each one as a source table."""
    return {"ref_student_t": student_t_table(), "ref_axes": axes_table()}
