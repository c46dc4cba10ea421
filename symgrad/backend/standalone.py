"""Python functions, and everything they reference, copied into one module's text.

An exported module (:func:`symgrad.transforms.export.export`) must run where symgrad is not
installed, yet kernels call helpers that live in symgrad (``vm.exp`` of
:mod:`.vecmath`, a primitive's numpy implementation). :class:`Copier` copies such
a function's source, under a new name, together with what it reads at module
level, transitively: other functions of symgrad (copied too, renamed
``_<module>_<name>``), constants (written as literals), and imports of the
modules it is allowed to (``numpy``, ``math``; ``numba`` and ``llvmlite`` for a
Numba module). Anything else (a closure, an object that has no literal, a module
it may not import) raises :class:`NotStandalone`, which says what was read: a
module that would import symgrad, or compute with something it does not have, is
never written.

The copy goes through :mod:`ast` (annotations dropped, global names renamed), so
comments are lost and the text is ``ast.unparse``'s.

    >>> import math
    >>> def hyp(x, y):
    ...     return math.sqrt(x * x + y * y)
    >>> copier = Copier(frozenset({"math"}))
    >>> copier.reference(hyp, "hyp", "demo")
    '_standalone_hyp'
    >>> print(copier.text())
    import math
    <BLANKLINE>
    <BLANKLINE>
    def _standalone_hyp(x, y):
        return math.sqrt(x * x + y * y)
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import math
import symtable
import textwrap
import types
from typing import Any

import numpy as np

#: constants copied as literals: these types, and tuples, frozensets and dicts of them
_LITERAL_TYPES = (bool, int, float, str, type(None))


class NotStandalone(TypeError):
    """A function reads something that a standalone module cannot hold."""


class Copier:
    """Collects the text of copied functions and constants, dependencies first, and the
    imports they need; ``roots`` are the top-level packages the module may import."""

    def __init__(self, roots: frozenset[str], taken: frozenset[str] = frozenset()):
        self.roots = roots
        self.imports: dict[str, str] = {}  # local name -> import statement
        self.defs: list[str] = []
        self._named: dict[int, str] = {}   # id(object) -> its name in the module
        self._keep: list[Any] = []         # objects named above, alive while we are
        self._taken = set(taken)

    def reference(self, value: Any, name: str, module: str = "") -> str:
        """The module-level name under which the module holds ``value``, which the code
        being copied reads as ``name`` (``module``: where it comes from, for new names)."""
        if id(value) in self._named:
            return self._named[id(value)]
        if isinstance(value, types.ModuleType):
            return self._import(value, name)
        external = self._external(value)
        if external is not None:
            return self._from_import(value, name, external)
        if _is_literal(value) or _is_numpy_scalar(value):
            new = self._fresh(f"_{module}_{name}" if module else name)
            self._remember(value, new)
            text = _literal(value) if _is_literal(value) else \
                f"{self._import(np, 'np')}.{value.dtype.name}({_literal(value.item())})"
            self.defs.append(f"{new} = {text}")
            return new
        function = _python_function(value)
        if function is None:
            raise NotStandalone(f"{name} is a {type(value).__name__}, which an exported "
                                "module cannot hold (no source, no literal)")
        own = getattr(function, "__module__", "") or ""
        if not own.startswith("symgrad"):
            raise NotStandalone(f"{name} comes from {own or 'nowhere'}, which an exported "
                                f"module may not import (allowed: {sorted(self.roots)})")
        short = own.rsplit(".", 1)[-1]
        new = self._fresh(f"_{short}_{function.__name__}")
        self._remember(value, new)
        self.defs.append(self._copy(function, new))
        return new

    def text(self) -> str:
        """The imports, then the copies (dependencies first), as module text."""
        body = ""
        for k, part in enumerate(self.defs):  # runs of one-line constants stay together
            one_line = "\n" not in part and not part.startswith(("def ", "@"))
            before = "\n\n\n" if k and not (one_line and self._one_line(k - 1)) else "\n"
            body += (before if k else "") + part
        return "\n".join(sorted(set(self.imports.values()))) + "\n\n\n" + body

    def _one_line(self, k: int) -> bool:
        return "\n" not in self.defs[k] and not self.defs[k].startswith(("def ", "@"))

    # -- the parts ------------------------------------------------------------------
    def _remember(self, value: Any, new: str) -> None:
        self._named[id(value)] = new
        self._keep.append(value)

    def _fresh(self, name: str) -> str:
        new, k = name, 1
        while new in self._taken:
            k += 1
            new = f"{name}_{k}"
        self._taken.add(new)
        return new

    def _import(self, module: types.ModuleType, name: str) -> str:
        root = module.__name__.split(".")[0]
        if root not in self.roots:
            raise NotStandalone(f"the module {module.__name__} (read as {name}) may not be "
                                f"imported by an exported module (allowed: {sorted(self.roots)})")
        line = (f"import {module.__name__}" if name == module.__name__
                else f"import {module.__name__} as {name}")
        if "." in module.__name__ and name != module.__name__:
            parent, _, last = module.__name__.rpartition(".")
            line = f"from {parent} import {last}" + (f" as {name}" if name != last else "")
        return self._claim(name, line, module)

    def _external(self, value: Any) -> tuple[str, str] | None:
        """(module, attribute) of an object an allowed package defines, if it is one."""
        module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", "")
        if not isinstance(module, str) or module.split(".")[0] not in self.roots \
                or "." in qualname or "<" in qualname:
            return None
        try:
            found = getattr(importlib.import_module(module), qualname)
        except (ImportError, AttributeError):
            return None
        return (module, qualname) if found is value else None

    def _from_import(self, value: Any, name: str, where: tuple[str, str]) -> str:
        module, attribute = where
        line = f"from {module} import {attribute}" + (f" as {name}" if name != attribute else "")
        return self._claim(name, line, value)

    def _claim(self, name: str, line: str, value: Any) -> str:
        if self.imports.get(name, line) != line or (name in self._taken
                                                    and name not in self.imports):
            raise NotStandalone(f"two different objects are both named {name} in the "
                                "functions to copy")
        self.imports[name] = line
        self._taken.add(name)
        self._remember(value, name)
        return name

    def _copy(self, function: types.FunctionType, new: str) -> str:
        """``function``'s source as ``new``, its global names renamed to their copies."""
        if function.__code__.co_freevars:
            raise NotStandalone(f"{function.__qualname__} is a closure: its source alone "
                                "does not say what it computes")
        try:
            source = textwrap.dedent(inspect.getsource(function))
        except (OSError, TypeError) as e:
            raise NotStandalone(f"the source of {function.__qualname__} is not available") from e
        tree = ast.parse(source)
        node = tree.body[0]
        if not isinstance(node, ast.FunctionDef):  # a lambda: inspect gives its line
            raise NotStandalone(f"{function.__qualname__} is a lambda, not a def")
        _strip_annotations(tree)
        plain = ast.unparse(tree)
        names, local = _globals_read(plain, node.name)
        mapping: dict[str, str] = {}
        for g in sorted(names):
            if g in function.__globals__:
                value = function.__globals__[g]
            elif hasattr(builtins, g):
                continue
            else:
                raise NotStandalone(f"{function.__qualname__} reads {g}, which is not defined")
            module = function.__module__.rsplit(".", 1)[-1]
            mapping[g] = self.reference(value, g, module)
        renamed = {g: n for g, n in mapping.items() if g != n}
        if renamed.keys() & local:
            raise NotStandalone(f"{function.__qualname__} uses {sorted(renamed.keys() & local)} "
                                "both as a global and as a local name")
        _Rename(renamed).visit(tree)
        node.name = new
        return ast.unparse(tree)


def _python_function(value: Any) -> types.FunctionType | None:
    """The Python function behind ``value``: itself, a Numba dispatcher's ``py_func``, an
    intrinsic's definition, a cached function's ``__wrapped__`` (the decorators are in
    the source, and are copied with it)."""
    for attribute in ("py_func", "_defn", "__wrapped__"):
        inner = getattr(value, attribute, None)
        if isinstance(inner, types.FunctionType):
            return inner
    return value if isinstance(value, types.FunctionType) else None


def _is_literal(value: Any) -> bool:
    if isinstance(value, _LITERAL_TYPES):
        return True
    if isinstance(value, (tuple, frozenset)) and type(value) in (tuple, frozenset):
        return all(_is_literal(v) for v in value)
    if type(value) is dict:
        return all(_is_literal(k) and _is_literal(v) for k, v in value.items())
    return False


def _is_numpy_scalar(value: Any) -> bool:
    """A numpy bool, integer or float scalar (a float32 constant of :mod:`.vecmath32`),
    written as ``np.float32(<its value as a Python float>)``, which is exact."""
    return isinstance(value, np.generic) and value.dtype.kind in "biuf"


def _literal(value: Any) -> str:
    """Source text that evaluates to ``value`` (floats exactly; nan and inf by name)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    if type(value) is tuple:
        inner = ", ".join(map(_literal, value))
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if type(value) is frozenset:
        return f"frozenset({{{', '.join(map(_literal, sorted(value, key=repr)))}}})" \
            if value else "frozenset()"
    if type(value) is dict:
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _strip_annotations(tree: ast.AST) -> None:
    """Annotations are not evaluated where they were written (``from __future__ import
    annotations``) but would be in the copy: drop them."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
        elif isinstance(node, ast.arg):
            node.annotation = None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            node.body = [ast.Assign([s.target], s.value, lineno=s.lineno)
                         if isinstance(s, ast.AnnAssign) and s.value is not None else s
                         for s in body
                         if not (isinstance(s, ast.AnnAssign) and s.value is None)] or [
                ast.Pass()]


def _globals_read(source: str, defined: str) -> tuple[set[str], set[str]]:
    """The global names the code in ``source`` (one ``def`` and its decorators) reads,
    and every name that is local somewhere inside it."""
    top = symtable.symtable(source, "<copy>", "exec")
    read = {s.get_name() for s in top.get_symbols()
            if s.is_referenced() and s.get_name() != defined}
    local: set[str] = set()
    stack = list(top.get_children())
    while stack:
        table = stack.pop()
        stack += table.get_children()
        for s in table.get_symbols():
            if s.is_global() and not s.is_declared_global():
                read.add(s.get_name())
            elif s.is_local() or s.is_parameter():
                local.add(s.get_name())
    return read, local


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.mapping:
            node.id = self.mapping[node.id]
        return node


__all__ = ["Copier", "NotStandalone"]
