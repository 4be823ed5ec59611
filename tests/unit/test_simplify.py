"""Report text: expressions simplified for people."""


def test_report_text_simplifies_the_arithmetic_inside_a_conditional():
    """hunt 42: a stride of max_pool2d's contract read ``(H + 2 - 1 - 1 + 2 - 1) // 2 + 1`` inside its ``if``s."""
    from shapecheck.logic import expr as E
    from shapecheck.logic.simplify import shown_deep

    node = E.parse("((H + 2 - 1 - 1 + 2 - 1) // 2 if H + 0 >= 2 + 1 else max(W - 1 + 1, 1), 1)")
    assert shown_deep(node) == "(((H + 1) // 2 if H >= 3 else max(1, W)), 1)"
