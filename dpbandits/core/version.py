"""The version of the distribution (one home: pyproject.toml reads the same number)."""

__version__ = "0.2.0"
