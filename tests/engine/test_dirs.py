"""Directory resolution and index-name rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gno_trio.config.dirs import (
    DEFAULT_INDEX_NAME,
    Dirs,
    canonical_index_name,
    index_names_match,
    resolve_dirs,
    validate_index_name,
)
from gno_trio.errors import GnoError

HOME = "/home/ada"


def linux(env: dict[str, str]) -> Dirs:
    return resolve_dirs({"HOME": HOME, **env}, platform="linux")


def test_linux_defaults_follow_xdg_fallbacks() -> None:
    dirs = linux({})
    assert dirs.config == Path(HOME, ".config", "gno")
    assert dirs.data == Path(HOME, ".local", "share", "gno")
    assert dirs.cache == Path(HOME, ".cache", "gno")


def test_xdg_variables_move_the_defaults() -> None:
    dirs = linux(
        {"XDG_CONFIG_HOME": "/xdg/conf", "XDG_DATA_HOME": "/xdg/data", "XDG_CACHE_HOME": "/xdg/c"}
    )
    assert dirs == Dirs(Path("/xdg/conf/gno"), Path("/xdg/data/gno"), Path("/xdg/c/gno"))


def test_relative_or_empty_xdg_values_are_ignored() -> None:
    dirs = linux({"XDG_CONFIG_HOME": "relative/conf", "XDG_DATA_HOME": ""})
    assert dirs.config == Path(HOME, ".config", "gno")
    assert dirs.data == Path(HOME, ".local", "share", "gno")


def test_gno_variables_override_xdg() -> None:
    dirs = linux(
        {
            "XDG_CONFIG_HOME": "/xdg/conf",
            "GNO_CONFIG_DIR": "/etc-free/conf",
            "GNO_DATA_DIR": "/srv/gno-data",
            "GNO_CACHE_DIR": "~/gcache",
        }
    )
    assert dirs.config == Path("/etc-free/conf")
    assert dirs.data == Path("/srv/gno-data")
    assert dirs.cache == Path(HOME, "gcache")


def test_relative_gno_override_is_anchored_at_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert linux({"GNO_DATA_DIR": "state"}).data == tmp_path / "state"


def test_empty_gno_override_means_unset() -> None:
    assert linux({"GNO_DATA_DIR": ""}).data == Path(HOME, ".local", "share", "gno")


def test_default_env_is_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GNO_DATA_DIR", "/from/process/env")
    assert resolve_dirs().data == Path("/from/process/env")


def test_macos_defaults() -> None:
    dirs = resolve_dirs({"HOME": "/Users/ada"}, platform="darwin")
    support = Path("/Users/ada/Library/Application Support/gno")
    assert dirs == Dirs(support / "config", support / "data", Path("/Users/ada/Library/Caches/gno"))


def test_windows_defaults_use_appdata() -> None:
    env = {"HOME": "/c/Users/ada", "APPDATA": "/c/roaming", "LOCALAPPDATA": "/c/local"}
    dirs = resolve_dirs(env, platform="win32")
    assert dirs == Dirs(
        Path("/c/roaming/gno/config"), Path("/c/local/gno/data"), Path("/c/local/gno/cache")
    )


def test_file_locations_derive_from_the_directories() -> None:
    dirs = Dirs(Path("/c"), Path("/d"), Path("/k"))
    assert dirs.config_file == Path("/c/index.yml")
    assert dirs.database(DEFAULT_INDEX_NAME) == Path("/d/index-default.sqlite")
    assert dirs.database() == Path("/d/index-default.sqlite")
    assert dirs.write_lock == Path("/d/.mcp-write.lock")


def test_database_name_uses_the_canonical_identity() -> None:
    dirs = Dirs(Path("/c"), Path("/d"), Path("/k"))
    assert dirs.database("Work Notes") == Path("/d/index-work notes.sqlite")
    assert dirs.database("STRASSE") == dirs.database("straße")


def test_database_refuses_an_unsafe_name() -> None:
    with pytest.raises(GnoError) as info:
        Dirs(Path("/c"), Path("/d"), Path("/k")).database("../escape")
    assert info.value.code == "VALIDATION"


@pytest.mark.parametrize(
    "name",
    ["default", "work", "Work Notes", "v1.2", "a_b-c", "日本語", "Ärger", "x" * 64, "9lives"],
)
def test_valid_index_names(name: str) -> None:
    assert validate_index_name(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "x" * 65,
        "-lead",
        ".hidden",
        " lead",
        "_lead",
        "trail ",
        "trail.",
        "a..b",
        "a/b",
        "a\\b",
        "a:b",
        "tab\there",
        "new\nline",
        "nul\x00",
        "emoji😀",
        "\u0301mark-first",
        "𝔸" * 33,  # 33 astral letters are 66 UTF-16 units
    ],
)
def test_invalid_index_names(name: str) -> None:
    with pytest.raises(GnoError) as info:
        validate_index_name(name)
    assert info.value.code == "VALIDATION"
    assert info.value.kind.is_caller_error


def test_index_name_byte_budget_applies_to_the_canonical_form() -> None:
    # "ᾀ" is 3 UTF-8 bytes but case-folds to "ἀι" (5 bytes): 48 of them fit
    # the 242-byte file-name budget, 49 do not, although both are under 64.
    assert validate_index_name("ᾀ" * 48) == "ᾀ" * 48
    with pytest.raises(GnoError):
        validate_index_name("ᾀ" * 49)
    assert validate_index_name("ä" * 64) == "ä" * 64


def test_index_names_compare_case_and_normalisation_insensitively() -> None:
    assert index_names_match("Work", "work")
    assert index_names_match("caf\u00e9", "cafe\u0301")
    assert not index_names_match("work", "works")
    assert canonical_index_name("ΣΟΦΙΑ") == canonical_index_name("σοφια")


@given(st.text(max_size=80))
def test_validation_never_fails_with_anything_but_gnoerror(name: str) -> None:
    try:
        assert validate_index_name(name) == name
    except GnoError as exc:
        assert exc.code == "VALIDATION"
    else:
        # Whatever passes can never escape the data directory.
        path = Dirs(Path("/c"), Path("/d"), Path("/k")).database(name)
        assert path.parent == Path("/d")
        assert "/" not in path.name and ".." not in path.name
