"""The build stage without Dagster: detect what the agent made, build it sandboxed, find the page."""

from __future__ import annotations

from bench_pipeline.build.detect import Project, detect_project
from bench_pipeline.build.project import BuildResult, BuildStep, build_project, toolchain_bin

__all__ = [
    "BuildResult",
    "BuildStep",
    "Project",
    "build_project",
    "detect_project",
    "toolchain_bin",
]
