"""What PyTorch does with each primitive, in one table keyed by primitive objects.

The eager Tensor behaves as PyTorch's does where users can tell: which values a
backward node saves (so an in-place change of them is refused as PyTorch refuses it),
which scalar operands stay literals, and which second derivatives read the values
PyTorch's would. These are facts about PyTorch, not about what a primitive means, so
they live here rather than on :class:`~symgrad.core.ir.Primitive`; keyed by the
primitive object (never its name), so that ``tests/test_registry.py`` sees them.
A primitive with no entry saves its inputs (unless linear) and reads like PyTorch
only if linear. :data:`NODE_NAMES` holds the name of PyTorch's backward node (``grad_fn``)
where it is not ``<Name>Backward0`` of the primitive's name (:func:`node_name`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.ir import Primitive
from ..core.tracing import Traced
from ..prims import complex as CX
from ..prims import convert as C
from ..prims import decompositions as D
from ..prims import elementwise as E
from ..prims import fft as FFT
from ..prims import indexing as I
from ..prims import layer_norm as LN
from ..prims import linalg as L
from ..prims import norms as N
from ..prims import reductions as R
from ..prims import softmax as SM
from ..prims import sorting as SO
from ..prims import special as S
from ..prims import special_functions as SF
from ..prims import svd as SVD
from ..prims import windows as W
from .graph import Node


@dataclass(frozen=True, slots=True)
class TorchFacts:
    """- ``saves_output``: PyTorch's node saves the output rather than the inputs;
    - ``product``: a product of its first two operands, whose node saves one only when
      the other one requires grad (:func:`product_saves`; a third, ``linear``'s bias, is
      added, never saved);
    - ``literal_operands``: its scalar operands stay literals in the recorded structure
      (the passes rewrite ``x ** 2``, ``x ** 0.5``, ``x ** -1`` as numpy computes them);
    - ``reads_like_torch``: its derivative reads the values PyTorch's backward reads, so
      a gradient with respect to an intermediate tensor of a gradient's graph is the
      same (see :mod:`symgrad.eager.double`; ``pow`` for ``|y| >= 1`` only);
    - ``saves_both``: its node saves the output as well as the inputs (``max``, ``amax``:
      the elements equal to the saved result share the gradient), so a backward after a
      ``.data`` change of an input mixes old and new values (:mod:`.replay` refuses);
    - ``mask_of_input``: PyTorch's node saves the output, and symgrad's rule reads a mask
      of the input (``relu``: ``x <= 0``, the same mask, so a gradient of a gradient is
      PyTorch's), so after an uncounted change of the input the mask is the new one
      where PyTorch's is the old one (:func:`.replay.refuse_unmatched` refuses)."""

    saves_output: bool = False
    product: bool = False
    literal_operands: bool = False
    reads_like_torch: bool = False
    saves_both: bool = False
    mask_of_input: bool = False


NOTHING = TorchFacts()

TORCH: dict[Primitive, TorchFacts] = {
    E.exp_p: TorchFacts(saves_output=True, reads_like_torch=True),
    E.expm1_p: TorchFacts(saves_output=True),
    E.tanh_p: TorchFacts(saves_output=True),
    E.tan_p: TorchFacts(saves_output=True),  # (TanBackward0 saves its result)
    S.exp2_p: TorchFacts(saves_output=True),  # (Exp2Backward0 too)
    E.sigmoid_p: TorchFacts(saves_output=True),
    E.sqrt_p: TorchFacts(saves_output=True, reads_like_torch=True),
    E.relu_p: TorchFacts(saves_output=True, reads_like_torch=True, mask_of_input=True),
    SM.log_softmax_p: TorchFacts(saves_output=True, reads_like_torch=True),
    SM.softmax_p: TorchFacts(saves_output=True, reads_like_torch=True),
    E.reciprocal_p: TorchFacts(saves_output=True, reads_like_torch=True),
    E.mul_p: TorchFacts(product=True, reads_like_torch=True),
    L.matmul_p: TorchFacts(product=True, reads_like_torch=True),
    L.linear_p: TorchFacts(product=True, reads_like_torch=True),
    E.pow_p: TorchFacts(literal_operands=True, reads_like_torch=True),
    **{p: TorchFacts(reads_like_torch=True)
       for p in (E.log_p, E.sin_p, E.cos_p, E.square_p, E.abs_p, E.log1p_p, E.maximum_p,
                 E.minimum_p, E.softplus_p)},
    **{p: TorchFacts(reads_like_torch=True, saves_both=True) for p in (R.max_p, R.min_p)},
}


def torch_facts(prim: Primitive) -> TorchFacts:
    """``prim``'s entry, or the facts of a primitive PyTorch treats plainly."""
    return TORCH.get(prim, NOTHING)

#: the primitives whose PyTorch result is C-contiguous whatever its inputs' layout
#: (reductions, scans, softmax, layer_norm, cat), where numpy's keeps a permuted
#: input's order: ``x.permute(2, 0, 1).sum(-1).view(-1)`` works in PyTorch. (Elementwise
#: results keep their input's layout in both.) :func:`.fastpath.torch_layout` applies it.
CONTIGUOUS_RESULTS = frozenset({
    R.sum_p, R.mean_p, R.prod_p, R.max_p, R.min_p, N.norm2_p, I.cumsum_p, SO.cumprod_p,
    SM.softmax_p, SM.log_softmax_p, LN.layer_norm_p, I.concatenate_p})

#: PyTorch's nodes that symgrad builds from several primitives and whose backward reads
#: only the saved result or indices, never the inputs: an input changed through ``.data``
#: after the forward changes nothing there (:func:`.replay.refuse_composites`)
READS_NO_INPUTS = frozenset({"SoftmaxBackward0", "LogSoftmaxBackward0", "RsqrtBackward0",
                             "MaxBackward0", "MinBackward0"})

#: PyTorch's nodes that never save a tensor (derivatives.yaml: sizes, dims, scalars and
#: dtypes only), whichever inputs require grad: a backward without ``retain_graph`` leaves
#: them usable, and a second backward that passes through nothing else runs, as PyTorch's.
#: Any other node is freed (``MulBackward0`` and ``DivBackward0`` save even a Python
#: scalar operand, ``Index*``, ``Gather``, ``MaskedFill``, ``Where`` their indices or
#: masks, ``AdaptiveAvgPool2DBackward0`` and ``Reflection``/``ReplicationPad`` their
#: input). A composite's inner nodes (``Node.composite``) go with its last node's name.
#: tests/test_backward_twice.py runs each against PyTorch, both ways (:mod:`.backward`).
SAVES_NOTHING = frozenset({
    "AddBackward0", "AddBackward1", "SubBackward0", "SubBackward1", "RsubBackward0",
    "RsubBackward1", "NegBackward0", "SumBackward0", "SumBackward1", "MeanBackward0",
    "MeanBackward1", "ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0",
    "AliasBackward0", "TBackward0", "TransposeBackward0", "PermuteBackward0",
    "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "UnsqueezeBackward0",
    "ExpandBackward0", "SelectBackward0", "SliceBackward0", "CatBackward0",
    "StackBackward0", "CloneBackward0", "ToCopyBackward0", "FlipBackward0",
    "RollBackward0", "RepeatBackward0", "CumsumBackward0", "DiagonalBackward0",
    "TraceBackward0", "TrilBackward0", "TriuBackward0", "UnbindBackward0",
    "SplitBackward0", "SplitWithSizesBackward0", "ConstantPadNdBackward0",
    "DiagEmbedBackward0", "Rot90Backward0", "LerpBackward0", "Im2ColBackward0",
    "Col2ImBackward0", *(f"Upsample{kind}Backward0" for kind in (
        "Nearest1D", "Nearest2D", "Nearest3D", "NearestExact1D", "NearestExact2D",
        "NearestExact3D", "Linear1D", "Bilinear2D", "Bicubic2D", "Trilinear3D",
        "Bilinear2DAa", "Bicubic2DAa", "Lanczos2DAa"))})

#: PyTorch's nodes of ``self + product`` (``addmm``, ``addcmul``, ...: ``shown`` is
#: ``(self, factor, factor)``) that save a factor only for the other factor's gradient:
#: of constant factors they save nothing
SAVES_FACTORS = frozenset({
    "AddmmBackward0", "BaddbmmBackward0", "AddbmmBackward0", "AddmvBackward0",
    "AddrBackward0", "AddcmulBackward0"})


def saves_nothing(n: Any) -> bool:
    """Whether PyTorch's node for ``n`` (its composite's, for an inner node) saves no
    tensor: a backward without ``retain_graph`` leaves it usable, and its gradient
    reads no input (:func:`.replay.refuse_composites`)."""
    owner = n.composite or n
    name = type(owner).__name__
    if name in SAVES_NOTHING:  # (but F.linear's rows (ViewBackward0 with the bias: PyTorch's
        # addmm of a view, viewed) and a product of stacks (UnsafeViewBackward0: PyTorch's
        # bmm, viewed) save a factor whose partner requires grad, as PyTorch's addmm, bmm)
        return owner.prim not in (L.linear_p, L.matmul_p) or not any(
            product_saves([_requires_grad(a) for a in owner.inputs], k) for k in (0, 1))
    return name in SAVES_FACTORS and owner.shown is not None \
        and all(a is None for a in owner.shown[1:])


def _requires_grad(a: Any) -> bool:
    return isinstance(a, Node) or isinstance(a, Traced) and a._requires_grad


#: PyTorch's name of a primitive's backward node where it is not ``<Name>Backward0``
NODE_NAMES: dict[Primitive, str] = {
    C.convert_p: "ToCopyBackward0",
    E.arcsin_p: "AsinBackward0", E.arccos_p: "AcosBackward0", E.arctan_p: "AtanBackward0",
    S.arcsinh_p: "AsinhBackward0", S.arccosh_p: "AcoshBackward0",
    S.arctanh_p: "AtanhBackward0",
    SF.gammaln_p: "LgammaBackward0", SF.i1_p: "SpecialI1Backward0",
    SF.i0e_p: "SpecialI0EBackward0", SF.i1e_p: "SpecialI1EBackward0",
    CX.cabs_p: "AbsBackward0",
    R.max_p: "MaxBackward1", R.min_p: "MinBackward1",
    R.broadcast_to_p: "ExpandBackward0", R.reshape_p: "ViewBackward0",
    R.transpose_p: "PermuteBackward0",
    I.gather_p: "IndexBackward0", I.concatenate_p: "CatBackward0",
    L.matmul_p: "MmBackward0", L.inv_p: "LinalgInvExBackward0", L.det_p: "LinalgDetBackward0",
    D.cholesky_p: "LinalgCholeskyExBackward0", D.eigh_p: "LinalgEighBackward0",
    D.eig_p: "LinalgEigBackward0", D.qr_p: "LinalgQrBackward0", SVD.svd_p: "LinalgSvdBackward0",
    FFT.fft_p: "FftC2CBackward0",
    L.linear_p: "MmBackward0",  # (F.linear of rows in more than two axes: the product)
    N.norm2_p: "LinalgVectorNormBackward0", LN.layer_norm_p: "NativeLayerNormBackward0",
    W.windows_p: "Im2ColBackward0", W.unwindows_p: "Col2ImBackward0",
}


def product_saves(requires_grad: Any, k: int) -> bool:
    """Whether a product's node saves its operand ``k``, given which operands require
    grad: one of the two factors, when the other does (PyTorch's ``addmm`` saves
    neither the bias nor, for the bias, the factors)."""
    return k < 2 and bool(requires_grad[1 - k])


def node_name(prim: Primitive) -> str:
    """The name of PyTorch's backward node of ``prim``: :data:`NODE_NAMES`, else
    ``<Name>Backward0`` (``AddBackward0`` for ``add``, ``ErfBackward0`` for ``erf``)."""
    return NODE_NAMES.get(prim) or (
        "".join(p.capitalize() for p in prim.name.split("_")) + "Backward0")
