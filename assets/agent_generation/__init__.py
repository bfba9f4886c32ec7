from assets.agent_generation.assets import agent_generation

__all__ = ["agent_generation"]
