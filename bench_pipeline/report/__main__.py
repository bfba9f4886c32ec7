"""`python -m bench_pipeline.report --out DIR [--db PATH] [--artifacts DIR]`: `bench report`."""

import sys

from bench_pipeline.cli import app

# The very command `bench report` runs, so both accept and print exactly the same.
app(args=["report", *sys.argv[1:]], prog_name="bench")
