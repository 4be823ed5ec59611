"""What an error says of the arguments an input search should try next (``hint``): the dtypes, ranks and strings
it asks for and of which argument, a tensor ``.item()`` met with several elements, a bound an error states of an
int argument, a dim past a tensor's rank, the words and dtypes it quotes. Each works on the search's arguments
(``candidates.Arg``: a name, a kind, its options in order)."""

from __future__ import annotations

import re
from typing import Any

SIZES = (3, 4, 8, 2, 1)  # the example size of every tensor dim, tried in this order
INDEX_WORDS = ("ind", "idx", "offset", "length", "perm", "target", "count", "label", "position", "bucket", "segment",
               "hash", "ids", "batch_sizes", "cumsum", "seq_len", "lengths", "row", "col", "crow", "ccol")

_DTYPE_WORDS = {"Long": "int64", "Int": "int32", "Float": "float32", "Double": "float64", "Half": "float16",
                "BFloat16": "bfloat16", "Bool": "bool", "Byte": "uint8", "Char": "int8", "Short": "int16",
                "ComplexFloat": "complex64", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32",
                "integral": "int64"}  # "an integral dtype"
_DTYPE_RE = re.compile(r"\b(" + "|".join(sorted(_DTYPE_WORDS, key=len, reverse=True)) + r")\b|\b(?:torch\.)?("
                       + "|".join(("int64", "int32", "int16", "int8", "uint8", "float32", "float64", "float16",
                                   "bfloat16", "bool", "float8_e4m3fn", "complex64")) + r")\b")
#: "must be 2-D", "dim() == 4", "rank 3", "have 4 dimensions", "expected grad_output to be a tensor of dimension 5",
#: "ndim >= 3",
#: and upsample's "expected input_size equals to 5" (the input's sizes as a list: its length is the rank)
_RANK_RE = re.compile(r"\b(\d)[- ]?(?:D|d\b|dim(?:ensional)?\b)|dim\(\)\s*==\s*(\d)|rank\s*(?:of\s*)?(\d)|ndim\s*==\s*(\d)"
                      r"|\b(\d) dimensions\b|\b(\d) dimension\(s\)|\b(?:be|(?i:expected)) a tensor of dimension (\d)\b|\binput_size equals to (\d)\b"
                      r"|ndim\s*(?:must be\s*|should be\s*)?>=\s*(\d)")
#: warp's vector and matrix types, by their scalar's letter (``vec3f``, ``mat33d``, ``vec2i``)
_WARP_VEC_RE = re.compile(r"\b(?:vec\d|mat\d\d|quat|transform)([fdhi])\b")
_WARP_SCALARS = {"f": "float32", "d": "float64", "h": "float16", "i": "int32"}
#: a rank above a bound ("input.ndim must be > 3"): the next rank up
_RANK_ABOVE_RE = re.compile(r"\b(?:ndim|dim\(\))\s*(?:must be\s*|should be\s*)?>\s*(\d)")
#: a tensor asked to hold one element ("Expecting scale tensor to be one element", "a scalar tensor"): rank 0
_ONE_ELEMENT_RE = re.compile(r"\b(?:one|single|1)[- ]element\b|\bscalar tensor\b|\bnumel\(\)\s*==\s*1\b", re.I)
#: Python's unpacking of a shape (``N, C, H, W = x.shape``): the rank it expects, and the rank it got
UNPACK_RE = re.compile(r"values to unpack \(expected (\d)(?:, got (\d))?\)")

_REFUSES = re.compile(r"\b(?:unsupported|not supported|does not support|doesn't support|not implemented|"
                      r"cannot be|invalid)\b", re.I)
_QUOTED = re.compile(r"['\"]([A-Za-z][A-Za-z0-9_]{0,31})['\"]")
#: a complex tensor asked for ("ihfft expects a complex output tensor"); not "a floating point or complex dtype",
#: which a float32 call meets already (multi_margin_loss's search took complex64 there, hunt 51)
_COMPLEX_TENSOR_RE = re.compile(r"\ba complex (?:\w+ )?tensor\b")
#: index dtypes in lower case ("expected indices to be long or int"); "long" alone is too common a word
_LONG_OR_INT_RE = re.compile(r"\bbe (?:long or int|int or long)\b")
#: the values a string argument may take, unquoted ("reduce argument must be either add or multiply")
_EITHER_RE = re.compile(r"\b(?:must|should)\s+be\s+((?:either\s+|one\s+of\s+)?[a-z_]\w*(?:\s*,\s*[a-z_]\w*)*\s+or\s+[a-z_]\w*)")

def hint(args: list[Any], error: str, combo: tuple[Any, ...] | None = None, unpacked: bool = False) -> bool:
    """Move the dtypes, ranks and strings an error names to the front of the options of the argument it names
    (every tensor when it names none). Whether anything moved. ``combo``: the options of the call that raised;
    an error naming only dtypes keeps that call's rank (and one naming only ranks its dtype), since the rest of
    the call got past the checks before it: "only fp16 and bf16" on a 4-D float32 call asks for 4-D float16,
    a pair the option list need not hold. ``unpacked``: read "values to unpack (expected 4, got 2)" too."""
    by_name = _subject(_named(args, error), error)
    tensors = [a for a in args if a.kind in ("tensor", "tensors")]
    named = by_name or tensors
    option = {a.name: o for a, o in zip(args, combo, strict=True)} if combo is not None else {}  # the call's
    # the tensors the call gave the same rank and dtype as a named one get its new option second ("query.dim()
    # == 4" on a call of three 3-D tensors: key and value are likely 4-D too, but only likely)
    alike: list[Any] = []
    if option:
        same = {option[a.name] for a in named if a.kind in ("tensor", "tensors")} - {None}
        alike = [a for a in tensors if a not in named and option[a.name] in same]
    wanted = _WANTED_END.split(error)[0]
    dtypes = _dtypes(wanted)
    ranks = _ranks(wanted)
    unpack = UNPACK_RE.search(error) if unpacked and not by_name and option else None
    if unpack is not None:  # the tensors of the rank it got want the rank it expects
        ranks, named, alike = [int(unpack.group(1))], of_rank(tensors, option, unpack.group(2)) or tensors, []
    ranks, named, alike = (past_rank(error, tensors, option) if option and not by_name else None) or (ranks, named, alike)
    held = item_of(tensors, option, error, SIZES) if option and not by_name else None
    if held is not None:
        named, ranks, alike = [held], [0], []
    words = _words(error, wanted)
    moved = int_hint(args, wanted)
    # "not implemented for 'Int'" names what it refuses, and no tensor says which: the options are only sorted
    # (as the search always did), no (rank, dtype) pair is made from the call
    refuses = bool(_REFUSES.search(wanted))
    # a (rank, dtype) pair is made from the call only for what the error is about: the arguments it names, or,
    # naming none, the tensors when the call gave them all one rank and dtype (flash attention's q, k, v)
    pairs = not refuses and bool(option) and (bool(by_name) or len({repr(option[a.name]) for a in tensors}) == 1)
    if refuses:  # "Unsupported dtype: float32", "Unsupported mapping type: nf4": what it refuses
        for a in args:
            if a.kind == "dtype" and dtypes and (a in named or not any(b.kind == "dtype" for b in named)):
                bad: Any = dtypes
            elif a.kind == "str":
                bad = [o for o in a.options if isinstance(o, str) and o and re.search(rf"\b{re.escape(o)}\b", error)]
            else:
                continue
            new = [o for o in a.options if o not in bad] + [o for o in a.options if o in bad]
            moved |= new[:1] != a.options[:1]
            a.options = new
        # naming no argument, a refused dtype is the dispatching tensor's (AT_DISPATCH's "not implemented for
        # 'Int'"): the first tensor of that dtype in the call takes it last
        # A ScalarType argument the call gave that dtype is what it refuses (torchao's choose_qparams_affine:
        # "Unsupported dtype: torch.float32" is its target_dtype's, and a float32 input must stay float32)
        by_dtype_arg = any(a.kind == "dtype" and option.get(a.name) in dtypes for a in args)
        first = None if by_name or by_dtype_arg else \
            next((a for a in tensors if isinstance(option.get(a.name), tuple) and option[a.name][1] in dtypes), None)
        if first is not None:
            new = [o for o in first.options if o is None or o[1] not in dtypes] + \
                [o for o in first.options if o is not None and o[1] in dtypes]
            moved |= new[:1] != first.options[:1]
            first.options = new
        if moved:
            return True
    for a in named + alike:
        if a.kind in ("tensor", "tensors"):
            def key(o: Any) -> tuple:
                return (bool(o is not None and dtypes and o[1] not in dtypes),
                        bool(o is not None and ranks and o[0] not in ranks))
            if dtypes or ranks:
                front = list(a.options) if a in alike else sorted(a.options, key=key)
                at = 1 if a in alike and front else 0
                current = option[a.name] if pairs else None
                had = current if isinstance(current, tuple) and len(current) == 2 else None
                for r in reversed(ranks or ([had[0]] if had else [])):
                    for d in reversed(dtypes or [had[1] if had else None]):
                        cand = (r, d or (front[0][1] if front and front[0] else "float32"))
                        if cand in front:
                            front.remove(cand)
                        front.insert(at, cand)
                moved |= front[:3] != a.options[:3]
                a.options = front
    return front_words(args, words, dtypes, named) or moved


#: where what an error wants ends ("must be X, got Y": X, not Y); "Index is supposed to be a vector" keeps it all
_WANTED_END = re.compile(r"\b(?:but )?(?:(?i:got|found|received)|is(?!\s+(?:supposed|expected|required|meant)\b))\b"
                         r"|\bbut (?:it )?has\b")  # "should have at least 2 dimensions, but has 3 dimensions"


#: argument names whose plural is said of every tensor ("all inputs", "tensors"), not of that argument
_GENERIC = frozenset({"input", "tensor", "arg", "value", "element", "dim", "size", "index", "other"})


def _named(args: list[Any], error: str) -> list[Any]:
    """The arguments an error names: by name or its plural ("weights" for ``weight``; ``self_1`` also as "self
    1"); naming none but an index ("Expected dtype int32 or int64 for index"), the tensors whose names say they hold indices (``outlier_cols``), so that
    the data tensor keeps its dtype."""
    by_name = [a for a in args if re.search(rf"\b{re.escape(a.name)}{'' if a.name in _GENERIC else 's?'}\b", error)
               or ("_" in a.name and re.search(rf"\b{re.escape(a.name.replace('_', ' '))}\b", error, re.I))]
    if by_name or not re.search(r"\bind(?:ex|ices)\b", error, re.I):
        return by_name
    return [a for a in args if a.kind in ("tensor", "tensors") and any(w in a.name.lower() for w in INDEX_WORDS)]


#: the argument an error's demand is about, where it opens with one: "Expected weight to be a vector ... in input"
_SUBJECT_RE = re.compile(r"^\W*(?:expected\s+(?:the\s+)?(\w+)\s+to|(\w+)\s+(?:must|should))\s+(?:be|have)\b", re.I)


def _subject(named: list[Any], error: str) -> list[Any]:
    """Of the arguments an error names, its subject ("Expected X to be", "X must be"), else all of them."""
    m = _SUBJECT_RE.search(error.partition(": ")[2] or error)
    word = m and (m.group(1) or m.group(2))
    return [a for a in named if a.name == word] or named


def _dtypes(wanted: str) -> list[str]:
    """The dtypes an error asks for: named ("Long", "float16"), "an integral dtype", "to be long or int", "a complex
    tensor"."""
    dtypes = [_DTYPE_WORDS.get(m.group(1), m.group(1)) if m.group(1) else m.group(2) for m in _DTYPE_RE.finditer(wanted)]
    # warp's vector types ("Cannot convert Torch type torch.int64 to Warp type ... vec3f": float32, not the int64
    # it was given), hunt 55
    warp = [_WARP_SCALARS[m.group(1)] for m in _WARP_VEC_RE.finditer(wanted)]
    if warp:
        given = re.search(r"Torch type torch\.(\w+)", wanted)
        dtypes = [d for d in dtypes if given is None or d != given.group(1)]
        dtypes += [d for d in warp if d not in dtypes]
    dtypes += [d for m in _LONG_OR_INT_RE.finditer(wanted) for d in ("int64", "int32") if d not in dtypes]
    return dtypes + (["complex64"] if _COMPLEX_TENSOR_RE.search(wanted) and "complex64" not in dtypes else [])


def _words(error: str, wanted: str) -> list[str]:
    """The strings an error offers a string argument: quoted ones, and "must be either add or multiply"."""
    words = [w for w in _QUOTED.findall(error) if w not in _DTYPE_WORDS]
    return words + [w for m in _EITHER_RE.finditer(wanted) for w in re.findall(r"[a-z_]\w*", m.group(1))
                    if w not in ("or", "either", "one", "of") and w not in words]


def _ranks(wanted: str) -> list[int]:
    """The ranks an error asks for: "must be 2-D", "dim() == 4", "one element" (0), "supposed to be a vector" (1)."""
    ranks = [int(next(g for g in m.groups() if g)) for m in _RANK_RE.finditer(wanted)]
    ranks += [int(m.group(1)) + 1 for m in _RANK_ABOVE_RE.finditer(wanted) if int(m.group(1)) + 1 not in ranks]
    ranks += [0] if _ONE_ELEMENT_RE.search(wanted) and 0 not in ranks else []
    return ranks + [r for w, r in (("vector", 1), ("matrix", 2))
                    if re.search(rf"\b(?:a|an)\s+{w}\b", wanted, re.I) and r not in ranks]

#: a call's tensor that ``.item()`` met with more than one element ("a Tensor with 9 elements cannot be converted
#: to Scalar"): no argument named, so the tensors after the first whose element count it is want rank 0
TO_SCALAR_RE = re.compile(r"a Tensor with (\d+) elements cannot be converted to Scalar")
#: an int argument's bound ("group_size must be > 1", "block_size should be at least 2", "bits must be positive")
INT_BOUND_RE = r"\s*(?:must|should|has to|needs to|is expected to|expected to)?\s*(?:be\s*)?" \
    r"(>=|>|<=|<|==|greater than or equal to|greater than|less than or equal to|less than|at least|at most|" \
    r"equal to|equals|equal|positive|non-negative|nonnegative)\s*(-?\d+)?"
INT_TESTS = {">=": lambda v, n: v >= n, ">": lambda v, n: v > n, "<=": lambda v, n: v <= n, "<": lambda v, n: v < n,
             "greater than or equal to": lambda v, n: v >= n, "greater than": lambda v, n: v > n,
             "less than or equal to": lambda v, n: v <= n, "less than": lambda v, n: v < n,
             "at least": lambda v, n: v >= n, "at most": lambda v, n: v <= n, "==": lambda v, n: v == n,
             "equal to": lambda v, n: v == n, "equals": lambda v, n: v == n, "equal": lambda v, n: v == n}


def item_of(tensors: list[Any], option: dict[str, Any], error: str, sizes: tuple[int, ...]) -> Any:
    """The tensor ``.item()`` met with several elements ("a Tensor with 9 elements cannot be converted to
    Scalar" names none): the last tensor after the first whose element count that is, to be tried at rank 0
    (one per error: all at once gave _fused_adagrad 0-d grads, and torch's heap broke)."""
    m = TO_SCALAR_RE.search(error)
    if m is None:
        return None
    count = int(m.group(1))
    held = [a for a in tensors[1:] if isinstance(option.get(a.name), tuple) and option[a.name][0] > 0
            and any(size ** option[a.name][0] == count for size in sizes)]
    return held[-1] if held else None


def int_hint(args: list[Any], wanted: str) -> bool:
    """The values of an int argument that a bound the error states of it (``group_size must be > 1``,
    ``weight_quant_min == -2``) allows, to the front of its options (the bound's own value where none does).
    Whether anything moved."""
    moved = False
    for a in args:
        if a.kind not in ("int", "sym"):
            continue
        m = re.search(rf"\b{re.escape(a.name)}\b" + INT_BOUND_RE, wanted)
        if m is None:
            continue
        word, number = m.group(1), m.group(2)
        if word in ("positive", "non-negative", "nonnegative"):
            test, n = (INT_TESTS[">"] if word == "positive" else INT_TESTS[">="]), 0
        elif number is not None:
            test, n = INT_TESTS[word], int(number)
        else:
            continue
        new = [o for o in a.options if test(o, n)] + [o for o in a.options if not test(o, n)]
        if not new or not test(new[0], n):  # no option the bound allows ("weight_quant_min == -2", hunt 36): its own
            new = [next(v for v in (n, n + 1, n - 1) if test(v, n)), *new]
        moved |= new[:1] != a.options[:1]
        a.options = new
    return moved


#: a ``dim`` argument past a tensor's rank ("Dimension out of range (expected to be in range of [-1, 0], but got
#: 1)"): the tensor of that rank (the first: the one a dim indexes is most often ``self``) wants the dim's rank
_DIM_RANGE_RE = re.compile(r"Dimension out of range \(expected to be in range of \[-(\d+), \d+\], but got (-?\d+)\)")


def past_rank(error: str, tensors: list[Any], option: dict[str, Any]) -> tuple[list[int], list[Any], list[Any]] | None:
    """A ``dim`` past a tensor's rank (``_DIM_RANGE_RE``): (the rank wanted, [the first tensor of the rank the error
    states], no alike ones), or None."""
    m = _DIM_RANGE_RE.search(error)
    if m is None or int(m.group(2)) >= 8:
        return None
    dim = int(m.group(2))
    first = of_rank(tensors, option, m.group(1))[:1]
    return ([dim + 1 if dim >= 0 else -dim], first, []) if first else None


def front_words(args: list[Any], words: list[str], dtypes: list[str], named: list[Any]) -> bool:
    """The strings an error quotes to the front of each str argument's options, the dtypes it names to the
    front of the dtype arguments it names. Whether anything moved."""
    moved = False
    for a in args:
        if a.kind == "str" and words:
            new = list(dict.fromkeys([*a.options[:1], *words, *a.options[1:]]))
            moved |= new != a.options
            a.options = new
        if a.kind == "dtype" and dtypes and a in named:
            new = list(dict.fromkeys([*dtypes, *a.options]))
            moved |= new[:2] != a.options[:2]
            a.options = new
    return moved


def of_rank(tensors: list[Any], option: dict[str, Any], got: str | None) -> list[Any]:
    """The tensors the call gave rank ``got`` (every tensor of the call when None)."""
    return [a for a in tensors if isinstance(option.get(a.name), tuple) and (got is None or option[a.name][0] == int(got))]
