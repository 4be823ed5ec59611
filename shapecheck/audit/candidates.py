"""Inputs for an op without a contract, found by search (issue 23, item 1).

Each schema argument gets a list of options, the likeliest first: a tensor a (rank, dtype) pair (integer dtypes
first for arguments named like indices, offsets or lengths), a ``ScalarType`` dtypes, a ``str`` its default or the
words the kernel's errors quote, an ``int`` its default or a few small magnitudes, a ``bool`` its default, an
optional argument absent. Every tensor dim takes one example size (3, else 4, 8, 2 or 1). Combinations are tried
in order of the sum of their options' positions; an error that names a dtype or a rank moves that option to the
front for the argument it names (or every tensor) and the enumeration starts again. A combination is accepted when
the fake (FakeTensorMode at concrete sizes, as export runs it) and the eager kernel on ``--device`` both return;
without an eager kernel, when the fake returns. What the search ends with is a ``Found``: the inputs (or None),
whether the eager kernel accepted them, and what it learnt on the way (the fake's error on a call the eager kernel
accepts: a kernel error; the same programming error on every call: a kernel error too).

Where nothing is found, a second search widens the options (``_widened``). The argument variants beyond the
inputs found are ``audit.variants``'.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .._torch import kernel_code as KC
from .._torch import schema as CL
from .hints import INDEX_WORDS, SIZES, UNPACK_RE, hint
from .inputs import DATA_DEPENDENT, OpInputs, Tree, constant_int, fake_result, holds

UNPACK_AFTER = 3  # unpacking errors met before the search reads the rank they expect
FAKE_TRIES = 96  # fake calls per op before the search gives up (a refused call costs about a millisecond)
EAGER_TRIES = 12  # eager calls per op (each a round trip to the worker)
FLOATS = ("float32", "float16", "bfloat16", "float64")
INTS = ("int64", "int32", "int8", "uint8", "int16")
TENSOR_OPTIONS = ((2, "float32"), (1, "float32"), (3, "float32"), (1, "int64"), (2, "int64"), (4, "float32"),
                  (0, "float32"), (1, "int32"), (2, "int32"), (2, "bool"), (2, "uint8"), (2, "float16"),
                  (2, "bfloat16"), (2, "float64"), (3, "int64"), (1, "uint8"), (2, "int8"), (0, "int64"),
                  (5, "float32"), (1, "bool"), (2, "complex64"))
SCALAR_TYPES = ("float32", "int64", "float16", "bfloat16", "int32", "uint8", "int8", "float64", "bool",
                "float8_e4m3fn")
#: strings worth trying for a str argument without a default, by a word of its name
STR_GUESSES = {"reduc": ("mean", "sum", "none"), "mode": ("nearest", "bilinear", "linear", "constant", "reflect"),
               "pad": ("constant", "reflect", "replicate"), "approx": ("none", "tanh"), "round": ("floor", "trunc"),
               "type": ("nf4", "fp4", "ASYMMETRIC", "SYMMETRIC"), "layout": ("NHWC", "NCHW"), "": ("", "none")}
#: a size the error asks of a dimension ("grid last dimension must be 2", "expected size 3 at dim 1")
_SIZE_RE = re.compile(r"\b(?:size|dimension|dim)\b[^.;()]{0,40}?\b(?:must be|to be|should be|to have size|==|equal to)"
                      r"\s+(\d{1,2})\b")
#: a size an error asks to divide ("must be divisible by 32", "a multiple of 16", "% 32 == 0"): tried as the size
#: (up to ``DIVISOR_MOST``: the size goes to every dim of every tensor)
_DIVISIBLE_RE = re.compile(r"\b(?:divisible by|multiple of)\s+(\d{1,2})\b|%\s*(\d{1,2})\s*==\s*0")
DIVISOR_MOST = 32
#: a shape an error asks for, with a constant in it ("rois must have shape as Tensor[K, 5]", "of shape (N, 4)")
_SHAPE_RE = re.compile(r"\bshape\b[^.;]{0,24}?[\[(]\s*((?:[A-Za-z_]\w*|\d{1,2})(?:\s*,\s*(?:[A-Za-z_]\w*|\d{1,2}))+)\s*[\])]")
#: errors that say the code is wrong, not that the inputs are: the same one on every call is a kernel error
PROGRAMMING_ERRORS = ("TypeError", "AttributeError", "NameError", "UnboundLocalError", "KeyError")
#: errors that say a kernel is broken (a name its environment lacks: vllm's triton placeholder on a CPU machine),
#: never that the op refuses its input: the audit infers no relation from a side of a branch that raises one
BROKEN = ("AttributeError", "NameError", "UnboundLocalError", "ImportError", "ModuleNotFoundError")
NO_EAGER = ("Could not run", "no kernel", "not implemented for the")
#: Python's refusal of a call that leaves out a parameter without a default: the function, and what it misses
_DEMANDS_RE = re.compile(r"^TypeError: ([\w<>.]+)\(\) missing \d+ required (?:positional|keyword-only) arguments?: (.+)")


@dataclass
class Arg:
    """One schema argument and its options (trees without sizes: sizes are filled in per combination)."""

    name: str
    type: str
    keyword: bool
    options: list[Any]
    kind: str  # tensor | tensors | dtype | str | int | float | bool | fixed
    defaulted: bool = False  # its first option is the schema's default


@dataclass
class Found:
    inputs: OpInputs | None = None
    eager: str = "unknown"  # accepted | rejected | none (no eager kernel on the device) | unchecked
    eager_error: str = ""
    fake_error: str = ""  # the fake's error on a call the eager kernel accepts (then ``inputs`` is that call)
    fake_rejected: OpInputs | None = None  # the call the eager kernel accepts and the fake raises on
    every_call_error: str = ""  # the programming error the fake raised on every call that got past its checks
    past_checks: int = 0  # how many calls raised a programming error (got past the fake's checks)
    fake_tries: int = 0
    eager_tries: int = 0
    notes: list[str] = field(default_factory=list)
    no_fake: bool = False  # every fake call raised UnsupportedOperatorException: FakeTensorMode cannot run it
    eager_refused_too: int = 0  # calls the fake and the eager kernel both raised a programming error on
    # the fake function's own signature demands an argument the schema lets a call leave out (``f() missing 1
    # required positional argument: 'dtype'``, a defaulted ``dtype`` left out): what FakeTensorMode and export
    # raise on every call that leaves it out; the call, and the arguments demanded
    demands: tuple[str, OpInputs, list[str]] | None = None


def _words(name: str) -> str:
    return name.lower()


def _tensor_options(name: str, optional: bool) -> list[Any]:
    low = _words(name)
    opts = list(TENSOR_OPTIONS)
    if any(w in low for w in INDEX_WORDS):
        opts.sort(key=lambda o: (o[1] not in ("int64", "int32"), o[0] != 1))
    elif "mask" in low:
        opts.sort(key=lambda o: o[1] != "bool")
    elif low.startswith(("scale", "zero_point", "stats", "absmax", "bias", "weight")):
        opts.sort(key=lambda o: (o[0] != 1, o[1] != "float32"))
    return ([None] if optional else []) + opts


def _int_options(name: str, default: Any, has: bool, compared: list[int] = ()) -> list[Any]:
    """The default, then the values the kernels compare the argument with (without a default, these first), then a
    guess by the name and a few small magnitudes."""
    low = _words(name)
    first = default if has and isinstance(default, int) and not isinstance(default, bool) else \
        compared[0] if compared else 0 if "dim" in low else 64 if "block" in low else 4 if "bit" in low else 1
    rest = (1, 0, 2, 4, 8, 16, 32, 64, -1, 3)
    return list(dict.fromkeys((first, *compared, *rest)))


def schema_type(text: str) -> str:
    """A type in schema notation: ``Optional[Tensor]`` is ``Tensor?``, ``List[int]`` is ``int[]``, and alias
    annotations (``Tensor(a!)``) are dropped."""
    text = re.sub(r"\([a-z0-9!|]+\)", "", text.replace(" ", ""))
    m = re.fullmatch(r"Optional\[(.*)\]", text)
    if m:
        return schema_type(m.group(1)) + "?"
    m = re.fullmatch(r"List\[(.*)\]", text)
    if m:
        return schema_type(m.group(1)) + "[]"
    return text


def plan_args(op: Any) -> list[Arg]:
    """Each schema argument with its options, the likeliest first (the default, where there is one)."""
    out = []
    ints: dict[str, list[int]] | None = None  # read from the kernels' code once an op, where an argument asks
    words: tuple[dict[str, list[str]], list[str]] | None = None
    sized: frozenset[str] | None = None
    for name, raw_type, kw, has, default in CL.schema_arguments(op):
        type_text = schema_type(raw_type)
        optional = type_text.endswith("?")
        base = type_text.rstrip("?")
        absent = optional and (not has or default is None)
        if base == "Tensor":
            opts = _tensor_options(name, absent)
            if absent and not any(a.kind in ("tensor", "tensors") for a in out):
                # the op's first tensor, optional by its schema (torchao's ``Tensor? input``): the call without it
                # has no input at all, so a tensor comes first and None last
                opts = [*opts[1:], None]
            out.append(Arg(name, type_text, kw, opts, "tensor"))
        elif base in ("Tensor[]", "Tensor?[]"):
            out.append(Arg(name, type_text, kw, [o for o in TENSOR_OPTIONS[:8]], "tensors"))
        elif base == "ScalarType":
            opts = ([None] if absent else []) + list(SCALAR_TYPES)
            if has and default is not None:
                opts = [default, *opts]
            out.append(Arg(name, type_text, kw, opts, "dtype"))
        elif base == "str":
            first = [default] if has else [None] if absent else []
            guesses = next(v for k, v in STR_GUESSES.items() if k in _words(name))
            # what the kernels compare this argument with (``quant_dtype == "mx"``), then any string they compare
            words = (KC.kernel_named_strings(op), KC.kernel_strings(op)) if words is None else words
            said = [*words[0].get(name, []), *words[1]]
            out.append(Arg(name, type_text, kw, list(dict.fromkeys([*first, *said, *guesses])), "str"))
        elif base in ("int", "SymInt") and not absent:
            # a custom_op's Python int is a SymInt by its schema; one that names an axis or a mode is passed as a
            # constant by every caller, and export installs no guard on a constant (a size it is not)
            # (one named like an axis that the kernels use as a size only is a size: torchrec's ``dim0``, hunt 60)
            sized = KC.kernel_size_names(op) if sized is None else sized
            size = base == "SymInt" and (not constant_int(name) or name in sized)
            ints = KC.kernel_ints(op) if ints is None else ints  # what the kernels compare ints with (``bits == 8``)
            compared = ints.get(name, [])
            out.append(Arg(name, type_text, kw, _int_options(name, default, has, compared), "sym" if size else "int"))
        elif base == "bool" and not absent:
            first = bool(default) if has and isinstance(default, bool) else False
            out.append(Arg(name, type_text, kw, [first, not first], "bool"))
        elif base in ("float", "Scalar") and not absent:
            first = default if has and isinstance(default, (int, float)) and not isinstance(default, bool) else 1
            out.append(Arg(name, type_text, kw, list(dict.fromkeys([first, 0.5, 0, 2])), "float"))
        elif absent and not has and base.endswith("[]") and _fixed_value(base, name) is not ...:
            # an optional list with no default: absent first, then present (upsample's output_size and
            # scale_factors: exactly one of the two must be given)
            one = _fixed_value(base, name)
            two = one if len(one) == 2 else one[:1] * 2  # two entries (a 2-d op's sizes or scales), then one
            out.append(Arg(name, type_text, kw, [None, two, one[:1]], "fixed"))
        elif absent:
            out.append(Arg(name, type_text, kw, [None], "fixed"))
        elif has:
            out.append(Arg(name, type_text, kw, [default], "fixed", defaulted=True))
        else:
            out.append(Arg(name, type_text, kw, [_fixed_value(base, name)], "fixed"))
    return out


def _fixed_value(base: str, name: str) -> Any:
    """A value for an argument the search does not vary (lists, devices, ...); ``...`` when none can be made.
    A list the schema gives a length (``int[2] kernel_size``, ``SymInt[4] padding``) has that many entries."""
    m = re.fullmatch(r"(?:int|SymInt|bool|float)\[(\d+)\]", base)
    n = int(m.group(1)) if m else None
    if base.startswith(("int[", "SymInt[")):
        if "perm" in name.lower():  # a permutation of a matrix's dims (a transpose; _widened tries 3 and 4)
            return list(reversed(range(n or 2)))
        if "dim" in name:
            return list(range(n)) if n else [0]
        value = [3, 3] if name in ("size", "shape", "sizes") else [1]
        return value if n is None or len(value) == n else [value[0]] * n
    if n is not None and base.startswith(("bool[", "float[")):
        return [True] * n if base.startswith("bool[") else [1.0] * n
    # a Device: the CPU's name; a ``None``-typed argument (``None amax``, another backend's slot): None
    return {"bool[]": [True], "Scalar[]": [1], "float[]": [1.0], "Device": "cpu", "NoneType": None}.get(base, ...)


def _widened(a: Arg) -> list[Any]:
    """More options for an argument, for a second search where the first found nothing: a list of no length the
    schema states at 2 and 4 entries too (a pad of even length, a 2-d size's strides; a permutation of 3 and 4
    dims), and an optional number present (clamp needs a min or a max). The first options stay first."""
    base = a.type.rstrip("?")
    if a.kind == "fixed" and "perm" in a.name.lower() and base in ("int[]", "SymInt[]"):
        return [*a.options, [0, 2, 1], [0, 2, 3, 1]]
    if a.kind == "fixed" and a.options and isinstance(a.options[0], list) and len(a.options[0]) == 1 \
            and base in ("int[]", "SymInt[]"):
        return [*a.options, a.options[0] * 2, a.options[0] * 4]
    if a.kind == "fixed" and a.options == [None] and base in ("Scalar", "float", "int", "SymInt"):
        return [None, 1.0 if base == "float" else 1]
    return a.options


def tree_of(arg: Arg, option: Any, size: int) -> Tree | None:
    """The tree of one argument taking ``option`` with every dim of ``size``; None when it cannot be made."""
    if option is None:
        return ("const", None)
    if arg.kind == "tensor":
        rank, dtype = option
        return ("tensor", tuple(f"{arg.name}_{i}" for i in range(rank)), (size,) * rank, dtype)
    if arg.kind == "tensors":
        rank, dtype = option
        return ("list", tuple(("tensor", tuple(f"{arg.name}_{j}_{i}" for i in range(rank)), (size,) * rank, dtype)
                              for j in range(2)))
    if arg.kind == "dtype":
        return ("dtype", option) if isinstance(option, str) else ("const", option)
    if arg.kind == "sym":
        return ("sym", arg.name, option if option >= 0 else 1)
    if arg.kind == "fixed" and arg.type.rstrip("?").startswith("SymInt[") and isinstance(option, list) \
            and not constant_int(arg.name):
        return ("list", tuple(("sym", f"{arg.name}_{i}", size if v > 1 else v) for i, v in enumerate(option)))
    if option is ...:
        return None
    return ("const", option)


def build(op_name: str, args: list[Arg], combo: tuple[Any, ...], size: int, label: str = "") -> OpInputs | None:
    trees = [tree_of(a, o, size) for a, o in zip(args, combo, strict=True)]
    if any(t is None for t in trees):
        return None
    return OpInputs(op_name, "schema", tuple((a.name, a.keyword, t) for a, t in zip(args, trees, strict=True)),
                    label=label)


def nearest_first(lengths: list[int]) -> Iterator[tuple[int, ...]]:
    """Every tuple of one index per list, by the sum of the indices (the likeliest combinations first)."""
    def with_sum(k: int, total: int) -> Iterator[tuple[int, ...]]:
        if k == len(lengths):
            if total == 0:
                yield ()
            return
        for i in range(min(lengths[k] - 1, total) + 1):
            for rest in with_sum(k + 1, total - i):
                yield (i, *rest)

    for total in range(sum(n - 1 for n in lengths) + 1):
        yield from with_sum(0, total)


class Search:
    """The search of one op's inputs: ``eager(inputs) -> EagerResult`` runs its eager kernel (None: it has none)."""

    def __init__(self, op_name: str, op: Any, call: Callable[..., Any], eager: Callable[[OpInputs], Any] | None,
                 own: str = ""):
        """``own``: the fake function's name: a call its signature refuses is a finding (``_demands``)."""
        self.op_name, self.op, self.call, self.eager, self.own = op_name, op, call, eager, own
        self.args = plan_args(op)
        self.found = Found()
        self.tried: set[tuple] = set()
        self.errors: list[str] = []
        self.sizes = list(SIZES)  # the example size of every tensor dim, tried in this order (errors reorder it)

    def fake_ok(self, inputs: OpInputs) -> tuple[bool, str]:
        self.found.fake_tries += 1
        ok, value = fake_result(self.call, inputs, dict(inputs.dims()))
        if not ok and value.startswith(DATA_DEPENDENT):  # it takes the sizes; its guard on data is a finding later
            return True, ""
        return ok, "" if ok else value

    def eager_ok(self, inputs: OpInputs) -> tuple[bool | None, str]:
        """True/False: the eager kernel accepts/rejects; None: it has no kernel for the device."""
        if self.eager is None:
            return None, ""
        self.found.eager_tries += 1
        res = self.eager(inputs)
        if res.ok:
            return True, ""
        if any(m in res.error for m in NO_EAGER) and "NotImplementedError" in res.error:
            self.eager = None
            return None, res.error
        return False, res.error

    def uniform(self) -> Iterator[tuple[tuple[Any, ...], int]]:
        """Every tensor argument alike (each of the first tensor's options in turn), the others at their first
        option: most ops take tensors of one rank and dtype."""
        tensors = [a for a in self.args if a.kind in ("tensor", "tensors")]
        if len(tensors) < 2:
            return
        for o in tensors[0].options:
            if o is None:
                continue
            combo = tuple(o if a.kind in ("tensor", "tensors") and a.options[0] is not None and o in a.options
                          else a.options[0]
                          for a in self.args)
            if repr((combo, self.sizes[0])) not in self.tried:
                self.tried.add(repr((combo, self.sizes[0])))
                yield combo, self.sizes[0]
                if self._moved:  # an error named what it wants: the per-argument search takes it from here
                    self._moved = False
                    return

    def combos(self) -> Iterator[tuple[tuple[Any, ...], int]]:
        """(options, size) in order, restarted whenever an error moves an option."""
        yield from self.uniform()
        while True:
            lengths = [len(a.options) for a in self.args] + [len(self.sizes)]
            restarted = False
            for idx in nearest_first(lengths):
                combo = tuple(a.options[i] for a, i in zip(self.args, idx[:-1], strict=True))
                key = repr((combo, self.sizes[idx[-1]]))
                if key in self.tried:
                    continue
                self.tried.add(key)
                yield combo, self.sizes[idx[-1]]
                if self._moved:
                    self._moved = False
                    restarted = True
                    break
            if not restarted:
                return

    _moved = False

    def _size_hint(self, error: str) -> None:
        """An error that asks a dimension for a size (``grid last dimension must be 2``), or a size to divide
        (``divisible by 32``), makes that size the next tried for every dim (the second in the order); the search
        goes on without a restart."""
        wanted = re.split(r"\b(?:but )?(?:got|found|received)\b", error)[0]
        m = _SIZE_RE.search(wanted)
        shape = _SHAPE_RE.search(wanted) if m is None else None
        sizes = [int(x) for x in re.findall(r"\b\d{1,2}\b", shape.group(1))] if shape is not None else []
        n = int(m.group(1)) if m is not None else sizes[0] if sizes else 0
        divisor = _DIVISIBLE_RE.search(wanted) if not n else None
        if divisor is not None:  # amd-quark's shape[-1] % 32, bitsandbytes' "divisible by 4 to view Byte as Float"
            n = int(divisor.group(1) or divisor.group(2))
            n = n if 2 <= n <= DIVISOR_MOST else 0
        if not 1 <= n <= DIVISOR_MOST or (n > 16 and divisor is None) or n in self.sizes[:2]:
            return
        rest = [x for x in self.sizes if x != n]
        self.sizes = [rest[0], n, *rest[1:]]  # second: the size it asks of one dim may not suit the others

    def _at_hinted_size(self, error: str, combo: tuple[Any, ...], size: int) -> Any:
        """The call ``combo`` built at the size ``error`` asks for (``_size_hint``), where that is another size;
        None otherwise."""
        before = list(self.sizes)
        self._size_hint(error)
        n = self.sizes[1] if self.sizes != before else None
        return build(self.op_name, self.args, combo, n) if n is not None and n != size else None

    def narrowed(self, name: str, option: Any) -> Found:
        """A search of its own with the argument ``name`` held at ``option`` (a variant the first inputs cannot
        take: ``dim=2`` wants a rank-3 input), on a quarter of the budget and without the widening."""
        sub = Search(self.op_name, self.op, self.call, self.eager, self.own)
        sub.args = [Arg(a.name, a.type, a.keyword, [option], a.kind, a.defaulted) if a.name == name else a for a in sub.args]
        if not any(a.name == name for a in sub.args):
            return Found()
        found = sub._search(FAKE_TRIES // 4, EAGER_TRIES // 4)  # (a hint may move the argument off its value)
        return found if all(holds(c, name, option) for c in (found.inputs, found.fake_rejected)) else Found()

    def run(self) -> Found:
        """The first inputs the fake (and the eager kernel) take; where none is found, a second search with more
        options for the lists and optional numbers (``_widened``), within the same budget again."""
        first = self._search()
        if first.inputs is not None or first.every_call_error:
            return first
        widened = [_widened(a) for a in self.args]
        if widened == [a.options for a in self.args]:
            return first
        self.args = [Arg(a.name, a.type, a.keyword, w, a.kind, a.defaulted) for a, w in zip(self.args, widened, strict=True)]
        self.found, self.tried, self.errors, self.sizes = Found(), set(), [], list(SIZES)
        self.found.fake_tries, self.found.eager_tries = first.fake_tries, first.eager_tries
        second = self._search(first.fake_tries + FAKE_TRIES, first.eager_tries + EAGER_TRIES)
        if second.inputs is None:
            first.fake_tries, first.eager_tries = second.fake_tries, second.eager_tries
            return first
        return second

    def _without_optionals(self, combo: tuple[Any, ...], size: int, inputs: OpInputs,
                           error: str) -> tuple[OpInputs, bool | None, str, tuple[Any, ...]]:
        """(the call, the eager kernel's verdict and error, its combination) with the optional tensors left out,
        where the fake takes it that way and the eager kernel gets past ``error`` there (the search then tries
        them left out first); else the call as it was, refused with ``error``."""
        optional = [a for a in self.args if a.kind == "tensor" and a.type.endswith("?") and None in a.options]
        left = tuple(None if a in optional else o for a, o in zip(self.args, combo, strict=True))
        other = build(self.op_name, self.args, left, size) if left != combo else None
        if other is None or not self.fake_ok(other)[0]:
            return inputs, False, error, combo
        verdict, err = self.eager_ok(other)
        if verdict is False and err == error:
            return inputs, False, error, combo
        for a in optional:  # the eager kernel takes the call without them: the search goes on that way
            a.options = [None, *(x for x in a.options if x is not None)]
        return other, verdict, err, left

    def _search(self, fake_budget: int = FAKE_TRIES, eager_budget: int = EAGER_TRIES) -> Found:
        f = self.found
        fake_accepted: list[OpInputs] = []
        half = eager_budget - (eager_budget - f.eager_tries) // 2  # a narrowed search's too, of its quarter budget
        unmakeable = [a.name for a in self.args if a.kind == "fixed" and a.options == [...]]
        if unmakeable:
            f.notes.append(f"no value can be made for {', '.join(unmakeable)} (its schema type)")
            return f
        for n, (combo, size) in enumerate(self.combos()):
            if f.fake_tries >= fake_budget or n >= 20 * FAKE_TRIES:
                break
            inputs = build(self.op_name, self.args, combo, size)
            if inputs is None:
                continue
            ok, err = self.fake_ok(inputs)
            if ok:
                if self.eager is None or f.eager_tries >= eager_budget:
                    f.inputs = inputs
                    if f.fake_rejected is not None and self.eager is not None:
                        f.eager = "unchecked"
                        return f
                    f.eager = "none" if self.eager is None else "rejected" if fake_accepted else "unchecked"
                    return f
                verdict, eerr = self.eager_ok(inputs)
                if verdict is False and eerr.startswith("TypeError"):  # an eager kernel that cannot take the
                    # schema's optional tensors (executorch's reference takes 14 of 15 arguments): without them
                    inputs, verdict, eerr, combo = self._without_optionals(combo, size, inputs, eerr)
                if verdict is not False:
                    f.inputs, f.eager = inputs, "accepted" if verdict else "none"
                    return f
                fake_accepted.append(inputs)
                f.eager_error = eerr
                self._moved = hint(self.args, eerr, combo)
                again = self._at_hinted_size(eerr, combo, size)  # "a multiple of 8" of the eager kernel's: the same
                # call at that size (vllm's out= ops, which take any size under torch's trivial fake: hunt 64)
                verdict = self.eager_ok(again)[0] if again is not None and f.eager_tries < eager_budget \
                    and self.fake_ok(again)[0] else False
                if verdict is not False:
                    f.inputs, f.eager = again, "accepted" if verdict else "none"
                    return f
                continue
            absent = [a for a, o in zip(self.args, combo, strict=True) if o is None and a.kind == "tensor"
                      and any(x is not None for x in a.options)]
            if absent and "'NoneType' object" in err and err.partition(":")[0] in PROGRAMMING_ERRORS:
                # the fake used an optional tensor the call left out (torchao's ``Tensor? input``): a refusal of
                # that None, not a programming error of the fake; the tensor is given next
                self.errors.append(f"None refused: {err}")
                for a in absent:
                    a.options = [*(x for x in a.options if x is not None), None]
                self._moved = True
                continue
            self.errors.append(err)
            if self._demands(err, inputs):
                continue
            if self.eager is not None and f.fake_rejected is None and f.eager_tries < half and len(self.errors) in (1, 4, 16):
                verdict, eerr = self.eager_ok(inputs)
                if verdict:  # the eager kernel takes what the fake refuses: reported; the search goes on
                    f.fake_rejected, f.fake_error = inputs, err
                    self._moved = hint(self.args, err, combo)
                    self._size_hint(err)  # a size the fake asks for: a call both take may have it
                    continue
                if eerr:
                    self._moved = hint(self.args, eerr, combo)
                    # both raised a programming error: a size check of the eager kernel's is not one
                    f.eager_refused_too += {err.partition(":")[0], eerr.partition(":")[0]} <= set(PROGRAMMING_ERRORS)
            self._size_hint(err)
            # an unpacking error is read once the search keeps meeting it: the order of ranks tried first
            # (2, 1, 3) often gets past it anyway, through a path for another rank
            unpacked = sum(bool(UNPACK_RE.search(e)) for e in self.errors) >= UNPACK_AFTER
            self._moved = hint(self.args, err, combo, unpacked) or self._moved  # a size alone: no restart
        if fake_accepted:  # the fake takes these, the eager kernel none of them: traced, not compared
            f.inputs, f.eager = fake_accepted[0], "rejected"
            return f
        if f.fake_rejected is not None:  # no call both take: the one the eager kernel takes
            f.inputs, f.eager = f.fake_rejected, "accepted"
            return f
        return self._nothing_found(f)

    def _demands(self, err: str, inputs: OpInputs) -> bool:
        """Whether ``err`` is the fake function's own signature demanding what the call left out (every call the
        search makes is one the op's schema allows): kept for a finding, and the arguments it demands are given
        from then on (their ``None`` tried last), so that the search reaches the fake's shape logic all the same."""
        m = _DEMANDS_RE.match(err)
        if m is None or not self.own or m.group(1) != self.own:
            return False
        names = [a.name for a in self.args if a.name in set(re.findall(r"'(\w+)'", m.group(2)))]
        if self.found.demands is None:
            self.found.demands = (err, inputs, names)
        for a in self.args:
            if a.name in names and None in a.options:
                a.options = [*(o for o in a.options if o is not None), None]
                self._moved = True
        return True

    def _nothing_found(self, f: Found) -> Found:
        """No call found: a programming error on every call that got past indexing the shapes (an IndexError is
        a rank the fake does not take, not a check), or on most calls, where the others failed a check (the
        rank): every call that passed the checks raised it, so the fake cannot run at all (baddbmm.dtype in torch
        2.13 runs baddbmm's decomposition, which binds out_dtype to beta: "batch1 must be a 3D tensor" below
        rank 3, a TypeError at it)."""
        kinds = {e.partition(":")[0] for e in self.errors}
        f.no_fake = kinds == {"UnsupportedOperatorException"}
        programming = [e for e in self.errors if e.partition(":")[0] in PROGRAMMING_ERRORS]
        only = kinds <= {*PROGRAMMING_ERRORS, "IndexError"} and (len(set(programming)) == 1 or len(programming) >= 4)
        # where the eager kernel raised such an error too, the inputs are wrong (a real tensor for a complex FFT,
        # an optional the Python kernel needs), not the fake: no input found, never a kernel error
        if programming and not f.eager_refused_too and (
                only or len(programming) >= max(4, len(self.errors) - len(programming))):
            f.every_call_error = max(set(programming), key=programming.count)
            f.past_checks = len(programming)
        return f
