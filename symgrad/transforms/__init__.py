"""Graph -> graph transformations: :mod:`.adjoint` (reverse mode, whose VJP rules
come from :mod:`symgrad.prims`) and :mod:`.passes` (exact rewrites to a fixed
point, and the accuracy rewrites)."""
