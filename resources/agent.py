import os
import shlex
from pathlib import Path

import dagster as dg

from bench_pipeline.agents import adapter_for
from bench_pipeline.agents.base import AgentAdapter


class AgentResource(dg.ConfigurableResource):
    """Which program plays each harness of the `agent` axis.

    claude-code and codex run their CLIs from PATH; `command` runs `command_template`
    (placeholders such as {prompt_file}, {model}, {workspace}); `synthetic` is offline.
    With `replay_dir` set, a run recorded elsewhere (a folder `<replay_dir>/<run_id>/`)
    is imported instead of run again.
    """

    command_template: str = ""  # empty: $BENCH_AGENT_COMMAND (a shell-quoted command line)
    replay_dir: str = ""  # empty: $BENCH_REPLAY_DIR, else no replay

    def adapter(self, harness: str, run_id: str) -> AgentAdapter:
        template = self.command_template or os.environ.get("BENCH_AGENT_COMMAND", "")
        replay = self.replay_dir or os.environ.get("BENCH_REPLAY_DIR", "")
        return adapter_for(
            harness,
            command=shlex.split(template) if template else None,
            replay_dir=Path(replay) if replay else None,
            run_id=run_id,
        )
