"""The tests. Their support modules (``tests/support/``) hold assertions of their own: pytest
rewrites them as it rewrites a test's, so that a failing one shows its values."""

import pytest

pytest.register_assert_rewrite("tests.support")
