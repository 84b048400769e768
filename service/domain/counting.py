"""How the API counts and how the code indexes. A column of a sheet and a turn of a game are
numbered from 1 in every request and answer (column 1 is a sheet's first; turn 1 a game's
first), and indexed from 0 inside, as the lists that hold them are. Every conversion between
the two is one of these functions."""

from __future__ import annotations


def column_index(column: int | None) -> int:
    """The index of the sheet's column the API numbers `column` (None, or 0: the only
    column of a sheet without columns)."""
    return (column or 1) - 1


def column_number(index: int, columns: bool = True) -> int | None:
    """The API's number of the column at `index`: None on a sheet without columns
    (`columns` false)."""
    return index + 1 if columns else None


def turn_number(index: int) -> int:
    """The API's number of the turn at `index` of a game or a player's turns."""
    return index + 1
