"""The child side of an isolated evaluation (`isolate.py`): run as
`python -m bench_pipeline.bot.child SCRATCH`, it evaluates the game the request in SCRATCH
names, against the parent's clock, and leaves the evaluation (or the error) there as JSON."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, NoReturn

from bench_pipeline.bot.browser import BrowserMissingError
from bench_pipeline.bot.evaluate import evaluate_in_process
from bench_pipeline.bot.isolate import (
    ERROR_FILE,
    REQUEST_FILE,
    RESULT_FILE,
    end_child,
    guard_child,
)
from bench_pipeline.bot.serve import TargetError


def main(argv: list[str]) -> NoReturn:
    scratch = Path(argv[0])
    request = json.loads((scratch / REQUEST_FILE).read_text())
    parent = int(request["parent"])
    guard_child(float(request["deadline"]), parent, scratch)
    try:
        code = _evaluate(scratch, request)
    except BaseException:
        # Whatever happened (the scratch folder already removed by an orphan's clean-up),
        # the process still ends through end_child.
        traceback.print_exc()
        code = 5
    sys.stdout.flush()
    sys.stderr.flush()
    end_child(code, parent, scratch)


def _evaluate(scratch: Path, request: dict[str, Any]) -> int:
    # The sandbox's generated /etc folder must stay in the system temp dir, where the
    # crash reaper of every pipeline looks for live runs: read it before TMPDIR changes.
    tempfile.gettempdir()
    # Playwright's driver and an unsandboxed Chromium write their temporary files here,
    # inside the scratch folder the parent removes.
    os.environ["TMPDIR"] = str(scratch / "tmp")
    artifacts = request.get("artifacts")
    try:
        evaluation = evaluate_in_process(
            request["target"],
            float(request["endurance_s"]),
            Path(artifacts) if artifacts else None,
            float(request["hard_cap_s"]),
            workdir=scratch / "work",
            started=float(request["started"]),
            end_driver=True,
        )
    except (TargetError, BrowserMissingError) as error:
        kind = "target" if isinstance(error, TargetError) else "browser"
        _write_child_json(scratch / ERROR_FILE, {"kind": kind, "message": str(error)})
        return 3
    except Exception as error:
        last = traceback.format_exception_only(error)[-1].strip()
        _write_child_json(
            scratch / ERROR_FILE,
            {"kind": "crash", "message": last, "traceback": traceback.format_exc()[-4000:]},
        )
        return 4
    _write_child_json(scratch / RESULT_FILE, evaluation.to_json())
    return 0


def _write_child_json(path: Path, data: dict[str, Any]) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(data))
    os.replace(partial, path)


if __name__ == "__main__":
    main(sys.argv[1:])
