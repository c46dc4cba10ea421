"""What a function's code names: the bytecode half of :mod:`.captured`.

:func:`names` lists the globals and the attribute names the code (and code nested
in it) loads, literal strings counted as both (``getattr(m, "w")``,
``globals()["G"]``), and what makes the code unguardable: a name computed at run
time (``getattr(o, name)``), a namespace used other than by a literal key,
``eval``/``exec``; the guard that each function followed still has its code; and
which library callables give another result at every call (:func:`draws`).
"""

from __future__ import annotations

import dis
import functools
import operator
import types
from collections.abc import Callable, Iterator
from typing import Any

_LOADS_ATTR = frozenset({"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR"})
_LOADS_GLOBAL = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})

#: callables that read by a name given as an argument; ``_NAME_ARG``: which argument
_BY_NAME = {"getattr": 1, "hasattr": 1, "attrgetter": None, "methodcaller": 0}
#: calls and attributes that give a namespace as a dict: literal keys only
_NAMESPACES = frozenset({"vars", "globals", "locals", "__dict__"})
#: reads the analysis never sees through
_HIDDEN = frozenset({"eval", "exec", "__import__", "import_module", "__getattribute__",
                     "__getattr__"})
_SIMPLE = frozenset({"LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_GLOBAL", "LOAD_NAME",
                     "LOAD_CONST", "LOAD_ATTR", "LOAD_METHOD", "PUSH_NULL", "EXTENDED_ARG"})
#: what reads attributes or namespaces by names given at run time: the code's own calls
#: are checked here; held in a user's name (``ga = getattr``), they fail closed (captured)
NAME_READERS = (getattr, hasattr, vars, globals, locals, eval, exec, __import__,
                operator.attrgetter, operator.methodcaller)
_CALLS = frozenset({"PRECALL", "CALL", "CALL_FUNCTION", "CALL_METHOD", "CALL_KW",
                    "CALL_FUNCTION_EX", "CALL_FUNCTION_KW", "KW_NAMES"})

def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _code_objects(c)


def strings(value: Any) -> Iterator[str]:
    """Attribute names a literal string may stand for (``"a.b"``: ``a`` and ``b``)."""
    if isinstance(value, str):
        for part in value.split("."):
            if part.isidentifier():
                yield part
    elif isinstance(value, (tuple, frozenset)):
        for v in value:
            yield from strings(v)


@functools.lru_cache(maxsize=1024)  # (a function that fails closed is analysed per call)
def names(code: types.CodeType) -> tuple[frozenset[str], frozenset[str], str | None,
                                         frozenset[str]]:
    """The global names and the attribute names that ``code`` (and code nested in it)
    uses, the literal strings counted as both (``getattr(m, "w")``, ``globals()["G"]``);
    what makes it unguardable, if anything (a name computed at run time); and the
    modules it imports (``import cfg`` or ``from cfg import S`` in its body: ``S`` is
    an attribute name)."""
    globals_, attrs, modules = set(), set(), set()
    hidden = None
    for c in _code_objects(code):
        instructions = list(dis.get_instructions(c))
        for k, ins in enumerate(instructions):
            if ins.opname in _LOADS_GLOBAL:
                globals_.add(ins.argval)
            elif ins.opname in _LOADS_ATTR or ins.opname == "IMPORT_FROM":
                attrs.add(ins.argval)
            elif ins.opname == "IMPORT_NAME":
                modules.add(ins.argval)
                level = instructions[k - 2].argval if k >= 2 else 0
                if level and hidden is None:  # (relative to a package: not resolved here)
                    hidden = f"a relative import of {ins.argval!r} in {c.co_name}"
            elif ins.opname == "LOAD_CONST":
                attrs.update(strings(ins.argval))
            if ins.opname in _LOADS_GLOBAL or ins.opname in _LOADS_ATTR:
                why = _computed(instructions, k)
                if why is not None and hidden is None:
                    line = ins.positions.lineno if ins.positions else c.co_firstlineno
                    hidden = f"{why} (line {line} of {c.co_name})"
    if "globals" in globals_ or "vars" in globals_:
        globals_ |= attrs
    return frozenset(globals_), frozenset(attrs), hidden, frozenset(modules)


def _computed(instructions: list, k: int) -> str | None:
    """Why the name loaded at ``instructions[k]`` reads what the analysis cannot see
    (a name computed at run time), or None."""
    name = instructions[k].argval
    if name in _HIDDEN:
        return f"`{name}`"
    if name not in _BY_NAME and name not in _NAMESPACES:
        return None
    if name == "__dict__":
        end = k
    else:  # the arguments of the call of ``name``: simple loads only, up to the call
        args: list[list] = []
        end = k + 1
        while end < len(instructions) and instructions[end].opname not in _CALLS:
            ins = instructions[end]
            if ins.opname not in _SIMPLE:
                return f"`{name}` with a name computed at run time"
            if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and args:
                args[-1].append(ins)
            elif ins.opname not in ("PUSH_NULL", "EXTENDED_ARG"):
                args.append([ins])
            end += 1
        if end == len(instructions) or instructions[end].opname == "KW_NAMES":
            return f"`{name}` not called with literal names"
        if name in _BY_NAME:
            which = _BY_NAME[name]
            chosen = args if which is None else args[which:which + 1]
            if not chosen or any(len(a) != 1 or a[0].opname != "LOAD_CONST"
                                 or not isinstance(a[0].argval, str) for a in chosen):
                return f"`{name}` with a name computed at run time"
            return None
        while end + 1 < len(instructions) and instructions[end + 1].opname in _CALLS:
            end += 1  # PRECALL, CALL
    # a namespace as a dict: only ``[literal]`` or ``.get(literal...)`` right after it
    after = instructions[end + 1:end + 3]
    if len(after) == 2 and after[0].opname == "LOAD_CONST" and isinstance(
            after[0].argval, str) and after[1].opname in ("BINARY_SUBSCR", "BINARY_OP"):
        return None
    if len(after) == 2 and after[0].opname in ("LOAD_ATTR", "LOAD_METHOD") and \
            after[0].argval == "get" and after[1].opname == "LOAD_CONST":
        return None
    return f"`{name}` used other than by a literal key"


def same_code(codes: tuple[tuple[Any, types.CodeType], ...],
              modules: tuple[tuple[Callable[[tuple], Any], types.ModuleType], ...] = (),
              ) -> Callable[[tuple], bool]:
    """A guard that each function still has its code (IPython's autoreload replaces the
    ``__code__`` of the functions of a module it reloads) and each name bound to a
    library module (``np``, ``M = math``) still is (by identity: a library module is
    taken as fixed, the name is not)."""
    if len(codes) == 1 and len(modules) <= 1:  # (the common case: one function, 50 ns)
        (fun, code), = codes
        if not modules:
            return lambda args: fun.__code__ is code
        (get, module), = modules
        return lambda args: fun.__code__ is code and get(args) is module

    def same_code(args: tuple) -> bool:
        for fun, code in codes:
            if fun.__code__ is not code:
                return False
        for get, module in modules:
            if get(args) is not module:
                return False
        return True
    return same_code


#: modules whose functions and classes draw random numbers or read the clock
_DRAWING_MODULES = ("numpy.random", "random", "secrets", "time", "uuid")
#: PyTorch's (and symgrad's Tensor API's) random factories
_TORCH_DRAWS = frozenset({"rand", "randn", "randint", "randperm", "normal", "bernoulli",
                          "multinomial", "poisson", "rand_like", "randn_like",
                          "randint_like",
                          # a Tensor's in-place draws, dropout, a distribution's samples
                          "uniform_", "normal_", "bernoulli_", "exponential_", "random_",
                          "cauchy_", "geometric_", "log_normal_", "dropout", "dropout1d",
                          "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
                          "rrelu", "rrelu_", "gumbel_softmax", "sample", "rsample"})
#: scipy.stats' random variates and quasi-random engines' draws (scrambled by default)
_SCIPY_DRAWS = frozenset({"rvs", "random", "random_base2", "integers"})
#: per library (top-level package): the attribute names of its draws, a method of an
#: object it made included (``torch.zeros(3).uniform_()``), which no walk from the
#: module reaches: code that reads the library and uses one of them fails closed
NAMED_DRAWS = {"torch": _TORCH_DRAWS, "symgrad": _TORCH_DRAWS,
               "scipy": frozenset({"rvs", "qmc"})}


def draws(x: Any) -> bool:
    """Whether calling ``x`` may give another result at every call: a random draw
    (``default_rng``, ``np.random.rand``, ``random.gauss``, a generator's bound method,
    ``torch.rand``, ``scipy.stats.norm.rvs``) or the clock (``time.time``,
    ``datetime.now``). A trace calls it once and would keep
    that one result, so the function reading it fails closed."""
    owner = getattr(x, "__self__", None)
    if isinstance(owner, type):  # a class method (datetime.now): its class's module
        module = owner.__module__
    elif owner is not None and not isinstance(owner, types.ModuleType):
        module = type(owner).__module__  # a bound method: its object's class decides
    else:
        module = getattr(x, "__module__", None) or getattr(owner, "__name__", None)
    if not isinstance(module, str) or not callable(x):
        return False
    if module == "posix" or module == "nt":
        return getattr(x, "__name__", None) in ("urandom", "getrandom", "times")
    top = module.partition(".")[0]
    if top in ("torch", "symgrad"):
        return getattr(x, "__name__", None) in _TORCH_DRAWS
    if module == "datetime":  # (its classes' clocks; the rest of datetime is pure)
        return getattr(x, "__name__", None) in ("now", "utcnow", "today")
    if module.startswith("scipy.stats"):  # a distribution's random variates
        return getattr(x, "__name__", None) in _SCIPY_DRAWS
    return any(module == m or module.startswith(m + ".") for m in _DRAWING_MODULES)


def drawn(places: list[Any], names: list[str], depth: int) -> str | None:
    """The first of ``places``' attributes that :func:`draws`, reached by up to ``depth``
    of ``names`` in a row (``scipy.stats.norm.rvs``: three), as its dotted path; None if
    none does."""
    frontier = [(place, getattr(place, "__name__", "?")) for place in places]
    seen = {id(place) for place in places}
    for _ in range(depth):
        found = []
        for place, shown in frontier:
            for name in names:
                try:
                    x = getattr(place, name, None)
                except Exception:  # noqa: BLE001 -- a property that fails: not followed
                    continue
                if x is None or id(x) in seen:
                    continue
                seen.add(id(x))
                if draws(x):
                    return f"{shown}.{name}"
                found.append((x, f"{shown}.{name}"))
        frontier = found
    return None
