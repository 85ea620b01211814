"""Indexed Jobs' compressed index lists (``status.completedIndexes``, ``status.failedIndexes``,
a success policy rule's ``succeededIndexes``): comma-separated intervals such as ``1,3-5,7``.

Kubernetes' ``orderedIntervals`` (``pkg/controller/job/indexed_job_utils.go``) and
``validateIndexesFormat`` (``pkg/apis/batch/validation``): the controller writes an interval of
three or more indexes as ``first-last`` and a pair as two single indexes (``{0, 1}`` is ``0,1``);
it reads a list leniently (bad fragments skipped, indexes clipped to ``completions``); the
apiserver checks one strictly, with Kubernetes' messages.
"""

from __future__ import annotations

from collections.abc import Iterable


def format_indexes(indexes: Iterable[int]) -> str:
    """``{0, 1, 2, 4, 6, 7}`` → ``0-2,4,6,7``; an empty set → ``""``."""
    parts: list[str] = []
    ordered = sorted(set(indexes))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if i == j:
            parts.append(str(ordered[i]))
        elif j == i + 1:
            parts.append(f"{ordered[i]},{ordered[j]}")
        else:
            parts.append(f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def parse_indexes(text: str | None, completions: int) -> set[int]:
    """The indexes below ``completions`` a list names (``parseIndexesFromString``): fragments that
    are not numbers are skipped, the list is read up to its first index ``>= completions`` and an
    interval's end is clipped to ``completions - 1``."""
    found: set[int] = set()
    if not text:
        return found
    for fragment in text.split(","):
        bounds = fragment.split("-")
        try:
            first = int(bounds[0])
        except ValueError:
            continue
        if first >= completions:
            break
        last = first
        if len(bounds) > 1:
            try:
                last = min(int(bounds[1]), completions - 1)
            except ValueError:
                continue
        found.update(range(first, last + 1))
    return found


def _interval(fragment: str, completions: int) -> tuple[int, int]:
    bounds = fragment.split("-")
    if len(bounds) > 2:
        raise ValueError(f'the fragment "{fragment}" violates the requirement that an index interval '
                         "can have at most two parts separated by '-'")
    numbers = []
    for bound in bounds:
        try:
            value = int(bound)
        except ValueError:
            raise ValueError(f'cannot convert string to integer for index: "{bound}"') from None
        if value >= completions:
            raise ValueError(f'too large index: "{bound}"')
        numbers.append(value)
    first, last = numbers[0], numbers[-1]
    if len(numbers) == 2 and first >= last:
        raise ValueError(f"non-increasing order, previous: {first}, current: {last}")
    return first, last


def validate_indexes_format(text: str, completions: int) -> int:
    """How many indexes a strictly written list names (``validateIndexesFormat``).

    Raises ValueError with Kubernetes' message: a fragment with more than one ``-``, a part that is
    not an integer, an index ``>= completions``, intervals not in increasing order."""
    if not text:
        return 0
    total = 0
    previous: int | None = None
    for fragment in text.split(","):
        first, last = _interval(fragment, completions)
        if previous is not None and previous >= first:
            raise ValueError(f"non-increasing order, previous: {previous}, current: {first}")
        total += last - first + 1
        previous = last
    return total
