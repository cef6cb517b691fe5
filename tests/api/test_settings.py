"""Settings are declared once (``wharf/infra/settings.py``): the README table, the example env file
and the bounds checked at start all follow from the declarations."""
from __future__ import annotations

from pathlib import Path

import pytest

from wharf.infra.settings import DECLARED, ConfigError, Settings, settings_table

ROOT = Path(__file__).resolve().parents[2]


def test_readme_settings_table_is_the_declared_one():
    readme = (ROOT / "README.md").read_text()
    table = settings_table()
    assert table in readme, ("README.md's settings table differs from the declarations; "
                             "regenerate it with `.venv/bin/python -m wharf.infra.settings`")


def test_env_example_names_every_setting_with_its_default():
    lines = (ROOT / "deploy" / "env.example").read_text().splitlines()
    assigned = {}
    for line in lines:
        text = line.removeprefix("#").strip()
        name, sep, value = text.partition("=")
        if sep and name.startswith("WHARF_") and " " not in name:
            assigned.setdefault(name, []).append((line.startswith("#"), value))
    declared = {d.variable: d for d in DECLARED}
    assert set(declared) <= set(assigned), set(declared) - set(assigned)
    defaults = Settings.from_env({})
    for name, entries in assigned.items():
        d = declared.get(name)
        if d is None or d.default in (None, ()) or d.derived is not None:
            continue  # read by the command, an example value, or derived from the data dir
        for commented, value in entries:
            if commented and value:  # a commented line shows the default
                shown = Settings.from_env({name: value})
                assert getattr(shown, d.field) == getattr(defaults, d.field), (name, value)


@pytest.mark.parametrize("d", [d for d in DECLARED if d.meta.ge is not None],
                         ids=lambda d: d.variable)
def test_declared_bounds_are_enforced_with_a_message_naming_the_variable(d):
    low = d.meta.ge
    below = str(low - 1) if d.type is not float else str(low / 2 if low else -0.5)
    with pytest.raises(ConfigError, match=f"^{d.variable}="):
        Settings.from_env({d.variable: below})
    assert getattr(Settings.from_env({d.variable: str(low)}), d.field) == low
    if d.meta.le is not None:
        assert getattr(Settings.from_env({d.variable: str(d.meta.le)}), d.field) == d.meta.le
        with pytest.raises(ConfigError, match=f"^{d.variable}="):
            Settings.from_env({d.variable: str(d.meta.le + 1)})


def test_defaults_are_the_declared_ones(tmp_path):
    s = Settings.from_env({"WHARF_DATA_DIR": str(tmp_path)})
    for d in DECLARED:
        if d.derived is None and d.variable != "WHARF_DATA_DIR":
            assert getattr(s, d.field) == d.default, d.variable
    assert s.database_url == f"sqlite:///{tmp_path / 'wharf.db'}"
    assert s.blob_store_url == (tmp_path / "blobs").as_uri()
