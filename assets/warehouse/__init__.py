from assets.warehouse.assets import run_records, warehouse

__all__ = ["run_records", "warehouse"]
