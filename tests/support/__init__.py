"""Code the tests share: helpers, builders, harnesses and constants that several test files use.

Test files and conftest files import from here; nothing imports a ``test_*.py`` or a ``conftest.py``.
"""
