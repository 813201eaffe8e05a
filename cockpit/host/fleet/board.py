"""The fleet as the fleet view shows it, from the hosts' pushed rows (`watch`): every run of
every host, each marked with its host, and the `needs you` inbox — every open ask of every run,
oldest first. Plain data, no I/O; the text in it is the runs' own (untrusted: the view
escapes it)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

__all__ = ["Board", "FleetAsk", "FleetRun", "board"]


class FleetAsk(NamedTuple):
    """One open ask: an approval (`kind` "approval") or an agent's question ("question")."""

    host: str
    run: str
    kind: str
    id: str
    tool: str
    command: str
    reason: str
    tier: int
    prefix: str  # what `[a] always` grants ("": it cannot be granted, `why` says why)
    why: str
    asked: float

    @property
    def key(self) -> str:
        """Unique in the fleet."""
        return f"{self.host}\x00{self.run}\x00{self.kind}\x00{self.id}"


class FleetRun(NamedTuple):
    """One run of one host."""

    host: str
    id: str
    task: str
    engine: str
    status: str
    activity: float | None
    tokens: int
    cost: float | None
    approvals: int
    questions: int
    tasks: int

    @property
    def key(self) -> str:
        """Unique in the fleet."""
        return f"{self.host}\x00{self.id}"


class Board(NamedTuple):
    """The whole fleet: its runs (by host, then as each host lists them), its inbox (oldest
    first), and each host that could not be reached, with why."""

    runs: list[FleetRun]
    inbox: list[FleetAsk]
    unreachable: list[tuple[str, str]]


def _number(value: Any, default: float = 0.0) -> float:
    """A count or an amount a peer sent, or `default`: a bool, a string, NaN, an infinity or a
    number no count can be (beyond 1e15) is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    number = float(value)
    return number if math.isfinite(number) and abs(number) < 1e15 else default


def _run(host: str, row: Mapping[str, Any]) -> FleetRun:
    given = row.get("waiting")
    waiting: Mapping[str, Any] = given if isinstance(given, dict) else {}
    activity = row.get("activity")
    cost = row.get("cost")
    return FleetRun(host=host, id=str(row.get("id", "")), task=str(row.get("task", "")),
                    engine=str(row.get("engine", "")), status=str(row.get("status", "")),
                    activity=_number(activity) if activity is not None else None,
                    tokens=int(_number(row.get("tokens"))),
                    cost=_number(cost) if cost is not None else None,
                    approvals=int(_number(waiting.get("approvals"))),
                    questions=int(_number(waiting.get("questions"))),
                    tasks=int(_number(row.get("tasks"), 1.0)))


def _asks(host: str, row: Mapping[str, Any]) -> Iterable[FleetAsk]:
    asks = row.get("asks")
    for ask in asks if isinstance(asks, list) else []:
        if not isinstance(ask, dict):
            continue
        yield FleetAsk(host=host, run=str(row.get("id", "")), kind=str(ask.get("kind", "")),
                       id=str(ask.get("id", "")), tool=str(ask.get("tool", "")),
                       command=str(ask.get("command", "")), reason=str(ask.get("reason", "")),
                       tier=int(_number(ask.get("tier"))), prefix=str(ask.get("prefix", "")),
                       why=str(ask.get("why", "")), asked=_number(ask.get("asked")))


def board(hosts: Mapping[str, list[dict[str, Any]] | str]) -> Board:
    """The fleet from each host's rows (by host name, in the order given), or, for a host that
    cannot be reached, why (a `str`)."""
    runs: list[FleetRun] = []
    inbox: list[FleetAsk] = []
    unreachable: list[tuple[str, str]] = []
    for host, rows in hosts.items():
        if isinstance(rows, str):
            unreachable.append((host, rows))
            continue
        for row in rows:
            if isinstance(row, dict):
                runs.append(_run(host, row))
                inbox.extend(_asks(host, row))
    inbox.sort(key=lambda ask: ask.asked)  # (stable: a run's own asks keep their order)
    return Board(runs, inbox, unreachable)
