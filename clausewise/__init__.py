"""clausewise: search construction design codes and return every clause an engineer needs."""

__version__ = "0.1.0"
