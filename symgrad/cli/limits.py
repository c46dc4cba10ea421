"""What ``symgrad grad`` shows and checks, and how much work it accepts: the limits
that the command (:mod:`.command`) and its report (:mod:`.report`) share."""

#: inputs with more elements than this get values but no symbolic formulas
SYMBOLIC_LIMIT = 400
#: formulas listed one per element when there is no common pattern
LISTED_ELEMENTS = 24
#: --check tolerances on symgrad.testing.relative_error: max |a - b| / max(max |b|, floor)
SYMPY_RTOL, SYMPY_FLOOR = 1e-9, 1e-8
FD_RTOL, FD_FLOOR = 1e-5, 1e-6
#: finite differences evaluate the function twice per element: at most this many
FD_LIMIT = 2000
MAX_ELEMENTS = 10**7
