"""Tables whose headers and cells may be messages, kept as messages until the page says them.

pandas (3) stores text as plain strings (its string dtype): a message put into a DataFrame
the usual way loses its key and is only English. ``message_frame`` keeps the header row and
any column that holds text as Python objects, so ``ui.common.said_outputs`` can say them in
the page's language; columns of numbers stay numbers. No gradio here.
"""

from __future__ import annotations


def message_frame(columns: dict):
    """A DataFrame of ``columns`` (header -> values, in order), its headers and any column
    with text kept as objects (messages stay messages)."""
    import pandas as pd
    headers = list(columns)
    series = {}
    for i, values in enumerate(columns.values()):
        values = list(values)
        text = any(isinstance(x, str) for x in values)
        series[i] = pd.Series(values, dtype=object) if text else pd.Series(values)
    frame = pd.DataFrame(series, columns=range(len(headers)))
    frame.columns = pd.Index(headers, dtype=object)
    return frame


def rows_frame(rows: list, columns=None):
    """``message_frame`` of ``rows`` (dicts, or lists in the order of ``columns``)."""
    if columns is None:
        columns = list(dict.fromkeys(name for row in rows for name in row))
    columns = list(columns)
    if rows and isinstance(rows[0], dict):
        return message_frame({name: [row.get(name) for row in rows] for name in columns})
    return message_frame({name: [row[i] for row in rows] for i, name in enumerate(columns)})


def with_headers(frame, headers: dict):
    """``frame`` with its columns renamed by ``headers`` (old -> new, messages kept)."""
    import pandas as pd
    frame = frame.copy()
    frame.columns = pd.Index([headers.get(name, name) for name in frame.columns], dtype=object)
    return frame
