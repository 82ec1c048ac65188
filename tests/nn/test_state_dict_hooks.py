"""Module's state_dict / load_state_dict hooks against torch 2.13: call order, arguments,
return-value rules, handles, incompatible_keys edited in place, errors (class and message)."""
import io

import pytest
import torch

import ember


def net(lib):
    return lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Sequential(lib.nn.BatchNorm1d(3)))


def hooked(lib, log):
    """A two-level model with every kind of state_dict hook on the root and one child,
    logging what each hook receives."""
    m = net(lib)
    for name, mod in (("root", m), ("child", m[1])):
        mod.register_state_dict_pre_hook(lambda mod, prefix, keep, name=name: log.append(
            ("pre", name, prefix, keep)))
        mod.register_state_dict_post_hook(lambda mod, sd, prefix, meta, name=name: log.append(
            ("post", name, prefix, sorted(sd), dict(meta))))
        mod.register_load_state_dict_pre_hook(lambda mod, sd, prefix, meta, strict, mk, uk, em, name=name:
                                              log.append(("lpre", name, prefix, sorted(sd), dict(meta), strict,
                                                          list(mk), list(uk))))
        mod.register_load_state_dict_post_hook(lambda mod, keys, name=name: log.append(
            ("lpost", name, list(keys.missing_keys), list(keys.unexpected_keys))))
    m[0]._register_load_state_dict_pre_hook(lambda *args: log.append(("lpre0", len(args))))
    return m


def test_hooks_are_called_in_torchs_order_with_torchs_arguments():
    logs = []
    for lib in (ember, torch):
        log = []
        m = hooked(lib, log)
        sd = m.state_dict(keep_vars=True)
        sd.pop("0.bias")
        sd["extra"] = lib.zeros(1)
        result = m.load_state_dict(sd, strict=False)
        logs.append((log, list(result.missing_keys), list(result.unexpected_keys)))
    assert logs[0] == logs[1]


def test_load_post_hook_clearing_the_keys_avoids_the_strict_error_and_adding_causes_it():
    for lib in (ember, torch):
        m = net(lib)
        sd = m.state_dict()
        del sd["0.weight"]
        handle = m.register_load_state_dict_post_hook(lambda mod, keys: keys.missing_keys.clear())
        assert repr(m.load_state_dict(sd)) == "<All keys matched successfully>"
        handle.remove()
        with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0.weight"'):
            m.load_state_dict(sd)
        m[0].register_load_state_dict_post_hook(lambda mod, keys: keys.unexpected_keys.append("x"))
        with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "x"'):
            m.load_state_dict(m.state_dict())


def test_return_value_rules_and_removed_handles():
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 2)
        h = m.register_state_dict_post_hook(lambda *a: {})
        with pytest.raises(RuntimeError, match="^state_dict post-hook must return None$"):
            m.state_dict()
        h.remove()

        def old(mod, sd, prefix, meta):
            return {"replaced": 1}
        h = m._register_state_dict_hook(old)
        assert m.state_dict() == {"replaced": 1}
        h.remove()
        assert list(m.state_dict()) == ["weight", "bias"]

        def public(*a):
            pass
        m.register_state_dict_post_hook(public)
        with pytest.raises(RuntimeError, match="^Cannot register the same function as the state dict post hook"):
            m._register_state_dict_hook(public)

        h = m.register_load_state_dict_post_hook(lambda mod, keys: 1)
        with pytest.raises(AssertionError, match="^Hooks registered with ``register_load_state_dict_post_hook``"):
            m.load_state_dict(m.state_dict())
        h.remove()
        m.load_state_dict(m.state_dict())


def test_pre_hook_may_edit_the_state_dict_it_loads():
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 2, bias=False)

        def rename(mod, sd, prefix, *rest):
            if prefix + "w" in sd:
                sd[prefix + "weight"] = sd.pop(prefix + "w")
        m.register_load_state_dict_pre_hook(rename)
        m.load_state_dict({"w": lib.ones(2, 2)}, strict=False)
        assert m.weight.sum().item() == 4


def test_state_dict_metadata_as_torchs_and_through_a_file():
    results = []
    for lib in (ember, torch):
        m = net(lib)
        sd = m.state_dict()
        meta = {k: dict(v) for k, v in sd._metadata.items()}
        buffer = io.BytesIO()
        lib.save(sd, buffer)
        buffer.seek(0)
        loaded = lib.load(buffer)
        log = []
        m[1][0].register_load_state_dict_pre_hook(lambda mod, sd, prefix, local, *rest: log.append(dict(local)))
        m.load_state_dict(loaded, assign=True)
        results.append((meta, {k: dict(v) for k, v in loaded._metadata.items()}, log))
    assert results[0] == results[1]
