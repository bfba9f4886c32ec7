from assets.experiment_design.assets import experiment_design, run_spec

__all__ = ["experiment_design", "run_spec"]
