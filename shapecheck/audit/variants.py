"""The argument variants of an op's first inputs, each with the (argument, option) it changes (None for a
corner, which changes several) (issue 23, item 4): two corners first (every flag that is off by default on, with
a probability above 0; then with the int lists off their trivial values too), then the inputs with one argument
changed (a bool flipped, an optional present or absent, another small int, an int list off its trivial value, alone
and with the first tensor a rank up, a probability above 0, another dtype, the first tensor one rank up). The
caller keeps each one the fake or the eager kernel accepts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from .candidates import SIZES, Arg, Search, _words, tree_of
from .inputs import OpInputs, constant_int


def variants(search: Search, base: OpInputs, limit: int = 6) -> Iterator[tuple[OpInputs, tuple[str, Any] | None]]:
    """The base inputs with one argument changed: each bool flipped, each optional toggled (a tensor of the
    first options the fake takes, a value), a probability above 0, another small int or dtype; at most ``limit``."""
    size = next((t[2][0] for _, _, t in base.args if t[0] == "tensor" and t[2]), SIZES[0])
    base = _with_defaults(search, base, size)
    trees = {name: tree for name, _, tree in base.args}
    made = 0
    # first, every flag off by default turned on together with a probability above 0: a debug or return output
    # that only exists with dropout (flash attention's return_debug_mask) needs both at once
    flags = {a.name: (True, f"{a.name}=True") for a in search.args if a.name in trees
             and ((a.kind == "bool" and trees[a.name][1] is False) or _absent_bool(a, trees[a.name]))}
    probs = {a.name: (0.5, f"{a.name}=0.5") for a in search.args if a.kind == "float" and a.name in trees
             and any(w in a.name for w in ("p", "prob", "dropout")) and trees[a.name][1] in (0, 0.0)}
    together = {**flags, **probs}
    # then the same corner with the int lists off their trivial values too: a list of zeros (a padding) at 1, and
    # one the schema gives no default (a kernel size, made [1]) at 2 (pooling's ceil_mode correction needs a stride
    # and a padding); a padding the search gave its own [1] goes to 0 instead: a kernel larger than the unpadded
    # input (an empty output a fake returns where the eager kernel raises) needs both at once
    raised = {a.name: _padding_off(a, trees[a.name][1]) or _raised(trees[a.name][1]) for a in search.args
              if _raisable(a, trees.get(a.name))}
    lists = {name: (value, f"{name}={value}") for name, value in raised.items()}
    corners = [together] if len(together) >= 2 and probs and flags else []
    if lists:  # and every optional tensor left out present, where the fake takes it there (a zero point that
        # makes a quantized kernel pad by hand: only with a stride and a padding does its size differ)
        corners.append({**together, **lists, **_present_too(search, base, size, trees)})
    for i, corner in enumerate(corners):
        made_corner = _corner(search, base, corner, size)
        if i == len(corners) - 1 and len(lists) >= 2 and not search.fake_ok(made_corner)[0]:
            # values that together are no valid call (a padding of 2 beside a kernel of 3): the corner with one
            # int list left at its value, the first such the fake takes
            fewer = (_corner(search, base, {k: v for k, v in corner.items() if k != name}, size) for name in lists)
            made_corner = next((c for c in fewer if search.fake_ok(c)[0]), made_corner)
        yield made_corner, None
        made += 1
    # the first tensor one rank up (``_ranks_up``): kept only where the fake or the eager kernel takes it
    first = next((a for a in search.args if a.kind in ("tensor", "tensors") and a.name in trees
                  and tensor_rank(trees[a.name]) is not None), None)
    ups = _ranks_up(base, first, trees, size) if first is not None and made < limit else []
    up: tuple[str, Any, str] | None = None  # the first tensor one rank up: (name, tree, label)
    if ups:
        v, (name, _) = ups[0]
        up = (name, dict((n, t) for n, _, t in v.args)[name], v.label)
    for item in ups:
        yield item
        made += 1
    for item in _other_ranks(search, base, trees, first, size):
        if made >= limit:
            return
        yield item
        made += 1
    # one argument changed: the flags and optionals first, then the int lists off their trivial values, each
    # again with the first tensor a rank up (a batched and an unbatched input reach different checks:
    # conv_transpose2d's zero-size output, batched only), and the plain ints last: their other values take what
    # the limit leaves
    pairs: list[tuple[OpInputs, None]] = []
    for a in sorted(search.args, key=lambda a: (a.kind == "int", _raisable(a, trees.get(a.name)))):
        if a.name not in trees:  # left to its default and not varied (a tensor the sample leaves out)
            continue
        if a.kind == "int" and pairs:
            yield from pairs[:limit - made]
            made += len(pairs[:limit - made])
            pairs = []
            if made >= limit:
                return
        for option, label in _alternatives(search, base, a, trees[a.name], size):
            tree = tree_of(Arg(a.name, a.type, a.keyword, [], a.kind if a.kind != "fixed" else "fixed"), option, size)
            if tree is None:
                continue
            args = tuple((n, kw, tree if n == a.name else t) for n, kw, t in base.args)
            label = label or f"{a.name}=Tensor[rank {option[0]}, {option[1]}]"
            yield OpInputs(base.op, base.origin, args, base.blobs, label), (a.name, option)
            made += 1
            if up is not None and _raisable(a, trees[a.name]):
                pairs.append((OpInputs(base.op, base.origin, tuple((n, kw, up[1] if n == up[0] else t)
                                                                   for n, kw, t in args), base.blobs,
                                       f"{label}, {up[2]}"), None))
            if made >= limit:
                return
    yield from pairs[:limit - made]
    yield from _rank_down(base, first, trees, size) if made + len(pairs) < limit else ()  # last, where there is room


def _rank_down(base: OpInputs, first: Arg | None, trees: dict[str, Any], size: int
               ) -> list[tuple[OpInputs, tuple[str, Any]]]:
    """The first tensor one rank down, from rank 2 up: a kernel that reads a vector as one row (bitsandbytes' int8
    dequant: eager [1, n], its fake [n], hunt 43) or rejects it where the fake takes it."""
    if first is None or trees[first.name][0] != "tensor" or len(trees[first.name][2]) < 2:
        return []
    rank, dtype = len(trees[first.name][2]) - 1, trees[first.name][3]
    tree = tree_of(Arg(first.name, first.type, first.keyword, [], "tensor"), (rank, dtype), size)
    if tree is None:
        return []
    return [(OpInputs(base.op, base.origin, tuple((n, kw, tree if n == first.name else t) for n, kw, t in base.args),
                      base.blobs, f"{first.name}=Tensor[rank {rank}, {dtype}]"), (first.name, (rank, dtype)))]


def _ranks_up(base: OpInputs, first: Arg, trees: dict[str, Any], size: int
              ) -> list[tuple[OpInputs, tuple[str, Any]]]:
    """The first tensor one rank up, to rank 5 at most (a reduction over "the rows" of a 3-D input, a batched 3-D
    convolution); a list of tensors (cat's) all of them together, and to rank 4 too: a batched image, whose
    channels-last layout a rank-3 list never shows."""
    had = tensor_rank(trees[first.name])
    if had is None or not 0 <= had < 5:  # a 0-d first input too (hunt 40: quanto's quantize_symmetric)
        return []
    dtype = _slot_trees(trees[first.name])[0][3]
    out = []
    for rank in [had + 1] + ([4] if first.kind == "tensors" and had + 1 < 4 else []):
        tree = tree_of(Arg(first.name, first.type, first.keyword, [], first.kind), (rank, dtype), size)
        label = f"{first.name}=Tensor[rank {rank}, {dtype}]" + (" each" if first.kind == "tensors" else "")
        out.append((OpInputs(base.op, base.origin, tuple((n, kw, tree if n == first.name else t)
                                                          for n, kw, t in base.args), base.blobs, label),
                    (first.name, (rank, dtype))))
    return out


def _other_ranks(search: Search, base: OpInputs, trees: dict[str, Any], first: Arg | None,
                 size: int) -> Iterator[tuple[OpInputs, tuple[str, Any]]]:
    """The rank variants beyond the first tensor a rank up: the first tensor 0-d (where it has a rank: a fake's
    special case of a scalar input, index_select's on a 0-d self), the second tensor (not optional) one rank up,
    to 5 at most (a second operand's batch dims, cdist's x2), which no other variant reaches."""
    wanted: list[tuple[Arg, int]] = []
    if first is not None and trees[first.name][0] == "tensor" and len(trees[first.name][2]) > 0:
        wanted.append((first, 0))
    second = next((a for a in search.args if a.kind == "tensor" and a is not first and not a.type.endswith("?")
                   and a.name in trees and trees[a.name][0] == "tensor"), None)
    if second is not None and 0 < len(trees[second.name][2]) < 5:
        wanted.append((second, len(trees[second.name][2]) + 1))

    for a, rank in wanted:
        dtype = trees[a.name][3]
        tree = tree_of(Arg(a.name, a.type, a.keyword, [], "tensor"), (rank, dtype), size)
        if tree is not None:
            yield OpInputs(base.op, base.origin, tuple((n, kw, tree if n == a.name else t) for n, kw, t in base.args),
                           base.blobs, f"{a.name}=Tensor[rank {rank}, {dtype}]"), (a.name, (rank, dtype))


def _alternatives(search: Search, base: OpInputs, a: Arg, current: Any, size: int) -> list[tuple[Any, str]]:
    """The other values of one argument a variant tries, each with its label ("" for a tensor: made later)."""
    if a.kind == "bool":
        return [(not current[1], f"{a.name}={not current[1]}")]
    if a.kind == "tensor" and current == ("const", None):
        present = _present(search, base, a, size)
        return [(present, "")] if present is not None else []
    if a.kind == "tensor" and a.type.endswith("?"):
        return [(None, f"{a.name}=None")]
    if a.kind == "int" and current[0] == "const" and type(current[1]) is int:
        # another small int: the next of its options (a dim of 1 and 2 where the first inputs have 0), then -1,
        # which a kernel must refuse or read from the end (sphericart's l_max: the eager kernel raises, the fake
        # returns an empty output; hunt 52)
        others = [(v, f"{a.name}={v}") for v in a.options if type(v) is int and v >= 0 and v != current[1]][:2]
        return others + ([(-1, f"{a.name}=-1")] if current[1] != -1 else [])
    if _raisable(a, current):  # an int list off its trivial value alone (the corner moves them all at once)
        return [(_raised(current[1]), f"{a.name}={_raised(current[1])}")]
    if a.kind == "fixed" and current == ("const", None) and a.type.rstrip("?") in ("int", "SymInt"):
        # an axis: the first and the last, whatever the rank (optimum-quanto's ``int? axis`` takes 0 or -1 only: hunt
        # 40); else small values
        return [(v, f"{a.name}={v}") for v in ((0, -1) if constant_int(a.name) else (2, 1))]
    if _absent_bool(a, current):  # ``bool? ceil_mode=None`` (a custom op's default for False): present, True
        return [(True, f"{a.name}=True")]
    if a.kind == "fixed" and current == ("const", None) and a.type.rstrip("?") == "float":
        return [(0.5, f"{a.name}=0.5")]
    if a.kind == "float" and any(w in a.name for w in ("p", "prob", "dropout")) and current[1] in (0, 0.0):
        return [(0.5, f"{a.name}=0.5")]
    if a.kind == "float" and current[0] == "const" and type(current[1]) in (int, float) and current[1] != 0:
        # another value, off the integers: a size computed from it rounds (a scale of 1.5, floor against ceil)
        value = float(current[1]) * 0.75
        return [(value, f"{a.name}={value:g}")]
    if a.kind == "str" and current[0] == "const":  # the kernels' own words first (``if mode == "both":``)
        return [(v, f"{a.name}={v!r}") for v in a.options if isinstance(v, str) and v != current[1]][:2]
    if a.kind == "dtype" and current[0] in ("dtype", "const"):
        return [(d, f"{a.name}={d}") for d in ("float64", "int64") if d != current[1]][:1]
    return []


def _absent_bool(a: Arg, current: Any) -> bool:
    """An optional bool left out (``bool? ceil_mode=None``: tico's maxpool2d reads None as False)."""
    return a.kind == "fixed" and current == ("const", None) and a.type == "bool?"


def _with_defaults(search: Search, base: OpInputs, size: int) -> OpInputs:
    """An OpInfo sample or a hook's call leaves arguments to their defaults: each is passed as its default (by
    keyword), so that it is varied like the others (pdist's p, a reduction's keepdim); an optional tensor the call
    leaves out (executorch's avg_pool2d's in_zero_point) likewise, as None, so that a variant tries it present."""
    trees = {name for name, _, _ in base.args}
    given = [(a, tree_of(a, None if a.kind == "tensor" else a.options[0], size)) for a in search.args
             if a.name not in trees and a.options
             and (a.kind in ("bool", "float", "int", "sym", "dtype", "str", "fixed")
                  or (a.kind == "tensor" and a.type.endswith("?") and None in a.options))]
    if not any(t is not None for _, t in given):
        return base
    return OpInputs(base.op, base.origin, base.args + tuple((a.name, True, t) for a, t in given if t is not None),
                    base.blobs, base.label)


def _corner(search: Search, base: OpInputs, corner: dict[str, tuple[Any, str]], size: int) -> OpInputs:
    """The base inputs with every argument of ``corner`` at its value."""
    args_ = []
    for n, kw, t in base.args:
        a = next((x for x in search.args if x.name == n), None)
        tree = tree_of(Arg(a.name, a.type, a.keyword, [], a.kind), corner[n][0], size) \
            if a is not None and n in corner else t
        args_.append((n, kw, t if tree is None else tree))
    return OpInputs(base.op, base.origin, tuple(args_), base.blobs, ", ".join(v[1] for v in corner.values()))


def _padding_off(a: Arg, values: Any) -> list[int] | None:
    """Zeros for a padding list (``padding``, ``pad``: not ``output_padding``, which a kernel larger than its input
    does not need) at the search's own ones (no schema default); None for any other."""
    if _words(a.name).startswith("pad") and not a.defaulted and isinstance(values, list) and all(v == 1 for v in values):
        return [0] * len(values)
    return None


def _raised(values: list[int] | int) -> list[int] | int:
    """An int list off its trivial value: zeros at 1, ones at 2 (one int for an int list: the same)."""
    if isinstance(values, int):
        return 1 if values == 0 else 2
    return [1 if v == 0 else 2 for v in values]


def _present_too(search: Search, base: OpInputs, size: int, trees: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    """The optional tensors the first inputs leave out, each present in the corner of raised int lists where the
    fake takes it beside the first inputs: (rank, dtype) and label by name."""
    out: dict[str, tuple[Any, str]] = {}
    for a in search.args:
        if a.kind != "tensor" or not a.type.endswith("?") or trees.get(a.name) != ("const", None):
            continue
        option = _present(search, base, a, size, strict=True)
        if option is not None:
            out[a.name] = (option, f"{a.name}=Tensor[rank {option[0]}, {option[1]}]")
    return out


def _raisable(a: Arg, tree: Any) -> bool:
    """An int list left at a trivial value: all zeros, or all ones where the schema gives no default (the
    search's own [1]); not a list of dims or of sizes."""
    if a.kind != "fixed" or tree is None or tree[0] != "const":
        return False
    if not a.type.rstrip("?").startswith(("int[", "SymInt[")) or "dim" in _words(a.name) or a.name in ("size", "shape", "sizes"):
        return False
    if type(tree[1]) is int:  # one int for the list (an OpInfo sample's stride=1): as a list of it
        return tree[1] == 0 or tree[1] == 1
    if not isinstance(tree[1], list) or not tree[1]:
        return False
    values = tree[1]
    return all(type(v) is int for v in values) and (all(v == 0 for v in values) or
                                                     (not a.defaulted and all(v == 1 for v in values)))


def _present(search: Search, base: OpInputs, a: Arg, size: int, strict: bool = False) -> Any:
    """The first (rank, dtype) of an optional tensor that the fake takes beside the base inputs (the first
    option when it takes none; None if ``strict``)."""
    options = [o for o in a.options if o is not None]
    for o in options[:6]:
        tree = tree_of(a, o, size)
        trial = OpInputs(base.op, base.origin, tuple((n, kw, tree if n == a.name else t) for n, kw, t in base.args),
                         base.blobs)
        if search.fake_ok(trial)[0]:
            return o
    return None if strict or not options else options[0]


#: the dtype the mixed variant gives the second tensor: one type promotion takes over the first's
PROMOTED = {"float32": "float64", "float64": "float32", "float16": "float32", "bfloat16": "float32"}

#: the dtype a representation variant gives the tensors of the first tensor's dtype: the lower precision kernels
#: have cases of their own for (a fake that makes float32 outputs whatever the inputs)
OTHER_DTYPE = {"float32": "bfloat16", "float64": "float32", "float16": "float32", "bfloat16": "float32",
               "int64": "int32", "int32": "int64", "int16": "int32",
               # packed and quantized codes: a kernel that takes one byte type only (optimum-quanto's unpack
               # checks uint8 in its CPU kernel, its fake takes any dtype)
               "uint8": "int8", "int8": "uint8",
               # 8-bit floats: the other format (a dequantize kernel of e4m3 codes given e5m2, hunt 62)
               "float8_e4m3fn": "float8_e5m2", "float8_e5m2": "float8_e4m3fn"}


FLOATING = ("float32", "float64", "float16", "bfloat16")


def floating(dtype: str) -> bool:
    """A floating dtype whose values are drawn, 8-bit floats included (a float8 input laid out otherwise: a
    dequantize fake that keeps its layout where the eager kernel returns a contiguous tensor, hunt 62)."""
    return dtype in FLOATING or dtype.startswith("float8")


def representations(base: OpInputs) -> list[OpInputs]:
    """The first inputs with the same sizes in another representation: the first floating tensor of rank 2 or more
    (else the first integer or bool one) non-contiguous (dim 1 innermost in memory, channels-last for a batched
    image; a 2-D one transposed), and the tensors of the first
    tensor's dtype in another dtype (``OTHER_DTYPE``). Their dims are the first inputs', so they are compared
    with the eager kernel at the first inputs' points (a fake's output strides or dtype, which no guard shows);
    their guards are the first inputs' guards."""
    return layouts(base) + other_dtypes(base) + later_layouts(base)


#: the floating tensors after the first one a representation lays out otherwise, one at a time
LATER_LAYOUTS = 2


def later_layouts(base: OpInputs) -> list[OpInputs]:
    """The first inputs with a later floating tensor of rank 2 or more non-contiguous, each alone (up to
    ``LATER_LAYOUTS``): a kernel whose output follows another input's layout (litert-torch's gated delta update
    makes ``zeros_like(v)``, its fake a contiguous output: hunt 46), which the first tensor's layout never shows."""
    tensors = [(at, t) for at, t in slots(base) if at[1] is None and len(t[1]) >= 2 and floating(t[3])]
    out: list[OpInputs] = []
    for (i, _), t in tensors[1:1 + LATER_LAYOUTS]:
        order = _other_order(len(t[1]))
        args = with_slots(base, {(i, None): ("tensor", t[1], t[2], t[3], "zeros", order)})
        out.append(OpInputs(base.op, base.origin, args, base.blobs, _laid_out(base, base.args[i][0], order)))
    return out


def _other_order(rank: int) -> tuple[int, ...]:
    """The memory order a layout representation gives a tensor of ``rank`` (2 or more): a 2-D one transposed, else
    dim 1 innermost (channels-last for a batched image)."""
    return (1, 0) if rank == 2 else (0, *range(2, rank), 1)


def _laid_out(base: OpInputs, name: str, order: tuple[int, ...]) -> str:
    """The label of ``base`` with the tensor ``name`` in ``order``."""
    how = "transposed" if len(order) == 2 else "with dim 1 innermost"
    return (f"{base.label}, " if base.label else "") + f"{name} {how} (memory order {order})"


def other_dtypes(base: OpInputs) -> list[OpInputs]:
    """``representations``' other dtypes: the tensors of the first tensor's dtype in another dtype, as int32 and
    int8 where they are floating, and mixed dtypes (``_mixed``)."""
    tensors = slots(base)
    out: list[OpInputs] = []
    if tensors and tensors[0][1][3] in OTHER_DTYPE:
        old = tensors[0][1][3]
        # integers where floats were too: a reduction promotes them (cumsum of int32 is int64), and int8, a
        # quantized kernel's codes (an int8 matmul accumulates in int32: a fake that keeps int8 shows only there)
        # float64 beside float32's bfloat16: a kernel with a generic path for other dtypes (bitsandbytes' quantize
        # ops in float64, whose fakes take float16, bfloat16 and float32 only, hunt 43)
        wider = ["float64"] if old == "float32" else []
        out += _retyped(base, tensors, old, [OTHER_DTYPE[old], *wider] + (["int32", "int8"] if old in FLOATING else []))
        out += _mixed(base, tensors)
        floating = next((t[3] for _, t in tensors if t[3] in FLOATING), None)
        if old not in FLOATING and floating is not None:
            # the floating tensors too, where an integer one comes first (an index before its table: a fake that
            # makes float32 whatever the table's dtype, hunt 60)
            out += _retyped(base, tensors, floating, [OTHER_DTYPE[floating], *(["float64"] if floating == "float32"
                                                                              else [])])
    if base.label:  # a variant's (a flag set): what it changes, then the dtypes
        out = [replace(o, label=f"{base.label}, {o.label}") for o in out]
    return out


def _retyped(base: OpInputs, tensors: list[tuple[Slot, tuple]], old: str, dtypes: list[str]) -> list[OpInputs]:
    """The inputs with every tensor of dtype ``old`` in each of ``dtypes``, one variant a dtype."""
    alike = [(at, t) for at, t in tensors if t[3] == old]
    changed = list(dict.fromkeys(base.args[at[0]][0] for at, _ in alike))
    return [OpInputs(base.op, base.origin, with_slots(base, {at: (*t[:3], new, *t[4:]) for at, t in alike}),
                     base.blobs, f"{', '.join(changed)} as {new}") for new in dtypes]


def layouts(base: OpInputs) -> list[OpInputs]:
    """``representations``' non-contiguous one: the inputs with their first floating tensor of rank 2 or more
    (else the first integer or bool one) in another memory order (none where there is no such tensor)."""
    tensors = slots(base)
    out: list[OpInputs] = []
    # a floating tensor: its values are drawn whatever its fill says (a sample's own data keeps its own layout);
    # where there is none (a quantized op's int8 input, where's bool condition), the first integer or bool one,
    # its fill kept (its values may be indices or codes the kernel checks)
    first = next(((at, t) for at, t in tensors if len(t[1]) >= 2 and floating(t[3])), None) or \
        next(((at, t) for at, t in tensors if len(t[1]) >= 2 and not _fill(t).startswith("data:")), None)
    if first is not None:
        (i, j), t = first
        rank = len(t[1])
        order = _other_order(rank)
        # a list's tensors of that rank all in that order: cat keeps their layout where they agree
        moved = [(at, x) for at, x in tensors if at == (i, j) or (j is not None and at[0] == i and len(x[1]) == rank)]
        args = with_slots(base, {at: ("tensor", x[1], x[2], x[3], "zeros" if floating(x[3]) else _fill(x), order)
                                 for at, x in moved})
        name = base.args[i][0] if j is None else f"each of {base.args[i][0]}"
        out.append(OpInputs(base.op, base.origin, args, base.blobs, _laid_out(base, name, order)))
    return out


#: where a tensor sits in a call's arguments: (argument index, its place in a list, None for a tensor argument)
Slot = tuple[int, "int | None"]


def slots(base: OpInputs) -> list[tuple[Slot, tuple]]:
    """The call's tensors in argument order, a list's one by one, each with its slot."""
    out: list[tuple[Slot, tuple]] = []
    for i, (_, _, t) in enumerate(base.args):
        if t[0] == "tensor":
            out.append(((i, None), t))
        elif t[0] == "list":
            out += [((i, j), x) for j, x in enumerate(t[1]) if x[0] == "tensor"]
    return out


def with_slots(base: OpInputs, changed: dict[Slot, tuple]) -> tuple:
    """``base``'s arguments with the tensors of ``changed`` replaced."""
    args = []
    for i, (n, kw, t) in enumerate(base.args):
        if (i, None) in changed:
            t = changed[(i, None)]
        elif t[0] == "list":
            t = ("list", tuple(changed.get((i, j), x) for j, x in enumerate(t[1])))
        args.append((n, kw, t))
    return tuple(args)


def _slot_trees(tree: tuple) -> list[tuple]:
    return [tree] if tree[0] == "tensor" else [x for x in tree[1] if x[0] == "tensor"] if tree[0] == "list" else []


def tensor_rank(tree: tuple) -> int | None:
    """The rank of a tensor argument, or of a list's tensors where they all have one; else None."""
    ranks = {len(x[2]) for x in _slot_trees(tree)}
    return ranks.pop() if len(ranks) == 1 and (tree[0] == "tensor" or len(_slot_trees(tree)) == len(tree[1])) else None


def _fill(tree: tuple) -> str:
    return tree[4] if len(tree) > 4 else "zeros"


#: the label's words that mark the variant of one tensor's dtype changed among several of one dtype
MIXED = "the others stay"


def _mixed(base: OpInputs, tensors: list[tuple[Slot, tuple]]) -> list[OpInputs]:
    """With two or more tensors of the first tensor's dtype: of integer ones, the first alone as float32 (take's data
    beside its index); of floating ones, the second alone in a wider dtype (mm's
    ``mat2`` as float64 beside a float32 ``self``), of float32 ones the first alone as bfloat16 too, and the second
    alone as int8 (a quantized weight). The eager kernel refuses mixed dtypes or promotes them (to the
    wider one: a fake that keeps the first input's dtype shows); a fake that returns where it refuses lacks the
    check, one that promotes otherwise gets the output dtype wrong."""
    old = tensors[0][1][3]
    alike = [(at, t) for at, t in tensors if t[3] == old]
    if len(alike) < 2:
        return []

    def alone(at: Slot, t: tuple, new: str) -> OpInputs:
        name = base.args[at[0]][0] + ("" if at[1] is None else f"[{at[1]}]")
        return OpInputs(base.op, base.origin, with_slots(base, {at: (*t[:3], new, *t[4:])}), base.blobs,
                        f"{name} as {new} ({MIXED} {old})")

    if old not in FLOATING:  # integer data beside integer indices (take, gather): the data alone as floats, where
        # a fake that gives the output the index's dtype shows
        return [alone(*alike[0], "float32")]
    # the second in a wider dtype; of float32 ones, also the first alone in bfloat16: mixed precision's activations
    # beside float32 parameters (an adaptive norm's bf16 x with float32 scale and shift: the eager kernel promotes
    # to float32, a fake that keeps x's dtype says bfloat16; hunt 29); a list's tensors count one by one (cat
    # promotes a bfloat16 and a float32 tensor to float32)
    # and the second alone as int8: a quantized kernel's weight beside float activations (optimum-quanto's
    # qbytes_mm, hunt 31), which no float dtype reaches
    return [alone(*alike[1], PROMOTED[old])] + ([alone(*alike[0], "bfloat16")] if old == "float32" else []) + \
        [alone(*alike[1], "int8")]
