"""Placeholder: layers of this area are being added."""
__all__ = []
