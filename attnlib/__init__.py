"""attnlib: the tested reference functions, data, plots and labs behind the attention notebooks.

Shapes follow one convention everywhere: ``(..., T, d)`` with any leading batch dimensions.
"""

from . import examples
from .attention import scaled_dot_product_attention
from .heads import merge_heads, multi_head_attention, split_heads
from .masks import causal_mask, padding_mask
from .softmax import softmax, softmax_jacobian
from .tiled import tiled_attention
from .variance import sample_dot_products

__version__ = "0.1.0"

__all__ = [
    "causal_mask",
    "examples",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "sample_dot_products",
    "scaled_dot_product_attention",
    "softmax",
    "softmax_jacobian",
    "split_heads",
    "tiled_attention",
]
