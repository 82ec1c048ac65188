"""A plausible wrong answer for every exercise (the body of its region): the grader must fail
that exercise and no other. Adding an exercise means adding its wrong answer here."""
WRONG = {
    "07/batch-sampler": """indices = list(self.sampler)
for start in range(0, len(indices), self.batch_size):
    yield indices[start:start + self.batch_size]""",  # ignores drop_last
    "11/char-encode": """return [self._char_to_id.get(c, 0) for c in text]""",  # no error, no <unk>
    "11/char-decode": """return "".join(self._id_to_token[self._check_id(i)] for i in ids)""",  # keeps specials
    "14/matmul-flops": """if len(b) < 2:
    return None
return "aten.mm", prod(out_shape) * a[-1]""",  # multiply-adds, not FLOPs; no bmm
    "14/linear-flops": """return "aten.mm", 2 * prod(out_shape) * x[-1]""",  # addmm named mm
    "15/minmax-qparams": """lo, hi = self.min_val, self.max_val
scale = np.maximum((hi - lo) / np.float32(self.quant_max - self.quant_min), self.eps)
zero_point = np.clip(self.quant_min - np.rint(lo / scale), self.quant_min, self.quant_max).astype(np.int64)
return (from_numpy(np.atleast_1d(scale).astype(np.float32)),
        from_numpy(np.atleast_1d(zero_point).astype(np.int64)))""",  # range not widened to 0; symmetric ignored
    "17/kv-append": """start, end = self._reserve(k.shape[2])
self.storage[:, 0, :, start:end].copy_(k)
self.storage[:, 1, :, start:end].copy_(k)
return self.storage[:, 0, :, :end], self.storage[:, 1, :, :end]""",  # keys stored as values
    "19/measurement-stats": """times = np.sort(np.asarray(self.times, dtype=np.float64))
p25, median, p75 = times[len(times) // 4], times[len(times) // 2], times[3 * len(times) // 4]
stats = self.__dict__["_cached"] = (tuple(times), float(median), float(times.mean()),
                                     float(p25), float(p75))""",  # no interpolation
}
WRONG.update({
    "08/training-step": """optimizer.zero_grad()
loss = loss_fn(model(inputs), targets)
loss.backward()
optimizer.step()
total += loss.item()
count += 1""",  # a mean over batches, not samples (the short last batch weighs too much)
    "08/class-accuracy": """return (model(inputs).argmax(dim=0)[:len(targets)] == targets).float().mean().item()""",
    "13/mlp-forward": """return self.dropout(self.gelu(self.proj(self.fc(x))))""",  # GELU after the projection
    "13/block-forward": """x = self.attn(self.ln_1(x), cache)
return x + self.mlp(self.ln_2(x))""",  # first residual connection missing
    "16/zero-top-k": """mask = default_mask.clone()
if k:
    mask.view(-1)[topk(scores.view(-1), k=k, largest=not largest).indices] = 0
return mask""",  # prunes the largest entries
})
