"""Real public PyTorch programs, condensed (own code; the sources named per model), written for
``lib`` (``torch`` or ``ember``): the models and training steps ``test_real_programs_29.py``
compiles. Narrowed widths so that a step takes milliseconds."""
import math


def vit(lib, image=16, patch=4, dim=32, depth=2, heads=4, mlp=64, classes=10, dropout=0.1):
    """lucidrains/vit-pytorch ``vit_pytorch/vit.py``'s ViT (a strided conv for its einops patch
    embedding): class token, position table, pre-norm attention from one qkv projection, GELU MLP."""
    nn = lib.nn

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, mlp), nn.GELU(), nn.Dropout(dropout),
                                     nn.Linear(mlp, dim), nn.Dropout(dropout))

        def forward(self, x):
            return self.net(x)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads, self.scale = heads, (dim // heads) ** -0.5
            self.norm = nn.LayerNorm(dim)
            self.attend = nn.Softmax(dim=-1)
            self.dropout = nn.Dropout(dropout)
            self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
            self.to_out = nn.Sequential(nn.Linear(dim, dim), nn.Dropout(dropout))

        def forward(self, x):
            b, n, _ = x.shape
            x = self.norm(x)
            q, k, v = (t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in self.to_qkv(x).chunk(3, dim=-1))
            attn = self.dropout(self.attend(lib.matmul(q, k.transpose(-1, -2)) * self.scale))
            out = lib.matmul(attn, v).transpose(1, 2).reshape(b, n, -1)
            return self.to_out(out)

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.to_patch_embedding = nn.Conv2d(3, dim, patch, patch)
            n = (image // patch) ** 2
            self.pos_embedding = nn.Parameter(lib.randn(1, n + 1, dim))
            self.cls_token = nn.Parameter(lib.randn(1, 1, dim))
            self.dropout = nn.Dropout(dropout)
            self.layers = nn.ModuleList([nn.ModuleList([Attention(), FeedForward()]) for _ in range(depth)])
            self.norm = nn.LayerNorm(dim)
            self.mlp_head = nn.Linear(dim, classes)

        def forward(self, img):
            x = self.to_patch_embedding(img).flatten(2).transpose(1, 2)
            b, n, _ = x.shape
            x = lib.cat((self.cls_token.expand(b, -1, -1), x), dim=1)
            x = self.dropout(x + self.pos_embedding[:, :(n + 1)])
            for attn, ff in self.layers:
                x = attn(x) + x
                x = ff(x) + x
            return self.mlp_head(self.norm(x)[:, 0])
    return ViT()


def mingpt(lib, vocab=16, block=8, n_embd=32, n_head=4, n_layer=2, pdrop=0.1):
    """karpathy/minGPT ``mingpt/model.py``'s GPT: NewGELU, a causal mask buffer cut to ``[:T, :T]``,
    the scaled residual init, cross entropy with ``ignore_index=-1``; returns ``(logits, loss)``."""
    nn, F = lib.nn, lib.nn.functional

    class NewGELU(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1.0 + lib.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * lib.pow(x, 3.0))))

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.attn_dropout, self.resid_dropout = nn.Dropout(pdrop), nn.Dropout(pdrop)
            self.register_buffer("bias", lib.tril(lib.ones(block, block)).view(1, 1, block, block))
            self.n_head, self.n_embd = n_head, n_embd

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(n_embd), CausalSelfAttention(), nn.LayerNorm(n_embd)
            self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), c_proj=nn.Linear(4 * n_embd, n_embd),
                                          act=NewGELU(), dropout=nn.Dropout(pdrop)))
            m = self.mlp
            self.mlpf = lambda x: m.dropout(m.c_proj(m.act(m.c_fc(x))))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlpf(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.block_size = block
            self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(vocab, n_embd), wpe=nn.Embedding(block, n_embd),
                                                  drop=nn.Dropout(pdrop), h=nn.ModuleList([Block() for _ in range(n_layer)]),
                                                  ln_f=nn.LayerNorm(n_embd)))
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith("c_proj.weight"):
                    lib.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                lib.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    lib.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                lib.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            elif isinstance(module, nn.LayerNorm):
                lib.nn.init.zeros_(module.bias)
                lib.nn.init.ones_(module.weight)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = lib.arange(0, t, dtype=lib.long, device=idx.device).unsqueeze(0)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for blk in self.transformer.h:
                x = blk(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            return logits, loss
    return GPT()


def dcgan(lib, nz=8, ngf=8, ndf=8):
    """pytorch/examples ``dcgan/main.py``'s Generator and Discriminator (3 layers each for 16x16
    images), its ``weights_init``, BCELoss and Adam(betas=(0.5, 0.999)); returns ``(step,
    nz)``: the loop body as a function of a batch of images and noise, returning ``(errD, errG,
    D_x)`` (D_x taken after ``errD_real.backward()``, as the program does)."""
    nn = lib.nn
    netG = nn.Sequential(nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
                         nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
                         nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh())
    netD = nn.Sequential(nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2),
                         nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight, 1.0, 0.02)
            nn.init.zeros_(m.bias)
    netG.apply(weights_init)
    netD.apply(weights_init)
    criterion = nn.BCELoss()
    optimizerD = lib.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = lib.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def step(real, noise):
        netD.zero_grad()
        label = lib.full((real.size(0),), 1.0, dtype=real.dtype)
        output = netD(real).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean()
        fake = netG(noise)
        label.fill_(0.0)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()
        netG.zero_grad()
        label.fill_(1.0)
        errG = criterion(netD(fake).view(-1), label)
        errG.backward()
        optimizerG.step()
        return errD, errG, D_x
    return step, nz
