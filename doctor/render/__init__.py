"""Renderers consume only the Report."""
