"""What a transformed function reads besides its arguments, and guards on it.

A transformed function must return what the plain Python function returns
with the *current* values of the globals, closure variables and attributes it
reads. symgrad traces a function once per signature, so whatever the trace
read from outside is baked into its graph: a number as a literal, an array as
a constant. :func:`world` finds those reads before tracing and :class:`World`
checks, on every call, that they still hold; when one does not, the caller
traces again (the kernel is reused when the new source is the same, since
array constants are kernel arguments, not literals).

The reads are found from the bytecode, as TorchDynamo's guards are: the
globals the code loads, its closure cells and default values, and the
attributes it names, followed through objects, user modules, containers and
the Python functions and methods they lead to (a helper function's own globals
and cells too). Attribute names are taken from the code as a set, so every
object reached is checked for every attribute name the code uses anywhere:
more checks than needed, never fewer.

Each read becomes a guard: an array by its shape, dtype and bytes (an
in-place change is a change), a number or string by value, anything else by
identity (and then by the attributes the code names). Library modules and
functions (numpy, math, symgrad, ...) are not guarded.

The floats read are also listed by identity (:attr:`World.numbers`): the trace
makes each of them a scalar constant of the graph, a kernel argument like an
array constant, rather than a literal in the kernel's source, so that closures
that differ only in the numbers they capture share one kernel.

What cannot be seen this way (the limits, documented in the README): values
reached through ``getattr`` with a computed name, through a container larger
than :data:`MAX_ITEMS`, through calls into a library, or from I/O and random
number generators. Pass such values as arguments, or as static arguments
(``static_argnums``), so that they are part of each call.
"""

from __future__ import annotations

import dis
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

#: top-level packages whose modules and functions are taken as fixed
LIBRARIES = frozenset({
    "numpy", "scipy", "math", "cmath", "symgrad", "builtins", "functools", "itertools",
    "operator", "numba", "sympy", "collections", "typing", "abc", "types", "dataclasses",
    "enum", "warnings", "inspect", "torch", "jax", "dask",
})
#: elements of a list, tuple or dict followed; a longer container is guarded by
#: identity and length only (a documented limit)
MAX_ITEMS = 64
#: guards per function; past it the rest is not followed (a documented limit)
MAX_GUARDS = 512
_DEPTH = 6
_MISSING = object()
_LOADS_ATTR = frozenset({"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR"})
_LOADS_GLOBAL = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_VALUE_TYPES = (int, float, complex, str, bytes, bool, type(None), np.generic)
#: made anew on every attribute access, and C code: not followed, not guarded
_OPAQUE = (types.BuiltinFunctionType, types.BuiltinMethodType, types.MethodWrapperType,
           types.WrapperDescriptorType, types.MethodDescriptorType, np.ufunc)

Getter = Callable[[tuple], Any]


def _library(obj: Any) -> bool:
    name = getattr(obj, "__module__", None) if not isinstance(obj, types.ModuleType) \
        else obj.__name__
    return isinstance(name, str) and name.partition(".")[0] in LIBRARIES


def _symgrad(obj: Any) -> bool:
    name = getattr(obj, "__module__", None)
    return isinstance(name, str) and name.partition(".")[0] == "symgrad"


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _code_objects(c)


def _names(code: types.CodeType) -> tuple[set[str], set[str]]:
    """The global names and the attribute names that ``code`` (and code nested in it) uses."""
    globals_, attrs = set(), set()
    for c in _code_objects(code):
        for ins in dis.get_instructions(c):
            if ins.opname in _LOADS_GLOBAL:
                globals_.add(ins.argval)
            elif ins.opname in _LOADS_ATTR:
                attrs.add(ins.argval)
    return globals_, attrs


def _check(get: Getter, value: Any) -> Callable[[tuple], bool]:
    """A guard on one read: whether ``get(args)`` still gives what it gave when the
    function was traced (``value``): an array by shape, dtype and bytes, a number or
    string by value, anything else by identity."""
    if type(value) is np.ndarray and value.dtype.kind != "O":
        shape, dtype = value.shape, value.dtype
        if value.nbytes <= _SMALL:
            snapshot = value.tobytes()  # a copy

            def small(args: tuple) -> bool:
                now = get(args)
                return (type(now) is np.ndarray and now.shape == shape
                        and (now.dtype is dtype or now.dtype == dtype)
                        and now.tobytes() == snapshot)
            return small
        bits = _bits(np.array(value, order="C"))  # a copy

        def large(args: tuple) -> bool:
            now = get(args)
            return (type(now) is np.ndarray and now.shape == shape and now.dtype == dtype
                    and bool((_bits(now) == bits).all()))
        return large
    if isinstance(value, _VALUE_TYPES):
        kind, key = type(value), _value_key(value)

        def same_value(args: tuple) -> bool:
            now = get(args)
            return now is value or type(now) is kind and _value_key(now) == key
        return same_value
    return lambda args: get(args) is value


_SMALL = 4096  # bytes: up to this, an array's snapshot is its bytes


def _bits(a: np.ndarray) -> np.ndarray:
    """An array's elements as unsigned integers of the same size, flat: compared bit
    for bit (so equal NaNs are equal, and 0.0 differs from -0.0) in one numpy pass."""
    flat = np.ascontiguousarray(a).reshape(-1)
    if flat.dtype.itemsize in (1, 2, 4, 8) and flat.dtype.kind != "O":
        return flat.view(f"u{flat.dtype.itemsize}")
    return flat.view(np.uint8)


def _value_key(x: Any) -> Any:
    """A number as a comparable key that tells 0.0 from -0.0 and finds nan again."""
    if isinstance(x, (float, np.floating)):
        return float(x).hex()
    return x


class World:
    """The reads of one trace, checked on each call: ``world.holds(args)``.

    A guard never raises: a read that fails now (a deleted attribute, a shorter
    list) gives a marker that differs from what the trace read."""

    __slots__ = ("guards", "holds", "numbers")

    def __init__(self, guards: tuple[Callable[[tuple], bool], ...],
                 numbers: frozenset[int] = frozenset()):
        self.guards = guards
        #: ids of the floats read (alive while the function is traced): scalar consts
        self.numbers = numbers
        if len(guards) == 1:
            self.holds = guards[0]  # one call less for the common case
        else:
            self.holds = lambda args: all(holds(args) for holds in guards)

    def __len__(self) -> int:
        return len(self.guards)


def world(fun: Callable, args: tuple) -> World | None:
    """The guards on what ``fun`` reads from outside when called with ``args`` (whose
    non-array values, such as a method's ``self``, are followed as roots too);
    ``None`` when it reads nothing that can change."""
    finder = _Finder()
    finder.function(fun, lambda a: fun)
    for i, x in enumerate(args):
        if not isinstance(x, (np.ndarray, *_VALUE_TYPES)):
            finder.value(x, _arg(i), 0)
    # attribute names found late (in a helper) apply to objects met early: go again
    while finder.grown():
        finder.restart()
        finder.function(fun, lambda a: fun)
        for i, x in enumerate(args):
            if not isinstance(x, (np.ndarray, *_VALUE_TYPES)):
                finder.value(x, _arg(i), 0)
    guards = tuple(finder.guards)
    return World(guards, frozenset(finder.numbers)) if guards else None


def _arg(i: int) -> Getter:
    return lambda a: a[i] if i < len(a) else _MISSING


class _Fixed:
    """A getter of an object that cannot change (a bound method's ``self``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __call__(self, args: tuple) -> Any:
        return self.value


def _attr(parent: Getter, name: str) -> Getter:
    if isinstance(parent, _Fixed):  # one call less on every check
        obj = parent.value
        return lambda a: getattr(obj, name, _MISSING)
    return lambda a: getattr(parent(a), name, _MISSING)


def _item(parent: Getter, key: Any) -> Getter:
    def item(a: tuple) -> Any:
        try:
            return parent(a)[key]
        except Exception:  # noqa: BLE001 -- gone: differs from what was read
            return _MISSING
    return item


def _global(namespace: dict, name: str) -> Getter:
    return lambda a: namespace.get(name, _MISSING)


def _cell(cell: types.CellType) -> Getter:
    def contents(a: tuple) -> Any:
        try:
            return cell.cell_contents
        except ValueError:  # emptied (del): differs from what was read
            return _MISSING
    return contents


class _Finder:
    """Walks from a function to everything it may read, making guards."""

    def __init__(self) -> None:
        self.attrs: set[str] = set()
        self._seen_attrs = 0
        self.restart()

    def restart(self) -> None:
        self.guards: list[Callable[[tuple], bool]] = []
        self.numbers: set[int] = set()
        self._visited: set[tuple[int, int]] = set()
        self._codes: set[int] = set()
        self._seen_attrs = len(self.attrs)

    def grown(self) -> bool:
        return len(self.attrs) > self._seen_attrs

    def guard(self, get: Getter, value: Any) -> bool:
        if len(self.guards) >= MAX_GUARDS:
            return False
        self.guards.append(_check(get, value))
        return True

    def function(self, fun: Any, get: Getter, self_get: Getter | None = None) -> None:
        """The reads of a Python function (or a symgrad-transformed one, a partial, a
        bound method, a callable object)."""
        inner = getattr(fun, "fun", None)  # symgrad's Transformed
        if inner is not None and type(fun).__module__.startswith("symgrad"):
            self.value(inner, _attr(get, "fun"), 1)
            return
        if isinstance(fun, types.MethodType):
            self.value(fun.__self__, _Fixed(fun.__self__), 1, fixed=True)
            fun = fun.__func__
        if not isinstance(fun, types.FunctionType) or _library(fun):
            return
        code = fun.__code__
        if id(fun) in self._codes:  # (by function: one code has as many closures as calls
            return                  # made it, e.g. jacfwd's wrapper around jacrev's)
        self._codes.add(id(fun))
        globals_, attrs = _names(code)
        self.attrs |= attrs
        namespace = fun.__globals__
        for name in sorted(globals_):
            if name in namespace:
                self.value(namespace[name], _global(namespace, name), 1)
        for cell in fun.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell: a name assigned later in the enclosing scope
                continue
            self.value(contents, _cell(cell), 1)
        for k, default in enumerate(fun.__defaults__ or ()):
            self.value(default, _item(_attr(get, "__defaults__"), k), 1)
        for name, default in (fun.__kwdefaults__ or {}).items():
            self.value(default, _item(_attr(get, "__kwdefaults__"), name), 1)

    def value(self, x: Any, get: Getter, depth: int, fixed: bool = False) -> None:
        """Guard ``x`` (reached by ``get``) and follow what it leads to; ``fixed``: ``x``
        cannot be another object (a bound method's ``self``), so its identity needs
        no guard."""
        if isinstance(x, _OPAQUE) or isinstance(x, (types.ModuleType, type)) and _library(x):
            return
        if isinstance(x, types.FunctionType) and _symgrad(x):
            # symgrad's own closures (a vmap, a jvp) hold the user's function in a cell
            for cell in x.__closure__ or ():
                try:
                    self.value(cell.cell_contents, _cell(cell), depth + 1)
                except ValueError:
                    continue
            if getattr(x, "fun", None) is not None:
                self.value(x.fun, _attr(get, "fun"), depth + 1)
            return
        if isinstance(x, (types.FunctionType, types.MethodType)) and _library(x):
            return
        if isinstance(x, (np.ndarray, *_VALUE_TYPES)):
            if self.guard(get, x) and isinstance(x, (float, np.floating)):
                self.numbers.add(id(x))
            return
        if isinstance(x, types.MethodType):  # bound anew on every access: guard its parts
            self.guard(_attr(get, "__func__"), x.__func__)
            self.function(x, get)
            return
        key = (id(x), depth)
        if key in self._visited or depth > _DEPTH or not (fixed or self.guard(get, x)):
            return
        self._visited.add(key)
        if isinstance(x, types.FunctionType):
            self.function(x, get)
            return
        if isinstance(x, (list, tuple, dict)):
            self.container(x, get, depth)
            return
        self.function(x, get)  # symgrad's Transformed, functools.partial below
        if hasattr(x, "func") and callable(getattr(x, "func", None)):  # functools.partial
            self.value(x.func, _attr(get, "func"), depth + 1)
            self.value(x.args, _attr(get, "args"), depth + 1)
            self.value(x.keywords, _attr(get, "keywords"), depth + 1)
        call = getattr(type(x), "__call__", None)  # noqa: B004 -- the method, to read it
        if isinstance(call, types.FunctionType) and not _library(call):
            self.function(call, lambda a: call)
        for name in sorted(self.attrs):
            try:
                attr = getattr(x, name, _MISSING)
            except Exception:  # noqa: BLE001 -- a property that fails: not followed
                continue
            if attr is not _MISSING:
                self.value(attr, _attr(get, name), depth + 1)

    def container(self, x: Any, get: Getter, depth: int) -> None:
        def length(a: tuple) -> Any:
            now = get(a)
            return len(now) if isinstance(now, (list, tuple, dict)) else _MISSING
        self.guard(length, len(x))
        if len(x) > MAX_ITEMS:
            return
        items = x.items() if isinstance(x, dict) else enumerate(x)
        for key, item in items:
            self.value(item, _item(get, key), depth + 1)
