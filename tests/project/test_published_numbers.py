"""Every number the source lessons print appears in a notebook's stored outputs.

nbval proves that a fresh run reproduces the stored outputs; this test proves that the stored
outputs still contain the lessons' numbers (listed in shared/seeds/README.md), so a re-run that
drops one cannot pass unnoticed. The strings are written as the notebooks print them.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

PUBLISHED = {
    "03_worked_example_it": [
        # "it" query (seed 000): scores, both softmaxes, both outputs
        "[5, 3, 4, 4]",
        "scaled scores: [2.5, 1.5, 2, 2]",
        "softmax(raw)    = [0.5344, 0.0723, 0.1966, 0.1966]",
        "softmax(scaled) = [0.3875, 0.1425, 0.2350, 0.2350]",
        "output(raw weights)    = [1.7311, 0.2689, 2.1932, 1.0000]",
        "output(scaled weights) = [1.6225, 0.3775, 1.8674, 1.0000]",
        # the seed's own code block, printed as the seed prints it
        "weights[3] = [0.3875 0.1425 0.235  0.235 ]",
        "output[3]  = [1.6225 0.3775 1.8674 1.    ]",
        # "late" query (seed 000, question 4)
        "raw scores:      [2, 4, 3, 3]",
        "scaled scores:   [1, 2, 1.5, 1.5]",
        "softmax(raw)   = [0.0723, 0.5344, 0.1966, 0.1966]",
        "softmax(scaled)= [0.1425, 0.3875, 0.2350, 0.2350]",
        "output(scaled weights) = [1.3775, 0.6225, 1.1326, 1.0000]",
        # T=2 example (seed 004), at four and at six decimals
        "A = softmax(S) = [[0.8808, 0.1192], [0.1192, 0.8808]]",
        "Output = A @ V = [[1.2384, 1.7616], [2.7616, 0.2384]]",
        "exact output:         [[1.238406, 1.761594], [2.761594, 0.238406]]",
        # seed 004, exercise 2 (exercise 1, exp(16), is printed by 02)
        "output = p @ V = [5.0, 10.0]",
        # seed 003, the step-by-step arithmetic quoted from its missing figure
        "q1·k1 = 1.0(1.1) + 0.5(0.4) = 1.30",
        "weight row 1: 0.31  0.26  0.25  0.18   sum 1.00",
        "output row 1 = 0.31(2.0) + 0.26(0.5) + 0.25(1.5) + 0.18(0.0)",
        "= 1.125, which rounds (half up) to 1.13",
    ],
    # seed 004 exercise 1 (exp(16), exp(2)) and typical widths; seed 000's e^30
    "02_why_sqrt_dk": ["exp(16) = 8,886,110.52", "exp(2) = 7.389", "1.07e+13", "11.3"],
    "04_softmax_saturation": [
        "softmax([1, 2, 3])   = [0.09 0.24 0.67]",
        "softmax([8, 16, 24]) = [0.00 0.00 1.00]",
        "8,886,110",
        "7.389",
        "1.07e+13",
    ],
}


def stored_output_text(name: str) -> str:
    """All printed text of a notebook. A cell's stdout may be stored in several chunks, split
    anywhere (even mid-line), so the chunks of one stream are joined as they were printed."""
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    texts = []
    for cell in nb.cells:
        stream = ""
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                stream += out.get("text", "")
            else:
                texts.append(out.get("data", {}).get("text/plain", ""))
        texts.append(stream)
    return "\n".join(texts)


@pytest.mark.parametrize(
    ("notebook", "number"),
    [(nb, number) for nb, numbers in PUBLISHED.items() for number in numbers],
)
def test_published_number_is_printed(notebook: str, number: str) -> None:
    assert number in stored_output_text(notebook), f"{notebook} no longer prints {number!r}"
