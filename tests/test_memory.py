"""Memory accounting: ember.memory_allocated / max_memory_allocated / reset_peak_memory_stats
rise and fall exactly with the lifetime of tensor storage (ember._memory)."""
import gc

import numpy as np
import pytest

import ember
from ember import _memory


@pytest.fixture(autouse=True)
def no_cycle_collection():
    # Garbage from earlier tests, collected halfway through a test, would move the counts.
    gc.disable()
    yield
    gc.enable()


def used():
    return ember.memory_allocated()


@pytest.mark.parametrize("make, nbytes", [
    (lambda: ember.empty(1000), 4000),
    (lambda: ember.zeros(3, 5, dtype=ember.float64), 120),
    (lambda: ember.ones(7, dtype=ember.int64), 56),
    (lambda: ember.tensor([True, False, True]), 3),
    (lambda: ember.arange(10, dtype=ember.uint8), 10),
    (lambda: ember.empty(0, 4), 0),
    (lambda: ember.tensor(2.5), 4),
    (lambda: ember.nn.Parameter(ember.empty(4, 2)), 32),
])
def test_a_tensor_adds_and_returns_exactly_its_storage_bytes(make, nbytes):
    before = used()
    t = make()
    assert used() - before == nbytes == t.nbytes
    del t
    assert used() == before


def test_an_op_result_counts_and_dies_with_its_tensor():
    a, b = ember.ones(100), ember.ones(100)
    before = used()
    c = a * b + 1  # the intermediate a * b dies inside the expression
    assert used() - before == 400
    del c
    assert used() == before


def test_views_share_the_storage_of_their_base():
    before = used()
    t = ember.empty(6, 10)
    views = [t[2:4], t.view(60), t.reshape(10, 6), t.t(), t.detach(), t.data, t[:, 1],
             t.unsqueeze(0).expand(3, 6, 10), t.narrow(1, 0, 5), *t.split(2), t.flatten()]
    assert used() - before == 240
    del t
    assert used() - before == 240  # the views keep the whole storage alive
    views.pop()
    assert used() - before == 240
    del views
    assert used() == before


def test_a_copy_or_contiguous_view_of_a_transposed_tensor_is_new_storage():
    t = ember.empty(4, 8)
    before = used()
    c = t.t().contiguous()
    assert used() - before == 128
    k = t.clone()
    assert used() - before == 256
    del c, k
    assert used() == before


def test_in_place_ops_write_into_the_same_storage():
    t = ember.zeros(50)
    before = used()
    t.add_(1)
    t.mul_(3)
    t += 2
    t[5:9] = 7.0
    t.zero_()
    t.clamp_(min=1)
    assert used() == before
    assert t.sum().item() == 50  # the in-place ops did run
    assert used() == before  # the 0-d sum died with its use


def test_setting_data_moves_the_count_to_the_new_storage():
    t = ember.zeros(100)
    base = used()
    t.data = ember.zeros(30, dtype=ember.float64)
    assert used() - base == 240 - 400  # the old 400 bytes died, the new 240 live in t
    assert t.nbytes == 240


def test_out_argument_of_another_shape_replaces_the_storage():
    a = ember.ones(2, 3)
    out = ember.empty(1)
    base = used()
    ember.add(a, a, out=out)
    assert used() - base == 24 - 4
    assert out.tolist() == [[2.0] * 3] * 2


def test_saved_activations_are_released_when_backward_frees_the_graph():
    x = ember.randn(1000, requires_grad=True)
    base = used()
    h = x.exp()  # exp's backward reads its output: the graph keeps h's storage
    loss = h.sum()
    del h
    assert used() - base == 4000 + 4
    loss.backward()
    # The graph is freed: exp's saved output goes, x.grad (4000) and the loss (4) stay.
    assert used() - base == 4000 + 4
    assert x.grad.nbytes == 4000
    x.grad = None
    assert used() - base == 4
    del loss
    assert used() == base


def test_retain_graph_keeps_the_saved_activations_until_the_graph_dies():
    x = ember.randn(250, requires_grad=True)
    base = used()
    loss = (x * 2).sin().sum()  # sin saves its input, the 1000 bytes of x * 2
    loss.backward(retain_graph=True)
    assert used() - base == 1000 + 4 + 1000  # saved x * 2, loss, x.grad
    x.grad = None
    del loss  # the last reference to the graph
    assert used() == base


def test_no_grad_keeps_no_activations():
    x = ember.randn(1000, requires_grad=True)
    base = used()
    with ember.no_grad():
        loss = x.exp().sum()
    assert used() - base == 4


def test_from_numpy_counts_the_owning_array_once():
    array = np.zeros(64, dtype=np.float32)
    base = used()
    a = ember.from_numpy(array)
    b = ember.from_numpy(array[8:16])
    assert used() - base == 256  # the storage is the whole array, counted once
    del a, b
    assert used() - base == 256  # the array is still alive: its storage is not freed
    del array
    assert used() == base


def test_an_array_on_a_foreign_buffer_counts_its_own_bytes():
    buffer = bytes(range(16))
    base = used()
    t = ember.from_numpy(np.frombuffer(buffer, dtype=np.uint8))
    view = t[4:]
    assert used() - base == 16
    del t, view
    assert used() == base


def test_reused_addresses_are_counted_afresh():
    base = used()
    for n in range(1, 200):
        t = ember.empty(n)  # NumPy hands back the just-freed blocks and ids again and again
        assert used() - base == 4 * n
        del t
    assert used() == base


def test_peak_tracks_the_high_water_mark_and_resets_to_the_current_count():
    ember.reset_peak_memory_stats()
    base = used()
    assert ember.max_memory_allocated() == base
    a = ember.empty(1000)
    b = ember.empty(500)
    del b
    assert used() - base == 4000
    assert ember.max_memory_allocated() - base == 6000
    ember.reset_peak_memory_stats()
    assert ember.max_memory_allocated() == used()
    del a
    assert ember.max_memory_allocated() - base == 4000


def test_peak_scope_measures_a_region_without_erasing_the_outer_peak():
    ember.reset_peak_memory_stats()
    base = used()
    big = ember.empty(1000)
    del big
    with _memory.peak_scope():
        assert _memory.peak() == base
        small = ember.empty(10)
        assert _memory.peak() - base == 40
        del small
    assert ember.max_memory_allocated() - base == 4000


def test_profiler_reads_the_same_counts():
    assert _memory.allocated() == ember.memory_allocated()
    assert _memory.peak() == ember.max_memory_allocated()


def test_storage_bytes_counts_shared_storage_once():
    t = ember.empty(10, 10)
    u = ember.empty(3)
    assert _memory.storage_bytes([t, t[1], t.t(), u, None]) == 412
    # Tensors that die as the iteration goes on are still distinct storages.
    assert _memory.storage_bytes(ember.empty(10) for _ in range(3)) == 120


def test_device_argument():
    t = ember.empty(3)
    assert ember.memory_allocated("cpu") == ember.memory_allocated(ember.device("cpu")) == used()
    assert ember.max_memory_allocated(None) >= used()
    for bad in ("cuda", ember.device("cuda", 0), 0):
        with pytest.raises(ValueError, match="Expected a cpu device"):
            ember.memory_allocated(bad)
    with pytest.raises(ValueError, match="cuda"):
        ember.reset_peak_memory_stats("cuda:0")
    del t


def test_an_in_place_op_under_autograd_keeps_the_old_values_it_saved():
    x = ember.randn(100, requires_grad=True)
    base = used()
    h = x * 2
    h.sin_()  # sin's backward reads its input: the graph keeps a copy of h before the write
    assert used() - base == 400 + 400
    h.sum().backward()
    assert used() - base == 400 + 400  # the copy went with the graph; x.grad arrived
    assert ember.allclose(x.grad, 2 * ember.cos(2 * x.detach()))


def test_a_numpy_scalar_is_a_value_not_a_storage():
    before = used()
    t = ember.Tensor._make(np.float32(2.5))  # NumPy scalars cannot be weakly referenced
    assert used() == before
    assert t.item() == 2.5


def test_a_strided_window_view_counts_the_array_it_looks_into():
    t = ember.zeros(100)
    before = used()
    windows = np.lib.stride_tricks.sliding_window_view(t.numpy(), 10)  # 91 x 10 floats, no copy
    w = ember.Tensor._make(windows)
    assert windows.nbytes == 3640
    assert used() == before
    assert _memory.storage_bytes([t, w]) == 400
    del t
    assert used() == before  # the window view keeps the 400 bytes alive
    del w, windows
    assert used() == before - 400


def test_a_leaf_made_each_step_is_freed_with_its_last_reference():
    # An input that requires grad (saliency, adversarial steps): torch frees it as soon as the
    # loop drops it, with no cycle collection (the fixture keeps the collector off).
    import weakref

    import torch
    for lib in (torch, ember):
        w = lib.randn(64, 64, requires_grad=True)
        x = lib.randn(16, 64, requires_grad=True)
        (x @ w).square().sum().backward()
        assert x.grad is not None and w.grad is not None
        ref = weakref.ref(x)
        del x
        assert ref() is None, lib.__name__
    base = used()
    for _ in range(5):
        x = ember.randn(16, 64, requires_grad=True)
        (x @ w).square().sum().backward()
        del x
        assert used() == base  # w.grad was there before and is reused; nothing else stays
    loss = (ember.ones(3, requires_grad=True) * w[0, :3]).sum()  # the graph holds the only leaf
    loss.backward()  # its gradient has nowhere to go; w's still arrives
    assert w.grad is not None
