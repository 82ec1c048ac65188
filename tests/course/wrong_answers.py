"""A plausible wrong answer for every exercise (the body of its region, or a list with one body
per part, None keeping the reference's): the grader must fail that exercise and no other.
Adding an exercise means adding its wrong answer here."""
WRONG = {
    "07/batch-sampler": """indices = list(self.sampler)
for start in range(0, len(indices), self.batch_size):
    yield indices[start:start + self.batch_size]""",  # ignores drop_last
    "11/char-encode": """return [self._char_to_id.get(c, 0) for c in text]""",  # no error, no <unk>
    "11/char-decode": """return "".join(self._id_to_token[self._check_id(i)] for i in ids)""",  # keeps specials
    "14/matmul-flops": """if len(b) < 2:
    return None
return "aten.mm", prod(out_shape) * a[-1]""",  # multiply-adds, not FLOPs; no bmm
    "14/linear-flops": """return "aten.mm", 2 * prod(out_shape) * mat1[-1]""",  # addmm named mm
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
WRONG.update({
    "01/infer-shape": """shape = list(shape)
if -1 in shape:
    shape[shape.index(-1)] = numel // max(product([s for s in shape if s != -1]), 1)
return tuple(shape)""",  # no checks: a bad shape is accepted
    "01/strides": """strides = tuple(s // self._data.itemsize for s in self._data.strides)
return strides if dim is None else strides[dim]""",  # empty tensors, and negative dims unwrapped
    "02/mul-backward": """need_a, need_b = ctx.needs_input_grad
return (g * ctx.input(0) if need_a else None,
        g * ctx.input(1) if need_b else None)""",  # each input's own value
    "02/div-backward": """need_a, need_b = ctx.needs_input_grad
b = ctx.input(1)
return (g / b if need_a else None,
        g * ctx.input(0) / (b * b) if need_b else None)""",  # sign of the divisor's gradient
    "03/count-dependencies": """deps = {}
stack = list(dict.fromkeys(node for node, _ in roots))
seen = set(stack)
while stack:
    node = stack.pop()
    for nxt, _ in node.next_functions:
        if nxt is None or nxt in seen:
            continue
        deps[nxt] = 1
        seen.add(nxt)
        stack.append(nxt)""",  # one per node, not per edge: runs a node before all its gradients arrive
    "03/add-gradient": """node, nr = edge
slots = buffers.get(node)
if slots is None:
    slots = buffers[node] = [None] * node.num_outputs
slots[nr] = g""",  # overwrites instead of adding
    "04/named-modules": """yield prefix, self
for name, module in self._modules.items():
    if module is None:
        continue
    yield from module.named_modules(memo, prefix + "." + name if prefix else name, remove_duplicate)""",  # repeats shared modules
    "04/named-members": """modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
           if recurse else [(prefix, self)])
for module_prefix, module in modules:
    for k, v in get_members(module):
        if v is None:
            continue
        yield (module_prefix + "." + k if module_prefix else k), v""",  # repeats shared parameters
    "05/softmax": ["""e = np.exp(x)
e /= np.sum(e, axis=dim, keepdims=True)
return e""", None],  # forward without the max subtracted: overflows
    "05/log-softmax": [None, """out = ctx.output
d = ctx.attrs["dim"]
return (g - out * g.sum(d, keepdim=True),)"""],  # backward: log-probabilities where probabilities belong
    "09/im2col": """(kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
padded = _samples_inner(x, padding)
span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
windows = _backend.sliding_windows(padded, span, axis=(1, 2))[:, ::sh, ::sw, :, ::dh, ::dw]
return windows.transpose(0, 5, 4, 1, 2, 3)""",  # kernel rows and columns swapped
    "10/moments": """count = max(math.prod([x.shape[a] for a in axes]), 1)
np.add.reduce(x, axis=axes, keepdims=True, out=mean)
mean /= count
var[...] = _dot_over(x - mean, x - mean, axes)
var /= max(count - 1, 1)""",  # unbiased variance; ignores centered
    "12/attention-weights": """scores = _backend.matmul(query, key.swapaxes(-1, -2)) * scale
if mask is not None:
    scores = np.where(mask, scores, -np.inf) if mask.dtype == np.bool_ else scores + mask
if is_causal:
    scores = np.where(np.tri(scores.shape[-2], scores.shape[-1], dtype=bool), scores, -np.inf)
e = np.exp(scores - scores.max(axis=-1, keepdims=True))
return e / e.sum(axis=-1, keepdims=True)""",  # fully masked rows give nan, not zeros
    "20/memory-footprint": """params = list(model.parameters())
return MemoryFootprint(
    parameters=_memory.storage_bytes(params), buffers=0,
    gradients=_memory.storage_bytes(p.grad for p in params),
    optimizer_state=0, optimizer_state_by_name={}, activations=activations, peak=peak)""",  # buffers and state left out
})
WRONG.update({
    "06/sgd-update": """if weight_decay != 0:
    grad = grad + weight_decay * param
if momentum != 0:
    buf = np.array(grad, dtype=param.dtype) if buf is None else momentum * buf + grad
    grad = buf
param -= lr * grad
return (param,) if momentum == 0 else (param, buf)""",  # ignores maximize, dampening, nesterov; buf not in place
    "06/adam-update": """step += 1
m *= beta1
m += (1 - beta1) * grad
v *= beta2
v += (1 - beta2) * grad * grad
param -= lr * m / (np.sqrt(v) + eps)
return (param, m, v, step) if max_v is None else (param, m, v, step, max_v)""",  # no bias correction
})
WRONG.update({
    "18/reuse-buffers": """pass""",  # no reuse: every intermediate keeps its own buffer
})
WRONG.update({
    "21/distributed-sampler": """per_rank = len(indices) // self.num_replicas
return iter(indices[self.rank * per_rank:(self.rank + 1) * per_rank])""",  # contiguous blocks, no padding
})
