import os

import dagster as dg

from bench_pipeline.sandbox import get_sandbox
from bench_pipeline.sandbox.base import Sandbox


class SandboxResource(dg.ConfigurableResource):
    """Where untrusted code runs: agents' CLIs and the builds of what they wrote.

    `bubblewrap` (default) needs only Debian's bubblewrap; `docker` needs a running engine.
    """

    backend: str = ""  # empty: $BENCH_SANDBOX, else "bubblewrap"
    docker_image: str = "node:20-bookworm-slim"
    memory_mb: int = 4096
    max_processes: int = 256
    build_timeout_s: float = 300.0
    # The install phase (npm ci / npm install) may reach the npm registry: projects that
    # use React or Phaser cannot build otherwise. Builds and evaluations never have network.
    install_network: bool = True
    # Hosts that install may reach, through the sandbox's filtering egress proxy (comma- or
    # space-separated). Empty: $BENCH_ALLOW_HOSTS_INSTALL, else registry.npmjs.org.
    install_allow_hosts: str = ""

    def install_hosts(self) -> tuple[str, ...] | None:
        """The install step's allow-list, or None for the environment/default."""
        from bench_pipeline.sandbox.egress import parse_list

        return parse_list(self.install_allow_hosts) if self.install_allow_hosts else None

    def backend_name(self) -> str:
        return self.backend or os.environ.get("BENCH_SANDBOX") or "bubblewrap"

    def sandbox(self) -> Sandbox:
        name = self.backend_name()
        sandbox = (
            get_sandbox(name, image=self.docker_image) if name == "docker" else get_sandbox(name)
        )
        reason = sandbox.unavailable_reason()
        if reason:
            raise dg.Failure(description=f"sandbox {name!r} cannot run here: {reason}")
        return sandbox
