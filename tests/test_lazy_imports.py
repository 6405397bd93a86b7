"""What `ccsim run` and sweep workers leave unimported (pandas: about 0.5 s of CPU per process), and
that the tables they build without it are the ones a trip through pandas gave (docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, *args: str) -> str:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_ccsim_run_no_plots_does_not_import_pandas(tmp_path):
    pytest.importorskip("ccsim._core")
    code = (
        "import sys\n"
        "from ccsim.cli import main\n"
        "try:\n"
        "    main(['run', 'examples/single_flow.toml', '--no-plots', '--out', sys.argv[1]])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print('PANDAS', 'pandas' in sys.modules)\n"
    )
    out = _python(code, str(tmp_path / "run"))
    assert "bottleneck: utilisation" in out  # the summary was printed, from the Arrow tables
    assert out.strip().endswith("PANDAS False")
    assert (tmp_path / "run" / "summary.parquet").is_file()


def test_result_tables_become_dataframes_on_first_access():
    pytest.importorskip("ccsim._core")
    import ccsim

    result = ccsim.run("examples/single_flow.toml")
    assert "summary" not in vars(result)
    frame = result.summary
    assert result.summary is frame  # converted once
    assert frame.equals(result.table("summary").to_pandas())
    with pytest.raises(AttributeError):
        result.no_such_table  # noqa: B018


def test_sweep_worker_output_needs_no_pandas_and_matches_the_pandas_trip():
    pytest.importorskip("ccsim._core")
    code = (
        "import sys, pickle\n"
        "from ccsim.result import defer_pandas_in_pyarrow\n"
        "from ccsim.sweep.execution import execute_run\n"
        "defer_pandas_in_pyarrow()\n"
        "text = open('examples/single_flow.toml').read().replace('loss = 0.0', 'loss = 0.01')\n"
        "out = execute_run('r', text, 3)\n"
        "assert 'pandas' not in sys.modules\n"
        "sys.stdout.buffer.write(pickle.dumps(out))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    import pickle

    import ccsim

    worker = pickle.loads(proc.stdout)
    text = (ROOT / "examples" / "single_flow.toml").read_text().replace("loss = 0.0", "loss = 0.01")
    result = ccsim.run_toml(text, seed=3)
    for key, name in (("flows", "summary"), ("links", "link_summary")):
        through = pa.Table.from_pandas(getattr(result, name), preserve_index=False).replace_schema_metadata(None)
        assert worker[key].equals(through) and worker[key].schema == through.schema


def test_the_pool_forks_only_a_single_threaded_process():
    from ccsim.sweep.execution import _start_method

    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert _start_method() == "spawn"
    finally:
        stop.set()
        other.join()
    if threading.active_count() == 1 and sys.platform.startswith("linux"):
        assert _start_method() == "fork"


WEB_FLOW = '\n[[flows]]\nname = "web"\nkind = "web"\nalgorithm = "newreno"\narrival_rate = 2.0\nsize_mean = "50kB"\n'


@pytest.mark.parametrize("web", [False, True])
def test_ccsim_run_no_plots_imports_numpy_only_for_web_transfers(tmp_path, web):
    """Without plots, --json or web transfers no table becomes a DataFrame: pyarrow is imported as if
    numpy were absent (ccsim.lean_imports). The web transfers' summary groups them with pandas, so
    with them numpy is there, and the summary still prints."""
    pytest.importorskip("ccsim._core")
    scenario = tmp_path / "s.toml"
    scenario.write_text((ROOT / "examples" / "single_flow.toml").read_text().replace('"60s"', '"5s"') + (WEB_FLOW if web else ""))
    code = (
        "import sys\n"
        "from ccsim.cli import main\n"
        "try:\n"
        "    main(['run', sys.argv[2], '--no-plots', '--out', sys.argv[1]])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print('NUMPY', 'numpy' in sys.modules)\n"
    )
    out = _python(code, str(tmp_path / "run"), str(scenario))
    assert "bottleneck: utilisation" in out
    assert out.strip().endswith(f"NUMPY {web}")
    if web:
        assert "(web, " in out  # the grouped row, made with pandas
    assert (tmp_path / "run" / "summary.parquet").is_file()


def test_the_cli_in_a_callers_process_leaves_numpy_to_pyarrow(tmp_path):
    """CliRunner (a test, a notebook) runs the command in a process ccsim does not own: pyarrow keeps
    numpy there, so a table can still become a DataFrame afterwards."""
    pytest.importorskip("ccsim._core")
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from ccsim.cli import cli\n"
        "r = CliRunner().invoke(cli, ['run', 'examples/single_flow.toml', '--no-plots', '--out', sys.argv[1]])\n"
        "assert r.exit_code == 0, r.output\n"
        "import pyarrow as pa\n"
        "print('ROWS', len(pa.array([1.0, 2.0]).to_numpy()))\n"
    )
    out = _python(code, str(tmp_path / "run"))
    assert out.strip().endswith("ROWS 2")


def test_ccsim_sweep_does_not_import_pandas(tmp_path):
    """The sweep command prints its summary from the Arrow tables and computes its statistics without
    NumPy: neither pandas nor numpy is imported, by the sweep process or (tests above) by its workers."""
    pytest.importorskip("ccsim._core")
    code = (
        "import sys\n"
        "from ccsim.cli import main\n"
        "try:\n"
        "    main(['sweep', 'examples/sweep_loss.toml', '--jobs', '2', '--out', sys.argv[1]])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print('PANDAS', 'pandas' in sys.modules, 'NUMPY', 'numpy' in sys.modules)\n"
    )
    out = _python(code, str(tmp_path / "sweep"))
    assert "goodput Mbit/s" in out and "25 in the dataset" in out
    assert out.strip().endswith("PANDAS False NUMPY False")


class _Tables:
    """What execute_run reads from a Result: its Arrow tables, and DataFrames as attributes."""

    def __init__(self, **tables):
        self.tables = tables

    def table(self, name):
        return self.tables[name]

    def __getattr__(self, name):
        return self.tables[name].to_pandas()


def test_sweep_output_of_null_and_unusual_columns_matches_the_pandas_trip():
    """A column of nulls (an empty engine column) is kept as it is, as pandas gives it back; a type the
    engine never makes takes the real trip through pandas."""
    from ccsim.sweep.execution import _as_through_pandas

    for table in (pa.table({"a": pa.nulls(3), "x": [1.5, None, 2.0], "n": ["a", "b", "c"]}),
                  pa.table({"a": pa.nulls(0)}),
                  pa.table({"d": pa.array([1, None], type=pa.int64()), "x": [1.0, 2.0]})):
        through = pa.Table.from_pandas(table.to_pandas(), preserve_index=False).replace_schema_metadata(None)
        mine = _as_through_pandas(_Tables(summary=table), "summary")
        assert mine.equals(through) and mine.schema == through.schema


def test_a_sweep_without_numpy_refuses_what_needs_pandas_instead_of_crashing():
    """Where pyarrow was imported without numpy (the ccsim sweep command), to_pandas would crash the
    process (pyarrow 26): a table that would need the trip through pandas is a CcsimError instead."""
    code = (
        "from ccsim.lean_imports import import_pyarrow_without_numpy\n"
        "assert import_pyarrow_without_numpy()\n"
        "import pyarrow as pa\n"
        "from ccsim.errors import CcsimError\n"
        "from ccsim.sweep.execution import _as_through_pandas\n"
        "class R:\n"
        "    def table(self, name):\n"
        "        return pa.table({'d': pa.array([1, None], type=pa.int64())})\n"
        "try:\n"
        "    _as_through_pandas(R(), 'summary')\n"
        "except CcsimError as e:\n"
        "    print('REFUSED', e)\n"
    )
    out = _python(code)
    assert out.startswith("REFUSED summary: column 'd' of type int64: the sweep cannot store it without pandas")


def test_import_ccsim_loads_no_scenario_models_and_no_data_libraries():
    """`import ccsim` is Python's own start-up plus the error classes: pydantic (the scenario models,
    about 0.15 s of CPU), pandas, pyarrow, numpy and matplotlib load on first use."""
    code = (
        "import sys, ccsim\n"
        "print(sorted(m for m in ('pydantic', 'pandas', 'pyarrow', 'numpy', 'matplotlib', 'ccsim.scenario') if m in sys.modules))\n"
        "print(ccsim.Scenario.__name__, ccsim.load_scenario.__name__)\n"
    )
    out = _python(code).splitlines()
    assert out == ["[]", "Scenario load_scenario"]
