"""A custom rule's value whose shape differs from the value it stands for is an error,
as JAX's (review finding 08): a bwd returning a 0-d cotangent (a traced sum, or a number)
for a (2,) argument, or a jvp rule a 0-d tangent for a (2,) output, was broadcast
silently. Oracle: JAX itself (x64), which raises for each of these and accepts ``None``
(zeros) for a cotangent."""

import numpy as np
import pytest

import symgrad as sg

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

X = np.array([0.2, 0.5])
#: what a rule returns in place of a (2,) value
WRONG = {"traced sum": lambda v: v.sum(), "python float": lambda v: 1.5,
         "numpy scalar": lambda v: np.float64(1.5), "0-d array": lambda v: np.array(1.5)}


def _grad(lib):
    return jax.grad if lib is jax else lambda f: sg.grad(f, backend="numpy")


def _vjp_grad(lib, custom_vjp, cotangent):
    @custom_vjp
    def h(x):
        return x * 2

    h.defvjp(lambda x: (h(x), None), lambda r, ct: (cotangent(ct),))
    return _grad(lib)(lambda x: h(x).sum())


def _jvp_grad(lib, custom_jvp, tangent):
    @custom_jvp
    def k(x):
        return x * 2

    k.defjvp(lambda p, t: (k(p[0]), tangent(t[0])))
    return _grad(lib)(lambda x: k(x).sum())


@pytest.mark.parametrize("kind", WRONG)
def test_scalar_cotangent_for_vector_argument_raises(kind):
    with pytest.raises((TypeError, ValueError)):  # JAX's oracle: it refuses too
        _vjp_grad(jax, jax.custom_vjp, WRONG[kind])(X)
    with pytest.raises(TypeError, match=r"bwd's result leaf 0 has shape \(\), but it must "
                                        r"have shape \(2,\)"):
        _vjp_grad(sg, sg.custom_vjp, WRONG[kind])(X)


@pytest.mark.parametrize("kind", WRONG)
def test_scalar_tangent_for_vector_output_raises(kind):
    with pytest.raises(TypeError):
        _jvp_grad(jax, jax.custom_jvp, WRONG[kind])(X)
    with pytest.raises(TypeError, match=r"jvp's tangent leaf 0 has shape \(\), but it must "
                                        r"have shape \(2,\)"):
        _jvp_grad(sg, sg.custom_jvp, WRONG[kind])(X)


def test_none_cotangent_is_zeros_as_jax():
    want = np.asarray(_vjp_grad(jax, jax.custom_vjp, lambda ct: None)(X))
    got = _vjp_grad(sg, sg.custom_vjp, lambda ct: None)(X)
    np.testing.assert_array_equal(got, want)
    assert not want.any()
