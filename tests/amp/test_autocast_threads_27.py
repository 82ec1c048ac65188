"""Autocast state is per thread, as torch's: one thread inside ``autocast`` changes neither
another thread's op dtypes nor what ``is_autocast_enabled``/``get_autocast_dtype`` tell it,
and a backward in one thread leaves another thread's autocast on. Each scenario runs on ember
and on torch (the oracle) and the observations are compared."""
import threading

import pytest
import torch

import ember

TIMEOUT = 60  # seconds a thread waits for the other: a hang's bound, not a measure (events end the waits)


@pytest.fixture(scope="module", autouse=True)
def _loaded():
    """The ops' first bfloat16/float16 uses, in this thread, before the threads start: the first
    one loads ml_dtypes (0.7 s of CPU, 9 s of wall time at a load of 11; this is the suite's first
    file), which one thread did while the other waited for it."""
    for lib in (ember, torch):
        for dtype in (lib.bfloat16, lib.float16):
            with lib.autocast("cpu", dtype=dtype):
                _mm_dtype(lib), _loss_dtype(lib)


def _run(*targets):
    """Run each target in its own thread; re-raise the first failure; bounded joins."""
    errors = []

    def guard(fn):
        def body():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 (reported by the caller)
                errors.append(e)
        return body
    threads = [threading.Thread(target=guard(fn), daemon=True) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


def _mm_dtype(lib):
    a = lib.ones(2, 2)
    return str((a @ a).dtype).split(".")[-1]


def _loss_dtype(lib):
    a = lib.ones(3, dtype=lib.bfloat16)
    return str(lib.nn.functional.mse_loss(a, a).dtype).split(".")[-1]


def _other_thread_plain(lib):
    """B computes outside autocast while A sits inside autocast(cpu, bfloat16)."""
    seen, inside, done = {}, threading.Event(), threading.Event()

    def a():
        with lib.autocast("cpu", dtype=lib.bfloat16):
            inside.set()
            assert done.wait(TIMEOUT)
            seen["a"] = _mm_dtype(lib), _loss_dtype(lib), lib.is_autocast_enabled("cpu")
        seen["a after"] = _mm_dtype(lib)

    def b():
        assert inside.wait(TIMEOUT)
        try:
            seen["b"] = (_mm_dtype(lib), _loss_dtype(lib), lib.is_autocast_enabled("cpu"),
                         str(lib.get_autocast_dtype("cpu")).split(".")[-1])
            with lib.autocast("cpu", dtype=lib.float16):
                seen["b f16"] = _mm_dtype(lib), str(lib.get_autocast_dtype("cpu")).split(".")[-1]
                with lib.autocast("cpu", enabled=False):
                    seen["b nested off"] = _mm_dtype(lib), lib.is_autocast_enabled("cpu")
                seen["b back on"] = _mm_dtype(lib)
            seen["b out"] = _mm_dtype(lib), lib.is_autocast_enabled("cpu")
        finally:
            done.set()
    _run(a, b)
    return seen


def _backward_elsewhere(lib):
    """B runs a backward (held inside it by a gradient hook) while A computes under autocast."""
    seen, inside, in_backward, resume = {}, threading.Event(), threading.Event(), threading.Event()

    def a():
        with lib.autocast("cpu", dtype=lib.bfloat16):
            inside.set()
            assert in_backward.wait(TIMEOUT)
            seen["a during b's backward"] = _mm_dtype(lib)
            resume.set()
            w = lib.ones(2, 2, requires_grad=True)
            (w @ w).float().sum().backward()  # A's own backward
            seen["a after own backward"] = _mm_dtype(lib), str(w.grad.dtype).split(".")[-1]

    def b():
        assert inside.wait(TIMEOUT)
        w = lib.ones(2, 2, requires_grad=True)
        y = w * 2

        def hold(g):
            seen["b in backward"] = _mm_dtype(lib)
            in_backward.set()
            assert resume.wait(TIMEOUT)
            return g
        y.register_hook(hold)
        try:
            (y @ y).sum().backward()
        finally:
            in_backward.set()
        seen["b grad"] = str(w.grad.dtype).split(".")[-1]
        seen["b after"] = _mm_dtype(lib)
    _run(a, b)
    return seen


@pytest.mark.parametrize("scenario", [_other_thread_plain, _backward_elsewhere])
def test_autocast_state_is_per_thread(scenario):
    got, want = scenario(ember), scenario(torch)
    assert got == want
    assert len(want) >= 4


def test_new_thread_starts_with_autocast_off():
    seen = {}

    def probe(lib):
        seen[lib.__name__] = lib.is_autocast_enabled("cpu"), _mm_dtype(lib)
    for lib in (ember, torch):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            _run(lambda: probe(lib))
            assert _mm_dtype(lib) == "bfloat16"
    assert seen["ember"] == seen["torch"] == (False, "float32")
