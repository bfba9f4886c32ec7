"""The gameplay bot: calibrates to an unknown browser Tetris, plays it, derives 16 verdicts."""

from bench_pipeline.bot.contract import BOT_VERSION, TEST_IDS, Evaluation, Verdict
from bench_pipeline.bot.evaluate import evaluate

__all__ = ["BOT_VERSION", "TEST_IDS", "Evaluation", "Verdict", "evaluate"]
