//! Column-oriented output tables handed to the front end (which turns them into Arrow / pandas).

#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    U64(Vec<u64>),
    Str(Vec<String>),
    Bool(Vec<bool>),
    /// Text drawn from a few values (link names, metric names): row i holds `values[keys[i]]`. A row
    /// costs a `u32` and no allocation; the front end receives it as plain text, the same as `Str`.
    Dict { keys: Vec<u32>, values: Vec<String> },
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Dict { keys, .. } => keys.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The text of each row of a `Str` or `Dict` column (None for numbers and flags).
    pub fn strs(&self) -> Option<Vec<&str>> {
        match self {
            Column::Str(v) => Some(v.iter().map(String::as_str).collect()),
            Column::Dict { keys, values } => Some(keys.iter().map(|&k| values[k as usize].as_str()).collect()),
            _ => None,
        }
    }
}

/// A table: named columns of equal length, in a fixed order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn f64(&self, name: &str) -> &[f64] {
        match self.column(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }
    pub fn u64(&self, name: &str) -> &[u64] {
        match self.column(name) {
            Some(Column::U64(v)) => v,
            _ => panic!("no u64 column {name}"),
        }
    }
    /// The text of each row of column `name` (`Str` or `Dict`).
    pub fn strs(&self, name: &str) -> Vec<&str> {
        match self.column(name).and_then(Column::strs) {
            Some(v) => v,
            None => panic!("no text column {name}"),
        }
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
}

/// Builds a table row by row: `row.f64("x", 1.0)` appends to column "x", creating it on first use.
///
/// The number of rows comes from the user (run length over sample interval), so a column grows with a
/// fallible allocation: when memory runs out the value is not stored and [`TableBuilder::out_of_memory`]
/// says so (the simulation then ends with `SimError::Resources`), instead of the process aborting.
#[derive(Default)]
pub struct TableBuilder {
    table: Table,
    out_of_memory: bool,
}

/// Pushes `v` onto `column`, growing it fallibly; false if memory for it could not be had.
fn push<T>(column: &mut Vec<T>, v: T) -> bool {
    if column.len() == column.capacity() && column.try_reserve(column.capacity().max(16)).is_err() {
        return false;
    }
    column.push(v);
    true
}

impl TableBuilder {
    fn col(&mut self, name: &str, make: impl FnOnce() -> Column) -> &mut Column {
        if let Some(i) = self.table.columns.iter().position(|(n, _)| n == name) {
            return &mut self.table.columns[i].1;
        }
        self.table.columns.push((name.to_string(), make()));
        &mut self.table.columns.last_mut().unwrap().1
    }
    fn stored(&mut self, ok: bool) -> &mut Self {
        self.out_of_memory |= !ok;
        self
    }
    pub fn f64(&mut self, name: &str, v: f64) -> &mut Self {
        let ok = match self.col(name, || Column::F64(Vec::new())) {
            Column::F64(c) => push(c, v),
            _ => true,
        };
        self.stored(ok)
    }
    pub fn u64(&mut self, name: &str, v: u64) -> &mut Self {
        let ok = match self.col(name, || Column::U64(Vec::new())) {
            Column::U64(c) => push(c, v),
            _ => true,
        };
        self.stored(ok)
    }
    pub fn str(&mut self, name: &str, v: &str) -> &mut Self {
        let ok = match self.col(name, || Column::Str(Vec::new())) {
            Column::Str(c) => push(c, v.to_string()),
            _ => true,
        };
        self.stored(ok)
    }
    pub fn bool(&mut self, name: &str, v: bool) -> &mut Self {
        let ok = match self.col(name, || Column::Bool(Vec::new())) {
            Column::Bool(c) => push(c, v),
            _ => true,
        };
        self.stored(ok)
    }
    /// Values stored so far (rows x columns).
    pub fn cells(&self) -> usize {
        self.table.columns.iter().map(|(_, c)| c.len()).sum()
    }
    /// A value could not be stored for want of memory: the table is incomplete.
    pub fn out_of_memory(&self) -> bool {
        self.out_of_memory
    }
    pub fn finish(self) -> Table {
        self.table
    }
}
