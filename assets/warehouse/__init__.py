from assets.warehouse.assets import warehouse

__all__ = ["warehouse"]
