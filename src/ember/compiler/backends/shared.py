"""Kernels that differ only in the slots they read and write compile once.

A transformer's layers repeat: the tiny GPT step's 82 kernels are 57 distinct ones once each
kernel's slot numbers (``p[54]``) are set aside (its five layer norms, five norm statistics,
its per-layer GEMMs and attention products), a quarter of its C. Each kernel's code is
generated with its slots as constants of the pointer table ``p``; here, after generation, two
kernels whose code is the same text up to those numbers and to their own names (``k41``,
``k41_tile``, ``k41_bp``) share one copy: its slots renumbered ``p[0]``, ``p[1]``, ... in order
of first use and its functions named ``kd<g>_...``; each member keeps its own entry point
(``kernel_<i>``, for the regions and the profiler) and a function ``k<i>`` of its old
signature (a GEMM's or convolution's is looked up by name and timed by autotuning) that
gathers its slots into a small table and calls the shared one. Twins share where their entry
points pass the same arguments but for a loop's row range: loops alike but for their lengths
(an optimizer's updates, one loop each, of parameters of several sizes) share one copy that
takes its trip count at run time, marked ``noclone`` (GCC's constant propagation otherwise
compiled a copy per length again); of one length, the sizes stay constants of the shared code.

A convolution's ``k<i>(p, choice)`` starts its work on its opening line (``{ (void)choice;
em_bad_where = 0;``): it shares too, its variants and their scratch buffers with it (a CIFAR
ResNet-18 train step's C 561 kB to 284 kB, its cold compile 73 s of CPU to 27, load 7).

On the tiny GPT train step gcc's CPU fell by a quarter (3.7-3.8 s to 2.75-2.8, AMD EPYC, gcc 12,
load 9-10) with the step's time unchanged (docs/compile.md). A kernel whose text uses ``p``
in any other way (a computed index, passed to a function not its own) is left as generated, as
is every kernel without a twin. ``share(texts)`` takes and returns C text only (no errors
raised: what it cannot read it leaves alone).
"""
import functools
import re

__all__ = ["share"]

_ENTRY = re.compile(r"^int kernel_(\d+)\(", re.M)
# (each pattern starts with a literal and looks behind for the word boundary: \b first made
# Python's re try every position, 25 ms a pattern on the GPT step's 140 kB)
_SLOT = re.compile(r"p(?<!\wp)\[(\d+(?:@\w+\+\d+)?)\]")
# a pointer at a constant offset into a slot's buffer, ``((float*)p[11]) + 256;``: a slot of its
# own (``p[11@float+256]`` while read here), so twins alike but for that offset share
_SLOT_AT = re.compile(r"\(\((\w+)\*\)p(?<!\wp)\[(\d+)\]\) \+ (\d+);")
_USE = re.compile(r"p(?<!\wp)\b")
_PARAM = re.compile(r"void\*\* restrict p\b")
_NAME = re.compile(r"k(?<!\wk)(\d+)(?!\d)")  # a kernel's names: k<i>, k<i>_tile, k<i>e; filtered by <i>
_OWN_CALL = re.compile(r"k(?<!\wk)(\d+)\w*\(p\b")
_TOP = re.compile(r"(void|int) k(\d+)\((void\*\* restrict p\b[^)]*)\) \{", re.M)
_COMMENT = re.compile(r"/\*(?! cflags:).*?\*/", re.S)  # a unit's cflags lines are code
_ROWS = re.compile(r"\(p, \d+, \d+\);")  # a loop's entry: its rows r0..r1
_NUMBERS = re.compile(r"\b(em_choice\[|em_block\[|em_conv_choice\[|return |kernel_)\d+")


class _Kernel:
    """One kernel's text cut at its entry point, with what sharing needs, or ``ok`` False."""

    def __init__(self, text):
        self.text, self.ok = text, False
        m = _ENTRY.search(text)
        if m is None:
            return
        self.index, self.entry = m.group(1), text[m.start():]
        self.body = _SLOT_AT.sub(lambda m: f"(({m[1]}*)p[{m[2]}@{m[1]}+{m[3]}]);", text[:m.start()])
        i = self.index
        own = functools.partial(_NAME.sub, lambda m: "kd@" if m.group(1) == i else m.group(0))
        # the entry may call k<i> only (the rest of the kernel's names are renamed)
        if any(e.group(1) == i and not self.entry.startswith("(", e.end()) for e in _NAME.finditer(self.entry)):
            return
        # every use of the table p: p[<n>], the parameter, or passed on to its own functions
        uses = len(_USE.findall(self.body))
        if uses != len(_SLOT.findall(self.body)) + len(_PARAM.findall(self.body)) + _OWN_CALL.findall(self.body).count(i):
            return
        # its top-level functions: (what precedes the type, the type, the parameters)
        self.top = [(self.body[self.body.rfind("\n", 0, m.start()) + 1:m.start()], m.group(1), m.group(3))
                    for m in _TOP.finditer(self.body) if m.group(2) == i]
        if not self.top or not all(re.fullmatch(r"(\w+ )*", prefix) for prefix, _, _ in self.top):
            return
        self.slots = list(dict.fromkeys(_SLOT.findall(self.body)))
        number = {s: i for i, s in enumerate(self.slots)}
        self.canonical = own(_SLOT.sub(lambda s: f"p[{number[s.group(1)]}]", self.body))
        self.key = _COMMENT.sub("", self.canonical)
        # what its entry passes, but its own numbers (the entry's name, its GEMM's or convolution's
        # choice, its failure code) and a loop's row range: loops alike but for their lengths (an
        # optimizer's updates of parameters of several sizes) share, their trip counts then
        # arguments of the shared code (a vector loop and its tail, at run time)
        self.rows = _ROWS.findall(self.entry)
        self.call = _ROWS.sub("(p, r0, r1);", own(_NUMBERS.sub(lambda m: m.group(1), self.entry)))
        self.ok = True

    def wrappers(self, shared):
        """C of this kernel's ``k<i>`` functions calling the shared code ``shared``."""
        table = ", ".join(_table_entry(s) for s in self.slots) or "0"
        lines = []
        for prefix, ret, params in self.top:
            names = [re.findall(r"\w+", part)[-1] for part in params.split(",")[1:]]
            call = f"{shared}({', '.join(['(void**)q'] + names)});"
            # (no arithmetic, so no EM_NO_CONTRACT: GCC inlines it into kernel_<i>, one function fewer)
            lines += [f"{prefix.replace('EM_NO_CONTRACT ', '')}{ret} k{self.index}({params}) {{",
                      f"    void* q[{max(1, len(self.slots))}] = {{{table}}};",
                      f"    {'return ' * (ret != 'void')}{call}", "}"]
        return "\n".join(lines) + "\n"


def _table_entry(slot):
    """C of a member's table entry for ``slot`` (``11``, or ``11@float+256``: an offset into it)."""
    n, _, at = slot.partition("@")
    if not at:
        return f"p[{n}]"
    t, offset = at.split("+")
    return f"(({t}*)p[{n}] + {offset})"


def share(texts):
    """``texts`` (each kernel's C, in order) with every group of kernels alike but for their
    slots merged into one text where the first of them stood: the shared code once, then each
    member's comment, ``k<i>`` functions and entry point. A kernel without a twin is unchanged."""
    kernels = [_Kernel(t) for t in texts]
    groups = {}
    for k in kernels:
        if k.ok:
            groups.setdefault((k.key, k.call), []).append(k)
    out, done = [], set()
    for k in kernels:
        members = groups.get((k.key, k.call), []) if k.ok else []
        if len(members) < 2:
            out.append(k.text)
            continue
        if id(members[0]) in done:
            continue
        done.add(id(members[0]))
        name = f"kd{members[0].index}"
        # the shared top-level functions are called, never inlined into each member's copy
        # (its comments are each member's, below: every kernel's ops are named once), nor
        # cloned for each member's row range (GCC's constant propagation made a copy per length)
        keep = "noinline" if len({tuple(m.rows) for m in members}) == 1 else "noinline, noclone"
        code = re.sub(r"(void|int) kd@\(", rf"__attribute__(({keep})) \1 kd@(", members[0].key).replace("kd@", name)
        code = re.sub(r"^[ \t]*\n", "", code, flags=re.M)
        parts = [f"/* kernels {', '.join(m.index for m in members)} share this code, each passing its slots in order as "
                 f"p[0], p[1], ... */\n", code]
        for m in members:
            parts += ["".join(c + "\n" for c in _COMMENT.findall(m.body)), m.wrappers(name), m.entry]
        out.append("".join(parts))
    return out
