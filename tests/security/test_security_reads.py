"""Case 9: reads are bounded and of regular files only, dialect detection included."""

from __future__ import annotations

from pathlib import Path

import pytest
from security_support import MiB, cli, make_fifo, peak_growth

from tools.framework.errors import BadInput
from tools.io.files import CONFIG_LIMIT, BoundedLines, read_text_bounded

ONE_LINE = "max_steps = 10\n"  # no era-specific key: its dialect comes from a config beside it
CLASSIC_SIBLING = '[[orchestrator.env]]\nid = "reverse-text"\n'


def test_config_check_of_dev_zero_is_refused_at_once(tmp_path: Path) -> None:
    done = cli("config", "check", "/dev/zero", cwd=tmp_path, timeout=60)
    assert done.returncode == 2 and "/dev/zero is a device" in done.stderr and "Traceback" not in done.stderr


def test_a_fifo_beside_a_config_does_not_hang_dialect_detection(tmp_path: Path) -> None:
    (tmp_path / "rl.toml").write_text(ONE_LINE)
    make_fifo(tmp_path / "a-fifo.toml")
    done = cli("config", "check", "rl.toml", "--json", cwd=tmp_path, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    assert "a-fifo.toml" not in done.stdout


def test_a_huge_sibling_is_not_read_but_an_overlays_base_still_gives_its_dialect(tmp_path: Path) -> None:
    (tmp_path / "rl.toml").write_text(ONE_LINE)
    with (tmp_path / "big.toml").open("w") as big:  # sorted first, so it would be read first
        big.write(CLASSIC_SIBLING)
        big.write(("# " + "x" * 98 + "\n") * 500_000)  # 50 MB
    done = cli("config", "check", "rl.toml", "--json", cwd=tmp_path, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    assert "big.toml" not in done.stdout
    # An overlay takes its era from its base, which is read bounded too.
    (tmp_path / "slurm.toml").write_text("[slurm]\npartition = \"gpu\"\n")
    (tmp_path / "rl.toml").write_text(CLASSIC_SIBLING)
    done = cli("config", "check", "slurm.toml", "--json", cwd=tmp_path, timeout=120)
    assert '"kind": "overlay"' in done.stdout and "prime-rl-classic" in done.stdout, done.stdout


def test_a_4_mib_config_is_read_whole_and_a_larger_one_is_refused_naming_the_limit(tmp_path: Path) -> None:
    padding = "# " + "x" * 1021 + "\n"  # 1 KiB lines
    (tmp_path / "four.toml").write_text(ONE_LINE + padding * 4096)
    assert cli("config", "check", "four.toml", cwd=tmp_path).returncode in (0, 1)
    (tmp_path / "huge.toml").write_text(ONE_LINE + padding * (CONFIG_LIMIT // 1024 + 1))
    done = cli("config", "check", "huge.toml", cwd=tmp_path)
    assert done.returncode == 2 and "over the 8 MiB" in done.stderr


def test_one_line_longer_than_the_bound_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1}\n' + "x" * 5000 + "\n")
    with BoundedLines(path, text=True, limit=1000) as lines:
        assert next(lines) == '{"step": 1}\n'
        with pytest.raises(BadInput, match=r"metrics.jsonl:2: a line longer than 1000 bytes"):
            next(lines)


@pytest.mark.parametrize("kind", ["fifo", "directory", "missing"])
def test_bounded_reads_refuse_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x.toml"
    if kind == "fifo":
        make_fifo(path)
    elif kind == "directory":
        path.mkdir()
    with pytest.raises(BadInput):
        read_text_bounded(path)


# -- a pyproject.toml (or any TOML from outside) is read by the one reader: files.read_toml ---------------

def _pyproject_readers() -> dict[str, object]:
    """Every reader of a folder's pyproject.toml in the product, each through its public way in where it has one."""
    from tools.envs.build import pyproject_data
    from tools.envs.check import _taskset_id
    from tools.envs.package import check_package
    from tools.stack.installed import find_prime_rl
    from tools.verifiers.source import project
    from tools.verifiers.v0 import detect

    return {"build": pyproject_data, "env check": lambda folder: _taskset_id("env", folder),
            "package": check_package, "stack": lambda folder: find_prime_rl(folder, folder, {}),
            "verifiers source": project, "v0 detection": detect}


def _bad_pyproject(kind: str, folder: Path) -> str:
    """A pyproject.toml of `kind` in `folder`, and a word the one-line refusal must hold."""
    path = folder / "pyproject.toml"
    if kind == "fifo":  # no writer: an unbounded read waits for one for ever
        make_fifo(path)
        return "FIFO"
    if kind == "too-large":  # valid TOML, a name and all, padded past what rlpilot reads whole
        path.write_text('[project]\nname = "prime-rl"\nversion = "0.1"\n' + ("# " + "x" * 1021 + "\n") * 8200)
        return "over the 8 MiB"
    path.write_text("".join(f"[t{i}]\n" for i in range(250_000)))  # swells tomllib's tables past a GiB
    return "table headers, over 200000"


@pytest.mark.parametrize("kind", ["fifo", "too-large", "swelling"])
@pytest.mark.parametrize("reader", sorted(_pyproject_readers()))
def test_every_reader_of_a_pyproject_goes_through_the_bounds(tmp_path: Path, reader: str, kind: str) -> None:
    """Five readers took `tomllib.loads(path.read_text())`: a FIFO hung them, a data file was read whole."""
    word = _bad_pyproject(kind, tmp_path)
    read = _pyproject_readers()[reader]
    growth, said = peak_growth(lambda: read(tmp_path), timeout=60)  # a hang is the fault: a generous bound
    assert growth >= 0, f"{reader}: {said}"
    assert said.startswith("BadInput") and "pyproject.toml" in said and word in said, f"{reader}: {said}"


def test_the_toml_reader_names_the_file_and_line_of_what_is_not_toml(tmp_path: Path) -> None:
    from tools.io import files

    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "a"\nname = "b"\n')
    with pytest.raises(BadInput, match=r"pyproject.toml:3: invalid TOML at line 3") as refused:
        files.read_toml(path)
    assert refused.value.code in files.NOT_TOML
    path.write_bytes(b'name = "\xff"\n')
    with pytest.raises(BadInput, match="not UTF-8") as refused:
        files.read_toml(path)
    assert refused.value.code in files.NOT_TOML
    path.write_text("n = " + "9" * 5000 + "\n")
    with pytest.raises(BadInput, match=r"pyproject.toml:1: a number at line 1 has thousands of digits"):
        files.read_toml(path)
    path.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(BadInput, match="nested too deeply"):
        files.read_toml(path)


# -- a small file another program writes (an exit status, a login, a push's metadata, a run record) -------------

def _small_file_readers(folder: Path) -> dict[str, tuple[Path, object]]:
    """Each reader of a small file that may be missing: the file it reads under `folder`, and the call."""
    from tools.stack import prime_cli
    from tools.training import local, records
    from tools.verifiers.refs import pushed_hub_id

    run = records.RunRecord(id="r1", target="local", config="rl.toml", started_at=records.now())
    login = folder / "home" / ".prime" / "config.json"

    def logged_in():
        prime_cli.PRIME_CONFIG = login  # the person's own is never touched
        return prime_cli.prime_login({})

    return {"exit status": (records.run_dir(folder, "r1") / "exit.json", lambda: local.exit_status(run, folder)),
            "prime login": (login, logged_in),
            "pushed hub id": (folder / ".prime" / ".env-metadata.json", lambda: pushed_hub_id(folder)),
            "run record": (records.run_dir(folder, "r1") / "record.json", lambda: records.load(folder, "r1"))}


@pytest.mark.parametrize("kind", ["missing", "fifo", "too-large"])
@pytest.mark.parametrize("reader", ["exit status", "prime login", "pushed hub id", "run record"])
def test_every_reader_of_a_small_file_goes_through_the_bounds(tmp_path: Path, monkeypatch, reader: str,
                                                              kind: str) -> None:
    """They took `json.loads(path.read_text())` (or pydantic's of it): a FIFO hung them, /dev/zero or a data file
    was read whole. A missing file is still "none", as it was; a FIFO or a file past the bound is one line
    naming the file, its size and the bound."""
    monkeypatch.delenv("RLPILOT_HOME", raising=False)
    path, read = _small_file_readers(tmp_path)[reader]
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        make_fifo(path)
    elif kind == "too-large":
        path.write_text('{"returncode": 0, "api_key": "k", "owner": "o", "name": "n", "pad": "' + "x" * CONFIG_LIMIT
                        + '"}')
    growth, said = peak_growth(read, timeout=60)  # a hang is the fault: a generous bound
    assert growth >= 0, f"{reader}: {said}"
    if kind == "missing":
        assert said in ("None", "(False, None)"), f"{reader}: {said}"
    else:
        word = "is a FIFO" if kind == "fifo" else "is 8 MiB, over the 8 MiB rlpilot reads whole"
        assert said.startswith("BadInput") and path.name in said and word in said, f"{reader}: {said}"


def test_a_module_too_large_to_parse_is_reported_unread_not_parsed(tmp_path: Path) -> None:
    """Python's parser builds some 400 bytes of tree per byte of dense code: a 4 MiB module took 1.6 GiB."""
    from tools.verifiers.source import parse

    module = tmp_path / "data.py"
    module.write_text("x = [1, 2, 3]\n" * (4 * MiB // 14))
    growth, said = peak_growth(lambda: parse(module).unread, timeout=60)
    assert 0 <= growth < 100 * MiB, said
    assert "data.py is 4 MiB, over the 1 MiB rlpilot reads whole" in said and "holds data, not code" in said


def test_the_last_lines_of_a_log_of_gigabytes_cost_no_more_than_a_short_ones(tmp_path: Path) -> None:
    """`train logs` read the whole log to keep its last lines: a 1 GiB log with no newline was one line in memory."""
    from tools.training import local, records

    run = records.RunRecord(id="r1", target="local", config="rl.toml", started_at=records.now())
    log = tmp_path / "output.log"
    with log.open("wb") as out:
        out.truncate(1 << 30)  # a gigabyte of one line, sparse on disk
        out.seek(1 << 30)
        out.write(b"\nstep 99 done\n")
    growth, said = peak_growth(lambda: local.log_lines(run, tmp_path, None, 200, whole=log), timeout=60)
    assert 0 <= growth < 100 * MiB and said == "['step 99 done']", said
