"""``EMBER_LOGS`` as torch's ``TORCH_LOGS``: torch's names (``graph_code``, ``all``, ``+``
prefixes) turn ember's logs on, and a mistyped name raises torch's ValueError listing the valid
settings (before session 32 a typo such as ``output_cod`` printed nothing, silently)."""
import pytest

import ember
from ember._logging import log_enabled


def _compiled_twice():
    f = ember.compile(lambda x: x * 2)
    f(ember.ones(3))
    return f(ember.ones(3))


def test_a_mistyped_log_name_raises_torch_s_value_error(monkeypatch):
    ember.compiler.reset()
    monkeypatch.setenv("EMBER_LOGS", "graph,output_cod")
    with pytest.raises(ValueError, match=r"Invalid log settings: graph,output_cod, must be a comma separated list"
                                         r"(.|\n)*Valid settings:(.|\n)*output_code"):
        _compiled_twice()
    ember.compiler.reset()


@pytest.mark.parametrize("setting, on, off", [
    ("graph_code", ["graph"], ["guards", "output_code"]),       # torch's name for the captured graph
    ("+graph, -guards", ["graph", "guards"], ["recompiles"]),    # verbosity prefixes, spaces
    ("kernel_code,torch._dynamo", ["output_code"], ["graph"]),   # a module name is accepted
    ("all", ["graph", "guards", "recompiles", "output_code", "dynamic", "complex"], []),
    ("dynamo", [], ["graph"]),                                  # torch's, no ember log: nothing
])
def test_torch_s_log_names_work_in_ember_logs(monkeypatch, setting, on, off):
    monkeypatch.setenv("EMBER_LOGS", setting)
    assert all(log_enabled(name) for name in on) and not any(log_enabled(name) for name in off)


def test_the_graph_log_prints_under_torch_s_name(monkeypatch, capsys):
    ember.compiler.reset()
    monkeypatch.setenv("EMBER_LOGS", "graph_code")
    _compiled_twice()
    assert "[ember.compile graph] captured graph of _compiled_twice.<locals>.<lambda>:" in capsys.readouterr().err
    ember.compiler.reset()
