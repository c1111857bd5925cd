"""Errors as the API reports them: every refusal carries a stable code (`invalid_input`,
`not_found`, ...) and a one-line message naming what was wrong."""

from __future__ import annotations

from typing import Dict, Optional, Type


class MnemoError(Exception):
    """An error answer of the mnemo API."""

    #: The stable code this class stands for (None for the base class).
    code_name: Optional[str] = None

    def __init__(self, status: int, code: str, message: str, retry_after: Optional[float] = None):
        super().__init__(f"{code}: {message}")
        #: The HTTP status.
        self.status = status
        #: The stable error code.
        self.code = code
        #: The server's one-line message.
        self.message = message
        #: Seconds to wait before retrying (rate limits, an unavailable store).
        self.retry_after = retry_after


class InvalidInput(MnemoError):
    """400: the request was malformed or out of range."""

    code_name = "invalid_input"


class Unauthorized(MnemoError):
    """401: no key, or an unknown one."""

    code_name = "unauthorized"


class Forbidden(MnemoError):
    """403: the key may not act for this user or tenant."""

    code_name = "forbidden"


class NotFound(MnemoError):
    """404: no such record, user, run, space or route."""

    code_name = "not_found"


class Conflict(MnemoError):
    """409: the request conflicts with what is stored."""

    code_name = "conflict"


class PayloadTooLarge(MnemoError):
    """413: the body is over the server's limit."""

    code_name = "payload_too_large"


class RateLimited(MnemoError):
    """429: too many requests; `retry_after` says when to come back."""

    code_name = "rate_limited"


class Internal(MnemoError):
    """500: a failure inside the server."""

    code_name = "internal"


class Unavailable(MnemoError):
    """503: the store is unavailable for now."""

    code_name = "unavailable"


class StorageFull(MnemoError):
    """507: the store has no room for the change; nothing was written."""

    code_name = "storage_full"


ERRORS: Dict[str, Type[MnemoError]] = {
    cls.code_name: cls
    for cls in (
        InvalidInput,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        PayloadTooLarge,
        RateLimited,
        Internal,
        Unavailable,
        StorageFull,
    )
    if cls.code_name
}


def error_for(status: int, code: str, message: str, retry_after: Optional[float] = None) -> MnemoError:
    """The exception for an error answer: its code's class, else the base class."""
    return ERRORS.get(code, MnemoError)(status, code, message, retry_after)
