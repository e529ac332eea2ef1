"""The state tab's map selector names each map in the reader's language ("FAVOR+（正交）" in
Chinese), its value staying the catalogue's id, as the maps tab's does."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_state_tabs_map_selector_names_maps_in_the_readers_language():
    from explorer.ui import i18n

    assert i18n.map_choice("favor_plus_orthogonal")[1] == "favor_plus_orthogonal"
    assert i18n.STRINGS["zh"][i18n.MAP_CHOICE + "favor_plus_orthogonal"] == "FAVOR+（正交）"
    source = (ROOT / "explorer" / "ui" / "state_tab.py").read_text(encoding="utf-8")
    assert "i18n.map_choice(map_id) for map_id in ids" in source
