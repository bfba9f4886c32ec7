from assets.quality.assets import quality_metrics

__all__ = ["quality_metrics"]
