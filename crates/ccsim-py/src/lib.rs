//! PyO3 bindings only: the `ccsim._core` module. Conversions and error mapping live here; the engine
//! and the algorithms know nothing of Python (polars' `crates/polars-python` split).
//!
//! Errors are raised as the named exceptions of `ccsim.errors` (one hierarchy, defined in Python).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use ccsim_cc::{ParamKind, ParamValue};
use ccsim_core::{Column, SimError, Simulation as CoreSim, Table, Time};

fn py_error(py: Python<'_>, e: SimError) -> PyErr {
    let class = match &e {
        SimError::Scenario { .. } => "ScenarioError",
        SimError::Conservation(_) => "ConservationError",
    };
    match py.import("ccsim.errors").and_then(|m| m.getattr(class)) {
        Ok(ty) => match ty.call1((e.to_string(),)) {
            Ok(instance) => PyErr::from_value(instance),
            Err(err) => err,
        },
        Err(_) => PyRuntimeError::new_err(e.to_string()),
    }
}

fn table_to_dict<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        let list = match col {
            Column::F64(v) => PyList::new(py, v)?,
            Column::U64(v) => PyList::new(py, v)?,
            Column::Str(v) => PyList::new(py, v)?,
            Column::Bool(v) => PyList::new(py, v)?,
        };
        d.set_item(name, list)?;
    }
    Ok(d)
}

/// A simulation built from a resolved scenario (JSON, canonical units) and a seed.
#[pyclass(module = "ccsim._core", unsendable)]
struct Simulation {
    inner: Option<CoreSim>,
    duration_ns: u64,
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(py: Python<'_>, scenario_json: &str, seed: u64) -> PyResult<Self> {
        let sim = CoreSim::from_json(scenario_json, seed).map_err(|e| py_error(py, e))?;
        let duration_ns = sim.end().as_nanos();
        Ok(Simulation { inner: Some(sim), duration_ns })
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.inner.as_ref().map_or(self.duration_ns, |s| s.now().as_nanos())
    }

    #[getter]
    fn duration_ns(&self) -> u64 {
        self.duration_ns
    }

    /// Advances the simulation to `t_ns` (released GIL); raises what ends the run early.
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        let sim = self.inner.as_mut().ok_or_else(|| PyRuntimeError::new_err("simulation already finished"))?;
        py.allow_threads(|| sim.run_until(Time(t_ns))).map_err(|e| py_error(py, e))
    }

    /// Runs to the end, checks conservation, and returns the result tables (see docs/internals.md).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.inner.take().ok_or_else(|| PyRuntimeError::new_err("simulation already finished"))?;
        let started = std::time::Instant::now();
        let out = py.allow_threads(|| sim.finish()).map_err(|e| py_error(py, e))?;
        let d = PyDict::new(py);
        d.set_item("flows", table_to_dict(py, &out.flows)?)?;
        d.set_item("streams", table_to_dict(py, &out.streams)?)?;
        d.set_item("cc_metrics", table_to_dict(py, &out.cc_metrics)?)?;
        d.set_item("links", table_to_dict(py, &out.links)?)?;
        d.set_item("flow_summary", table_to_dict(py, &out.flow_summary)?)?;
        d.set_item("link_summary", table_to_dict(py, &out.link_summary)?)?;
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
    }
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
    CoreSim::from_json(scenario_json, 0).map(drop).map_err(|e| py_error(py, e))
}

/// The JSON Schema of the resolved scenario document (`docs/resolved-scenario.schema.json`).
#[pyfunction]
fn resolved_schema() -> String {
    ccsim_core::scenario::resolved_schema_json()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(validate_resolved, m)?)?;
    m.add_function(wrap_pyfunction!(resolved_schema, m)?)?;
    m.add("RESOLVED_FORMAT", ccsim_core::scenario::RESOLVED_FORMAT)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
