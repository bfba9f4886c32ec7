"""`python -m bench_pipeline.report --out DIR [--db PATH] [--artifacts DIR]`."""

import sys

from bench_pipeline.report.cli import main

sys.exit(main())
