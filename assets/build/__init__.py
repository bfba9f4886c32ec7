from assets.build.assets import sandboxed_build

__all__ = ["sandboxed_build"]
