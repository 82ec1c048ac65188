"""The autotuner's records follow ``XDG_CACHE_HOME`` (session 25): their path was cached at the
process's first use, so after the cache directory changed the compile cache's key still read the
first directory's records, and a graph cached under the new one missed (the CI run's order met it
in ``test_codegen_cache.py``)."""
from ember.compiler.backends import autotune


def test_the_records_digest_reads_the_current_cache_directory(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    monkeypatch.setenv("XDG_CACHE_HOME", str(first))
    assert autotune.records_digest() == "none"
    (first / "ember" / "compile" / "autotune.json").write_text('{"k": 1}')
    recorded = autotune.records_digest()
    assert recorded != "none"
    monkeypatch.setenv("XDG_CACHE_HOME", str(second))
    assert autotune.records_digest() == "none"
    monkeypatch.setenv("XDG_CACHE_HOME", str(first))
    assert autotune.records_digest() == recorded
