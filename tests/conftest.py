"""Shared fixtures: plotting tests draw with Agg on a fresh Axes that is closed afterwards."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest


@pytest.fixture
def ax():
    """A new Axes on a new figure, closed when the test ends."""
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)
