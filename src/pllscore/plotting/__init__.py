"""Figures; matplotlib is imported only here, and only when a figure is asked for."""
