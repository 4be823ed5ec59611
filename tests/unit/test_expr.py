import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from shapecheck.errors import ExprError
from shapecheck.logic import expr as E


def test_parses_the_issue_examples():
    n = E.parse("L <= 8 and E == Ev and E in (64, 96, 128)")
    assert E.to_text(n) == "L <= 8 and E == Ev and E in (64, 96, 128)"
    assert E.evaluate(E.parse("(L + 31) // 32 * 32"), {"L": 33}) == 64
    assert E.evaluate(E.parse("min(L, S)"), {"L": 3, "S": 2}) == 2


def test_shapes_bind_against_arguments():
    q = E.TupleE((E.Var("B"), E.Var("H"), E.Var("L"), E.Var("E")))
    out = E.bind(E.parse("query.shape[:-1] + (Ev,)"), {}, {"query": q})
    assert E.to_text(out) == "(B, H, L, Ev)"
    assert E.bind(E.parse("query.shape[-2]"), {}, {"query": q}) == E.Var("L")


def test_case_values_fold():
    n = E.bind(E.parse("mask in ('none', 'bool') and not is_causal and L <= 8"),
               {"mask": E.Const("bool"), "is_causal": E.Const(False)})
    assert E.to_text(n) == "L <= 8"
    assert E.bind(E.parse("mask == 'float' and L <= 8"), {"mask": E.Const("bool")}) == E.FALSE


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')", "L ** 2", "L / 2", "x.size(0)", "lambda: 1", "[L for L in S]",
    "L if S", "query.stride", "L[1:2:3]", "1.5 + L", "f(L)", "L @ S", "L << 1",
])
def test_rejects_everything_outside_the_language(text):
    with pytest.raises(ExprError):
        E.parse(text)


def test_type_errors_are_reported():
    with pytest.raises(ExprError):
        E.bind(E.parse("L + 'bool'"), {})
    with pytest.raises(ExprError):
        E.bind(E.parse("(L, S) == 2"), {})
    with pytest.raises(ExprError):  # a conditional needs a condition, and two sides of one kind
        E.bind(E.parse("L if S else E"), {})
    with pytest.raises(ExprError):
        E.bind(E.parse("L if S > 1 else 'x'"), {})


def test_a_conditional_folds_on_choices_and_stays_over_dims():
    pick = E.parse("'float32' if dtype == 'float64' else dtype")
    assert E.bind(pick, {"dtype": E.Const("float64")}) == E.Const("float32")
    assert E.bind(pick, {"dtype": E.Const("float16")}) == E.Const("float16")
    stride = E.bind(E.parse("1 if L == 1 else E"), {})
    assert E.to_text(stride) == "(1 if L == 1 else E)" and E.evaluate(stride, {"L": 2, "E": 5}) == 5


@given(st.integers(-50, 50), st.integers(-50, 50).filter(lambda v: v != 0))
def test_floor_division_and_modulo_follow_python(a, b):
    assert E.evaluate(E.parse("a // b"), {"a": a, "b": b}) == a // b
    assert E.evaluate(E.parse("a % b"), {"a": a, "b": b}) == a % b


@pytest.mark.parametrize("text,message", [
    ("min(L, S, key=abs)", "the keyword argument key= of min()"),
    ("min(L)", "min() of fewer than two plain arguments"),
    ("L.bit_length()", "calling a method or an expression (only min() and max() can be called)"),
    ("eval('1')", "calling eval() (only min() and max() can be called)"),
    ("query.shape[L]", "an index that is not an integer constant at column"),
    ("   ", "an empty expression"),
    (" + ".join(["L"] * 65), "nested deeper than 64 levels"),
    ("-" * 1990 + "L", "nested deeper than 64 levels"),  # whichever gives up first, Python's parser or ours
    ("L" * 2001, "an expression longer than 2000 characters"),
    (str(2**63), "outside int64"),
    ("(N, 2 * D\x00)", "syntax error: source code string cannot contain null bytes"),  # no column: none said
    ("(N, 2 *", "syntax error at column"),
    ("\uff2e + 1", "a character outside ASCII at column 1"),  # a full-width N, which Python would read as N
])
def test_messages_say_what_is_wrong(text, message):
    with pytest.raises(ExprError) as info:
        E.parse(text)
    assert message in info.value.message


def test_the_largest_int64_literal_parses_and_numbers_stop_at_the_limit():
    assert E.parse(str(2**63 - 1)) == E.Const(2**63 - 1)
    assert E.parse(str(-(2**63))) == E.Const(-(2**63))  # int64's least value, the literal torch prints
    assert E.parse(f"L + {-(2**63)}") == E.Arith("+", E.Var("L"), E.Const(-(2**63)))
    for past in (str(-(2**63) - 1), f"-({-(2**63)})", f"--{2**63}"):
        with pytest.raises(ExprError, match="outside int64"):
            E.parse(past)
    assert E.evaluate(E.parse("L * L"), {"L": 2**1000}) == 2**2000
    with pytest.raises(ExprError, match="2\\*\\*4096"):
        E.evaluate(E.parse("L * L"), {"L": 2**3000})


def test_a_nodes_hash_is_kept_once_computed_and_left_out_when_pickled():
    import pickle
    import subprocess
    import sys

    node = E.parse("max(B * H, 3) + L // 2 <= S")
    first = hash(node)
    assert node.__dict__.get("_hash") == first and hash(node) == first
    copy = pickle.loads(pickle.dumps(node))
    assert "_hash" not in copy.__dict__ and copy == node and hash(copy) == first
    # another process hashes strings with another seed: a hash carried over would break every dict lookup there
    code = ("import pickle, sys; from shapecheck.logic import expr as E; n = pickle.loads(sys.stdin.buffer.read()); "
            "print(hash(n) == hash(E.parse('max(B * H, 3) + L // 2 <= S')))")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(node), capture_output=True, check=True,
                         env={"PYTHONHASHSEED": "12345"})
    assert out.stdout.strip() == b"True"


# ``evaluate`` folds straight to Python values (``logic.nodes.value_at``) and falls back to binding
# (``evaluate_bound``) for anything else: the two agree on every tree, ill-typed ones and errors included.
_LEAVES = (st.integers(-9, 9).map(E.Const) | st.booleans().map(E.Const) | st.sampled_from(["a", "b"]).map(E.Const)
           | st.sampled_from(["L", "S", "flag", "mode", "missing"]).map(E.Var))


def _trees(children):
    two = st.tuples(children, children)
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*", "//", "%"]), children, children).map(lambda t: E.Arith(*t)),
        children.map(E.Neg),
        st.tuples(st.sampled_from(["min", "max"]), st.lists(children, min_size=1, max_size=3).map(tuple))
        .map(lambda t: E.Call(*t)),
        st.tuples(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), children, children).map(lambda t: E.Cmp(*t)),
        st.lists(children, max_size=3).map(lambda xs: E.And(tuple(xs))),
        st.lists(children, max_size=3).map(lambda xs: E.Or(tuple(xs))),
        children.map(E.Not),
        st.tuples(children, children, children).map(lambda t: E.Ite(*t)),
        st.lists(children, max_size=3).map(lambda xs: E.TupleE(tuple(xs))),
        st.tuples(children, st.integers(-3, 3)).map(lambda t: E.Index(*t)),
        st.tuples(children, st.none() | st.integers(-2, 2), st.none() | st.integers(-2, 2))
        .map(lambda t: E.SliceE(*t)),
        two.map(lambda t: E.Concat(*t)),
        st.just(E.ShapeOf("query")),
    )


def _outcome(f, node, values):
    try:
        value = f(node, values)
    except ExprError:
        return "ExprError"
    return type(value), value


_INTS = st.deferred(lambda: st.integers(-9, 9).map(E.Const) | st.sampled_from(["L", "S"]).map(E.Var) | st.one_of(
    st.tuples(st.sampled_from(["+", "-", "*", "//", "%"]), _INTS, _INTS).map(lambda t: E.Arith(*t)),
    _INTS.map(E.Neg),
    st.tuples(st.sampled_from(["min", "max"]), st.lists(_INTS, min_size=1, max_size=3).map(tuple))
    .map(lambda t: E.Call(*t)),
    st.tuples(_BOOLS, _INTS, _INTS).map(lambda t: E.Ite(*t)),
    st.tuples(_SHAPES, st.integers(-3, 3)).map(lambda t: E.Index(*t))))
_BOOLS = st.deferred(lambda: st.booleans().map(E.Const) | st.just(E.Var("flag")) | st.one_of(
    st.tuples(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), _INTS, _INTS).map(lambda t: E.Cmp(*t)),
    st.tuples(st.sampled_from(["==", "!="]), st.just(E.Var("mode")), st.sampled_from(["a", "b"]).map(E.Const))
    .map(lambda t: E.Cmp(*t)),
    st.lists(_BOOLS, max_size=3).map(lambda xs: E.And(tuple(xs))),
    st.lists(_BOOLS, max_size=3).map(lambda xs: E.Or(tuple(xs))),
    _BOOLS.map(E.Not)))
_SHAPES = st.deferred(lambda: st.lists(_INTS, max_size=3).map(lambda xs: E.TupleE(tuple(xs))) | st.one_of(
    st.tuples(_SHAPES, st.none() | st.integers(-2, 2), st.none() | st.integers(-2, 2)).map(lambda t: E.SliceE(*t)),
    st.tuples(_SHAPES, _SHAPES).map(lambda t: E.Concat(*t))))


@given(st.recursive(_LEAVES, _trees, max_leaves=12) | _INTS | _BOOLS | _SHAPES,
       st.fixed_dictionaries({"L": st.integers(-3, 2**70), "S": st.integers(-5, 5), "flag": st.booleans(),
                              "mode": st.sampled_from(["a", "b"])}))
@pytest.mark.slow
@example(E.parse("L // (S - S)"), {"L": 1, "S": 2, "flag": True, "mode": "a"})  # division by zero: ExprError
@example(E.parse("-(L * L) % S"), {"L": 2**2100, "S": 3, "flag": True, "mode": "a"})  # over the limit
@example(E.parse("(L, S)[:1] + (L,)"), {"L": 4, "S": 2, "flag": True, "mode": "a"})
def test_evaluate_folds_as_binding_does(node, values):
    assert _outcome(E.evaluate, node, values) == _outcome(E.evaluate_bound, node, values)
