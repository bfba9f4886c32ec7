from assets.bot_evaluation.assets import bot_evaluation

__all__ = ["bot_evaluation"]
