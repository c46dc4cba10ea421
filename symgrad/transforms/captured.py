"""What a transformed function reads besides its arguments, and guards on it.

A transformed function must return what the plain Python function returns
with the *current* values of the globals, closure variables and attributes it
reads. symgrad traces a function once per signature, so whatever the trace
read from outside is baked into its graph: a number as a literal, an array as
a constant. :func:`world` finds those reads before tracing and :class:`World`
checks, on every call, that they still hold; when one does not, the caller
traces again (the kernel is reused when the new source is the same, since
array constants are kernel arguments, not literals).

**The rule: a trace is reused only when every value it read is guarded.**

The reads are found from the bytecode (:mod:`.captured_code`), as TorchDynamo's guards are: the
globals the code loads, its closure cells and default values, and the
attributes it names (by ``LOAD_ATTR``, or by a literal string such as
``getattr(m, "w")``, ``vars(o)["k"]``, ``globals()["G"]``, an
``operator.attrgetter("k")``), followed through objects (a callable object's
``__call__``, a ``functools.partial``'s function and arguments, the methods of
every class of an object's MRO, so that a base-class method reached through
``super()`` is read too), user modules, containers and the Python functions they
lead to. Attribute names are taken from the code as a set, so every object
reached is checked for every attribute name the code uses anywhere: more checks
than needed, never fewer. Every place a value is read from is guarded, also when
the value was already reached by another name (``a = b = L``). A name looked up and
not found is read too: an attribute name an object lacks (``getattr(o, "k", 1.0)``,
``hasattr``) and a global not defined (a builtin's name, or one defined later) are
guarded as absent.

Each read becomes a guard (:mod:`.guards`): an array (an ndarray of any subclass, a memmap, a
symgrad Tensor's values) by its type, shape, dtype and bytes (an in-place change
is a change; an array of Python objects, whose bytes are pointers, by identity and
its elements, as a list; the attributes a user's subclass adds are followed),
a number or string by value, anything else by identity (and then by the attributes
the code names). A library function, ufunc or class read from
a user's global, cell, attribute or container is guarded by identity (``act =
np.tanh`` then ``act = np.sin`` is a change) but not followed; library modules
(``np``, ``math``, ``sg``) and what is reached through them are taken as fixed.

What the analysis cannot cover makes the function **fail closed**
(:attr:`World.unguarded` says what and where): it is traced on every call and
warned about once (:class:`symgrad.RetraceWarning`). That is: an object whose
state lives in C code (a random generator, numpy's global one that
``np.random.rand`` and its kind draw from, a lock, a file; an instance of a
library class that is not known immutable), ``getattr``/``hasattr`` with a name
computed at run time, ``vars()``/``globals()``/``__dict__`` used other than by
a literal key, ``eval``/``exec``, a container of more than :data:`MAX_ITEMS`
elements, objects nested more than :data:`MAX_DEPTH` levels deep, and more than
:data:`MAX_GUARDS` guards. Calls into library code (numpy, scipy, ...) are taken
as pure functions of their arguments, but for random draws and the clock
(``default_rng()``, ``np.random.rand``, ``torch.rand``, ``time.time``, by any name:
:func:`.captured_code.draws`), which fail closed.

The floats read are also listed by identity (:attr:`World.numbers`): the trace
makes each of them a scalar constant of the graph, a kernel argument like an
array constant, rather than a literal in the kernel's source, so that closures
that differ only in the numbers they capture share one kernel.
"""

from __future__ import annotations

import functools
import operator
import os
import sys
import types
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import RetraceWarning
from ..core.tracing import Traced, Tracer
from .captured_code import NAME_READERS as _NAME_READERS
from .captured_code import NAMED_DRAWS as _NAMED_DRAWS
from .captured_code import drawn as _drawn
from .captured_code import draws as _draws
from .captured_code import names as _names
from .captured_code import same_code as _same_code
from .captured_code import strings as _strings
from .guards import MISSING as _MISSING
from .guards import VALUE_TYPES as _VALUE_TYPES
from .guards import Fixed as _Fixed
from .guards import Getter, World
from .guards import absent as _absent
from .guards import arg as _arg
from .guards import attr as _attr
from .guards import cell as _cell
from .guards import check as _check
from .guards import global_ as _global
from .guards import held as _held
from .guards import item as _item
from .guards import unbound as _unbound

#: top-level packages whose modules and functions are taken as fixed
LIBRARIES = frozenset({
    "numpy", "scipy", "math", "cmath", "symgrad", "builtins", "functools", "itertools",
    "operator", "numba", "sympy", "collections", "typing", "abc", "types", "dataclasses",
    "enum", "warnings", "inspect", "torch", "jax", "dask",
})
#: elements of a list, tuple or dict followed; a longer container fails closed
MAX_ITEMS = 64
#: guards per function; past it the function fails closed
MAX_GUARDS = 512
#: attributes followed from a root; deeper objects fail closed
MAX_DEPTH = 6
#: library objects that cannot change: guarded by identity, nothing to follow
_IMMUTABLE = (slice, range, frozenset, type(Ellipsis), type(NotImplemented), np.dtype,
              property, types.MemberDescriptorType, types.GetSetDescriptorType)
#: C functions (made anew on every attribute access when bound): not followed
_OPAQUE = (types.BuiltinFunctionType, types.BuiltinMethodType, types.MethodWrapperType,
           types.WrapperDescriptorType, types.MethodDescriptorType, np.ufunc)
#: the user's rules a symgrad custom function holds (custom_vjp, custom_jvp)
_RULES = ("fwd", "bwd", "jvp", "jvps")
#: followed element by element (a class's ``__dict__`` is a mapping proxy)
_CONTAINERS = (list, tuple, dict, types.MappingProxyType)
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement
#: special methods that make, show, copy or change an object: no value of a computation
_NOT_READING = frozenset({
    "__init__", "__new__", "__del__", "__init_subclass__", "__class_getitem__",
    "__set_name__", "__post_init__", "__repr__", "__str__", "__format__", "__dir__",
    "__sizeof__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__",
    "__getnewargs__", "__getnewargs_ex__", "__copy__", "__deepcopy__", "__setattr__",
    "__delattr__", "__setitem__", "__delitem__", "__subclasshook__", "__instancecheck__",
    "__subclasscheck__"})

def _library(obj: Any) -> bool:
    name = getattr(obj, "__module__", None) if not isinstance(obj, types.ModuleType) \
        else obj.__name__
    return isinstance(name, str) and name.partition(".")[0] in LIBRARIES


def _library_class(x: Any) -> bool:
    """A class of a library or of Python's standard library (``importlib``'s loaders,
    ``pathlib.Path``): guarded by identity; a user's class has its attributes followed
    (their ``__dict__`` and ``__call__`` are new objects at every read)."""
    name = getattr(x, "__module__", None)
    return _library(x) or (isinstance(name, str)
                           and name.partition(".")[0] in sys.stdlib_module_names)


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _symgrad(obj: Any) -> bool:
    """Whether ``obj`` is symgrad's: a function by where its code is (a wrapper made with
    ``functools.wraps`` takes the ``__module__`` of what it wraps), else by module."""
    code = getattr(obj, "__code__", None)
    if isinstance(obj, types.FunctionType) and isinstance(code, types.CodeType):
        return os.path.abspath(code.co_filename).startswith(_PACKAGE)
    name = getattr(obj, "__module__", None)
    return isinstance(name, str) and name.partition(".")[0] == "symgrad"


def world(fun: Callable, args: tuple) -> World | None:
    """The guards on what ``fun`` reads from outside when called with ``args`` (whose
    non-array values, such as a method's ``self``, are followed as roots too);
    ``None`` when it reads nothing that can change."""
    finder = _Finder()
    finder.roots(fun, args)
    # attribute names found late (in a helper) apply to objects met early: go again
    while finder.grown():
        finder.restart()
        finder.roots(fun, args)
    if finder.code or finder.modules:  # one guard for them all (140 ns a guard and call)
        finder.guards.append(_same_code(tuple(finder.code.items()), tuple(finder.modules)))
    guards = tuple(finder.guards)
    if not guards and finder.unguarded is None:
        return None
    return World(guards, frozenset(finder.numbers), finder.unguarded)


#: functions already warned about (each once), by weak reference
_WARNED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def warn_unguarded(fun: Callable, reason: str, how: str = "call") -> None:
    """Warn, once per function, that ``fun`` fails closed (reads ``reason``)."""
    try:
        if fun in _WARNED:
            return
        _WARNED[fun] = reason
    except TypeError:  # not weakly referable: warned each time it is traced anew
        pass
    name = (getattr(fun, "__qualname__", None) or getattr(fun, "__name__", None)
            or type(fun).__name__)
    frame, level = sys._getframe(0), 1  # the warning points at the user's call
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(
        f"{name} reads {reason}: symgrad cannot guard this read, so the function is traced "
        f"again on every {how} (the compiled kernel is reused when the trace is the same, "
        "but each call pays the trace). Pass the value as an argument instead (a keyword "
        "argument, or a static one with static_argnums), so that each call uses the "
        "current one and the trace can be reused.", RetraceWarning, stacklevel=level)


def _state_in_c(x: Any) -> bool:
    """Whether ``x`` keeps state where attributes cannot see it: an instance of a library
    class (not symgrad's), or of a class built on a C type (``random.Random``, a lock)."""
    cls = type(x)
    if cls is types.SimpleNamespace or isinstance(x, types.ModuleType):
        return False  # (a user's module: its attributes are followed)
    if _library(cls) and not _symgrad(cls):
        return True
    return any(not c.__flags__ & _HEAP_TYPE and c is not object for c in cls.__mro__)


class _Finder:
    """Walks from a function to everything it may read, making guards."""

    def __init__(self) -> None:
        self.attrs: set[str] = set()
        self._seen_attrs = 0
        self.restart()

    def restart(self) -> None:
        self.guards: list[Callable[[tuple], bool]] = []
        self.numbers: set[int] = set()
        self.unguarded: str | None = None
        self._visited: set[tuple[int, int]] = set()
        self._codes: set[int] = set()
        self.code: dict[Any, types.CodeType] = {}  # each function followed: its code
        self.modules: list[tuple[Getter, types.ModuleType]] = []  # (np, math) by identity
        self._seen_attrs = len(self.attrs)

    def grown(self) -> bool:
        return len(self.attrs) > self._seen_attrs

    def roots(self, fun: Any, args: tuple) -> None:
        if isinstance(fun, types.MethodType) or isinstance(
                fun, types.FunctionType) and not _symgrad(fun):
            self.function(fun, _Fixed(fun))
        else:  # a callable object, a partial, a symgrad transformation
            self.value(fun, _Fixed(fun), 0, getattr(fun, "__name__", type(fun).__name__),
                       fixed=True)
        for i, x in enumerate(args):
            if not isinstance(x, (np.ndarray, *_VALUE_TYPES)):
                self.value(x, _arg(i), 0, f"argument {i}")

    def fail(self, reason: str) -> None:
        if self.unguarded is None:
            self.unguarded = reason

    def guard(self, get: Getter, value: Any, where: str, predicate: bool = False) -> bool:
        """Guard that ``get`` gives ``value`` again (``predicate``: ``get`` is the guard,
        which holds now)."""
        if len(self.guards) >= MAX_GUARDS:
            self.fail(f"more than {MAX_GUARDS} values from outside its arguments "
                      f"(the limit was reached at {where})")
            return False
        self.guards.append(get if predicate else _check(get, value))
        return True

    def function(self, fun: Any, get: Getter, self_get: Getter | None = None) -> None:
        """The reads of a Python function (or a symgrad-transformed one, a bound
        method)."""
        inner = getattr(fun, "fun", None)  # symgrad's Transformed
        if inner is not None and type(fun).__module__.startswith("symgrad"):
            self.value(inner, _attr(get, "fun"), 1, getattr(inner, "__name__", "fun"))
            for name in _RULES:  # a custom_vjp's or custom_jvp's rules: by identity (a
                rule = getattr(fun, name, None)  # defvjp again is a change) and followed
                if rule is not None:
                    self.value(rule, _attr(get, name), 1,
                               f"the {name} rule of {getattr(fun, 'name', '?')}")
            return
        if isinstance(fun, types.MethodType):
            self.value(fun.__self__, _Fixed(fun.__self__), 1, "self", fixed=True)
            fun = fun.__func__
        if not isinstance(fun, types.FunctionType) or _library(fun) or _symgrad(fun):
            return
        code = fun.__code__
        if id(fun) in self._codes:  # (by function: one code has as many closures as calls
            return                  # made it, e.g. jacfwd's wrapper around jacrev's)
        self._codes.add(id(fun))
        self.code[fun] = code  # (a reload may replace a function's code in place)
        globals_, attrs, hidden, modules = _names(code)
        if hidden is not None:
            self.fail(hidden)
        self.attrs |= attrs
        for name in sorted(modules):  # imported in its body: each module and its package
            for full in {name, name.partition(".")[0]}:
                get_module = (lambda n: lambda a: sys.modules.get(n, _MISSING))(full)
                if full not in sys.modules:  # the trace loads it: traced once more then
                    self.guard(get_module, _MISSING, f"the module `{full}`, not loaded")
                else:
                    self.value(sys.modules[full], get_module, 1, f"the module `{full}`")
        namespace = fun.__globals__
        for name in sorted(globals_):
            if name in namespace:
                self.value(namespace[name], _global(namespace, name), 1, f"the global `{name}`")
        unbound = tuple(sorted(name for name in globals_ if name not in namespace))
        if unbound:  # (a builtin, or a name not defined yet): one defined later is a change
            self.guard(_unbound(namespace, unbound), None, f"the globals {unbound} (absent)",
                       predicate=True)
        for name, cell in zip(code.co_freevars, fun.__closure__ or ()):
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell: a name assigned later in the enclosing scope
                continue
            self.value(contents, _cell(cell), 1, f"`{name}`")
        for k, default in enumerate(fun.__defaults__ or ()):
            self.value(default, _item(_attr(get, "__defaults__"), k), 1,
                       f"default value {k} of {fun.__qualname__}")
        for name, default in (fun.__kwdefaults__ or {}).items():
            self.value(default, _item(_attr(get, "__kwdefaults__"), name), 1,
                       f"the default of `{name}`")

    def value(self, x: Any, get: Getter, depth: int, where: str, fixed: bool = False) -> None:
        """Guard ``x`` (reached by ``get``, from ``where``) and follow what it leads to;
        ``fixed``: ``x`` cannot be another object (a bound method's ``self``), so its
        identity needs no guard."""
        if isinstance(x, types.ModuleType) and _library(x):
            self.drawing(x)
            if not fixed:  # (the name may be bound to another object later: `M = np`)
                self.modules.append((get, x))
            return  # numpy, math, symgrad: fixed, and so is what they hold
        if _draws(x):
            self.fail(f"{where} is {getattr(x, '__qualname__', x)}, which gives another "
                      "result at every call (a random draw or the clock)")
            return
        if isinstance(x, os._Environ):  # by its contents (_check)
            self.guard(get, x, where)
            return
        if isinstance(x, np.ndarray) and x.dtype.kind == "O":  # its bytes are pointers
            self.objects(x, get, depth, where, fixed)
            return
        if isinstance(x, (np.ndarray, *_VALUE_TYPES)):
            if self.guard(get, x, where) and isinstance(x, (float, np.floating)):
                self.numbers.add(id(x))
            if isinstance(x, np.ndarray) and not _library(type(x)) and (
                    key := (id(x), depth)) not in self._visited:
                self._visited.add(key)
                self.own_attributes(x, get, depth, where)
            return
        if isinstance(x, Traced) and not isinstance(x, Tracer):  # a symgrad Tensor
            if not fixed:
                self.guard(get, x, where)
            self.guard(_held(get), x._held_value(), f"the values of {where}")
            return
        if any(x is reader for reader in _NAME_READERS):  # (``ga = getattr``: ga(o, n))
            self.fail(f"{where}, which is {x.__name__}: it reads names given at run time")
            return
        if isinstance(x, _OPAQUE) or isinstance(x, type) and _library_class(x) or isinstance(
                x, (types.FunctionType, types.MethodType)) and _library(x) and not (
                isinstance(x, types.FunctionType) and _symgrad(x)) or isinstance(x, _IMMUTABLE):
            # a library function, ufunc or class, read from a user's name: by identity
            if not fixed:
                self.guard(get, x, where)
            if isinstance(x, type):  # (its clocks: datetime.datetime.now)
                self.drawing(x, depth=1)
            owner = getattr(x, "__self__", None)  # a C method bound to a user's object
            if isinstance(x, _OPAQUE) and owner is not None and not isinstance(
                    owner, (types.ModuleType, np.ufunc, type)):
                self.value(owner, _attr(get, "__self__"), depth + 1, f"{where}.__self__")
            return
        if isinstance(x, types.FunctionType) and _symgrad(x):
            # symgrad's own closures (a vmap, a jvp) hold the user's function in a cell
            if not fixed:
                self.guard(get, x, where)
            for cell in x.__closure__ or ():
                try:
                    self.value(cell.cell_contents, _cell(cell), depth + 1, where)
                except ValueError:
                    continue
            if getattr(x, "fun", None) is not None:
                self.value(x.fun, _attr(get, "fun"), depth + 1, where)
            return
        if isinstance(x, types.MethodType):  # bound anew on every access: guard its parts
            self.guard(_attr(get, "__func__"), x.__func__, where)
            self.function(x, get)
            return
        key = (id(x), depth)
        if key in self._visited:  # reached before by another name: guard this name too
            if not fixed:
                self.guard(get, x, where)
            return
        if depth > MAX_DEPTH:
            self.fail(f"{where}, an object nested more than {MAX_DEPTH} levels deep")
            return
        if not (fixed or self.guard(get, x, where)):
            return
        self._visited.add(key)
        if isinstance(x, types.FunctionType):
            self.function(x, get)
            return
        if isinstance(x, _CONTAINERS):
            self.container(x, get, depth, where)
            if not _library(type(x)):  # a user's subclass (a list with attributes)
                self.own_attributes(x, get, depth, where)
            return
        if isinstance(x, (operator.attrgetter, operator.methodcaller)):
            self.attrs.update(_strings(tuple(x.__reduce__()[1])))
            return
        if isinstance(x, operator.itemgetter):
            return  # (the container it reads from is followed item by item)
        self.function(x, get)  # symgrad's Transformed
        if isinstance(x, functools.partial):
            self.value(x.func, _attr(get, "func"), depth + 1, f"{where}.func")
            self.value(x.args, _attr(get, "args"), depth + 1, f"{where}.args")
            self.value(x.keywords, _attr(get, "keywords"), depth + 1, f"{where}.keywords")
            return
        if callable(x) and _library(type(x)) and not _symgrad(type(x)) and not isinstance(
                x, type):  # (a user's class: its attributes are followed)
            wrapped = getattr(x, "__wrapped__", None)  # a functools.lru_cache of the user's
            if wrapped is not None:  # (a cleared cache computes again: what it reads)
                self.value(wrapped, _attr(get, "__wrapped__"), depth + 1,
                           f"{where}.__wrapped__")
                return  # a library's function object (np.sum: numpy._ArrayFunctionDispatcher)
            # else a library's callable holding data (np.poly1d, np.polynomial.Polynomial,
            # scipy's interp1d), which its library code reads: fails closed below
        if _state_in_c(x) and not (_symgrad(type(x)) or isinstance(x, type)):
            self.fail(f"{where}, a {type(x).__module__}.{type(x).__qualname__} (its state is "
                      "not visible to the guards)")
            return
        self.methods(x)
        missing = []
        for name in sorted(self.attrs):
            try:
                attr = getattr(x, name, _MISSING)
            except Exception:  # noqa: BLE001 -- a property that fails: not followed
                continue
            if attr is not _MISSING:
                self.value(attr, _attr(get, name), depth + 1, f"{where}.{name}")
            else:  # (``getattr(o, "k", default)``, ``hasattr``: an absence is read too)
                missing.append(name)
        if missing:
            self.guard(_absent(get, tuple(missing), x), None, f"{where} without {missing}",
                       predicate=True)

    def drawing(self, module: Any, depth: int = 3) -> None:
        """``np.random.rand``, ``np.random.default_rng()``, ``torch.rand``, ``time.time``,
        ``scipy.stats.norm.rvs``, ``datetime.datetime.now`` reached through their module
        (or class: ``depth`` 1) give another result at every call: a function that may
        call one fails closed (as one holding a Generator)."""
        places = [module] + ([np.random] if module is np and "random" in self.attrs else [])
        found = _drawn(places, sorted(self.attrs), depth)
        named = _NAMED_DRAWS.get(getattr(module, "__name__", "").partition(".")[0], frozenset())
        if found is None and isinstance(module, types.ModuleType) and self.attrs & named:
            found = f"{module.__name__} and .{min(self.attrs & named)}"
        if found is not None:
            self.fail(f"{found.replace('numpy', 'np', 1)}, which gives another result at "
                      "every call (a random draw or the clock)")

    def methods(self, x: Any) -> None:
        """The code of ``x``'s class (and its bases: a method reached through ``super()``
        is not what ``getattr`` finds) for every attribute name used and every special
        method Python may call without naming it (``T["k"]`` calls ``__getitem__``,
        ``sum(bag)`` ``__iter__``, ``obj + x`` ``__add__``): methods, properties, static
        and class methods."""
        classes = x.__mro__ if isinstance(x, type) else type(x).__mro__
        for cls in classes:
            if _library(cls):
                continue
            special = sorted(n for n in cls.__dict__ if n.startswith("__") and n.endswith("__")
                             and n not in _NOT_READING)
            for name in (*special, *sorted(self.attrs)):
                member = cls.__dict__.get(name)
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if isinstance(member, property):
                    for part in (member.fget, member.fset):
                        if isinstance(part, types.FunctionType):
                            self.function(part, _Fixed(part))
                elif isinstance(member, types.FunctionType):
                    self.function(member, _Fixed(member))

    def own_attributes(self, x: Any, get: Getter, depth: int, where: str) -> None:
        """What a user's subclass of an ndarray or a container adds to its guarded bytes or
        items (``w.lr`` of a ``Param(np.ndarray)``): its own attributes, its classes' code."""
        self.methods(x)
        own = set(getattr(x, "__dict__", {})).union(
            *(vars(c) for c in type(x).__mro__ if not _library(c)))
        for name in sorted(self.attrs & own):
            if (attr := getattr(x, name, _MISSING)) is not _MISSING:
                self.value(attr, _attr(get, name), depth + 1, f"{where}.{name}")

    def objects(self, x: np.ndarray, get: Getter, depth: int, where: str,
                fixed: bool) -> None:
        """An ndarray of Python objects: by identity, each element as a list's."""
        if x.size > MAX_ITEMS:
            self.fail(f"{where}, an ndarray of {x.size} Python objects (more than {MAX_ITEMS})")
            return
        if not (fixed or self.guard(get, x, where)):
            return
        for index in np.ndindex(x.shape):
            self.value(x[index], _item(get, index), depth + 1, f"{where}[{index}]")

    def container(self, x: Any, get: Getter, depth: int, where: str) -> None:
        if len(x) > MAX_ITEMS:
            self.fail(f"{where}, a {type(x).__name__} of {len(x)} elements (more than "
                      f"{MAX_ITEMS})")
            return

        def length(a: tuple) -> Any:
            now = get(a)
            return len(now) if isinstance(now, _CONTAINERS) else _MISSING
        self.guard(length, len(x), where)
        items = x.items() if isinstance(x, (dict, types.MappingProxyType)) else enumerate(x)
        for key, item in items:
            self.value(item, _item(get, key), depth + 1, f"{where}[{key!r}]")
