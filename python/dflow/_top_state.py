"""Placeholder: filled by the part of the package that owns these names."""
