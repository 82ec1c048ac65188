"""``ember.hub`` (get_dir/set_dir, download_url_to_file, load_state_dict_from_url) and
``utils.model_zoo.load_url`` against torch 2.13, offline: ``file://`` URLs of checkpoints
torch saved, the same cache folders, the hash check's error."""
import hashlib
import importlib
import sys

import numpy as np
import pytest
import torch

import ember


def test_hub_dir_follows_torch_home_and_set_dir_as_torch(monkeypatch, tmp_path):
    hub = importlib.import_module("ember.hub")
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TORCH_HOME", raising=False)
    assert ember.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    assert ember.hub.get_dir() == torch.hub.get_dir()
    ember.hub.set_dir(str(tmp_path / "mine"))
    assert ember.hub.get_dir() == str(tmp_path / "mine")


def checkpoint(tmp_path):
    torch.manual_seed(0)
    state = torch.nn.Linear(3, 2).state_dict()
    source = tmp_path / "source" / "linear.pth"
    source.parent.mkdir()
    torch.save(state, source)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    named = source.with_name(f"linear-{digest[:8]}.pth")
    named.write_bytes(source.read_bytes())
    return state, source, named


def test_load_state_dict_from_url_downloads_caches_and_loads_torchs_file(monkeypatch, tmp_path):
    hub = importlib.import_module("ember.hub")
    state, source, named = checkpoint(tmp_path)
    monkeypatch.setattr(hub, "_hub_dir", str(tmp_path / "hub"))
    loaded = ember.hub.load_state_dict_from_url(source.as_uri(), check_hash=True)
    assert (tmp_path / "hub" / "checkpoints" / "linear.pth").read_bytes() == source.read_bytes()
    assert list(loaded) == list(state)
    for key in state:
        np.testing.assert_array_equal(loaded[key].numpy(), state[key].numpy())
    source.unlink()  # the second call reads the cache
    again = ember.utils.model_zoo.load_url(source.as_uri(), map_location="cpu", weights_only=True)
    assert list(again) == list(state)
    model = ember.nn.Linear(3, 2)
    model.load_state_dict(ember.hub.load_state_dict_from_url(named.as_uri(), model_dir=str(tmp_path / "m"),
                                                             check_hash=True))
    np.testing.assert_array_equal(model.weight.detach().numpy(), state["weight"].numpy())


def test_a_wrong_hash_prefix_raises_torchs_error_and_leaves_no_file(tmp_path):
    _, _, named = checkpoint(tmp_path)
    wrong = named.with_name("linear-00000000.pth")
    wrong.write_bytes(named.read_bytes())
    errors = []
    for lib in (torch, ember):
        folder = tmp_path / lib.__name__
        with pytest.raises(RuntimeError) as info:
            lib.hub.load_state_dict_from_url(wrong.as_uri(), model_dir=str(folder), check_hash=True)
        errors.append(str(info.value))
        assert list(folder.iterdir()) == []
    assert errors[1] == errors[0] and errors[0].startswith('invalid hash value (expected "00000000", got "')


def test_download_url_to_file_writes_the_bytes(tmp_path):
    _, source, _ = checkpoint(tmp_path)
    ember.hub.download_url_to_file(source.as_uri(), str(tmp_path / "copy.pth"), progress=False)
    assert (tmp_path / "copy.pth").read_bytes() == source.read_bytes()


HUBCONF = '''
dependencies = ["numpy"]
from mylayers import double  # a module of the repository itself


def tiny(width=3, *, bias=True):
    """A Linear model, as a repository's entry point would build one."""
    import torch
    torch.manual_seed(0)
    return double(torch.nn.Linear(width, 2, bias=bias))


def _helper():
    pass


not_callable = 3
'''


def test_hub_load_from_a_local_hubconf_as_torch(tmp_path, monkeypatch):
    (tmp_path / "hubconf.py").write_text(HUBCONF)
    (tmp_path / "mylayers.py").write_text("def double(m):\n    m.doubled = True\n    return m\n")
    m_torch = torch.hub.load(str(tmp_path), "tiny", 4, source="local", bias=False)
    sys.modules.pop("mylayers", None)
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "torch", ember)  # the hubconf runs under ``import ember as torch``
        m_ember = ember.hub.load(str(tmp_path), "tiny", 4, source="local", bias=False)
    sys.modules.pop("mylayers", None)
    assert isinstance(m_ember, ember.nn.Linear) and m_ember.doubled and m_ember.bias is None
    assert tuple(m_ember.weight.shape) == tuple(m_torch.weight.shape) == (2, 4)
    np.testing.assert_array_equal(m_ember.weight.detach().numpy(), m_torch.weight.detach().numpy())
    assert str(tmp_path) not in sys.path
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="Cannot find callable not_callable in hubconf"):
            lib.hub.load(str(tmp_path), "not_callable", source="local")
        with pytest.raises(ValueError, match='Unknown source: "ftp". Allowed values: "github" | "local".'):
            lib.hub.load(str(tmp_path), "tiny", source="ftp")
        sys.modules.pop("mylayers", None)
    (tmp_path / "hubconf.py").write_text('dependencies = ["no_such_package_xyz"]\ndef tiny():\n    return 1\n')
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_xyz"):
            lib.hub.load(str(tmp_path), "tiny", source="local")
    with pytest.raises(RuntimeError, match="downloads no repositories"):
        ember.hub.load("pytorch/vision", "resnet18")
