"""Cron schedules as Kubernetes' CronJobs read them (``robfig/cron``'s standard parser).

Five fields ``minute hour day-of-month month day-of-week`` (``*``, ``?`` in the day fields,
numbers, ``a-b`` ranges, ``/step``, comma lists; month names ``JAN``..``DEC`` and weekday names
``SUN``..``SAT``, case-insensitive; weekdays 0-6 with 0 = Sunday), or one of the macros
``@yearly`` (``@annually``), ``@monthly``, ``@weekly``, ``@daily`` (``@midnight``), ``@hourly``.
As in cron, when both day fields are restricted a day matching either runs (when one is ``*``
both must match).  ``@every`` and ``TZ=`` prefixes are not accepted (Kubernetes' validation
refuses them: the time zone is the CronJob's ``spec.timeZone``).

Times are evaluated as wall-clock times in a :class:`zoneinfo.ZoneInfo` (UTC by default): a
wall time skipped by a daylight-saving jump never fires, a repeated one fires once (its first
occurrence).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

UTC = dt.UTC

MACROS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}
_MONTHS = {n: i for i, n in enumerate(
    ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], 1)}
_DAYS = {n: i for i, n in enumerate(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"])}
#: How far :meth:`Schedule.next` and :meth:`Schedule.previous` look (a schedule like
#: ``0 0 30 2 *`` never fires).
SEARCH_DAYS = 366 * 5


class CronError(ValueError):
    """A schedule that does not parse; the message says which field and why."""


def _value(text: str, names: dict[str, int], lo: int, hi: int, what: str) -> int:
    upper = text.upper()
    if upper in names:
        return names[upper]
    if not text.isdigit():
        raise CronError(f"failed to parse int from {text} in the {what} field")
    value = int(text)
    if value < lo or value > hi:
        raise CronError(f"{what} value ({value}) out of range [{lo}, {hi}]")
    return value


def _field(text: str, lo: int, hi: int, names: dict[str, int], what: str, day: bool) -> tuple[frozenset[int], bool]:
    """The values one field allows, and whether it is a star (``*`` or, in the day fields, ``?``)."""
    values: set[int] = set()
    star = False
    for part in text.split(","):
        if not part:
            raise CronError(f"empty element in {what} field {text!r}")
        rng, slash, step_text = part.partition("/")
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"invalid step {step_text!r} in {what} field {text!r}")
            step = int(step_text)
        else:
            step = 1
        if rng == "*" or (day and rng == "?"):
            start, end = lo, hi
            star = star or step == 1
        else:
            first, dash, last = rng.partition("-")
            start = _value(first, names, lo, hi, what)
            end = _value(last, names, lo, hi, what) if dash else (hi if slash else start)
            if end < start:
                raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {part}")
        values.update(range(start, end + 1, step))
    return frozenset(values), star


@dataclass(frozen=True)
class Schedule:
    """A parsed cron schedule; :meth:`next` and :meth:`previous` find its times in a time zone."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    days_star: bool
    weekdays_star: bool

    def matches_day(self, day: dt.date) -> bool:
        """Whether the schedule runs on ``day`` (cron's day-of-month / day-of-week rule)."""
        if day.month not in self.months:
            return False
        dom = day.day in self.days
        dow = (day.isoweekday() % 7) in self.weekdays
        if self.days_star or self.weekdays_star:
            return dom and dow
        return dom or dow

    def _times(self, day: dt.date, tz: dt.tzinfo, reverse: bool) -> list[dt.datetime]:
        """The UTC times the schedule fires on local ``day`` (skipped wall times left out)."""
        found = []
        for hour in sorted(self.hours, reverse=reverse):
            for minute in sorted(self.minutes, reverse=reverse):
                wall = dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)
                utc = wall.astimezone(UTC)
                if utc.astimezone(tz).replace(tzinfo=None) != wall.replace(tzinfo=None):
                    continue  # does not exist (daylight-saving jump forward)
                found.append(utc)
        return found

    def next(self, after: dt.datetime, tz: dt.tzinfo = UTC) -> dt.datetime | None:
        """The first time strictly after ``after`` (aware), in UTC; None if none within 5 years."""
        local = after.astimezone(tz)
        for offset in range(SEARCH_DAYS):
            day = local.date() + dt.timedelta(days=offset)
            if not self.matches_day(day):
                continue
            for when in self._times(day, tz, reverse=False):
                if when > after:
                    return when
        return None

    def previous(self, at: dt.datetime, tz: dt.tzinfo = UTC) -> dt.datetime | None:
        """The last time at or before ``at`` (aware), in UTC; None if none within 5 years."""
        local = at.astimezone(tz)
        for offset in range(SEARCH_DAYS):
            day = local.date() - dt.timedelta(days=offset)
            if not self.matches_day(day):
                continue
            for when in self._times(day, tz, reverse=True):
                if when <= at:
                    return when
        return None


def parse(schedule: str) -> Schedule:
    """Parse a standard 5-field schedule or macro; raises :class:`CronError` (a ValueError)."""
    text = schedule.strip()
    if not text:
        raise CronError("empty spec string")
    if text.startswith("@"):
        if text.startswith("@every"):
            raise CronError("@every is not supported, use a 5-field schedule")
        if text not in MACROS:
            raise CronError(f"unrecognized descriptor: {text}")
        text = MACROS[text]
    if text.startswith(("TZ=", "CRON_TZ=")):
        raise CronError("cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
    fields = text.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: {schedule}")
    minutes, _ = _field(fields[0], 0, 59, {}, "minute", False)
    hours, _ = _field(fields[1], 0, 23, {}, "hour", False)
    days, days_star = _field(fields[2], 1, 31, {}, "day of month", True)
    months, _ = _field(fields[3], 1, 12, _MONTHS, "month", False)
    weekdays, weekdays_star = _field(fields[4], 0, 6, _DAYS, "day of week", True)
    return Schedule(minutes, hours, days, months, weekdays, days_star, weekdays_star)


def zone(name: str | None) -> dt.tzinfo:
    """The time zone of a CronJob's ``spec.timeZone`` (None or ``""``: UTC, as minik8s' controller
    manager runs in UTC); raises :class:`CronError` for an unknown name."""
    if not name:
        return UTC
    if name.startswith(("/", ".")) or ".." in name or "\\" in name:
        raise CronError(f"unknown time zone {name}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise CronError(f"unknown time zone {name}") from None
