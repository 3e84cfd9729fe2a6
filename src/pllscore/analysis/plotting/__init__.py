"""Figures; matplotlib is imported only here (:mod:`.backend`), and only when a figure is asked for."""
