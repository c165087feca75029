"""Hardware and model catalogs (data files with sources) and their loaders."""

from inferbench.catalog.load import CATALOG_ENV, Catalog, load_catalog, parse_precision
from inferbench.catalog.schema import WEIGHT_BYTES, GpuSpec, ModelSpec, Precision

__all__ = [
    "CATALOG_ENV",
    "WEIGHT_BYTES",
    "Catalog",
    "GpuSpec",
    "ModelSpec",
    "Precision",
    "load_catalog",
    "parse_precision",
]
