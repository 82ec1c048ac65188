"""ember vs torch, side by side in one process: the GPT of ``ember/models/gpt.py`` (one file,
run once on ember and once on torch with its imports pointed at torch, same weights).
Prints a table and one JSON line of ratios.

Cases:
  train_step     one AdamW step (forward, loss, backward, update) of GPT(vocab 96, block 64,
                 2 layers, 4 heads, n_embd 128) on a (16, 64) batch; ratio = ember/torch time
                 (target <= 1.5)
  generate       greedy generation of 256 tokens after a 16-token prompt with the KV cache,
                 batch 1, same sizes but block_size 272; ratio = ember/torch tokens per second
                 (target >= 0.8)
  cache_speedup  ember with the cache vs ember re-reading the whole context each step
                 (``use_cache=False``), same generation; ratio = cached/uncached tokens per
                 second (target >= 3)

Each time is the minimum over repeats, so that other load on the machine counts as little
as it can; the cases being compared take turns within each repeat. On a shared machine
wall-clock ratios mostly measure the neighbours; ``--cpu-time`` pins both libraries to one
thread and compares process CPU time instead, which other processes do not inflate.
Run: python benchmarks/bench_gpt.py [--repeat N] [--cpu-time]
Without torch installed it measures ember alone: the table and the JSON line's ``"ember"``
figures (cache_speedup included), no ember/torch ratios.
"""
import argparse
import json
import os
import time
import timeit

PROMPT, NEW_TOKENS = 16, 256
TIMER = [timeit.default_timer]


def gpt_modules():
    """``ember.models.gpt``, and the same file with its imports pointed at torch."""
    from ember.models import gpt
    return gpt, gpt.in_torch()


def twins(block_size, torch):
    """An ember GPT and a torch GPT with the ember model's weights (None if ``torch`` is)."""
    import ember
    sizes = dict(vocab_size=96, block_size=block_size, n_layer=2, n_head=4, n_embd=128)
    if torch is None:
        from ember.models import gpt
        ember.manual_seed(0)
        return gpt.GPT(gpt.GPTConfig(**sizes)), None
    gpt, torch_gpt = gpt_modules()
    ember.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(**sizes))
    twin = torch_gpt.GPT(torch_gpt.GPTConfig(**sizes))
    twin.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                          for k, v in model.state_dict().items()})
    return model, twin


def train_step(lib, model, idx, targets):
    """A closure running one AdamW step of ``model`` on the batch, after one warm-up step."""
    optimizer = lib.optim.AdamW(model.parameters(), lr=1e-3)
    idx, targets = lib.tensor(idx), lib.tensor(targets)

    def step():
        optimizer.zero_grad()
        _, loss = model(idx, targets)
        loss.backward()
        optimizer.step()
    step()  # warm up: AdamW's state, first-call costs
    return step


def best_times(steps, number, repeat, settle=True):
    """Seconds per call of each closure: the best of ``repeat`` rounds of ``number`` calls, the
    closures taking turns within each round so that all see the same load from elsewhere
    (``settle``: one untimed call first, as the first call after the other library's may
    wait for its threads to sleep)."""
    times = [float("inf")] * len(steps)
    for _ in range(repeat):
        for i, step in enumerate(steps):
            if settle:
                step()
            times[i] = min(times[i], timeit.timeit(step, number=number, timer=TIMER[0]) / number)
    return times


def generation(model, prompt, use_cache):
    """A closure generating NEW_TOKENS greedy tokens after ``prompt``, after one warm-up run."""
    model.eval()

    def generate():
        model.generate(prompt, NEW_TOKENS, top_k=1, use_cache=use_cache)
    generate()
    return generate


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cpu-time", action="store_true",
                        help="one thread each, timed by process CPU time")
    args = parser.parse_args()
    if args.cpu_time:
        # Before NumPy loads: ember sizes its BLAS thread pool from what it finds at import.
        os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    import numpy as np

    import ember
    try:
        import torch
    except ImportError:
        torch = None
    if args.cpu_time:
        if torch is not None:
            torch.set_num_threads(1)
        TIMER[0] = time.process_time
    rng = np.random.default_rng(0)
    idx, targets = rng.integers(0, 96, (2, 16, 64))
    prompt = rng.integers(0, 96, (1, PROMPT))

    model, twin = twins(64, torch)
    steps = [train_step(ember, model, idx, targets)]
    if torch is not None:
        steps.append(train_step(torch, twin, idx, targets))
    step = best_times(steps, 3, args.repeat)
    model, twin = twins(PROMPT + NEW_TOKENS, torch)
    if torch is not None:
        assert torch.equal(torch.from_numpy(model.generate(ember.tensor(prompt), 32, top_k=1).numpy()),
                           twin.generate(torch.tensor(prompt), 32, top_k=1)), "greedy tokens differ"
    runs = [generation(model, ember.tensor(prompt), True), generation(model, ember.tensor(prompt), False)]
    if torch is not None:
        runs.append(generation(twin, torch.tensor(prompt), True))
    cached, uncached, *torch_cached = (NEW_TOKENS / t for t in best_times(runs, 1, args.repeat, False))
    own = {"train_step": [float(f"{step[0]:.4g}"), "s"], "generate": [round(cached, 1), "tok/s"],
           "cache_speedup": [round(cached / uncached, 3), "x"]}
    line = {"benchmark": "gpt", "timer": "cpu" if args.cpu_time else "wall",
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "ember": own}
    if torch is None:
        print(f"{'case':<15}{'ember':>14}  (torch not installed)")
        print(f"{'train_step':<15}{step[0] * 1e3:>12.2f}ms")
        print(f"{'generate':<15}{cached:>10.0f}tok/s")
        print(f"{'cache_speedup':<15}{cached / uncached:>14.2f}  >= 3 (cached/uncached tokens/s; "
              f"uncached: {uncached:.0f}tok/s)")
        print(json.dumps(line))
        return
    torch_cached = torch_cached[0]

    ratios = {"train_step": round(step[0] / step[1], 3),
              "generate": round(cached / torch_cached, 3),
              "cache_speedup": round(cached / uncached, 3)}
    print(f"{'case':<15}{'ember':>14}{'torch':>14}{'ratio':>8}  target")
    print(f"{'train_step':<15}{step[0] * 1e3:>12.2f}ms{step[1] * 1e3:>12.2f}ms"
          f"{ratios['train_step']:>8.2f}  <= 1.5 (ember/torch time)")
    print(f"{'generate':<15}{cached:>10.0f}tok/s{torch_cached:>10.0f}tok/s"
          f"{ratios['generate']:>8.2f}  >= 0.8 (ember/torch tokens/s)")
    print(f"{'cache_speedup':<15}{cached:>10.0f}tok/s{uncached:>10.0f}tok/s"
          f"{ratios['cache_speedup']:>8.2f}  >= 3 (ember cached/uncached; torch column: uncached)")
    line["ratios"] = ratios
    print(json.dumps(line))


if __name__ == "__main__":
    main()
