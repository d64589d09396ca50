"""Bots choose a move from what one player may know (a view), never from the full state."""

from .random_bot import RandomBot

__all__ = ["RandomBot"]
