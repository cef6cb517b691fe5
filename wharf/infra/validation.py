"""Small checks shared by the core services (names, enums)."""
from __future__ import annotations

import unicodedata

from wharf.infra.errors import ValidationFailed

_REFUSED = frozenset(("Cc", "Cf", "Cs", "Co", "Cn"))
# Format characters that real text needs: zero-width non-joiner/joiner (Persian, Indic
# scripts, emoji sequences such as family or profession emoji).
_JOINERS = frozenset("\u200c\u200d")


def clean_label(value: object, field: str, *, max_len: int = 255) -> str:
    """A free-text label: 1..max_len characters after trimming, no control characters."""
    if not isinstance(value, str):
        raise ValidationFailed(f"{field} must be a string", details={"field": field})
    name = value.strip()
    if not name:
        raise ValidationFailed(f"{field} must not be empty", details={"field": field})
    if len(name) > max_len:
        raise ValidationFailed(f"{field} must be at most {max_len} characters",
                               details={"field": field})
    if any(unicodedata.category(ch) in _REFUSED and ch not in _JOINERS for ch in name):
        raise ValidationFailed(f"{field} must not contain control or unassigned characters",
                               details={"field": field})
    return name


def clean_name(value: object, field: str, *, max_len: int = 255) -> str:
    """A display name: 1..max_len characters after trimming, no control characters or '/'."""
    name = clean_label(value, field, max_len=max_len)
    if "/" in name or "\\" in name:
        raise ValidationFailed(f"{field} must not contain path separators",
                               details={"field": field})
    return name


def one_of(value: object, field: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValidationFailed(f"{field} must be one of: {', '.join(allowed)}",
                               details={"field": field, "allowed": list(allowed)})
    return value


def encodable(text: str) -> bool:
    """False for strings with lone surrogates (JSON can carry them; UTF-8 cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def storable(text: str) -> bool:
    """Text the databases take as a parameter: no NUL (PostgreSQL refuses it with an error
    rather than a comparison), no lone surrogate."""
    return "\x00" not in text and encodable(text)
