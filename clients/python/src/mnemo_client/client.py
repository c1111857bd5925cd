"""The clients: `Mnemo` (synchronous) and `AsyncMnemo` (asyncio), each every operation of
the API as a method (generated from docs/openapi.json into `_operations`), over httpx."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Union

import httpx

from ._operations import AsyncOperations, Command, MemoryToolResponse, SyncOperations
from .errors import MnemoError, error_for

#: Where `mnemo serve` listens by default.
DEFAULT_BASE_URL = "http://127.0.0.1:7077"


def _headers(api_key: Optional[str]) -> Dict[str, str]:
    headers = {"Accept": "application/json", "User-Agent": "mnemo-client-python"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def _answer(response: httpx.Response, text: bool) -> Any:
    """The body of a success, or the error it reports raised as an exception."""
    if response.is_success:
        return response.text if text else response.json()
    try:
        body = response.json()
        code, message = str(body["code"]), str(body["message"])
    except (ValueError, KeyError, TypeError):
        code, message = f"http_{response.status_code}", response.text.strip()[:200]
    retry_after: Optional[float] = None
    if "retry-after" in response.headers:
        try:
            retry_after = float(response.headers["retry-after"])
        except ValueError:
            retry_after = None
    raise error_for(response.status_code, code, message, retry_after)


def _tool_input(call: Union[Command, Dict[str, Any], str]) -> Any:
    """A memory-tool call as the model sent it: its input object, or that object as JSON."""
    return json.loads(call) if isinstance(call, str) else call


class _UserDefault:
    """The user an operation acts for when its call names none."""

    user_id: Optional[str] = None

    def _user(self, user_id: Optional[str]) -> Optional[str]:
        return user_id if user_id is not None else self.user_id


def _params(query: Optional[Dict[str, Any]]) -> Dict[str, str]:
    return {k: _query_value(v) for k, v in (query or {}).items()}


class Mnemo(_UserDefault, SyncOperations):
    """A synchronous client.

    ``Mnemo(api_key=..., user_id="alice")`` acts for alice wherever an operation takes a
    user (a user key needs no ``user_id``). Use it as a context manager, or call ``close``.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: Optional[str] = None,
        *,
        user_id: Optional[str] = None,
        timeout: float = 30.0,
        http: Optional[httpx.Client] = None,
    ) -> None:
        self.user_id = user_id
        self._http = http or httpx.Client(base_url=base_url, headers=_headers(api_key), timeout=timeout)

    def _request(self, method: str, path: str, query: Optional[Dict[str, Any]], body: Any, text: bool = False) -> Any:
        response = self._http.request(method, path, params=_params(query), json=body)
        return _answer(response, text)

    def handle_memory_tool(self, call: Union[Command, Dict[str, Any], str], *, user_id: Optional[str] = None) -> MemoryToolResponse:
        """Runs one call of Anthropic's memory tool (the ``input`` of its ``tool_use``
        block) on the user's files and returns ``{"result", "is_error"}``, ready to send
        back as the ``tool_result`` (its ``content`` and ``is_error``)."""
        return self.memory_tool(_tool_input(call), user_id=user_id)

    def close(self) -> None:
        """Closes the connection pool."""
        self._http.close()

    def __enter__(self) -> "Mnemo":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMnemo(_UserDefault, AsyncOperations):
    """An asyncio client: the same methods as `Mnemo`, each a coroutine."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: Optional[str] = None,
        *,
        user_id: Optional[str] = None,
        timeout: float = 30.0,
        http: Optional[httpx.AsyncClient] = None,
    ) -> None:
        self.user_id = user_id
        self._http = http or httpx.AsyncClient(base_url=base_url, headers=_headers(api_key), timeout=timeout)

    async def _request(self, method: str, path: str, query: Optional[Dict[str, Any]], body: Any, text: bool = False) -> Any:
        response = await self._http.request(method, path, params=_params(query), json=body)
        return _answer(response, text)

    async def handle_memory_tool(self, call: Union[Command, Dict[str, Any], str], *, user_id: Optional[str] = None) -> MemoryToolResponse:
        """Runs one call of Anthropic's memory tool; see `Mnemo.handle_memory_tool`."""
        return await self.memory_tool(_tool_input(call), user_id=user_id)

    async def aclose(self) -> None:
        """Closes the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncMnemo":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _query_value(value: Any) -> str:
    """A query-string value as the server reads it (booleans as `true`/`false`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


__all__ = ["AsyncMnemo", "DEFAULT_BASE_URL", "Mnemo", "MnemoError"]
