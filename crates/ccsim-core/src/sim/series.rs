//! The per-interval tables (flows, streams, algorithm metrics, links) as they grow during a run.
//!
//! Each table has a fixed schema, so a row is one push onto each of a few typed vectors: no column
//! looked up by name, no `String` made per row (a link's name is kept as its index and a metric's
//! as its `&'static str`; the finished table holds them as a [`Column::Dict`], each name once). At a run of 10,000 flows the tables get a row per
//! flow and per link every interval, more rows than the bottleneck carries packets, so what a row
//! costs is what sampling costs (docs/performance.md, "Scaling with flows and link rate").
//! `finish` hands back the same [`Table`] as the generic [`crate::table::TableBuilder`] would:
//! the same columns in the same order, no columns at all while there are no rows.
//!
//! Columns grow with a fallible allocation, as the builder's do: when memory runs out the value is
//! not stored and `out_of_memory` says so (the run then ends with `SimError::Resources`).

use crate::table::Column;

/// Pushes `v` onto `column`, growing it fallibly; false if memory for it could not be had.
#[inline]
pub(crate) fn push<T>(column: &mut Vec<T>, v: T) -> bool {
    if column.len() == column.capacity() && column.try_reserve(column.capacity().max(16)).is_err() {
        return false;
    }
    column.push(v);
    true
}

/// Makes room for `rows` more values in `column` (growing it by doubling, fallibly); false if
/// memory for them could not be had.
#[inline]
pub(crate) fn reserve<T>(column: &mut Vec<T>, rows: usize) -> bool {
    column.capacity() - column.len() >= rows || column.try_reserve(rows).is_ok()
}

/// A value of a string column as it is held during the run, made a `String` at the end.
pub(crate) trait ToColumn: Sized {
    fn column(values: Vec<Self>, names: &mut Vec<String>) -> Column;
}
impl ToColumn for f64 {
    fn column(values: Vec<f64>, _: &mut Vec<String>) -> Column {
        Column::F64(values)
    }
}
impl ToColumn for u64 {
    fn column(values: Vec<u64>, _: &mut Vec<String>) -> Column {
        Column::U64(values)
    }
}
impl ToColumn for bool {
    fn column(values: Vec<bool>, _: &mut Vec<String>) -> Column {
        Column::Bool(values)
    }
}
/// A metric's name: the column holds each distinct name once (a controller reports a handful).
impl ToColumn for &'static str {
    fn column(values: Vec<&'static str>, _: &mut Vec<String>) -> Column {
        let mut names: Vec<&'static str> = Vec::new();
        let keys = values
            .iter()
            .map(|&v| {
                // the same `&'static str` is mostly the same pointer: no comparison of the text
                let k = names.iter().position(|&n| std::ptr::eq(n, v) || n == v).unwrap_or_else(|| {
                    names.push(v);
                    names.len() - 1
                });
                k as u32
            })
            .collect();
        Column::Dict { keys, values: names.into_iter().map(str::to_string).collect() }
    }
}

impl ToColumn for String {
    fn column(values: Vec<String>, _: &mut Vec<String>) -> Column {
        Column::Str(values)
    }
}

/// A link or a flow, by its index into the names the table is finished with (the links' names for
/// the links table): the column holds the index per row and each name once.
#[derive(Clone, Copy)]
pub(crate) struct Name(pub u32);
impl ToColumn for Name {
    fn column(values: Vec<Name>, names: &mut Vec<String>) -> Column {
        // `Name` is a `u32`: the keys are the values, reinterpreted in place (no copy)
        let keys = values.into_iter().map(|l| l.0).collect();
        Column::Dict { keys, values: std::mem::take(names) }
    }
}

/// A fixed-schema table: one typed vector per column, in the table's column order.
macro_rules! series_table {
    ($(#[$doc:meta])* $table:ident { $($column:ident: $ty:ty),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Default)]
        pub(crate) struct $table {
            $($column: Vec<$ty>,)+
            out_of_memory: bool,
        }

        impl $table {
            /// Columns of a row.
            #[allow(dead_code)] // not every table's count is read
            pub const COLUMNS: usize = [$(stringify!($column)),+].len();

            /// Room for `rows` rows, reserved exactly (a table whose length is known up front).
            #[allow(dead_code)]
            pub fn with_capacity(rows: usize) -> Self {
                Self { $($column: Vec::with_capacity(rows),)+ out_of_memory: false }
            }

            /// Appends one row.
            #[inline]
            #[allow(clippy::too_many_arguments, dead_code)] // the sampled tables use `push_reserved`
            pub fn push(&mut self, $($column: $ty),+) {
                let mut stored = true;
                $(stored &= $crate::sim::series::push(&mut self.$column, $column);)+
                self.out_of_memory |= !stored;
            }

            /// Room for `rows` more rows in every column, made once for a sample's rows so that
            /// [`Self::push_reserved`] need not grow the columns; false, and the table marked
            /// incomplete, if memory for them could not be had.
            #[allow(dead_code)]
            pub fn reserve(&mut self, rows: usize) -> bool {
                let mut ok = true;
                $(ok = ok && $crate::sim::series::reserve(&mut self.$column, rows);)+
                self.out_of_memory |= !ok;
                ok
            }

            /// Appends one row into the room [`Self::reserve`] made (past it, a column grows as a
            /// `Vec` does, infallibly).
            #[inline]
            #[allow(clippy::too_many_arguments, dead_code)]
            pub fn push_reserved(&mut self, $($column: $ty),+) {
                $(self.$column.push($column);)+
            }

            /// Values stored so far (rows x columns).
            pub fn cells(&self) -> usize {
                0 $(+ self.$column.len())+
            }

            /// A value could not be stored for want of memory: the table is incomplete.
            #[allow(dead_code)] // the summary's rows are not checked (the meter counted them ahead)
            pub fn out_of_memory(&self) -> bool {
                self.out_of_memory
            }

            /// The table, the text of its `Name` column (at most one) taken from `names`.
            pub fn finish(self, mut names: Vec<String>) -> $crate::table::Table {
                if self.cells() == 0 {
                    return $crate::table::Table::default();
                }
                $crate::table::Table { columns: vec![$((stringify!($column).to_string(), $crate::sim::series::ToColumn::column(self.$column, &mut names)),)+] }
            }
        }
    };
}

pub(crate) use series_table;

series_table! {
    /// One row per TCP flow and interval.
    FlowSeries {
        time_s: f64,
        flow: u64,
        goodput_bps: f64,
        send_rate_bps: f64,
        cwnd_bytes: u64,
        cwnd_pkts: f64,
        ssthresh_bytes: f64,
        srtt_ms: f64,
        rtt_ms: f64,
        retransmits: u64,
        timeouts: u64,
        active: bool,
    }
}

series_table! {
    /// One row per stream flow (CBR, VoIP) and interval.
    StreamSeries {
        time_s: f64,
        flow: u64,
        goodput_bps: f64,
        send_rate_bps: f64,
        packets: u64,
        owd_mean_ms: f64,
        owd_max_ms: f64,
        jitter_ms: f64,
        lost: u64,
        active: bool,
    }
}

series_table! {
    /// One row per metric a congestion controller reports, per TCP flow and interval.
    CcSeries {
        time_s: f64,
        flow: u64,
        name: &'static str,
        value: f64,
    }
}

series_table! {
    /// One row per link and interval.
    LinkSeries {
        time_s: f64,
        link: Name,
        queue_pkts: u64,
        queue_bytes: u64,
        qdelay_mean_ms: f64,
        qdelay_max_ms: f64,
        drops_queue: u64,
        drops_random: u64,
        utilisation: f64,
        tx_bytes: u64,
        drops_early: u64,
        queue_avg: f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::TableBuilder;

    #[test]
    fn a_series_table_is_the_table_the_generic_builder_makes() {
        let names = vec!["a".to_string(), "b".to_string()];
        let (mut fixed, mut generic) = (LinkSeries::default(), TableBuilder::default());
        assert_eq!(fixed.finish(names.clone()), TableBuilder::default().finish(), "no rows: no columns");
        fixed = LinkSeries::default();
        for (t, l) in [(0.1, 1u32), (0.1, 0), (0.2, 1)] {
            fixed.push(t, Name(l), 3, 4500, 1.5, f64::NAN, 1, 0, 0.5, 9000, 0, f64::NAN);
            generic
                .f64("time_s", t)
                .str("link", &names[l as usize])
                .u64("queue_pkts", 3)
                .u64("queue_bytes", 4500)
                .f64("qdelay_mean_ms", 1.5)
                .f64("qdelay_max_ms", f64::NAN)
                .u64("drops_queue", 1)
                .u64("drops_random", 0)
                .f64("utilisation", 0.5)
                .u64("tx_bytes", 9000)
                .u64("drops_early", 0)
                .f64("queue_avg", f64::NAN);
        }
        assert_eq!(fixed.cells(), 3 * LinkSeries::COLUMNS);
        let (mut a, b) = (fixed.finish(names.clone()), generic.finish());
        assert!(matches!(a.column("link"), Some(Column::Dict { .. })), "link names held once each");
        a = plain(a);
        // NaN != NaN: compare the debug text, which shows names, order, types and values
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        let mut cc = CcSeries::default();
        for (flow, name) in [(0, "alpha"), (0, "beta"), (1, "alpha"), (1, "beta"), (2, "gamma")] {
            cc.push(0.1, flow, name, 1.0);
        }
        let cc = cc.finish(Vec::new());
        assert_eq!(cc.columns.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["time_s", "flow", "name", "value"]);
        assert_eq!(cc.strs("name"), ["alpha", "beta", "alpha", "beta", "gamma"]);
        let Some(Column::Dict { values, .. }) = cc.column("name") else { panic!("metric names not a dictionary") };
        assert_eq!(values, &["alpha", "beta", "gamma"]);
    }

    /// The table with its dictionary columns written out as plain text, as the front end gets them.
    fn plain(t: crate::table::Table) -> crate::table::Table {
        let columns = t
            .columns
            .iter()
            .map(|(n, c)| match c {
                Column::Dict { .. } => (n.clone(), Column::Str(c.strs().unwrap().into_iter().map(str::to_string).collect())),
                _ => (n.clone(), c.clone()),
            })
            .collect();
        crate::table::Table { columns }
    }
}
