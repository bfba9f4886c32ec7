"""Readers of a game page beside the screen: `page_code` reads its listeners and structure
(controls and the way in), `state` its JavaScript heap (board, piece, score, game over),
and `state_model` decides what that state means. None of them runs the game's code."""
