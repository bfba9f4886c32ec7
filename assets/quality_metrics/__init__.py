from assets.quality_metrics.assets import quality_metrics

__all__ = ["quality_metrics"]
