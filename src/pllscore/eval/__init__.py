"""Minimal-pair evaluation: generic pairs, and BLiMP as a data set of pairs."""
