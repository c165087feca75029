"""inferbench: continuous LLM-inference benchmarking."""

__version__ = "0.1.0"
