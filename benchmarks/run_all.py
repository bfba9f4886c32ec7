"""Run every benchmark script in this folder, one after another."""

import subprocess
import sys
from pathlib import Path

# Scripts that need arguments: the accuracy benchmark measures the in-repo corpus here (the
# real games are checked out outside the repository, and run on purpose, not by default).
ARGS = {"bot_accuracy.py": ["--corpus", "repo"]}

for script in sorted(Path(__file__).parent.glob("*.py")):
    if script.name != "run_all.py":
        print(f"== {script.name}", flush=True)
        subprocess.run([sys.executable, str(script), *ARGS.get(script.name, [])], check=True)
