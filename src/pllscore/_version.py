"""The package version, in one place: read by the package, provenance and ``pllscore --version``."""

__version__ = "0.1.0"
