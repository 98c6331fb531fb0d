"""Layer 6: other tools' formats: convert, exports for other tools, compare inputs."""
