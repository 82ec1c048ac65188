"""Placeholder: functional forms of this area are being added."""
__all__ = []
