"""Cycle-approximate execution of a decoded command stream."""
