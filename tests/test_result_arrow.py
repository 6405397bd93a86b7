"""The engine hands its tables to Python as Arrow record batches (crates/ccsim-py, C data interface).

The Parquet files must not change with the hand-over: each column keeps the type ``pyarrow.table``
inferred from the Python lists the engine used to return (docs/internals.md). These tests compare
every table of a few example runs with what that old path makes of the same values.
"""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ccsim
from ccsim.result import _PARQUET_OPTIONS
from paths import single_flow

core = pytest.importorskip("ccsim._core")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TABLES = ("flows", "streams", "cc_metrics", "links", "flow_summary", "link_summary", "delay_hist")


def finish(name: str) -> dict:
    """The engine's output of example ``name`` (``chd``: one CHD flow, which reports algorithm
    metrics, so cc_metrics has rows)."""
    scenario = single_flow(algorithm="chd") if name == "chd" else ccsim.Scenario.from_toml_str((EXAMPLES / f"{name}.toml").read_text())
    document = scenario.resolve()
    sim = core.Simulation(json.dumps(document), 1)
    return sim.finish()


def parquet_bytes(table: pa.Table) -> bytes:
    """The table as ``Result.save`` writes it (NaN compares equal here, unlike in Table.equals)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **_PARQUET_OPTIONS)
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize("example", ["single_flow", "chd", "voip_with_bulk", "parking_lot"])
def test_every_table_is_a_record_batch_typed_as_pyarrow_infers_python_lists(example):
    raw = finish(example)
    if example == "chd":
        assert raw["cc_metrics"].num_rows > 0
    for name in TABLES:
        batch = raw[name]
        assert isinstance(batch, pa.RecordBatch), name
        # the old hand-over: one Python list per column, then pa.table on the dict
        through_lists = pa.table(batch.to_pydict())
        assert batch.schema == through_lists.schema, name
        assert parquet_bytes(pa.Table.from_batches([batch])) == parquet_bytes(through_lists), name
        assert all(field.nullable for field in batch.schema), name


def test_column_types_and_values_survive_the_hand_over():
    raw = finish("single_flow")
    flows = raw["flows"]
    assert flows.num_rows == 600  # 60 s at 100 ms
    assert flows.schema.field("time_s").type == pa.float64()
    assert flows.schema.field("flow").type == pa.int64()  # counters: uint64 in the engine, int64 as pyarrow inferred
    assert flows.schema.field("active").type == pa.bool_()
    assert flows.column("time_s").to_pylist()[:3] == pytest.approx([0.1, 0.2, 0.3])
    assert set(flows.column("flow").to_pylist()) == {0}
    summary = raw["flow_summary"]
    assert summary.schema.field("name").type == pa.string()
    assert summary.column("name").to_pylist() == ["flow0"]
    # a TCP-only run has no stream flows: an empty table (any column it has typed null, as pa.table
    # types an empty list)
    streams = raw["streams"]
    assert streams.num_rows == 0
    assert all(field.type == pa.null() for field in streams.schema)


def test_the_tables_outlive_the_simulation_and_each_other():
    """The buffers belong to pyarrow once imported: dropping the Simulation, the dict and the other
    tables leaves a table readable (the release callbacks free each buffer once)."""
    raw = finish("three_flows")
    links = raw["links"]
    expected = parquet_bytes(pa.Table.from_batches([links]))  # a copy, made while everything is alive
    del raw
    import gc

    gc.collect()
    assert links.num_rows > 0
    assert parquet_bytes(pa.Table.from_batches([links])) == expected
