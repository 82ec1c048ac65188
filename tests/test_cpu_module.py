"""``ember.cpu`` against torch 2.13's ``torch.cpu``: the device queries device-generic programs
make, and the deprecated ``torch.cpu.amp.autocast``/``GradScaler`` spellings (their
FutureWarning, bfloat16 matmuls inside, a scaler that scales on the CPU)."""
import warnings

import pytest
import torch

import ember
import ember.cpu.amp


def _queries(L):
    cpu = getattr(L, "cpu")
    return [cpu.is_available(), cpu.device_count(), cpu.current_device(), cpu.synchronize(), cpu.set_device("cpu"),
            cpu.is_initialized()]


def test_device_queries_answer_as_torchs():
    assert _queries(ember) == _queries(torch)


@pytest.mark.parametrize("kwargs", [{}, {"dtype": "float16"}, {"enabled": False}])
def test_deprecated_autocast_and_grad_scaler_warn_and_act_as_torchs(kwargs):
    def run(L):
        options = {k: getattr(L, v) if k == "dtype" else v for k, v in kwargs.items()}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with L.cpu.amp.autocast(**options):
                y = L.mm(L.ones(2, 3), L.ones(3, 2))
            scaler = L.cpu.amp.GradScaler(init_scale=8.0)
            loss = scaler.scale(L.tensor(2.0))
        return [str(y.dtype).split(".")[-1], loss.item(), scaler.is_enabled(),
                [(w.category, str(w.message), w.filename) for w in caught]]
    assert run(ember) == run(torch)
