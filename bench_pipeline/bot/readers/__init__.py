"""Readers of a game's state beside the renderer's: `state` reads its JavaScript heap."""
