"""The public names of the Tensor API that are not op-table records (tests/optable.py),
each with the reason and, where one exists, the test that covers it instead.
tests/test_optable.py fails on a public op that is in neither."""

from __future__ import annotations

_VALUES = "returns a Python value, not a tensor: compared with PyTorch in " \
          "tests/test_tensor_surface.py (_VALUES)"
_ATTRIBUTE = "an attribute of the tensor, not an op: tests/test_tensor_surface.py and " \
             "tests/test_autograd.py"
_AUTOGRAD = "autograd state, not an op on values: tests/test_autograd.py, " \
            "tests/test_double_backward.py"
_RANDOM = "random values: PyTorch's generator is not reproduced (the streams differ by " \
          "design); shapes and dtypes in tests/test_torch_semantics.py"
_PROTOCOL = "Python/numpy protocol of the class, not a PyTorch op: tests/test_tensor.py"
_SYMGRAD = "symgrad's own function transform or runtime control, not in PyTorch's torch.*: " \
           "tests/test_api.py, tests/test_autograd_functional.py, tests/test_loops.py"
_UNINITIALISED = "PyTorch's values are uninitialised memory: nothing to compare but the " \
                 "shape and dtype (tests/test_tensor_surface.py, torch.DoubleTensor(2, 3))"
_STATE = "process state, not an op: tests/test_torch_extras.py, tests/test_threads.py"
_IMPORT = "a name the module imports (typing or a decorator), not an op"
_COMPLEX = "an operation of complex Tensors: values, dtypes and gradients against PyTorch " \
           "in tests/test_complex_tensors.py"

EXCLUDED: dict[str, str] = {
    **dict.fromkeys(["Tensor.angle", "Tensor.conj_physical", "Tensor.is_conj",
                     "Tensor.resolve_conj", "torch.angle", "torch.complex", "torch.conj",
                     "torch.imag", "torch.polar", "torch.real", "torch.view_as_complex",
                     "torch.view_as_real"], _COMPLEX),
    **dict.fromkeys(["Tensor.__ifloordiv__"],
                    "in place, of the out-of-place op's values (no gradient): through views, "
                    "int64 and bool in tests/test_torch_views.py (augmented assignments)"),
    "Tensor.bfloat16": "a conversion to bfloat16, whose gradients are refused: compared with "
                       "PyTorch bit for bit in tests/test_bfloat16.py",
    **dict.fromkeys(["Tensor.allclose", "Tensor.dim", "Tensor.element_size", "Tensor.equal",
                     "Tensor.is_contiguous", "Tensor.is_floating_point", "Tensor.item",
                     "Tensor.ndimension", "Tensor.nelement", "Tensor.numel", "Tensor.size",
                     "Tensor.stride",
                     "Tensor.tolist", "torch.allclose", "torch.equal",
                     "torch.is_floating_point", "torch.is_tensor", "torch.numel",
                     "torch.promote_types", "torch.result_type", "Tensor.__bool__",
                     "Tensor.__float__", "Tensor.__int__", "Tensor.__index__",
                     "Tensor.__len__"], _VALUES),
    **dict.fromkeys(["Tensor.aval", "Tensor.data", "Tensor.device", "Tensor.dtype",
                     "Tensor.ndim", "Tensor.shape", "Tensor.imag"], _ATTRIBUTE),
    **dict.fromkeys(["Tensor.backward", "Tensor.grad", "Tensor.grad_fn", "Tensor.is_leaf",
                     "Tensor.requires_grad", "Tensor.requires_grad_", "Tensor.retain_grad",
                     "Tensor.retains_grad", "Tensor.detach_", "torch.Variable",
                     "Tensor.register_hook", "Tensor.register_post_accumulate_grad_hook",
                     "torch.is_grad_enabled", "torch.is_inference_mode_enabled"], _AUTOGRAD),
    **dict.fromkeys(["Tensor.normal_", "Tensor.uniform_", "torch.rand", "torch.rand_like",
                     "torch.randint", "torch.randn", "torch.randn_like", "torch.randperm",
                     "torch.manual_seed", "torch.seed", "torch.initial_seed"], _RANDOM),
    **dict.fromkeys(["Tensor.__annotations__", "Tensor.__array__", "Tensor.__array_function__",
                     "Tensor.__array_priority__", "Tensor.__array_ufunc__", "Tensor.__dict__",
                     "Tensor.__module__", "Tensor.__slots__", "Tensor.__weakref__",
                     "Tensor.__iter__", "Tensor.__deepcopy__",
                     "Tensor.__doc__", "Tensor.__format__", "Tensor.__hash__", "Tensor.__init__",
                     "Tensor.__reduce_ex__", "Tensor.__repr__", "Tensor.__str__", "Tensor.numpy",
                     "torch.array"], _PROTOCOL),
    "Tensor.astype": "numpy's spelling of Tensor.to kept for traced numpy code: "
                     "tests/test_numpy_functions.py",
    "Tensor.copy": "numpy's ndarray.copy, kept for traced numpy code: tests/test_numpy_edges.py",
    **dict.fromkeys(["Tensor.__divmod__", "Tensor.__rdivmod__"],
                    "Python's divmod, which PyTorch's Tensor does not have (numpy's): "
                    "tests/test_numpy_edges.py"),
    "Tensor.at": "jax-style functional update (x.at[i].set), symgrad's own: tests/test_indexing.py",
    "torch.at": "jax-style functional update (sg.at), symgrad's own: tests/test_indexing.py",
    "Tensor.__setitem__": "in-place assignment through views: tests/test_torch_views.py",
    **dict.fromkeys(["torch.compile_stats", "torch.compile_note", "torch.cond", "torch.export",
                     "torch.fori_loop",
                     "torch.grad", "torch.hessian", "torch.hvp", "torch.jacfwd",
                     "torch.jacobian", "torch.jacrev", "torch.jit", "torch.jvp",
                     "torch.linearize", "torch.pure_callback", "torch.reuse_memory",
                     "torch.scan", "torch.value_and_grad", "torch.vjp", "torch.vmap",
                     "torch.while_loop"], _SYMGRAD),
    **dict.fromkeys(["torch.empty", "torch.empty_like"], _UNINITIALISED),
    **dict.fromkeys(["torch.get_default_dtype", "torch.set_default_dtype",
                     "torch.get_num_threads", "torch.set_num_threads", "torch.max_threads",
                     "torch.load", "torch.save"], _STATE),
    **dict.fromkeys(["torch.use_deterministic_algorithms",
                     "torch.are_deterministic_algorithms_enabled"],
                    "process state (tiered execution off), not an op: tests/test_tiered.py"),
    **dict.fromkeys(["F.named", "linalg.named"], _IMPORT),
}
