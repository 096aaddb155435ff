"""The GENEB engine: data, encoders, embeddings, probes, planning and the `geneb-engine` CLI.

Importing it turns on scipy's array-API support (SCIPY_ARRAY_API=1, unless the environment says
otherwise), which scipy reads once, when first imported, and which scikit-learn's array-API
dispatch needs (protocol geneb-v1-array-api, `engine.probes.array_api`); numpy input gives the
same results either way.
"""

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")

from store import __version__  # noqa: E402, F401  (after the environment is set)
