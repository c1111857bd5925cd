"""A LangGraph `BaseStore` kept in mnemo (``pip install "mnemo-client[langgraph]"``).

Each item is one memory of the client's user: its text is what mnemo searches (the value's
``content``, ``text``, ``memory`` or ``data`` field, else the value as JSON), and the item's
namespace, key and whole value ride in the memory's metadata. So what an agent puts through
LangGraph passes mnemo's policy gate and is versioned, audited, exported and completely
deletable like any other memory:

- a put the gate refuses (a secret, memory switched off) raises `StoreRefused`;
- a put it holds for the user's confirmation (an instruction-like or sensitive statement)
  is stored as pending, and `get` finds it only once the user confirms it;
- a put of a key that exists revises that memory (a new version, its history kept);
- a put of ``None`` forgets the memory.

Reads list or search the user's active memories: a `get` lists them (once per batch), a
search with a query uses mnemo's ranking over its best 100 results (the API's most) and then
keeps those in the namespace and filter asked for, and a search without one lists them.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from langgraph.store.base import (
    BaseStore,
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from ._operations import Memory
from .client import Mnemo
from .errors import MnemoError

#: Metadata names that hold the item's place and value.
NAMESPACE, KEY, VALUE = "langgraph_namespace", "langgraph_key", "langgraph_value"

#: Value fields whose text is remembered, in order of preference.
TEXT_FIELDS = ("content", "text", "memory", "data")


class StoreRefused(MnemoError):
    """mnemo refused to keep a put's value (the reason is the gate's code)."""


def text_of(value: Dict[str, Any]) -> str:
    """The statement a value is remembered as."""
    for field in TEXT_FIELDS:
        text = value.get(field)
        if isinstance(text, str) and text.strip():
            return text
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _place(memory: Memory) -> Optional[Tuple[Tuple[str, ...], str]]:
    metadata = memory.get("metadata") or {}
    namespace, key = metadata.get(NAMESPACE), metadata.get(KEY)
    if isinstance(namespace, list) and isinstance(key, str):
        return tuple(str(part) for part in namespace), key
    return None


def _item(memory: Memory, score: Optional[float] = None) -> SearchItem:
    place = _place(memory)
    assert place is not None
    value = (memory.get("metadata") or {}).get(VALUE)
    return SearchItem(
        namespace=place[0],
        key=place[1],
        value=value if isinstance(value, dict) else {"content": memory["content"]},
        created_at=_when(memory["created_at"]),
        updated_at=_when(memory["updated_at"]),
        score=score,
    )


def _matches(namespace: Tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part))


def _filtered(value: Dict[str, Any], wanted: Optional[Dict[str, Any]]) -> bool:
    return all(value.get(k) == v for k, v in (wanted or {}).items())


class MnemoStore(BaseStore):
    """LangGraph's store interface over one user's mnemo memories."""

    def __init__(self, client: Mnemo, *, user_id: Optional[str] = None) -> None:
        self.client = client
        self.user_id = user_id

    def batch(self, ops: Iterable[Op]) -> List[Result]:
        listed: Optional[List[Memory]] = None

        def memories() -> List[Memory]:
            nonlocal listed
            if listed is None:
                answer = self.client.list_memories(user_id=self.user_id, status="active")
                listed = [m for m in answer["memories"] if _place(m) is not None]
            return listed

        def find(namespace: Tuple[str, ...], key: str) -> Optional[Memory]:
            return next((m for m in memories() if _place(m) == (tuple(namespace), key)), None)

        results: List[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                found = find(op.namespace, op.key)
                results.append(None if found is None else _item(found))
            elif isinstance(op, PutOp):
                self._put(op, find(op.namespace, op.key))
                listed = None
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op, memories))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._namespaces(op, memories()))
            else:
                raise TypeError(f"unknown store operation {op!r}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> List[Result]:
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))

    def _put(self, op: PutOp, existing: Optional[Memory]) -> None:
        if op.value is None:
            if existing is not None:
                self.client.forget_memory(existing["id"], user_id=self.user_id)
            return
        value = dict(op.value)
        metadata = {NAMESPACE: list(op.namespace), KEY: op.key, VALUE: value}
        if existing is not None:
            self.client.mem0_update(existing["id"], text=text_of(value), metadata=metadata, user_id=self.user_id)
            return
        answer = self.client.remember(text_of(value), metadata=metadata, user_id=self.user_id)
        if answer["outcome"] == "refused":
            raise StoreRefused(200, answer["reason"], f"mnemo refused to keep {op.key!r}: {answer['reason']}")

    def _search(self, op: SearchOp, memories: Callable[[], List[Memory]]) -> List[SearchItem]:
        prefix = tuple(op.namespace_prefix)

        def inside(memory: Memory) -> bool:
            place = _place(memory)
            return place is not None and place[0][: len(prefix)] == prefix

        if op.query:
            hits = self.client.search(op.query, k=100, user_id=self.user_id)["results"]
            found = [_item(h, h["score"]) for h in hits if inside(h)]
        else:
            found = [_item(m) for m in memories() if inside(m)]
            found.sort(key=lambda item: item.updated_at, reverse=True)
        found = [item for item in found if _filtered(item.value, op.filter)]
        return found[op.offset : op.offset + op.limit]

    def _namespaces(self, op: ListNamespacesOp, memories: Sequence[Memory]) -> List[Tuple[str, ...]]:
        seen = []
        for memory in memories:
            place = _place(memory)
            assert place is not None
            namespace = place[0]
            if op.match_conditions and not all(_matches(namespace, c) for c in op.match_conditions):
                continue
            if op.max_depth is not None:
                namespace = namespace[: op.max_depth]
            if namespace not in seen:
                seen.append(namespace)
        seen.sort()
        return seen[op.offset : op.offset + op.limit]


__all__ = ["MnemoStore", "StoreRefused", "text_of"]
