"""The mutants of a Python module, named by what they change, and each applied to the source text (scripts/mutate.py).

A site is an operator, comparison, `and`/`or`, `not`, unary minus, number or `True`/`False`, or a call of `any`,
`all`, `min` or `max`. A mutant changes one site: `+`↔`-`, `*`↔`/`, `//`→`*`, `<`↔`<=`, `>`↔`>=`, `==`↔`!=`,
`in`↔`not in`, `is`↔`is not`, `and`↔`or` (every operator of that `and`/`or`), `not x`→`x`, `-x`→`x`, n→n+1,
x→2x (0.0→1.0), `True`↔`False`, `any`↔`all`, `min`↔`max`. Never in docstrings, annotations, f-strings, an
`if TYPE_CHECKING:` block or `if __name__ == "__main__"`.

A mutant's name says where and what, not at which position, so it stays when unrelated code moves:
`ganeval/metrics/kid.py:kid_unbiased:'<'→'<='@"n < 2"` is file, function (`<module>` outside any; a class's body
is its name), the change, and the expression around it (its first 60 characters); mutants whose names would
coincide get `#1`, `#2`, … in source order. The mutated text differs from the source only at the site's tokens
(every other line and column kept), and is checked to parse to the intended tree.
"""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass

OPS: dict[type, str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Lt: "<", ast.LtE: "<=",
    ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is",
    ast.IsNot: "is not", ast.And: "and", ast.Or: "or",
}
SWAPS: dict[type, type] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.And: ast.Or, ast.Or: ast.And,
}
CALLS = {"any": "all", "all": "any", "min": "max", "max": "min"}
CONTEXT_CHARS = 60


@dataclass(frozen=True)
class Mutant:
    """One small change of `module` at `line`: `before` (the site's expression) becomes `after`; `function` is
    the qualified name of the function (or class body, or `<module>`) it is in; `index` its site's position in
    `sites` order for this version of the source (not part of its name); `header` when it sits in a function's
    defaults or decorators or a class's decorators (evaluated once, when the module is imported: a test may read it
    without running the function, by calling it without the argument or reading its signature)."""

    module: str
    name: str
    function: str
    line: int
    before: str
    after: str
    index: int
    header: bool = False  # in a function's defaults or decorators: run at definition, read by its callers


def _skipped(tree: ast.Module) -> set[int]:
    """ids of the nodes not worth mutating: docstrings, annotations, f-strings, `if TYPE_CHECKING` and
    `if __name__ == "__main__"` blocks."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        parts: list[ast.AST] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            parts += [a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs if a.annotation]
            parts += [a.annotation for a in (args.vararg, args.kwarg) if a is not None and a.annotation]
            parts += [node.returns] if node.returns else []
        if isinstance(node, ast.AnnAssign):
            parts.append(node.annotation)
        if isinstance(node, ast.JoinedStr):
            parts.append(node)
        if isinstance(node, ast.If) and ("TYPE_CHECKING" in ast.unparse(node.test)
                                         or "__name__" in ast.unparse(node.test)):
            parts.append(node)
        for part in parts:
            skip.update(id(n) for n in ast.walk(part))
    return skip


def _how(node: ast.AST) -> str | None:
    """How `node` can be mutated ('op', 'cmp', 'bool', 'unary', 'const', 'call') or None."""
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in SWAPS and not _text_operand(node):
        return "op"
    if isinstance(node, ast.BoolOp):
        return "bool"
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in SWAPS:
        return "cmp"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        return "unary"
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
        return "const"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CALLS:
        return "call"
    return None


def _text_operand(node: ast.BinOp | ast.AugAssign) -> bool:
    """Whether an operand is a string (a literal or f-string): `+` there only joins text, and `-` would only raise."""
    sides = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.value]
    return any(isinstance(s, ast.JoinedStr) or (isinstance(s, ast.Constant) and isinstance(s.value, (str, bytes)))
               for s in sides)


def _scopes(tree: ast.Module) -> dict[int, str]:
    """id(node) -> the qualified name of the innermost function or class holding it ('<module>' outside any).
    A function's decorators, defaults and signature belong to the function."""
    out: dict[int, str] = {}

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = child.name if scope == "<module>" else f"{scope}.{child.name}"
            out[id(child)] = inner
            visit(child, inner)

    visit(tree, "<module>")
    return out


def _headers(tree: ast.Module) -> set[int]:
    """ids of the nodes in a function's defaults and decorators, and in a class's decorators."""
    out: set[int] = set()
    for f in ast.walk(tree):
        parts: list[ast.expr] = []
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts = [*f.args.defaults, *(d for d in f.args.kw_defaults if d is not None), *f.decorator_list]
        elif isinstance(f, ast.ClassDef):
            parts = list(f.decorator_list)
        for part in parts:
            out |= {id(n) for n in ast.walk(part)}
    return out


def _site_nodes(tree: ast.Module) -> list[tuple[ast.AST, str]]:
    """Every (node, how) that can be mutated, in source order."""
    skip = _skipped(tree)
    found = [(n, how) for n in ast.walk(tree) if id(n) not in skip and (how := _how(n)) is not None]
    return sorted(found, key=lambda s: (s[0].lineno, s[0].col_offset, s[1]))  # type: ignore[attr-defined]


def _new_constant(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    assert isinstance(value, float)
    return 2 * value if value else 1.0


def _change(node: ast.AST, how: str) -> str:
    """The change in the name: `'<'→'<='`, `'not'→''`, `2→3`, `'any'→'all'`."""
    if how in ("op", "cmp", "bool"):
        op = node.ops[0] if how == "cmp" else node.op  # type: ignore[attr-defined]
        return f"'{OPS[type(op)]}'→'{OPS[SWAPS[type(op)]]}'"
    if how == "unary":
        return "'not'→''" if isinstance(node.op, ast.Not) else "'-'→''"  # type: ignore[attr-defined]
    if how == "call":
        name = node.func.id  # type: ignore[attr-defined]
        return f"'{name}'→'{CALLS[name]}'"
    value = node.value  # type: ignore[attr-defined]
    return f"{value!r}→{_new_constant(value)!r}"


def _context(node: ast.AST, how: str, parents: dict[int, ast.AST]) -> str:
    """The expression the site is in: the site itself, or for a number or True/False the node holding it."""
    around = node
    if how == "const":
        around = parents.get(id(node), node)
    text = " ".join(ast.unparse(around).split())
    return text if len(text) <= CONTEXT_CHARS else text[:CONTEXT_CHARS - 1] + "…"


def sites(source: str, module: str) -> list[Mutant]:
    """Every mutant of `source` (the text of `module`, a path like ganeval/metrics/kid.py), in source order."""
    tree = ast.parse(source)
    scopes = _scopes(tree)
    headers = _headers(tree)
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    found = []
    for index, (node, how) in enumerate(_site_nodes(tree)):
        after = _mutated_node_text(node, how)
        name = f"{module}:{scopes[id(node)]}:{_change(node, how)}@\"{_context(node, how, parents)}\""
        found.append(Mutant(module, name, scopes[id(node)], node.lineno, ast.unparse(node), after, index,  # type: ignore[attr-defined]
                            id(node) in headers))
    seen: dict[str, int] = {}
    for m in found:
        seen[m.name] = seen.get(m.name, 0) + 1
    count: dict[str, int] = {}
    out = []
    for m in found:
        if seen[m.name] > 1:
            count[m.name] = count.get(m.name, 0) + 1
            m = Mutant(m.module, f"{m.name}#{count[m.name]}", m.function, m.line, m.before, m.after, m.index, m.header)
        out.append(m)
    return out


def _mutate_node(tree: ast.Module, node: ast.AST, how: str) -> ast.AST:
    """Change `node` in `tree` in place (the intended change); returns what stands at its place now."""
    if how in ("op", "bool"):
        node.op = SWAPS[type(node.op)]()  # type: ignore[attr-defined]
    elif how == "cmp":
        node.ops = [SWAPS[type(node.ops[0])]()]  # type: ignore[attr-defined]
    elif how == "const":
        node.value = _new_constant(node.value)  # type: ignore[attr-defined]
    elif how == "call":
        node.func.id = CALLS[node.func.id]  # type: ignore[attr-defined]
    else:  # `not x` -> `x`, `-x` -> `x`: the operand takes the node's place in its parent
        operand = node.operand  # type: ignore[attr-defined]
        for parent in ast.walk(tree):
            for field, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, field, operand)
                elif isinstance(value, list):
                    value[:] = [operand if v is node else v for v in value]
        return operand  # type: ignore[no-any-return]
    return node


def _mutated_node_text(node: ast.AST, how: str) -> str:
    """The site as it reads after the change (for the log), computed on a copy."""
    holder = ast.parse("x = 0")
    copy = ast.parse(ast.unparse(node), mode="eval").body if not isinstance(node, ast.AugAssign) else \
        ast.parse(ast.unparse(node)).body[0]
    holder.body = [ast.Expr(copy)] if not isinstance(copy, ast.stmt) else [copy]  # type: ignore[list-item]
    return ast.unparse(_mutate_node(holder, copy, how))


class _Text:
    """The source as bytes with (line, column) → offset (the AST's columns count UTF-8 bytes)."""

    def __init__(self, source: str) -> None:
        self.data = source.encode()
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def at(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def start(self, node: ast.AST) -> int:
        return self.at(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


_BETWEEN = re.compile(rb"(?:[\s()\\]|#[^\n]*)*")


def _operator_span(text: _Text, left_end: int, right_start: int, op: str) -> tuple[int, int]:
    """The (start, end) offsets of the operator token `op` between two operands (past brackets, spaces, comments)."""
    pos = _BETWEEN.match(text.data, left_end).end()  # type: ignore[union-attr]
    pattern = re.compile(re.escape(op.encode()).replace(rb"\ ", rb"\s+") + (rb"\b" if op[-1].isalpha() else b""))
    found = pattern.match(text.data, pos)
    if found is None or found.end() > right_start:
        raise ValueError(f"no {op!r} between offsets {left_end} and {right_start}")
    return found.start(), found.end()


def _edits(text: _Text, node: ast.AST, how: str) -> list[tuple[int, int, bytes]]:
    """The (start, end, replacement) byte edits that make the change at `node`."""
    if how == "const":
        return [(text.start(node), text.end(node), repr(_new_constant(node.value)).encode())]  # type: ignore[attr-defined]
    if how == "call":
        func = node.func  # type: ignore[attr-defined]
        return [(text.start(func), text.end(func), CALLS[func.id].encode())]
    if how == "unary":
        word = "not" if isinstance(node.op, ast.Not) else "-"  # type: ignore[attr-defined]
        start = text.start(node)
        assert text.data[start:start + len(word)] == word.encode()
        return [(start, start + len(word), b"")]
    if how == "cmp":
        pairs = [(node.left, node.comparators[0], node.ops[0])]  # type: ignore[attr-defined]
    elif how == "bool":
        values = node.values  # type: ignore[attr-defined]
        pairs = [(a, b, node.op) for a, b in itertools.pairwise(values)]  # type: ignore[attr-defined]
    elif isinstance(node, ast.AugAssign):
        pairs = [(node.target, node.value, node.op)]
    else:
        pairs = [(node.left, node.right, node.op)]  # type: ignore[attr-defined]
    edits = []
    for left, right, op in pairs:
        suffix = "=" if isinstance(node, ast.AugAssign) else ""
        a, b = _operator_span(text, text.end(left), text.start(right), OPS[type(op)] + suffix)
        new = OPS[SWAPS[type(op)]] + suffix
        space = [c not in b" \t\n\\" for c in (text.data[a - 1:a], text.data[b:b + 1])]  # a word needs them
        edits.append((a, b, (" " * space[0] + new + " " * space[1] if new[-1].isalpha() else new).encode()))
    if how == "bool":  # `a and b or c` → `(a or b) or c` and `(a and b) and c`: the grouping kept
        for part in [node, *[v for v in node.values if isinstance(v, ast.BoolOp)]]:  # type: ignore[attr-defined]
            edits += [(text.start(part), text.start(part), b"("), (text.end(part), text.end(part), b")")]
    return edits


def apply(source: str, mutant: Mutant) -> str:
    """`source` with `mutant` made: only the site's tokens change; checked to parse to the intended tree."""
    tree = ast.parse(source)
    node, how = _site_nodes(tree)[mutant.index]
    text = _Text(source)
    data = text.data
    for start, end, new in sorted(_edits(text, node, how), reverse=True):
        data = data[:start] + new + data[end:]
    out = data.decode()
    _mutate_node(tree, node, how)
    if ast.dump(ast.parse(out)) != ast.dump(tree):
        raise ValueError(f"{mutant.name}: the edited text does not parse to the mutated tree")
    return out


def find(source: str, module: str, name: str) -> Mutant:
    """The mutant of `source` called `name` (as `sites` names it); KeyError if none is."""
    for m in sites(source, module):
        if m.name == name:
            return m
    raise KeyError(name)
