"""``nn.MultiheadAttention`` and the Transformer layers of ``torch.nn``.

The same parameters, names and shapes as PyTorch's (``in_proj_weight`` of shape
``(3·E, E)``, ``out_proj``, ``linear1``/``linear2``, ``norm1``/``norm2``(/``norm3``)),
so a ``state_dict`` copied from a PyTorch model loads here and computes the
same numbers. Masks follow PyTorch's conventions: in ``attn_mask`` and
``key_padding_mask`` a boolean True means *masked out* (the opposite of
``F.scaled_dot_product_attention``'s), a float mask is added to the scores.

    >>> import symgrad as torch
    >>> from symgrad import nn
    >>> layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> layer(torch.ones(3, 5, 8)).shape
    torch.Size([3, 5, 8])
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from ..eager import dtypes as dt
from ..eager.grad_mode import is_grad_enabled
from ..eager.replay import forget
from ..eager.tensor import Tensor
from ..eager.tensor_ops import empty, zeros
from . import functional as F
from . import init
from .activation import safe_softmax
from .layers import Dropout, Linear
from .module import Module, ModuleList
from .parameter import Parameter
from .spatial import LayerNorm, _kind


def _as_additive(mask: Any, like: Tensor) -> Any:
    """PyTorch's masks as a float to add: True (masked out) is -inf."""
    if mask is None:
        return None
    value = mask._value if isinstance(mask, Tensor) else np.asarray(mask)
    if value.dtype == np.bool_:
        return np.where(value, -np.inf, 0.0).astype(like._value.dtype)
    return mask


def _next(old: Tensor, new: Tensor) -> Tensor:
    """``new``, made of ``old`` by a rule that does not read ``old``'s values (a product
    by a number, a sum with a mask, ``softmax``, a view): ``old`` is not kept for the
    backward (:func:`symgrad.eager.replay.forget`; attention 0.33 -> 0.29 ms for the
    benchmark's layer)."""
    if new._node is not old._node:
        forget(old)
    return new


def generate_square_subsequent_mask(size: int, dtype: Any = None) -> Tensor:
    """``-inf`` above the diagonal, 0 on and below it, of ``dtype`` (the default dtype
    when None, as PyTorch's: float64 in symgrad unless ``set_default_dtype`` says)."""
    kind = dt.DEFAULT if dtype is None else dt.as_dtype(dtype)
    return Tensor._make(np.triu(np.full((size, size), -np.inf, dtype=kind.numpy), 1))


class MultiheadAttention(Module):
    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None):
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are "
                                      "not supported")
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.batch_first, self.head_dim = batch_first, embed_dim // num_heads
        kind = _kind(dtype)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, dtype=kind))
            projections = [self.in_proj_weight]
        else:  # PyTorch's separate projections (and names) when kdim or vdim differ
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, dtype=kind))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, dtype=kind))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, dtype=kind))
            self.register_parameter("in_proj_weight", None)
            projections = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        if bias:
            self.in_proj_bias = Parameter(zeros(3 * embed_dim, dtype=kind))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        for weight in projections:
            init.xavier_uniform_(weight)
        if bias:
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None,
                average_attn_weights: bool = True, is_causal: bool = False) -> tuple[Any, Any]:
        unbatched = query.ndim == 2
        # self-attention (one tensor for all three): one projection, as PyTorch's
        # (_in_projection_packed): a single matrix product of the 3·E rows of in_proj_weight
        packed = self._qkv_same_embed_dim and query is key and key is value
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        # batch_first inputs stay (N, L, E) (PyTorch's transpose to (L, N, E) would make the
        # projections' rows a strided copy and the output a strided view): the same rows,
        # in another order; `at` is the batch axis
        at = 0 if self.batch_first and not unbatched else 1
        batch, e = query.shape[at], query.shape[2]
        length, source = query.shape[1 - at], key.shape[1 - at]
        h, d = self.num_heads, self.head_dim
        b = self.in_proj_bias
        if packed:  # (L, N, 3·E) or (N, L, 3·E) -> 3 of (N, H, L, D)
            qkv = F.linear(query, self.in_proj_weight, b)
            q, k, v = qkv.reshape(*qkv.shape[:2], 3, h, d).permute(
                2, at, 3, 1 - at, 4).unbind(0)
        else:
            if self._qkv_same_embed_dim:
                w = self.in_proj_weight
                wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
            else:
                wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
            q = F.linear(query, wq, None if b is None else b[:e])
            k = F.linear(key, wk, None if b is None else b[e:2 * e])
            v = F.linear(value, wv, None if b is None else b[2 * e:])
            # (L, N, E) or (N, L, E) -> (N, H, L, D)
            q, k, v = (t.reshape(*t.shape[:2], h, d).permute(at, 2, 1 - at, 3)
                       for t in (q, k, v))
        # (the scores' values, which no derivative rule reads, are not kept: _next)
        scores = q @ k.transpose(-2, -1)
        scores = _next(scores, scores * (1.0 / math.sqrt(d)))
        if is_causal and attn_mask is None:
            attn_mask = np.triu(np.ones((length, source), dtype=bool), 1)
        mask = _as_additive(attn_mask, scores)
        if mask is not None:
            mask = mask if not isinstance(mask, np.ndarray) else Tensor._make(mask)
            scores = _next(scores, scores + (mask.reshape(batch, h, length, source)
                                             if mask.ndim == 3 else mask))
        padding = _as_additive(key_padding_mask, scores)
        if padding is not None:
            padding = padding if not isinstance(padding, np.ndarray) else Tensor._make(padding)
            scores = _next(scores, scores + padding.reshape(batch, 1, 1, source))
        # without weights PyTorch calls scaled_dot_product_attention: a query that sees no
        # key gives 0 there (nan with need_weights=True, as PyTorch's)
        weights = _next(scores, scores.softmax(-1) if need_weights else safe_softmax(scores))
        if self.dropout > 0.0 and self.training:
            weights = F.dropout(weights, self.dropout)
        # (N, H, L, D) -> (L, N, E) or (N, L, E)
        out = weights @ v
        out = _next(out, out.permute(*((2, 0) if at else (0, 2)), 1, 3))
        # out_proj's parameters, not its module: PyTorch's multi_head_attention_forward
        # never calls out_proj, so its hooks do not run
        out = F.linear(out.reshape(*out.shape[:2], e), self.out_proj.weight,
                       self.out_proj.bias)
        if unbatched:
            out = out.squeeze(1)
        if not need_weights:
            return out, None
        weights = weights.mean(1) if average_attn_weights else weights
        return out, weights.squeeze(0) if unbatched else weights


def _nested_layer(layer: Any) -> bool:
    """Whether PyTorch's TransformerEncoder (enable_nested_tensor=True) may run ``layer``
    on nested tensors (its conditions at construction)."""
    attn = getattr(layer, "self_attn", None)
    return (isinstance(layer, TransformerEncoderLayer) and not layer.norm_first
            and attn.batch_first and attn._qkv_same_embed_dim and attn.in_proj_bias is not None
            and (layer.activation is F.relu or layer.activation is F.gelu
                 or type(layer.activation).__name__ in ("ReLU", "GELU"))
            and layer.norm1.eps == layer.norm2.eps and attn.num_heads % 2 == 0)


def _activation(activation: Any) -> Any:
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.activation = _activation(activation)

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any, is_causal: bool
                  ) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src: Tensor, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))


class TransformerDecoderLayer(Module):
    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1, self.dropout2, self.dropout3 = (Dropout(dropout), Dropout(dropout),
                                                       Dropout(dropout))
        self.activation = _activation(activation)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        def sa(x: Tensor) -> Tensor:
            return self.dropout1(self.self_attn(x, x, x, attn_mask=tgt_mask,
                                                key_padding_mask=tgt_key_padding_mask,
                                                need_weights=False, is_causal=tgt_is_causal)[0])

        def mha(x: Tensor) -> Tensor:
            return self.dropout2(self.multihead_attn(
                x, memory, memory, attn_mask=memory_mask,
                key_padding_mask=memory_key_padding_mask, need_weights=False,
                is_causal=memory_is_causal)[0])

        def ff(x: Tensor) -> Tensor:
            return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

        x = tgt
        if self.norm_first:
            x = x + sa(self.norm1(x))
            x = x + mha(self.norm2(x))
            return x + ff(self.norm3(x))
        x = self.norm1(x + sa(x))
        x = self.norm2(x + mha(x))
        return self.norm3(x + ff(x))


class TransformerEncoder(Module):
    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check
        self.use_nested_tensor = enable_nested_tensor and _nested_layer(encoder_layer)

    def forward(self, src: Tensor, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        padded = self._nested_padding(src, mask, src_key_padding_mask)
        if padded is not None:  # PyTorch's nested tensor, padded back with zeros
            x = x.masked_fill(Tensor._make(padded[..., None]), 0.0)
        return self.norm(x) if self.norm is not None else x

    def _nested_padding(self, src: Tensor, mask: Any, key_padding: Any) -> np.ndarray | None:
        """The padded positions when PyTorch's encoder takes its nested-tensor path (its
        output is then 0 there, before the final norm): in eval, a batched ``src`` with a
        key padding mask, left-aligned, and no ``mask``; nothing requiring grad."""
        first = self.layers[0] if len(self.layers) else None
        if (not getattr(self, "use_nested_tensor", False) or first is None or first.training
                or src.ndim != 3 or key_padding is None or mask is not None):
            return None
        padding = np.asarray(key_padding._value if isinstance(key_padding, Tensor)
                             else key_padding)
        padded = padding if padding.dtype == np.bool_ else padding != 0
        if self.mask_check and (np.diff(padded.astype(np.int8), axis=-1) < 0).any():
            return None  # not left-aligned: PyTorch's layers see the mask instead
        attn = first.self_attn
        weights = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
                   attn.out_proj.bias, first.norm1.weight, first.norm1.bias, first.norm2.weight,
                   first.norm2.bias, first.linear1.weight, first.linear1.bias,
                   first.linear2.weight, first.linear2.bias)
        if is_grad_enabled() and any(getattr(w, "requires_grad", False) for w in weights):
            return None
        return padded


class TransformerDecoder(Module):
    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                      memory_key_padding_mask, bool(tgt_is_causal), memory_is_causal)
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Any = "relu", custom_encoder: Any = None, custom_decoder: Any = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None):
        super().__init__()
        options = dict(dropout=dropout, activation=activation, layer_norm_eps=layer_norm_eps,
                       batch_first=batch_first, norm_first=norm_first, bias=bias, dtype=dtype)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, dim_feedforward, **options),
            num_encoder_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, dim_feedforward, **options),
            num_decoder_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Any = None, tgt_mask: Any = None,
                memory_mask: Any = None, src_key_padding_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        memory = self.encoder(src, src_mask, src_key_padding_mask, src_is_causal)
        return self.decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                            memory_key_padding_mask, tgt_is_causal, memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(size: int, device: Any = None, dtype: Any = None
                                        ) -> Tensor:
        return generate_square_subsequent_mask(size, dtype)


__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerDecoder", "Transformer"]
