"""Bad input to the sequence-model parts raises PyTorch's exception class, naming the sizes.

Each row builds the same bad call for a library (torch or ember); the call must raise the
row's exception class under torch 2.13 and under ember, and ember's message must contain the
row's fragments (the offending sizes, dtypes or ids).
"""
import warnings

import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402


def mha(lib, *inputs, module=(12, 3), **kwargs):
    return lib.nn.MultiheadAttention(*module)(*inputs, **kwargs)


def x(lib, *shape, dtype=None):
    return lib.ones(*shape, dtype=dtype or lib.float32)


def sdpa(lib, q, k, v, **kwargs):
    return lib.nn.functional.scaled_dot_product_attention(x(lib, *q), x(lib, *k), x(lib, *v), **kwargs)


def layer(lib, d_model=12):
    return lib.nn.TransformerEncoderLayer(d_model, 3, dim_feedforward=16)


Q = (4, 2, 12)  # (L, N, E) for multi-head attention with embed_dim 12, 3 heads
S = (2, 3, 4, 8)  # (N, H, L, E) for SDPA

CASES = {
    # multi-head attention: sizes, masks of the wrong shape or dtype
    "mha-heads-do-not-divide": (AssertionError, lambda lib: lib.nn.MultiheadAttention(10, 3),
                                ["embed_dim must be divisible by num_heads", "10", "3"]),
    "mha-zero-heads": (ValueError, lambda lib: lib.nn.MultiheadAttention(12, 0), ["num_heads=0"]),
    "mha-embed-dim": (AssertionError, lambda lib: mha(lib, x(lib, 4, 2, 10), x(lib, 4, 2, 10), x(lib, 4, 2, 10)),
                      ["12", "10"]),
    "mha-kdim": (AssertionError, lambda lib: mha(lib, x(lib, *Q), x(lib, 4, 2, 6), x(lib, 4, 2, 6),
                                                 module=(12, 3, 0.0, True, False, False, 5, 6)),
                 ["key weights", "(12, 6)", "[12, 5]"]),
    "mha-key-value-length": (AssertionError, lambda lib: mha(lib, x(lib, *Q), x(lib, 5, 2, 12), x(lib, 6, 2, 12)),
                             ["[5, 2, 12]", "[6, 2, 12]"]),
    "mha-key-batch": (RuntimeError, lambda lib: mha(lib, x(lib, *Q), x(lib, 5, 3, 12), x(lib, 5, 3, 12)),
                      ["batch size 3", "query batch size 2"]),
    "mha-4d-query": (AssertionError, lambda lib: mha(lib, x(lib, 1, *Q), x(lib, 1, *Q), x(lib, 1, *Q)),
                     ["4-D query"]),
    "mha-2d-key-for-3d-query": (AssertionError, lambda lib: mha(lib, x(lib, *Q), x(lib, 4, 12), x(lib, 4, 12)),
                                ["2-D and 2-D"]),
    "mha-attn-mask-2d-shape": (RuntimeError, lambda lib: mha(lib, x(lib, *Q), x(lib, *Q), x(lib, *Q),
                                                             attn_mask=x(lib, 3, 4, dtype=lib.bool)),
                               ["[3, 4]", "(4, 4)"]),
    "mha-attn-mask-3d-shape": (RuntimeError, lambda lib: mha(lib, x(lib, *Q), x(lib, *Q), x(lib, *Q),
                                                             attn_mask=x(lib, 5, 4, 4, dtype=lib.bool)),
                               ["[5, 4, 4]", "(6, 4, 4)"]),
    "mha-attn-mask-4d": (AssertionError, lambda lib: mha(lib, x(lib, *Q), x(lib, *Q), x(lib, *Q),
                                                         attn_mask=x(lib, 1, 6, 4, 4, dtype=lib.bool)),
                         ["4-D"]),
    "mha-attn-mask-int": (AssertionError, lambda lib: mha(lib, x(lib, *Q), x(lib, *Q), x(lib, *Q),
                                                          attn_mask=x(lib, 4, 4, dtype=lib.int64)),
                          ["attn_mask", "int64"]),
    "mha-padding-mask-length": (AssertionError, lambda lib: mha(lib, x(lib, *Q), x(lib, *Q), x(lib, *Q),
                                                                key_padding_mask=x(lib, 2, 5, dtype=lib.bool)),
                                ["shape[1] to be 4", "got 5"]),
    "mha-padding-mask-batch": (AssertionError, lambda lib: mha(lib, x(lib, *Q), x(lib, *Q), x(lib, *Q),
                                                               key_padding_mask=x(lib, 3, 4, dtype=lib.bool)),
                               ["shape[0] to be 2", "got 3"]),
    "mha-padding-mask-int": (AssertionError, lambda lib: mha(lib, x(lib, *Q), x(lib, *Q), x(lib, *Q),
                                                             key_padding_mask=x(lib, 2, 4, dtype=lib.int64)),
                             ["key_padding_mask", "int64"]),
    "mha-unbatched-padding-mask-2d": (AssertionError, lambda lib: mha(lib, x(lib, 4, 12), x(lib, 4, 12), x(lib, 4, 12),
                                                                      key_padding_mask=x(lib, 2, 4, dtype=lib.bool)),
                                      ["2-D"]),
    # scaled_dot_product_attention
    "sdpa-mask-shape": (RuntimeError, lambda lib: sdpa(lib, S, S, S, attn_mask=x(lib, 3, 3, dtype=lib.bool)),
                        ["(4)", "(3)", "dimension 3"]),
    "sdpa-mask-int": (RuntimeError, lambda lib: sdpa(lib, S, S, S, attn_mask=x(lib, 4, 4, dtype=lib.int64)),
                      ["attn_mask.dtype: long int", "query.dtype: float"]),
    "sdpa-mask-float64": (RuntimeError, lambda lib: sdpa(lib, S, S, S, attn_mask=x(lib, 4, 4, dtype=lib.float64)),
                          ["attn_mask.dtype: double"]),
    # torch's math path (3-D inputs) raises; its 4-D CPU kernel applies both instead
    "sdpa-mask-and-causal": (RuntimeError, lambda lib: sdpa(lib, (3, 4, 8), (3, 4, 8), (3, 4, 8),
                                                            attn_mask=x(lib, 4, 4, dtype=lib.bool), is_causal=True),
                             ["attn_mask", "is_causal"]),
    "sdpa-head-dim": (RuntimeError, lambda lib: sdpa(lib, S, (2, 3, 4, 7), (2, 3, 4, 7)), ["8", "7"]),
    "sdpa-batch": (RuntimeError, lambda lib: sdpa(lib, S, (3, 3, 4, 8), (3, 3, 4, 8)), ["(2)", "(3)"]),
    "sdpa-heads": (RuntimeError, lambda lib: sdpa(lib, (2, 4, 4, 8), S, S), ["(4)", "(3)"]),
    "sdpa-gqa-heads": (RuntimeError, lambda lib: sdpa(lib, (2, 4, 4, 8), S, S, enable_gqa=True), ["heads"]),
    "sdpa-dtypes": (RuntimeError, lambda lib: lib.nn.functional.scaled_dot_product_attention(
        x(lib, *S), x(lib, *S, dtype=lib.float64), x(lib, *S)), ["key.dtype: double"]),
    "sdpa-1d": (RuntimeError, lambda lib: sdpa(lib, (8,), (8,), (8,)), ["query.dim: 1"]),
    "sdpa-int-inputs": (RuntimeError, lambda lib: lib.nn.functional.scaled_dot_product_attention(
        *(x(lib, 2, 4, 8, dtype=lib.int64),) * 3), ["Long"]),
    # embeddings: ids out of range, negative, of the wrong dtype
    "embedding-id-too-large": (IndexError, lambda lib: lib.nn.Embedding(10, 3)(lib.tensor([[1, 2], [10, 3]])),
                               ["index out of range in self", "id 10", "(1, 0)", "num_embeddings=10"]),
    "embedding-negative-id": (IndexError, lambda lib: lib.nn.Embedding(10, 3)(lib.tensor([1, -1])),
                              ["id -1", "num_embeddings=10"]),
    "embedding-int32-id": (IndexError, lambda lib: lib.nn.Embedding(10, 3)(lib.tensor([3, 100], dtype=lib.int32)),
                           ["id 100"]),
    "functional-embedding-id": (IndexError, lambda lib: lib.nn.functional.embedding(lib.tensor([12]), x(lib, 10, 3)),
                                ["id 12", "num_embeddings=10"]),
    "embedding-float-ids": (RuntimeError, lambda lib: lib.nn.Embedding(10, 3)(lib.tensor([1.0, 2.0])),
                            ["Long, Int", "FloatTensor"]),
    "embedding-1d-weight": (RuntimeError, lambda lib: lib.nn.functional.embedding(lib.tensor([1]), x(lib, 10)),
                            ["'weight' must be 2-D"]),
    "embedding-padding-idx": (AssertionError, lambda lib: lib.nn.Embedding(10, 3, padding_idx=10),
                              ["Padding_idx must be within num_embeddings"]),
    "embedding-bag-id": (RuntimeError, lambda lib: lib.nn.EmbeddingBag(10, 3)(lib.tensor([[1, 11]])),
                         ["value 11", "[0, 10)"]),
    # recurrent layers: feature size, hidden state shapes, dtypes, ranks
    "lstm-input-size": (RuntimeError, lambda lib: lib.nn.LSTM(10, 16)(x(lib, 5, 3, 7)),
                        ["input.size(-1) must be equal to input_size. Expected 10, got 7"]),
    "lstm-batch-first-input-size": (RuntimeError, lambda lib: lib.nn.LSTM(10, 16, batch_first=True)(x(lib, 3, 5, 7)),
                                    ["Expected 10, got 7"]),
    "gru-input-size": (RuntimeError, lambda lib: lib.nn.GRU(10, 16)(x(lib, 5, 3, 7)), ["Expected 10, got 7"]),
    "rnn-unbatched-input-size": (RuntimeError, lambda lib: lib.nn.RNN(10, 16)(x(lib, 5, 7)), ["Expected 10, got 7"]),
    "lstm-h0-shape": (RuntimeError, lambda lib: lib.nn.LSTM(10, 16)(x(lib, 5, 3, 10), (x(lib, 1, 2, 16), x(lib, 1, 3, 16))),
                      ["(1, 3, 16)", "[1, 2, 16]"]),
    "lstm-c0-shape": (RuntimeError, lambda lib: lib.nn.LSTM(10, 16)(x(lib, 5, 3, 10), (x(lib, 1, 3, 16), x(lib, 1, 3, 15))),
                      ["(1, 3, 16)", "[1, 3, 15]"]),
    "gru-h0-layers": (RuntimeError, lambda lib: lib.nn.GRU(10, 16)(x(lib, 5, 3, 10), x(lib, 2, 3, 16)),
                      ["(1, 3, 16)", "[2, 3, 16]"]),
    "lstm-unbatched-3d-state": (RuntimeError, lambda lib: lib.nn.LSTM(10, 16)(x(lib, 5, 10), (x(lib, 1, 3, 16),) * 2),
                                ["3-D"]),
    "lstm-4d-input": (ValueError, lambda lib: lib.nn.LSTM(10, 16)(x(lib, 5, 3, 10, 1)), ["got 4D"]),
    "lstm-input-dtype": (ValueError, lambda lib: lib.nn.LSTM(10, 16)(x(lib, 5, 3, 10, dtype=lib.float64)),
                         ["float64", "float32"]),
    "lstm-cell-input-size": (RuntimeError, lambda lib: lib.nn.LSTMCell(10, 16)(x(lib, 3, 7)), ["got 7 expected 10"]),
    "gru-cell-hidden-size": (RuntimeError, lambda lib: lib.nn.GRUCell(10, 16)(x(lib, 3, 10), x(lib, 3, 15)),
                             ["got 15, expected 16"]),
    "lstm-proj-size": (ValueError, lambda lib: lib.nn.LSTM(10, 16, proj_size=16), ["proj_size"]),
    "gru-proj-size": (ValueError, lambda lib: lib.nn.GRU(10, 16, proj_size=4), ["only supported for LSTM"]),
    "rnn-nonlinearity": (ValueError, lambda lib: lib.nn.RNN(10, 16, nonlinearity="gelu"), ["'gelu'"]),
    "rnn-dropout": (ValueError, lambda lib: lib.nn.LSTM(10, 16, dropout=1.5), ["[0, 1]"]),
    # transformer layers: feature size, masks
    "encoder-layer-feature-size": (AssertionError, lambda lib: layer(lib)(x(lib, 4, 2, 10)), ["12", "10"]),
    "encoder-layer-heads": (AssertionError, lambda lib: layer(lib, d_model=10), ["10", "3"]),
    "encoder-layer-mask-shape": (RuntimeError, lambda lib: layer(lib)(x(lib, 4, 2, 12), src_mask=x(lib, 3, 3)),
                                 ["[3, 3]", "(4, 4)"]),
    "encoder-layer-padding-shape": (AssertionError, lambda lib: layer(lib)(
        x(lib, 4, 2, 12), src_key_padding_mask=x(lib, 2, 3, dtype=lib.bool)), ["to be 4", "got 3"]),
    "encoder-layer-mask-int": (AssertionError, lambda lib: layer(lib)(x(lib, 4, 2, 12), src_mask=x(lib, 4, 4, dtype=lib.int64)),
                               ["src_mask", "int64"]),
    "decoder-layer-memory-size": (RuntimeError, lambda lib: lib.nn.TransformerDecoderLayer(12, 3, 16)(
        x(lib, 4, 2, 12), x(lib, 4, 2, 10)), ["10"]),
    "transformer-batch": (RuntimeError, lambda lib: lib.nn.Transformer(12, 3, 1, 1, 16)(x(lib, 4, 2, 12), x(lib, 4, 3, 12)),
                          ["batch number of src and tgt"]),
    "transformer-feature-size": (RuntimeError, lambda lib: lib.nn.Transformer(12, 3, 1, 1, 16)(
        x(lib, 4, 2, 10), x(lib, 4, 2, 12)), ["d_model"]),
    "transformer-tgt-mask-shape": (RuntimeError, lambda lib: lib.nn.Transformer(12, 3, 1, 1, 16)(
        x(lib, 4, 2, 12), x(lib, 5, 2, 12), tgt_mask=x(lib, 4, 4)), ["[4, 4]", "(5, 5)"]),
    "layer-norm-shape": (RuntimeError, lambda lib: lib.nn.LayerNorm(8)(x(lib, 2, 7)), ["[8]", "[2, 7]"]),
    "rms-norm-shape": (RuntimeError, lambda lib: lib.nn.RMSNorm(8)(x(lib, 2, 7)), ["[8]", "[2, 7]"]),
}


def raised(lib, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation/nested-tensor notes are not the point here
        try:
            call(lib)
        except Exception as error:  # noqa: BLE001 -- the class is what is compared
            return error
    return None


@pytest.mark.parametrize("name", list(CASES))
def test_same_exception_as_torch(name):
    kind, call, fragments = CASES[name]
    torch_error, ember_error = raised(torch, call), raised(ember, call)
    assert type(torch_error) is kind, f"torch raised {torch_error!r}, the table says {kind.__name__}"
    assert type(ember_error) is kind, f"ember raised {ember_error!r}, torch {torch_error!r}"
    for fragment in fragments:
        assert fragment in str(ember_error), (fragment, str(ember_error))


def test_sdpa_value_length_is_checked():
    """torch 2.13's CPU kernel does not check that values and keys are equally many (it
    returns numbers); ember refuses, naming both shapes."""
    with pytest.raises(RuntimeError, match=r"key \[2, 3, 5, 8\], value \[2, 3, 6, 8\]"):
        sdpa(ember, S, (2, 3, 5, 8), (2, 3, 6, 8))


def test_embedding_error_leaves_valid_ids_working():
    table = ember.nn.Embedding(10, 3)
    with pytest.raises(IndexError, match="id 10 at position"):
        table(ember.tensor([0, 9, 10]))
    assert tuple(table(ember.tensor([0, 9])).shape) == (2, 3)
