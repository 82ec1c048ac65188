"""Fixtures of the compiler tests. A module that compiles uses one of them for every test:
``pytestmark = pytest.mark.usefixtures("fresh_compiler")`` (or ``"fresh_cache"``)."""
import pytest

import ember


@pytest.fixture
def fresh_compiler():
    """Each test starts and ends with no compiled code in memory (``ember.compiler.reset()``)."""
    ember.compiler.reset()
    yield
    ember.compiler.reset()


@pytest.fixture
def fresh_cache(tmp_path_factory, monkeypatch, fresh_compiler):
    """As ``fresh_compiler``, with the on-disk compile cache in this session's temporary folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
    yield
