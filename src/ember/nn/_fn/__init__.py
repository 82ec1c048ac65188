"""The functional forms behind ``ember.nn.functional``, one area per file; ``functional.py``
re-exports each file's ``__all__``, so users import them from ``nn.functional`` only."""
