from assets.design.assets import experiment_design, run_spec

__all__ = ["experiment_design", "run_spec"]
