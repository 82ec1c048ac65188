"""A dynamic graph's compiled code on disk (session 32, DYNCACHE32): a graph with size symbols
is keyed by its symbols, their ranges and its size expressions, and its record keeps the plan's
symbolic shapes, strides and offsets, so a second process loads it (``fxgraph_cache_hit``) with
the first one's values; a record with a malformed size, or other ranges, is compiled again."""
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ember.compiler.backends import cache, toolchain
from ember.compiler.symbolic import symbol

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
HERE = Path(__file__).resolve().parent
SIZES = ((3, 5), (2, 7), (4, 9))  # (batch, length): one graph over both


def _step(longest=16, disable=False):
    """Losses of a compiled training step (token and position embeddings cut to the length, a
    head, cross entropy, SGD) at ``SIZES``, both dims marked dynamic up to 4 and ``longest``."""
    import ember
    from ember import nn
    ember.compiler.reset()  # from the disk cache: the graphs of this code in memory would serve it
    ember.manual_seed(0)
    tok, pos, head = nn.Embedding(11, 8), nn.Parameter(ember.randn(16, 8)), nn.Linear(8, 11)
    opt = ember.optim.SGD([*tok.parameters(), pos, *head.parameters()], lr=0.5)

    @ember.compile(fullgraph=True, disable=disable)
    def step(ids, targets):
        h = tok(ids) + pos[:ids.shape[1]]
        loss = nn.functional.cross_entropy(head(h).view(-1, 11), targets.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    losses = []
    for b, t in SIZES:
        ids, targets = ember.randint(0, 11, (b, t)), ember.randint(0, 11, (b, t))
        for a in (ids, targets):
            ember._dynamo.mark_dynamic(a, 0, max=4)
            ember._dynamo.mark_dynamic(a, 1, max=longest)
        losses.append(float(step(ids, targets)))
    return losses


STEP = textwrap.dedent(f"""
    import json, sys
    sys.path.insert(0, {str(HERE)!r})
    from test_dynamic_cache_32 import _step
    from ember._dynamo.utils import counters
    losses = _step()
    print(json.dumps({{"counters": dict(counters["inductor"]), "graphs": counters["stats"]["unique_graphs"],
                      "losses": losses}}))
""")


def test_a_second_process_loads_a_dynamic_graph_and_a_tampered_record_is_rebuilt(tmp_path, monkeypatch):
    from ember._dynamo.utils import counters
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    cold, warm = (json.loads(subprocess.run([sys.executable, "-c", STEP], env=env, capture_output=True, text=True,
                                            timeout=240, check=True).stdout) for _ in range(2))
    assert cold["counters"] == {"fxgraph_cache_miss": 1} and cold["graphs"] == 1
    assert warm["counters"] == {"fxgraph_cache_hit": 1} and warm["graphs"] == 1  # was "bypass": never on disk
    assert warm["losses"] == cold["losses"]
    np.testing.assert_allclose(cold["losses"], _step(disable=True), rtol=1e-5)

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (record,) = (tmp_path / "ember" / "compile").glob("g-*.json")
    text = record.read_text()
    assert '[\\"$\\",\\"sym\\",\\"s' in text  # symbolic sizes kept as expressions
    # an edited size whose record's hash was made again: refused as malformed, rebuilt
    payload = json.loads(text)["payload"].replace('["$","sym","s0"]', '["$","sym",0]', 1)
    assert payload != json.loads(text)["payload"]
    record.write_text(json.dumps({"sha256": hashlib.sha256(payload.encode()).hexdigest(), "payload": payload}))
    counters.clear()
    assert _step() == cold["losses"] and counters["inductor"] == {"fxgraph_cache_miss": 1}
    assert record.read_text() == text  # written whole again
    counters.clear()  # other ranges (the slice pos[:T] is planned over them): another entry
    assert _step(longest=12) == cold["losses"] and counters["inductor"] == {"fxgraph_cache_miss": 1}
    assert len(list((tmp_path / "ember" / "compile").glob("g-*.json"))) == 2


def test_size_expressions_round_trip_and_malformed_ones_are_refused():
    s0, s1 = symbol("s0"), symbol("s1")
    sizes = (s0 * s1, (2 * s1 + 3) // 4, 5, -(s1 % 2))
    back = cache._unsizes(json.loads(json.dumps(cache._sizes(sizes))))
    assert [v.key() if hasattr(v, "key") else v for v in back] == [v.key() if hasattr(v, "key") else v for v in sizes]
    for bad in (["$", "sym", 1], ["$", "**", 2, 3], ["$", "+", 1], 1.5, "s0", ["$", "+", ["$", "sym", "s0"], True]):
        with pytest.raises(ValueError):
            cache._unsizes(bad)
