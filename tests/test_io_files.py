"""The files door (tools/io/files.py): writes never go through a symlink or out of their root."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tools.framework.errors import BadInput
from tools.io import files


def test_a_write_replaces_a_file_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_text("old\n")
    target.chmod(0o640)
    files.write_text(target, "new\n")
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]  # no temporary file left


def test_a_write_refuses_a_symlink_and_a_folder_that_leads_out_of_its_root(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "dangling").symlink_to(outside / "made")
    with pytest.raises(BadInput, match="symlink"):
        files.write_text(root / "dangling", "x")
    with pytest.raises(BadInput, match="symlink"):
        files.open_write(root / "dangling")
    (root / "out").symlink_to(outside)
    with pytest.raises(BadInput, match="outside"):
        files.write_text(root / "out" / "made", "x", root=root)
    assert list(outside.iterdir()) == []


def test_a_copy_takes_folders_and_regular_files_only(tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "sub").mkdir(parents=True)
    (source / "sub" / "a.txt").write_text("a")
    files.copy_tree(source, tmp_path / "copy")
    assert (tmp_path / "copy" / "sub" / "a.txt").read_text() == "a"
    (source / "sub" / "link").symlink_to(tmp_path)
    with pytest.raises(BadInput, match="symlink"):
        files.copy_tree(source, tmp_path / "copy2")
    assert not (tmp_path / "copy2").exists()


def test_removing_a_link_or_a_folder_holding_one_never_touches_what_it_points_to(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "file").write_text("x")
    (tmp_path / "link").symlink_to(kept)
    files.remove(tmp_path / "link")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "inner").symlink_to(kept)
    files.remove(tmp_path / "tree")
    files.remove(tmp_path / "never-was")
    assert (kept / "file").read_text() == "x" and not os.path.lexists(tmp_path / "tree")


def test_a_read_inside_a_root_refuses_dot_dot_absolute_and_links_out(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret").write_text("s")
    (root / "link").symlink_to(tmp_path / "secret")
    for name in ("../secret", str(tmp_path / "secret"), "link"):
        with pytest.raises(BadInput, match="outside"):
            files.read_text_bounded(root / name, root=root)


def test_an_optional_file_is_none_only_where_there_is_none(tmp_path: Path) -> None:
    """A missing file, a folder, or a path through a file is "none there"; a FIFO or a file past the bound is
    there, and refused with a line that names it: never a hang, never silently nothing."""
    (tmp_path / "a-file").write_text("x")
    for absent in ("missing.json", ".", "a-file/HEAD"):
        assert files.read_bytes_if_present(tmp_path / absent) is None
        assert files.read_json_if_present(tmp_path / absent) is None
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(BadInput, match="fifo.json is a FIFO"):
        files.read_json_if_present(tmp_path / "fifo.json")
    (tmp_path / "big.json").write_text("[" + "0," * 600 + "0]")
    with pytest.raises(BadInput, match=r"big.json is 1.2 KiB, over the 1 KiB rlpilot reads whole") as refused:
        files.read_json_if_present(tmp_path / "big.json", limit=1024)
    assert "move it aside" in refused.value.hint
    (tmp_path / "torn.json").write_text('{"returncode": ')
    assert files.read_json_if_present(tmp_path / "torn.json") is None  # half written: says nothing
    (tmp_path / "exit.json").write_text('{"returncode": 0}')
    assert files.read_json_if_present(tmp_path / "exit.json") == {"returncode": 0}


def test_the_last_lines_of_a_log_come_from_its_end_alone(tmp_path: Path) -> None:
    log = tmp_path / "output.log"
    assert files.last_lines(log, 3) == []  # no log yet
    log.write_text("".join(f"line {n}\n" for n in range(1000)))
    assert files.last_lines(log, 3) == ["line 997", "line 998", "line 999"]
    # Each line is 9 bytes: a line the bound cuts is left out, one it starts exactly is kept.
    assert files.last_lines(log, 100, limit=36) == ["line 996", "line 997", "line 998", "line 999"]
    assert files.last_lines(log, 100, limit=35) == ["line 997", "line 998", "line 999"]
    os.mkfifo(tmp_path / "fifo.log")
    with pytest.raises(BadInput, match="is a FIFO"):
        files.last_lines(tmp_path / "fifo.log", 3)


def test_rlpilots_own_package_data_is_read_by_its_package_and_name() -> None:
    assert files.package_data("tools.configs", "renderer_map.json").startswith(b"{")


def test_a_size_reads_as_a_person_writes_it() -> None:
    sizes = [812, 3482, 8 << 20, int(79.0491 * (1 << 20)), 2254857830]
    assert [files.describe_size(size) for size in sizes] == ["812 bytes", "3.4 KiB", "8 MiB", "79 MiB", "2.1 GiB"]


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_private_state_is_0700_and_0600_under_a_umask_of_022(tmp_path: Path, umask_022) -> None:
    target = files.write_text(tmp_path / "home" / "sessions" / "one.json", "{}", private=True)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o700
    shared = files.write_text(tmp_path / "shared.toml", "x = 1\n")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o644  # what is not rlpilot's own: the umask decides


def test_a_private_folder_of_ones_own_is_made_0700_and_any_other_refused(tmp_path: Path, umask_022) -> None:
    folder = files.own_private_dir(tmp_path / "rlpilot-runtime")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert files.own_private_dir(folder) == folder  # there already, and private: taken as it is
    open_to_others = tmp_path / "open"
    open_to_others.mkdir(mode=0o755)
    with pytest.raises(BadInput, match="not a private folder of yours") as refused:
        files.own_private_dir(open_to_others)
    assert refused.value.code == "not-private" and "drwxr-xr-x" in refused.value.message
    (tmp_path / "link").symlink_to(folder)
    with pytest.raises(BadInput, match="not a private folder"):
        files.own_private_dir(tmp_path / "link")
