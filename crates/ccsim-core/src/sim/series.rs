//! The per-interval tables (flows, streams, algorithm metrics, links) as they grow during a run.
//!
//! Each table has a fixed schema, so a row is one push onto each of a few typed vectors: no column
//! looked up by name, no `String` made per row (a link's name is kept as its index and a metric's
//! as its `&'static str` until the run ends). At a run of 10,000 flows the tables get a row per
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

/// A value of a string column as it is held during the run, made a `String` at the end.
pub(crate) trait ToColumn: Sized {
    fn column(values: Vec<Self>, names: &[String]) -> Column;
}
impl ToColumn for f64 {
    fn column(values: Vec<f64>, _: &[String]) -> Column {
        Column::F64(values)
    }
}
impl ToColumn for u64 {
    fn column(values: Vec<u64>, _: &[String]) -> Column {
        Column::U64(values)
    }
}
impl ToColumn for bool {
    fn column(values: Vec<bool>, _: &[String]) -> Column {
        Column::Bool(values)
    }
}
impl ToColumn for &'static str {
    fn column(values: Vec<&'static str>, _: &[String]) -> Column {
        Column::Str(values.into_iter().map(str::to_string).collect())
    }
}

impl ToColumn for String {
    fn column(values: Vec<String>, _: &[String]) -> Column {
        Column::Str(values)
    }
}

/// A link, by its index: the column holds the link's name.
#[derive(Clone, Copy)]
pub(crate) struct LinkName(pub u32);
impl ToColumn for LinkName {
    fn column(values: Vec<LinkName>, names: &[String]) -> Column {
        Column::Str(values.into_iter().map(|l| names[l.0 as usize].clone()).collect())
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
            #[allow(clippy::too_many_arguments)]
            pub fn push(&mut self, $($column: $ty),+) {
                let mut stored = true;
                $(stored &= $crate::sim::series::push(&mut self.$column, $column);)+
                self.out_of_memory |= !stored;
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

            /// The table, link names (`LinkName` columns) taken from `links`.
            pub fn finish(self, links: &[String]) -> $crate::table::Table {
                if self.cells() == 0 {
                    return $crate::table::Table::default();
                }
                $crate::table::Table { columns: vec![$((stringify!($column).to_string(), $crate::sim::series::ToColumn::column(self.$column, links)),)+] }
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
        link: LinkName,
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
        assert_eq!(fixed.finish(&names), TableBuilder::default().finish(), "no rows: no columns");
        fixed = LinkSeries::default();
        for (t, l) in [(0.1, 1u32), (0.1, 0), (0.2, 1)] {
            fixed.push(t, LinkName(l), 3, 4500, 1.5, f64::NAN, 1, 0, 0.5, 9000, 0, f64::NAN);
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
        let (a, b) = (fixed.finish(&names), generic.finish());
        // NaN != NaN: compare the debug text, which shows names, order, types and values
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        let mut cc = CcSeries::default();
        cc.push(0.1, 0, "alpha", 1.0);
        assert_eq!(cc.finish(&[]).columns.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["time_s", "flow", "name", "value"]);
    }
}
