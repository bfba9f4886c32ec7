from assets.results_site.assets import results_site

__all__ = ["results_site"]
