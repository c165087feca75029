"""Tables that fit the terminal without breaking an identifier.

Rich fits a table to the console by narrowing every column, folding a config key into
four-letter fragments at 80 columns. Here each column says whether its cells may wrap
between words (prose, lists) or must stay on one line (keys, numbers, topologies), and
how early it may be dropped; columns are dropped, least important first, until the rest
fits. When even the columns that are never dropped do not fit, the table is printed wider
than the terminal (the terminal wraps the line, the text keeps every key whole), and a
note on stderr says which columns were left out and how to see them.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.segment import Segments
from rich.table import Table
from rich.text import Text

from inferbench.core.printable import printable

KEEP = 0  # priority of a column that is never dropped


@dataclass(frozen=True)
class Col:
    header: str
    priority: int = KEEP  # higher numbers are dropped first
    wrap: bool = False  # may wrap between words; otherwise each cell stays on one line
    justify: Literal["left", "right"] = "left"


@dataclass(frozen=True)
class Fitted:
    table: Table
    width: int  # what the table needs: more than the console's when a kept column is long
    dropped: tuple[str, ...]


def _printable(cell: str | Text) -> str | Text:
    """A cell whose control and bidi characters are escapes (a stored identity field may
    hold an ESC sequence that would retitle or clear the terminal)."""
    if isinstance(cell, str):
        return printable(cell)
    safe = printable(cell.plain)
    return cell if safe == cell.plain else Text(safe, style=cell.style)


def _words(text: str) -> list[str]:
    return text.split() or [""]


def _longest_word(texts: Sequence[str]) -> int:
    return max((cell_len(w) for t in texts for w in _words(t)), default=0)


def _wrap_header(header: str, width: int) -> str:
    """The header's words on as few lines of at most `width` cells as they go."""
    lines: list[str] = []
    for word in header.split():
        if lines and cell_len(lines[-1]) + 1 + cell_len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _text(cell: str | Text) -> Text:
    return cell if isinstance(cell, Text) else Text(cell)


def _table(title: str | None, style: dict[str, object]) -> Table:
    return Table(
        title=title,
        box=style.get("box", box.SIMPLE_HEAD),  # type: ignore[arg-type]
        pad_edge=bool(style.get("pad_edge", False)),
        padding=(0, 1, 0, 0),
        show_edge=bool(style.get("show_edge", False)),
    )


def fit_table(
    cols: Sequence[Col],
    rows: Sequence[Sequence[str | Text]],
    width: int,
    *,
    title: str | None = None,
    **style: object,
) -> Fitted:
    """A table of `rows` with the columns that fit in `width`, dropped by priority."""
    rows = [[_printable(c) for c in row] for row in rows]
    plain = [[c.plain if isinstance(c, Text) else c for c in row] for row in rows]
    need: list[int] = []  # each column's width with its header wrapped between words
    whole: list[int] = []  # ... and with its header on one line
    for i, col in enumerate(cols):
        cells = [row[i] for row in plain]
        header_word = _longest_word([col.header])
        if col.wrap:
            longest = _longest_word(cells)
        else:
            longest = max((cell_len(line) for c in cells for line in c.splitlines()), default=0)
        need.append(max(longest, header_word))
        whole.append(max(longest, cell_len(col.header)))
    kept = list(range(len(cols)))
    probe_console = Console(width=100_000, file=io.StringIO())

    def required(indexes: list[int], widths: list[int] = need) -> int:
        probe = _table(None, style)
        for _ in indexes:
            probe.add_column(no_wrap=True)
        probe.add_row(*("x" * max(1, widths[i]) for i in indexes))
        return Measurement.get(probe_console, probe_console.options, probe).maximum

    droppable = sorted(
        (i for i, c in enumerate(cols) if c.priority != KEEP),
        key=lambda i: (-cols[i].priority, -i),
    )
    total = required(kept)
    while total > width and droppable:
        kept.remove(droppable.pop(0))
        total = required(kept)
    # headers stay on one line where the kept columns have the room: a wrapped
    # "out tok/s/GPU" reads as a second "tok/s/GPU" on the header's last line
    if required(kept, whole) <= width:
        need, total = whole, required(kept, whole)
    table = _table(title, style)
    for i in kept:
        col = cols[i]
        table.add_column(
            Text(_wrap_header(col.header, max(need[i], 1))),
            no_wrap=not col.wrap,
            overflow="fold",
            justify=col.justify,
        )
    for row in rows:  # plain strings stay plain: a `[...]` in a value is not Rich markup
        table.add_row(*(_text(row[i]) for i in kept))
    dropped = tuple(c.header for i, c in enumerate(cols) if i not in kept)
    return Fitted(table, total, dropped)


def print_table(
    console: Console,
    cols: Sequence[Col],
    rows: Sequence[Sequence[str | Text]],
    *,
    title: str | None = None,
    note: Console | None = None,
    wider: str = "a wider terminal (COLUMNS=200)",
    **style: object,
) -> Fitted:
    """Fit the table to `console` and print it; name the dropped columns on `note`."""
    fitted = fit_table(cols, rows, console.width, title=title, **style)
    if fitted.width <= console.width:
        console.print(fitted.table)
    else:  # rendered at its own width: Console.print would cut every line at the terminal's
        wide = console.options.update_width(fitted.width)
        console.print(Segments(console.render(fitted.table, wide)), crop=False)
    if fitted.dropped:
        (note or Console(stderr=True, highlight=False)).print(
            f"({', '.join(fitted.dropped)} not shown at {console.width} columns: {wider})",
            markup=False,
            soft_wrap=True,
        )
    return fitted
