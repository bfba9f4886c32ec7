"""What the two chart paths share: the colour of each verdict, and the rest of the palette.

`charts.py` (matplotlib PNGs for Dagster and the artifact store) and
`bench_pipeline/report/svg.py` (inline SVG on the results site) both read these, so an effect
has the same colour wherever it is drawn; both format numbers with `render.number`. No
matplotlib here: the site imports this module at load time.

Every colour is at least 3:1 against white (WCAG 1.4.11, graphics), most above 4.5:1.
"""

from __future__ import annotations

STRONG = "#1f5fa8"  # significant and larger than the noise
WEAK = "#a35200"  # significant but inside the noise
NONE = "#6b6b6b"  # not significant
BAND = "#e8e8e8"  # ± the noise SD
AXIS = "#444444"  # the zero line
CRITICAL = "#b22222"  # the critical |t| line and its label
WHISKER = "#111111"  # a 95 % interval
SERIES = ("#1f5fa8", "#a35200", "#2e7d32", "#8e24aa", "#c62828", "#00838f")  # one per level
