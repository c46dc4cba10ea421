"""What PyTorch does with each primitive, in one table keyed by primitive objects.

The eager Tensor behaves as PyTorch's does where users can tell: which values a
backward node saves (so an in-place change of them is refused as PyTorch refuses it),
which scalar operands stay literals, and which second derivatives read the values
PyTorch's would. These are facts about PyTorch, not about what a primitive means, so
they live here rather than on :class:`~symgrad.core.ir.Primitive`; keyed by the
primitive object (never its name), so that ``tests/test_registry.py`` sees them.
A primitive with no entry saves its inputs (unless linear) and reads like PyTorch
only if linear. (The name of a primitive's backward node is ``Primitive.torch_name``.)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.ir import Primitive
from ..prims import elementwise as E
from ..prims import linalg as L
from ..prims import reductions as R
from ..prims import special as S


@dataclass(frozen=True, slots=True)
class TorchFacts:
    """- ``saves_output``: PyTorch's node saves the output rather than the inputs;
    - ``product``: a product, whose node saves an operand only when the other one
      requires grad;
    - ``literal_operands``: its scalar operands stay literals in the recorded structure
      (the passes rewrite ``x ** 2``, ``x ** 0.5``, ``x ** -1`` as numpy computes them);
    - ``reads_like_torch``: its derivative reads the values PyTorch's backward reads, so
      a gradient with respect to an intermediate tensor of a gradient's graph is the
      same (see :mod:`symgrad.eager.double`; ``pow`` for ``|y| >= 1`` only)."""

    saves_output: bool = False
    product: bool = False
    literal_operands: bool = False
    reads_like_torch: bool = False


NOTHING = TorchFacts()

TORCH: dict[Primitive, TorchFacts] = {
    E.exp_p: TorchFacts(saves_output=True, reads_like_torch=True),
    E.expm1_p: TorchFacts(saves_output=True),
    E.tanh_p: TorchFacts(saves_output=True),
    E.tan_p: TorchFacts(saves_output=True),  # (TanBackward0 saves its result)
    S.exp2_p: TorchFacts(saves_output=True),  # (Exp2Backward0 too)
    E.sigmoid_p: TorchFacts(saves_output=True),
    E.sqrt_p: TorchFacts(saves_output=True, reads_like_torch=True),
    E.relu_p: TorchFacts(saves_output=True, reads_like_torch=True),
    E.reciprocal_p: TorchFacts(saves_output=True, reads_like_torch=True),
    E.mul_p: TorchFacts(product=True, reads_like_torch=True),
    L.matmul_p: TorchFacts(product=True, reads_like_torch=True),
    E.pow_p: TorchFacts(literal_operands=True, reads_like_torch=True),
    **{p: TorchFacts(reads_like_torch=True)
       for p in (E.log_p, E.sin_p, E.cos_p, E.square_p, E.abs_p, E.log1p_p, E.maximum_p,
                 E.minimum_p, R.max_p, R.min_p, E.softplus_p)},
}


def torch_facts(prim: Primitive) -> TorchFacts:
    """``prim``'s entry, or the facts of a primitive PyTorch treats plainly."""
    return TORCH.get(prim, NOTHING)
