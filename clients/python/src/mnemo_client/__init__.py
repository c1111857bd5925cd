"""A typed Python client for mnemo's HTTP API, synchronous (`Mnemo`) and asyncio
(`AsyncMnemo`), with every operation of docs/openapi.json as a method and every error as an
exception carrying the API's stable code."""

from ._operations import OPERATION_IDS
from .client import DEFAULT_BASE_URL, AsyncMnemo, Mnemo
from .errors import (
    Conflict,
    Forbidden,
    Internal,
    InvalidInput,
    MnemoError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    StorageFull,
    Unauthorized,
    Unavailable,
)

__all__ = [
    "OPERATION_IDS",
    "DEFAULT_BASE_URL",
    "AsyncMnemo",
    "Conflict",
    "Forbidden",
    "Internal",
    "InvalidInput",
    "Mnemo",
    "MnemoError",
    "NotFound",
    "PayloadTooLarge",
    "RateLimited",
    "StorageFull",
    "Unauthorized",
    "Unavailable",
]
