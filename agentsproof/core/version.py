"""The harness's version (the SDK keeps its own copy, a test keeps the two equal)."""

__version__ = "0.1.0"
