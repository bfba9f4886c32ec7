"""The agent's task prompt and project-context file, built from a cell's config.

Templates live in `templates/<lang>.yaml`, one file per human language, so a translator edits a
single file; `catalog` loads and checks them, `builder` assembles. See docs/prompts.md.
"""

from bench_pipeline.agents.prompts.builder import (
    PromptSettings,
    build_prompt,
    context_file_for,
    prompt_languages,
    resolve_settings,
)
from bench_pipeline.agents.prompts.catalog import (
    PROMPT_VERSION,
    PromptError,
    PromptTemplateError,
)

__all__ = [
    "PROMPT_VERSION",
    "PromptError",
    "PromptSettings",
    "PromptTemplateError",
    "build_prompt",
    "context_file_for",
    "prompt_languages",
    "resolve_settings",
]
