"""The GENEB engine: data, encoders, embeddings, probes, planning and the `geneb-engine` CLI."""

__version__ = "0.1.0"
