from assets.sandboxed_build.assets import sandboxed_build

__all__ = ["sandboxed_build"]
