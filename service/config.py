"""Every setting of the service, read from environment variables, with defaults in one place."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return default if raw in (None, "") else int(raw)


def _env_list(name: str, default: str) -> tuple[str, ...]:
    raw = os.environ.get(name, default)
    return tuple(s.strip() for s in raw.split(",") if s.strip())


@dataclass(frozen=True)
class Settings:
    """Service settings. `from_env()` reads them; tests build them directly."""

    # Largest request body accepted, in bytes; larger bodies get 413.
    max_body_bytes: int = 1_048_576
    # Most items in one batch request to hands/score or scorecards/score.
    max_batch_items: int = 1000
    # Browser origins allowed by CORS ("*" for any; empty for none).
    cors_origins: tuple[str, ...] = field(default=("*",))

    @classmethod
    def from_env(cls) -> Settings:
        """Settings from the environment (names in the README's configuration table)."""
        return cls(
            max_body_bytes=_env_int("MAX_BODY_BYTES", cls.max_body_bytes),
            max_batch_items=_env_int("MAX_BATCH_ITEMS", cls.max_batch_items),
            cors_origins=_env_list("CORS_ORIGINS", "*"),
        )
