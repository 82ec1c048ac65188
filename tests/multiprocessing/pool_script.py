"""Run by test_multiprocessing.py under ember or torch (the library's name is argv[1]): tensors
the sender drops right after sending them (a Pool's arguments, a worker's results) still arrive.
Prints one JSON list of what came back."""
import importlib
import json
import sys


def square(t):
    return t * t


if __name__ == "__main__":
    torch = importlib.import_module(sys.argv[1])
    with torch.multiprocessing.get_context("spawn").Pool(2) as pool:
        squares = pool.map_async(square, [torch.arange(3.), torch.ones(2)]).get(timeout=60)
        one = pool.apply_async(square, (torch.arange(4.),)).get(timeout=60)
    print(json.dumps([t.tolist() for t in (*squares, one)]))
