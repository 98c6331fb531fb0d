"""Grading pipeline."""
