"""What the interpreter reads from the environment: where launches that name no device go (``COOPDSL_DEVICE``)
and the limits given as positive integers (``COOPDSL_INTERP_MAX_INVOCATIONS``, ``..._MAX_ITERATIONS``)."""

from __future__ import annotations

import os

from .errors import LaunchArgumentError

DEVICE_ENV = "COOPDSL_DEVICE"


def device_env() -> str:
    """``COOPDSL_DEVICE`` or "" (every GPU launch asks, so the common case, unset, is made cheap).

    ``os.environ.get`` of an unset name raises and catches a KeyError inside (about 0.7 us); CPython's
    ``os.environ`` keeps its contents in the dict ``_data`` under encoded keys, updated by every
    assignment to ``os.environ``, which is read directly when it is there.
    """
    env = os.environ
    data = getattr(env, "_data", None)
    if type(data) is dict:
        raw = data.get(_DEVICE_ENV_KEY)
        return "" if raw is None else env.decodevalue(raw)
    return env.get(DEVICE_ENV, "")


_DEVICE_ENV_KEY = os.environ.encodekey(DEVICE_ENV) if hasattr(os.environ, "encodekey") else DEVICE_ENV


def positive_env(name: str, default: int) -> int:
    """The positive integer in the environment variable ``name`` (a limit such as
    ``COOPDSL_INTERP_MAX_INVOCATIONS``), ``default`` when it is unset or empty; any other value is a
    :class:`LaunchArgumentError` naming the variable and its value."""
    raw = os.environ.get(name, "")
    if not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise LaunchArgumentError(f"{name} must be a positive integer, got {raw!r}")
    return value
