"""Text form of the IR, for debugging and for tests that read the IR."""

from __future__ import annotations

from .core import Block, Const, FuncRef, Function, GlobalVar, LoopMerge, Module, Op, Param, SpecConst, SpecOp, Value


class _Names:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def __call__(self, v: Value) -> str:
        if isinstance(v, Const):
            return f"{v.value!r}:{v.type}"
        if isinstance(v, (SpecConst, GlobalVar, Param)):
            return f"@{v.name}"
        if isinstance(v, SpecOp):
            return f"@({v.sym})"
        if isinstance(v, FuncRef):
            return f"@{v.func.name}"
        key = id(v)
        if key not in self.names:
            self.names[key] = f"%{len(self.names)}"
        return self.names[key]


def print_module(module: Module) -> str:
    """Render ``module`` as text (deterministic)."""
    lines = [f"module {module.name} workgroup_size={_wg(module.workgroup_size)}"]
    for s in module.spec_consts:
        lines.append(f"  spec @{s.name}: {s.type} id={s.spec_id} default={s.default!r}")
    for g in module.globals:
        info = " ".join(f"{k}={v!r}" for k, v in sorted(g.info.items()))
        lines.append(f"  global @{g.name}: {g.type} {g.role} {info}".rstrip())
    for f in module.functions:
        lines.append(print_function(f))
    return "\n".join(lines) + "\n"


def _wg(size: tuple[int | SpecConst, ...]) -> str:
    return "(" + ", ".join(s.name if isinstance(s, SpecConst) else str(s) for s in size) + ")"


def print_function(func: Function) -> str:
    names = _Names()
    params = ", ".join(f"@{p.name}: {p.type}" for p in func.params)
    out = [f"{'kernel' if func.is_entry else 'func'} {func.name}({params}) -> {func.type.ret} {{"]
    for b in func.blocks:
        out.append(_block(b, names))
    out.append("}")
    return "\n".join(out)


def _block(b: Block, names: _Names) -> str:
    head = f"^{b.name}:"
    if b.merge is not None:
        if isinstance(b.merge, LoopMerge):
            head += f"  // loop merge=^{b.merge.merge.name} continue=^{b.merge.cont.name}"
            if str(b.merge.hint):
                head += f" {b.merge.hint}"
        else:
            head += f"  // selection merge=^{b.merge.merge.name}"
    lines = [head]
    for op in b.all_ops():
        lines.append("  " + _op(op, names))
    return "\n".join(lines)


def _op(op: Op, names: _Names) -> str:
    args = ", ".join(names(v) for v in op.operands)
    attr_text = " ".join(f"{k}={_attr(v)}" for k, v in sorted(op.attrs.items()))
    lhs = f"{names(op)}: {op.type} = " if op.has_result else ""
    return f"{lhs}{op.kind}({args}) {attr_text}".rstrip() + f"  // {op.loc.line}:{op.loc.col}"


def _attr(v: object) -> str:
    """An attribute value as text: blocks as ^name, functions by name, sets sorted, typed values by str."""
    if isinstance(v, Block):
        return f"^{v.name}"
    if isinstance(v, Function):
        return f"@{v.name}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_attr(x) for x in v) + "]"
    if isinstance(v, SpecConst):
        return f"@{v.name}"
    if isinstance(v, SpecOp):
        return f"@({v.sym})"
    if isinstance(v, frozenset):
        return "{" + ", ".join(sorted(map(str, v))) + "}"
    return str(v)
