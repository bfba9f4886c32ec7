from assets.effects_analysis.assets import effects_analysis

__all__ = ["effects_analysis"]
