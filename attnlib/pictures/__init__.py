"""Pictures: the plotting functions the notebooks use, one module per kind of picture.

Each takes an optional matplotlib ``ax`` and returns the artists it made.

- :mod:`~attnlib.pictures.cell_mesh`: a matrix as a mesh of cells coloured one by one (labs).
- :mod:`~attnlib.pictures.colours`: a colour-blind-safe sequence for groups (heads, rows).
- :mod:`~attnlib.pictures.heatmap`: an attention-weight matrix with token labels, and the
  dressing of a (query, key) matrix's axes.
- :mod:`~attnlib.pictures.head_grid`: every layer and head of a model in one image.
- :mod:`~attnlib.pictures.head_sharing`: which query heads share which key/value heads.
- :mod:`~attnlib.pictures.head_split`: a matrix split into heads, and the reshape that scrambles it.
- :mod:`~attnlib.pictures.pipeline_diagram`: the Q/K/V pipeline with the shape on every arrow.
- :mod:`~attnlib.pictures.tiling_diagram`: the order in which tiled attention visits its tiles.
"""
