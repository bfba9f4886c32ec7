"""Readers of a game page: what its own code and structure say, read without running it."""
