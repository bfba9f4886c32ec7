from assets.evaluation.assets import bot_evaluation, bot_evaluation_has_sixteen_verdicts

__all__ = ["bot_evaluation", "bot_evaluation_has_sixteen_verdicts"]
