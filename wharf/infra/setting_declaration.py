"""How one ``WHARF_*`` setting is declared (:func:`setting`, beside its field's type and
default in :class:`wharf.infra.settings.Settings`) and read back (:class:`Declared`: the
variable, the reader, the README's default column). ``msgspec.Meta`` is used as the
declaration only (bounds and description in the vocabulary of the wire contract); it does
not parse."""
import dataclasses
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from msgspec import Meta

from wharf.infra import setting_readers as readers

Parser = Callable[[Mapping[str, str], str, Any], Any]


def setting(description: str, *, ge: float | None = None, le: float | None = None,
            note: str | None = None, shown: str | None = None, parse: Parser | None = None,
            derived: Callable[[Path], Any] | None = None) -> Meta:
    """The declaration of one ``WHARF_*`` setting, beside its field's type and default.

    ``ge``/``le`` bound a number; ``description`` is the README's "meaning" column;
    ``note`` follows the default there (``14 days``), ``shown`` replaces it where the
    default is not a plain value; ``parse`` reads a value that is not a plain number, flag
    or string; ``derived`` computes a default from the data directory."""
    extra = {key: value for key, value in (("note", note), ("shown", shown), ("parse", parse),
                                           ("derived", derived)) if value is not None}
    return Meta(ge=ge, le=le, description=description, extra=extra or None)


@dataclass(frozen=True)
class Declared:
    """One setting as :class:`Settings` declares it."""

    field: str
    variable: str
    type: Any
    default: Any
    meta: Meta

    @property
    def derived(self) -> Callable[[Path], Any] | None:
        return (self.meta.extra or {}).get("derived")

    def parse(self, env: Mapping[str, str], name: str, default: Any) -> Any:
        custom = (self.meta.extra or {}).get("parse")
        if custom is not None:
            return custom(env, name, default)
        ge, le = self.meta.ge, self.meta.le
        if self.type is bool:
            return readers.read_bool(env, name, default)
        if self.type is int:
            return readers.read_int(env, name, default, minimum=int(ge or 0),
                                    maximum=None if le is None else int(le))
        if self.type is float:
            return readers.read_float(env, name, default, minimum=float(ge or 0.0),
                                      maximum=None if le is None else float(le))
        if self.type == int | None:
            return readers.read_optional_int(env, name, default, minimum=int(ge or 0),
                                             maximum=None if le is None else int(le))
        if self.type in (str, str | None):
            return readers.plain(env, name, default)
        raise TypeError(f"{self.variable}: no parser for {self.type!r}")

    @property
    def shown_default(self) -> str:
        """The README's "default" column."""
        extra = self.meta.extra or {}
        if "shown" in extra:
            return str(extra["shown"])
        value = self.default
        text = ("true" if value else "false") if isinstance(value, bool) \
            else f"{value:g}" if isinstance(value, float) else str(value)
        return f"`{text}`" + (f" ({extra['note']})" if "note" in extra else "")


def declarations(settings: type[Any]) -> tuple[Declared, ...]:
    """The settings ``settings`` (a dataclass) declares with :func:`setting`, in order."""
    hints = typing.get_type_hints(settings, include_extras=True)
    out = []
    for f in dataclasses.fields(settings):
        hint = hints[f.name]
        if typing.get_origin(hint) is not Annotated:
            continue  # not read from the environment (``extra``)
        kind, *metadata = typing.get_args(hint)
        meta = next(m for m in metadata if isinstance(m, Meta))
        default = None if f.default is dataclasses.MISSING else f.default
        out.append(Declared(f.name, "WHARF_" + f.name.upper(), kind, default, meta))
    return tuple(out)
