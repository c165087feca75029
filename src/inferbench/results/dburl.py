"""What `--db` accepts: a database URL, or a bare path to a SQLite file.

`--db runs/results.sqlite` is what a new user types first; SQLAlchemy would refuse it as
"not a database URL". A value with no URL scheme is read as a SQLite file path.
"""

from __future__ import annotations

import re
from pathlib import Path

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def store_url(text: str) -> str:
    """`text` itself when it is a URL (`sqlite:///...`, `postgresql+psycopg://...`), else
    the SQLite URL of the file path it names."""
    if _SCHEME.match(text) or not text.strip():
        return text
    return f"sqlite:///{Path(text).expanduser()}"
