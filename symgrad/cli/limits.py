"""What ``symgrad grad`` shows and checks, and how much work it accepts: the limits
that the command (:mod:`.command`), its checks (:mod:`.checks`), its SymPy steps
(:mod:`.symbolic`) and its report (:mod:`.report`) share."""

#: inputs with more elements than this get values but no symbolic formulas
SYMBOLIC_LIMIT = 400
#: formulas listed one per element when there is no common pattern
LISTED_ELEMENTS = 24
#: --check tolerances on symgrad.testing.relative_error: max |a - b| / max(max |b|, floor)
SYMPY_RTOL, SYMPY_FLOOR = 1e-9, 1e-8
FD_RTOL, FD_FLOOR = 1e-5, 1e-6
#: finite differences evaluate the function twice per element (with a step of
#: FD_STEP * max(1, |x|)): for every element up to FD_LIMIT of them, above that
#: for a fixed sample of FD_WORK / size elements, and at least FD_SAMPLE
FD_LIMIT = 2000
FD_WORK = FD_LIMIT**2
FD_SAMPLE = 8
FD_STEP = 1e-6
#: where an element disagrees: the longest step tried (times max(1, |x|)), and the
#: units in the last place of the function's value taken as its rounding error
FD_MAX_STEP, FD_ROUNDING = 1e-2, 4
MAX_ELEMENTS = 10**7
#: seconds all SymPy steps of one command may take together (--sympy-seconds):
#: simplifying and printing the formulas, --check's oracle, --show sympy
SYMPY_SECONDS = 5.0
#: what --at refuses to run: a working set above this share of the memory available
MEMORY_SHARE = 0.9
