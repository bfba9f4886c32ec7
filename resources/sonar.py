import os

import dagster as dg

from bench_pipeline.quality.sonar import SonarConfig


class SonarQubeResource(dg.ConfigurableResource):
    """A SonarQube server for extra code measures. Unset: Sonar fields stay NULL, with why."""

    url: str = ""  # empty: $BENCH_SONAR_URL
    token: str = ""  # empty: $BENCH_SONAR_TOKEN
    scanner: str = "sonar-scanner"

    def config(self) -> SonarConfig:
        return SonarConfig(
            url=self.url or os.environ.get("BENCH_SONAR_URL") or None,
            token=self.token or os.environ.get("BENCH_SONAR_TOKEN") or None,
            scanner=self.scanner,
        )
