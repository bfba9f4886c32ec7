import os

import dagster as dg

from bench_pipeline.quality.sonar import SonarConfig


class SonarQubeResource(dg.ConfigurableResource):
    """A SonarQube server for extra code measures. Unset: Sonar fields stay NULL, with why."""

    url: str = ""  # empty: $BENCH_SONAR_URL
    token: str = ""  # empty: $BENCH_SONAR_TOKEN
    scanner: str = "sonar-scanner"

    @classmethod
    def from_env(cls) -> "SonarQubeResource":
        """The server of BENCH_SONAR_URL / BENCH_SONAR_TOKEN, bound with `dg.EnvVar` so that
        the UI and the stored run config show the variables' names, never the token."""
        if not os.environ.get("BENCH_SONAR_URL"):
            return cls()
        token = dg.EnvVar("BENCH_SONAR_TOKEN") if os.environ.get("BENCH_SONAR_TOKEN") else ""
        return cls(url=dg.EnvVar("BENCH_SONAR_URL"), token=token)

    def config(self) -> SonarConfig:
        return SonarConfig(
            url=self.url or os.environ.get("BENCH_SONAR_URL") or None,
            token=self.token or os.environ.get("BENCH_SONAR_TOKEN") or None,
            scanner=self.scanner,
        )
