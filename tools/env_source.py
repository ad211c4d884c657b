"""An environment module's source, read without importing it: what its `__all__` exports and what
its classes derive from. Below both `tools.envs` and `tools.evals`, which each read it."""

from __future__ import annotations

import ast


def exported_names(tree: ast.Module) -> list[str] | None:
    """The names of a literal `__all__` (a list or tuple of strings); None when there is none."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = node.value
            if isinstance(value, (ast.List, ast.Tuple)) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
                return [e.value for e in value.elts]
    return None


def base_name(base: ast.expr) -> str | None:
    """A base class's own name: `Taskset`, `vf.Taskset` and `vf.Taskset[Task, Config]` are all `Taskset`."""
    if isinstance(base, ast.Subscript):
        base = base.value
    return base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)
