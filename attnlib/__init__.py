"""attnlib: the tested reference functions, data, plots and labs behind the attention notebooks.

Shapes follow one convention everywhere: ``(..., T, d)`` with any leading batch dimensions.

The mathematics is at the top level (``softmax``, ``attention``, ``masks``, ``heads``,
``kv_cache``, ``tiling``, ``gradients``, ``variance``, ``saturation``, ``retrieval``) with the
example data (``examples``); pictures, live labs, self-checked exercises and the pretrained model
are subpackages: ``attnlib.pictures``, ``attnlib.labs``, ``attnlib.exercises`` and
``attnlib.pretrained`` (imported on demand, so ``import attnlib`` stays light), and so is
``attnlib.induction``, the small causal transformer that notebook 14 trains.
"""

from . import examples
from .attention import scaled_dot_product_attention
from .gradients import (
    attention_backward,
    attention_head_backward,
    attention_head_input_backward,
    softmax_backward,
)
from .heads import attention_kind, kv_head_index, merge_heads, multi_head_attention, split_heads
from .kv_cache import KVCache, decode_with_kv_cache, kv_cache_bytes
from .masks import causal_mask, padding_mask
from .softmax import softmax, softmax_jacobian
from .tiling import TileStep, tiled_attention, tiled_attention_steps
from .variance import sample_dot_products

__version__ = "0.1.0"

__all__ = [
    "KVCache",
    "TileStep",
    "attention_backward",
    "attention_head_backward",
    "attention_head_input_backward",
    "attention_kind",
    "causal_mask",
    "decode_with_kv_cache",
    "examples",
    "kv_cache_bytes",
    "kv_head_index",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "sample_dot_products",
    "scaled_dot_product_attention",
    "softmax",
    "softmax_backward",
    "softmax_jacobian",
    "split_heads",
    "tiled_attention",
    "tiled_attention_steps",
]
