//! PyO3 bindings only: the `ccsim._core` module. Conversions and error mapping live here; the engine
//! and the algorithms know nothing of Python (polars' `crates/polars-python` split).
//!
//! Errors are raised as the named exceptions of `ccsim.errors` (one hierarchy, defined in Python).

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard, TryLockError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyList};

use arrow_buffer::{BooleanBuffer, Buffer};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_data::ArrayData;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{ArrowError, DataType, Field, Fields};

use ccsim_cc::{ParamKind, ParamValue};
use ccsim_core::sim::{Cost, EventLimit, MemoryLimit};
use ccsim_core::{Column, SimError, Simulation as CoreSim, Table, Time};

/// The engine's memory comes from mimalloc, not glibc's malloc: a run of many flows grows thousands
/// of small lines (a link's packets, a host's held segments, the per-interval columns) and glibc's
/// realloc and free were a tenth of its instructions at 10,000 flows (docs/performance.md, "The
/// allocator"). Only the extension's own allocations: Python keeps its allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The exception `class` of `ccsim.errors` with one message.
fn named_error(py: Python<'_>, class: &str, message: String) -> PyErr {
    match py.import("ccsim.errors").and_then(|m| m.getattr(class)) {
        Ok(ty) => match ty.call1((message,)) {
            Ok(instance) => PyErr::from_value(instance),
            Err(err) => err,
        },
        Err(_) => PyRuntimeError::new_err(message),
    }
}

fn py_error(py: Python<'_>, e: SimError) -> PyErr {
    let class = match &e {
        SimError::Scenario { .. } => "ScenarioError",
        SimError::Conservation(_) => "ConservationError",
        SimError::Resources(_) => "ResourceError",
        SimError::Budget { .. } => "BudgetError",
    };
    named_error(py, class, e.to_string())
}

thread_local! {
    /// Where the last panic on this thread happened, noted by the panic hook for the error message.
    static PANIC_PLACE: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The panic hook of this module: notes where a panic happened instead of printing a message and a
/// backtrace to stderr (the CLI's promise is one line); [`guarded`] puts it into the exception.
fn note_panic(info: &std::panic::PanicHookInfo<'_>) {
    let place = info.location().map(|l| format!(" (at {}:{})", l.file(), l.line())).unwrap_or_default();
    PANIC_PLACE.with(|p| *p.borrow_mut() = place);
}

/// Runs `body`, turning a Rust panic into `ccsim.errors.EngineError` (a `CcsimError`): a bug in the
/// engine surfaces as a named exception, never as pyo3's `PanicException` (a `BaseException`).
fn guarded<T>(py: Python<'_>, body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            let place = PANIC_PLACE.with(|p| std::mem::take(&mut *p.borrow_mut()));
            let message = format!("internal error in the engine (a bug in ccsim; please report it with the scenario): {what}{place}");
            Err(named_error(py, "EngineError", message))
        }
    }
}

/// The Arrow type and data of one engine column, as `pyarrow.table` inferred them from the Python
/// lists this module used to hand over, so that the Parquet files stay byte-identical: floats
/// `double` (NaN kept as a value, not a null), counters `int64` (`uint64` only if a value does not fit,
/// where `pyarrow.table` raised), text `string`, flags `bool`, and an empty column `null`. Numbers
/// move into Arrow without a copy (the Vec becomes the buffer, freed when pyarrow drops it); text
/// and flags are re-laid out as Arrow needs them (offsets, bits).
fn column_to_arrow(column: Column) -> Result<ArrayData, ArrowError> {
    if column.len() == 0 {
        return Ok(ArrayData::new_null(&DataType::Null, 0));
    }
    let len = column.len();
    let (data_type, buffers) = match column {
        Column::F64(v) => (DataType::Float64, vec![Buffer::from_vec(v)]),
        Column::U64(v) => {
            let fits = v.iter().all(|&x| x <= i64::MAX as u64);
            (if fits { DataType::Int64 } else { DataType::UInt64 }, vec![Buffer::from_vec(v)])
        }
        Column::Str(v) => utf8(len, v.iter().map(String::as_bytes)),
        Column::Dict { keys, values } => utf8(len, keys.iter().map(|&k| values[k as usize].as_bytes())),
        Column::Bool(v) => (DataType::Boolean, vec![BooleanBuffer::collect_bool(len, |i| v[i]).into_inner()]),
    };
    ArrayData::try_new(data_type, len, None, 0, buffers, vec![])
}

/// A text column laid out as Arrow wants it: the rows' bytes end to end and their offsets (`Utf8`,
/// or `LargeUtf8` past 2 GiB, as `pyarrow.table` chose). A dictionary column (`Column::Dict`) is
/// written out here, row by row, so Python sees the same `string` column either way.
fn utf8<'a>(len: usize, rows: impl Iterator<Item = &'a [u8]> + Clone) -> (DataType, Vec<Buffer>) {
    let bytes: usize = rows.clone().map(<[u8]>::len).sum();
    let mut values = Vec::with_capacity(bytes);
    if bytes <= i32::MAX as usize {
        let mut offsets = Vec::with_capacity(len + 1);
        offsets.push(0i32);
        for s in rows {
            values.extend_from_slice(s);
            offsets.push(values.len() as i32);
        }
        (DataType::Utf8, vec![Buffer::from_vec(offsets), Buffer::from_vec(values)])
    } else {
        let mut offsets = Vec::with_capacity(len + 1);
        offsets.push(0i64);
        for s in rows {
            values.extend_from_slice(s);
            offsets.push(values.len() as i64);
        }
        (DataType::LargeUtf8, vec![Buffer::from_vec(offsets), Buffer::from_vec(values)])
    }
}

/// One engine table as a record batch in the Arrow C data interface: a struct array whose children
/// are the columns (nullable fields, as `pyarrow.table` makes them), and its schema.
fn table_to_ffi(table: Table) -> Result<(FFI_ArrowSchema, FFI_ArrowArray), ArrowError> {
    let rows = table.columns.first().map_or(0, |(_, c)| c.len());
    let mut fields = Vec::with_capacity(table.columns.len());
    let mut children = Vec::with_capacity(table.columns.len());
    for (name, column) in table.columns {
        if column.len() != rows {
            return Err(ArrowError::InvalidArgumentError(format!("column {name} has {} rows, the table {rows}", column.len())));
        }
        let data = column_to_arrow(column)?;
        fields.push(Field::new(name, data.data_type().clone(), true));
        children.push(data);
    }
    let batch = ArrayData::try_new(DataType::Struct(Fields::from(fields)), rows, None, 0, vec![], children)?;
    let schema = FFI_ArrowSchema::try_from(batch.data_type())?;
    Ok((schema, FFI_ArrowArray::new(&batch)))
}

/// A record batch waiting to be imported by pyarrow through the Arrow PyCapsule interface
/// (`__arrow_c_array__`): `pyarrow.record_batch(export)` moves it out, once.
#[pyclass(module = "ccsim._core", frozen)]
struct ArrowExport {
    inner: Mutex<Option<(FFI_ArrowSchema, FFI_ArrowArray)>>,
}

#[pymethods]
impl ArrowExport {
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema; // the tables have one type each: a requested cast is the caller's to do
        let (schema, array) = self
            .inner
            .lock()
            .map_err(|_| PyRuntimeError::new_err("Arrow export poisoned"))?
            .take()
            .ok_or_else(|| named_error(py, "CcsimError", "this Arrow table has already been imported".into()))?;
        // Each capsule owns its struct; pyarrow moves the contents out (leaving `release` empty), and a
        // capsule dropped without being imported releases them (the structs' Drop).
        let schema = PyCapsule::new(py, schema, Some(c"arrow_schema".to_owned()))?;
        let array = PyCapsule::new(py, array, Some(c"arrow_array".to_owned()))?;
        Ok((schema, array))
    }
}

/// One engine table as a `pyarrow.RecordBatch`.
fn table_to_py<'py>(py: Python<'py>, pyarrow: &Bound<'py, PyModule>, table: Table) -> PyResult<Bound<'py, PyAny>> {
    let exported = py
        .allow_threads(|| table_to_ffi(table))
        .map_err(|e| named_error(py, "EngineError", format!("internal error handing a table to Arrow (a bug in ccsim): {e}")))?;
    let export = Bound::new(py, ArrowExport { inner: Mutex::new(Some(exported)) })?;
    pyarrow.call_method1("record_batch", (export,))
}

/// A simulation built from a resolved scenario (JSON, canonical units) and a seed.
///
/// Usable from any thread, one call at a time: a call while another thread is inside `run_until`
/// raises a `CcsimError` instead of waiting or panicking.
#[pyclass(module = "ccsim._core", frozen)]
struct Simulation {
    inner: Mutex<Option<CoreSim>>,
    duration_ns: u64,
}

impl Simulation {
    fn lock(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, Option<CoreSim>>> {
        match self.inner.try_lock() {
            Ok(guard) => Ok(guard),
            Err(TryLockError::WouldBlock) => {
                Err(named_error(py, "CcsimError", "this Simulation is being run by another thread (use one per thread)".into()))
            }
            Err(TryLockError::Poisoned(_)) => {
                Err(named_error(py, "EngineError", "this Simulation stopped at an internal error earlier; build a new one".into()))
            }
        }
    }
}

fn finished(py: Python<'_>) -> PyErr {
    named_error(py, "CcsimError", "this Simulation has already finished".into())
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(py: Python<'_>, scenario_json: &str, seed: u64) -> PyResult<Self> {
        guarded(py, || {
            let sim = CoreSim::from_json(scenario_json, seed).map_err(|e| py_error(py, e))?;
            let duration_ns = sim.end().as_nanos();
            Ok(Simulation { inner: Mutex::new(Some(sim)), duration_ns })
        })
    }

    #[getter]
    fn now_ns(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.lock(py)?.as_ref().map_or(self.duration_ns, |s| s.now().as_nanos()))
    }

    #[getter]
    fn duration_ns(&self) -> u64 {
        self.duration_ns
    }

    /// The estimated cost of the whole run (`sim/cost.rs`): events, samples, table values, memory,
    /// and the same split by the resolved field that drives each part (`drivers`).
    fn estimate_cost<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(py, || {
            let guard = self.lock(py)?;
            let sim = guard.as_ref().ok_or_else(|| finished(py))?;
            cost_to_dict(py, &sim.cost())
        })
    }

    /// Meters the run's memory as it grows against `limit_bytes` (None: no limit), counting each table
    /// value at the engine's 8 bytes plus `front_end_bytes_per_cell`; over it, the run ends with
    /// `ResourceError`.
    #[pyo3(signature = (limit_bytes, front_end_bytes_per_cell))]
    fn set_memory_limit(&self, py: Python<'_>, limit_bytes: Option<f64>, front_end_bytes_per_cell: f64) -> PyResult<()> {
        guarded(py, || {
            let mut guard = self.lock(py)?;
            let sim = guard.as_mut().ok_or_else(|| finished(py))?;
            sim.set_memory_limit(limit_bytes.map(|bytes| MemoryLimit { bytes, front_end_bytes_per_cell }));
            Ok(())
        })
    }

    /// Stops the run with `BudgetError` (naming `field`) once it has processed more than `events`
    /// events (None: no limit).
    #[pyo3(signature = (events, field))]
    fn set_event_limit(&self, py: Python<'_>, events: Option<u64>, field: String) -> PyResult<()> {
        guarded(py, || {
            let mut guard = self.lock(py)?;
            let sim = guard.as_mut().ok_or_else(|| finished(py))?;
            sim.set_event_limit(events.map(|events| EventLimit { events, field }));
            Ok(())
        })
    }

    /// Advances the simulation to `t_ns` (released GIL); raises what ends the run early.
    fn run_until(&self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        guarded(py, || {
            let mut guard = self.lock(py)?;
            let sim = guard.as_mut().ok_or_else(|| finished(py))?;
            py.allow_threads(|| sim.run_until(Time(t_ns))).map_err(|e| py_error(py, e))
        })
    }

    /// Runs to the end, checks conservation, and returns the result tables (see docs/internals.md).
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(py, || {
            let sim = self.lock(py)?.take().ok_or_else(|| finished(py))?;
            let started = std::time::Instant::now();
            let mut out = py.allow_threads(|| sim.finish()).map_err(|e| py_error(py, e))?;
            let d = PyDict::new(py);
            let pyarrow = py.import("pyarrow")?;
            let tables = [
                ("flows", std::mem::take(&mut out.flows)),
                ("streams", std::mem::take(&mut out.streams)),
                ("cc_metrics", std::mem::take(&mut out.cc_metrics)),
                ("links", std::mem::take(&mut out.links)),
                ("flow_summary", std::mem::take(&mut out.flow_summary)),
                ("link_summary", std::mem::take(&mut out.link_summary)),
                ("delay_hist", std::mem::take(&mut out.delay_hist)),
            ];
            for (name, table) in tables {
                d.set_item(name, table_to_py(py, &pyarrow, table)?)?;
            }
            let rs = PyDict::new(py);
            for (k, v) in &out.run_summary {
                rs.set_item(k, v)?;
            }
            d.set_item("run_summary", rs)?;
            let stats = PyDict::new(py);
            stats.set_item("events", out.stats.events)?;
            stats.set_item("bottleneck_packets", out.stats.bottleneck_packets)?;
            stats.set_item("finish_wall_s", started.elapsed().as_secs_f64())?;
            d.set_item("stats", stats)?;
            let params = PyList::empty(py);
            for (flow, algorithm, used) in &out.params_used {
                let p = PyDict::new(py);
                p.set_item("flow", flow)?;
                p.set_item("algorithm", algorithm)?;
                let values = PyDict::new(py);
                for (k, v) in used {
                    values.set_item(k, param_value(py, v))?;
                }
                p.set_item("params", values)?;
                params.append(p)?;
            }
            d.set_item("params_used", params)?;
            Ok(d)
        })
    }
}

fn cost_to_dict<'py>(py: Python<'py>, cost: &Cost) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("events", cost.events)?;
    d.set_item("samples", cost.samples)?;
    d.set_item("series_cells", cost.series_cells)?;
    d.set_item("summary_cells", cost.summary_cells)?;
    d.set_item("web_transfers", cost.web_transfers)?;
    d.set_item("bottleneck_packets", cost.bottleneck_packets)?;
    d.set_item("engine_bytes", cost.engine_bytes)?;
    let drivers = PyList::empty(py);
    for driver in &cost.drivers {
        let x = PyDict::new(py);
        x.set_item("field", &driver.field)?;
        x.set_item("events", driver.events)?;
        x.set_item("cells", driver.cells)?;
        x.set_item("engine_bytes", driver.engine_bytes)?;
        drivers.append(x)?;
    }
    d.set_item("drivers", drivers)?;
    Ok(d)
}

fn param_value(py: Python<'_>, v: &ParamValue) -> PyObject {
    match v {
        ParamValue::Number(x) => x.into_pyobject(py).map(|o| o.into_any().unbind()).expect("float"),
        ParamValue::Bool(b) => b.into_pyobject(py).map(|o| o.to_owned().into_any().unbind()).expect("bool"),
        ParamValue::Text(s) => s.into_pyobject(py).map(|o| o.into_any().unbind()).expect("str"),
    }
}

/// Every built-in algorithm with its parameters (name, unit, default, range, kind, doc).
#[pyfunction]
fn algorithms(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for info in ccsim_cc::catalog() {
        let d = PyDict::new(py);
        d.set_item("name", info.name)?;
        d.set_item("summary", info.summary)?;
        d.set_item("reference", info.reference)?;
        let params = PyList::empty(py);
        for p in &info.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("unit", p.unit)?;
            pd.set_item("default", param_value(py, &p.default))?;
            pd.set_item("range", p.range_text())?;
            let kind = match &p.kind {
                ParamKind::Number { .. } => "number",
                ParamKind::Integer { .. } => "integer",
                ParamKind::Bool => "bool",
                ParamKind::Choice(_) => "choice",
            };
            pd.set_item("kind", kind)?;
            pd.set_item("doc", p.doc)?;
            params.append(pd)?;
        }
        d.set_item("params", params)?;
        list.append(d)?;
    }
    Ok(list)
}

/// Parses and checks a resolved scenario document (JSON) as the engine would before a run, including
/// the algorithms' parameters; raises `ScenarioError` naming the field by its path in the document.
#[pyfunction]
fn validate_resolved(py: Python<'_>, scenario_json: &str) -> PyResult<()> {
    guarded(py, || CoreSim::from_json(scenario_json, 0).map(drop).map_err(|e| py_error(py, e)))
}

/// Test hook: panics inside the engine's guard, to show that a panic becomes `EngineError`.
#[pyfunction]
fn _panic_for_tests(py: Python<'_>, message: &str) -> PyResult<()> {
    guarded(py, || panic!("{message}"))
}

/// The JSON Schema of the resolved scenario document (`docs/resolved-scenario.schema.json`).
#[pyfunction]
fn resolved_schema() -> String {
    ccsim_core::scenario::resolved_schema_json()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_class::<ArrowExport>()?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(validate_resolved, m)?)?;
    m.add_function(wrap_pyfunction!(resolved_schema, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    std::panic::set_hook(Box::new(note_panic));
    m.add("RESOLVED_FORMAT", ccsim_core::scenario::RESOLVED_FORMAT)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The commit this extension was built from (build.rs), None outside a git checkout.
    let revision = env!("CCSIM_GIT_REVISION");
    m.add("GIT_REVISION", (!revision.is_empty()).then_some(revision))?;
    Ok(())
}
