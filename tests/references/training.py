"""NumPy references for the training operators, from the DirectML pages' formulas (FLOAT64 throughout)."""

from __future__ import annotations

import numpy as np


def _f(value: float) -> np.float64:
    """A FLOAT attribute as DirectML reads it (rounded to float32 on the wire)."""
    return np.float64(np.float32(value))


def _axes(statistics_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The dimensions a statistics tensor of this shape is taken over: those where its size is 1."""
    return tuple(d for d, size in enumerate(statistics_shape) if size == 1)


def batch_normalization_grad(
    x: np.ndarray, dy: np.ndarray, mean: np.ndarray, variance: np.ndarray, scale: np.ndarray, epsilon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OutputGradient = InputGradient * Scale / sqrt(Variance + Epsilon); the scale and bias gradients are sums of
    InputGradient * (Input - Mean) / sqrt(Variance + Epsilon) and of InputGradient over Mean's size-1 dimensions."""
    x64, dy64, mean64, var64, scale64 = (np.asarray(a, np.float64) for a in (x, dy, mean, variance, scale))
    axes = _axes(mean64.shape)
    root = np.sqrt(var64 + _f(epsilon))
    gradient = dy64 * (scale64 / root)
    scale_gradient = np.sum(dy64 * (x64 - mean64) / root, axis=axes, keepdims=True)
    bias_gradient = np.sum(dy64, axis=axes, keepdims=True)
    return gradient, scale_gradient, bias_gradient


def batch_normalization_training_grad(
    x: np.ndarray, dy: np.ndarray, mean: np.ndarray, variance: np.ndarray, scale: np.ndarray, epsilon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The page's lines: Coef0 = 1 / sqrt(Variance + Epsilon); Coef1 = InputGradient * (Input - mean(Input));
    OutputGradient = Scale * Coef0 * (InputGradientCentered - InputCentered * mean(Coef1) / (Variance + Epsilon)),
    mean() over Mean's size-1 dimensions; the scale and bias gradients as BATCH_NORMALIZATION_GRAD's."""
    x64, dy64, mean64, var64, scale64 = (np.asarray(a, np.float64) for a in (x, dy, mean, variance, scale))
    axes = _axes(mean64.shape)

    def mean_of(a: np.ndarray) -> np.ndarray:
        return np.asarray(np.mean(a, axis=axes, keepdims=True), np.float64)

    coef0 = 1.0 / np.sqrt(var64 + _f(epsilon))
    coef1 = dy64 * (x64 - mean_of(x64))
    gradient_centred = dy64 - mean_of(dy64)
    input_centred = x64 - mean_of(x64)
    gradient = scale64 * coef0 * (gradient_centred - input_centred * mean_of(coef1) / (var64 + _f(epsilon)))
    _, scale_gradient, bias_gradient = batch_normalization_grad(x, dy, mean, variance, scale, epsilon)
    return gradient, scale_gradient, bias_gradient


def batch_normalization_training(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, fused_add: np.ndarray | None, epsilon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Output (before any fused activation), Mean and population Variance over Scale's size-1 dimensions."""
    x64, scale64, bias64 = (np.asarray(a, np.float64) for a in (x, scale, bias))
    axes = _axes(scale64.shape)
    mean = np.mean(x64, axis=axes, keepdims=True)
    variance = np.mean((x64 - mean) ** 2, axis=axes, keepdims=True)
    output = scale64 * ((x64 - mean) / np.sqrt(variance + _f(epsilon))) + bias64
    if fused_add is not None:
        output = output + np.asarray(fused_add, np.float64)
    return output, mean, variance


def local_response_normalization_grad(
    x: np.ndarray, dy: np.ndarray, *, cross_channel: bool, local_size: int, alpha: float, beta: float, bias: float
) -> np.ndarray:
    """The gradient of Y = X / (Bias + Alpha / LocalSize * window sum of X^2)^Beta, by explicit loops: each
    output position i sends dY[i] * dY_i/dX_j to every j of its window (LocalSize channels with CrossChannel, else
    LocalSize x LocalSize of H and W, from i - floor((LocalSize - 1) / 2) to i + ceil((LocalSize - 1) / 2),
    clipped to the tensor)."""
    data = np.asarray(x, np.float64)
    grad = np.asarray(dy, np.float64)
    a, b, k = _f(alpha), _f(beta), _f(bias)
    n_size, c_size, h_size, w_size = data.shape
    before = (local_size - 1) // 2
    after = local_size - 1 - before
    out = np.zeros_like(data)
    for n in range(n_size):
        for c in range(c_size):
            for h in range(h_size):
                for w in range(w_size):
                    if cross_channel:
                        window = (n, slice(max(0, c - before), min(c_size, c + after + 1)), h, w)
                    else:
                        rows = slice(max(0, h - before), min(h_size, h + after + 1))
                        columns = slice(max(0, w - before), min(w_size, w + after + 1))
                        window = (n, c, rows, columns)
                    d = k + a / local_size * np.sum(data[window] ** 2)
                    # dY_i/dX_i has the direct term d^-b; every j of the window (i included) gets
                    # -b * x_i * d^(-b - 1) * a / LocalSize * 2 x_j.
                    out[n, c, h, w] += grad[n, c, h, w] * d**-b
                    through = grad[n, c, h, w] * b * data[n, c, h, w] * d ** (-b - 1) * a / local_size
                    out[window] -= through * 2 * data[window]
    return out


def adam_optimizer(
    parameters: np.ndarray,
    first_moment: np.ndarray,
    second_moment: np.ndarray,
    gradient: np.ndarray,
    step: float,
    *,
    learning_rate: float,
    beta1: float,
    beta2: float,
    epsilon: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The page's update: moments first, then X -= LearningRate * sqrt(1 - Beta2^T) / (1 - Beta1^T) * M / (sqrt(V)
    + Epsilon); the updated parameters and both moments."""
    x, m, v, g = (np.asarray(a, np.float64) for a in (parameters, first_moment, second_moment, gradient))
    b1, b2 = _f(beta1), _f(beta2)
    m = b1 * m + (1.0 - b1) * g
    v = b2 * v + (1.0 - b2) * g * g
    alpha = np.sqrt(1.0 - b2**step) / (1.0 - b1**step)
    x = x - _f(learning_rate) * alpha * m / (np.sqrt(v) + _f(epsilon))
    return x, m, v
