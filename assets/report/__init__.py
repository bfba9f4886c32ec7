from assets.report.assets import results_site

__all__ = ["results_site"]
