//! The per-interval tables (flows, streams, algorithm metrics, links) as they grow during a run.
//!
//! Each table has a fixed schema, so a row is one push onto each of a few typed vectors: no column
//! looked up by name, no `String` made per row (a link's name is kept as its index and a metric's
//! as its key among the names met; the finished table holds them as a [`Column::Dict`], each name
//! once). At a run of 10,000 flows the tables get a row per flow and per link every interval, more
//! rows than the bottleneck carries packets, so what a row costs is what sampling costs
//! (docs/performance.md, "Sampling"): the recorder writes a sample's flow
//! and metric rows in batches a column at a time ([`FlowSeries::extend_rows`],
//! [`CcSeries::extend_metrics`]) and its link rows as idle ones by a fill, overwriting the rows of
//! the links that were busy ([`LinkSeries::push_idle`], [`LinkSeries::set_row`]).
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

/// Rows a table reserves at its first sample for the rest of the run at most (about 134 MB a
/// column); a longer or wider run grows its tables as it goes, by doubling.
pub(crate) const RUN_ROWS_UP_FRONT: usize = 1 << 24;

/// Room for `rows` more values in `column`, reserved exactly if memory for them can be had (else
/// the column grows as it goes): a table whose final length is known at its first sample is not
/// copied again and again as it doubles. Pages of the room not written yet are not resident.
pub(crate) fn reserve_run<T>(column: &mut Vec<T>, rows: usize) {
    if rows <= RUN_ROWS_UP_FRONT {
        let _ = column.try_reserve_exact(rows);
    }
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
        let mut names = MetricNames::default();
        let keys = values.iter().map(|&v| names.key(v).0).collect();
        Column::Dict { keys, values: names.into_strings() }
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

            /// Room for the `rows` more rows the rest of the run will add at most, made once at
            /// the first sample ([`reserve_run`]).
            #[allow(dead_code)]
            pub fn reserve_run(&mut self, rows: usize) {
                $($crate::sim::series::reserve_run(&mut self.$column, rows);)+
            }

            /// Appends one row into the room [`Self::reserve`] made (past it, a column grows as a
            /// `Vec` does, infallibly).
            #[inline]
            #[allow(clippy::too_many_arguments, dead_code)]
            pub fn push_reserved(&mut self, $($column: $ty),+) {
                $(self.$column.push($column);)+
            }

            /// Overwrites row `row` (which exists) with these values.
            #[inline]
            #[allow(clippy::too_many_arguments, dead_code)]
            pub fn set_row(&mut self, row: usize, $($column: $ty),+) {
                $(self.$column[row] = $column;)+
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
    /// One row per metric a congestion controller reports, per TCP flow and interval. A metric's
    /// name is its index into the names the recorder has met ([`MetricNames`]), in the order first
    /// met: the finished column holds each name once.
    CcSeries {
        time_s: f64,
        flow: u64,
        name: Name,
        value: f64,
    }
}

/// The names met so far, each once, in the order first met (a controller reports a handful of
/// metrics, a summary table a few kinds; the same `&'static str` each time: found by its pointer,
/// mostly at the index last found).
#[derive(Default)]
pub(crate) struct MetricNames {
    names: Vec<&'static str>,
    last: usize,
}

impl MetricNames {
    /// The index of `name`, added if it is new.
    #[inline]
    pub fn key(&mut self, name: &'static str) -> Name {
        if self.names.get(self.last).is_some_and(|&n| std::ptr::eq(n, name)) {
            return Name(self.last as u32);
        }
        self.last = self.names.iter().position(|&n| std::ptr::eq(n, name) || n == name).unwrap_or_else(|| {
            self.names.push(name);
            self.names.len() - 1
        });
        Name(self.last as u32)
    }

    /// The names as the finished column's text.
    pub fn into_strings(self) -> Vec<String> {
        self.names.into_iter().map(str::to_string).collect()
    }
}

/// A flow's row of [`FlowSeries`] but its time, as the recorder gathers a batch of them.
#[derive(Clone, Copy)]
pub(crate) struct FlowRow {
    pub flow: u64,
    pub goodput_bps: f64,
    pub send_rate_bps: f64,
    pub cwnd_bytes: u64,
    pub cwnd_pkts: f64,
    pub ssthresh_bytes: f64,
    pub srtt_ms: f64,
    pub rtt_ms: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub active: bool,
}

/// Rows gathered before they are written into their table a column at a time: a row is then one
/// push of a small struct, and each column one pass that copies a field out of each row, instead
/// of a push (a capacity check and a length update) per value. A batch holds at most
/// `ROW_BATCH` rows, so it costs a fixed few kilobytes whatever the number of flows.
pub(crate) const ROW_BATCH: usize = 256;

impl FlowSeries {
    /// Rows held so far.
    pub fn len(&self) -> usize {
        self.time_s.len()
    }

    /// Appends, at time `t`, a copy of the `len` rows from `start` (the previous sample's rows of
    /// the same flows, in the same order) as rows of flows nothing happened to in the interval:
    /// the state columns (window, RTT, `active`) repeated, the interval's rates and counts zero.
    /// Into the room [`Self::reserve`] made; the recorder then overwrites the rows of the flows
    /// that did change ([`Self::set_flow_row`]) and the `active` flag of the others
    /// ([`Self::set_active`]).
    pub fn repeat_rows(&mut self, start: usize, len: usize, t: f64) {
        fill(&mut self.time_s, t, len);
        repeat(&mut self.flow, start, len);
        fill(&mut self.goodput_bps, 0.0, len);
        fill(&mut self.send_rate_bps, 0.0, len);
        repeat(&mut self.cwnd_bytes, start, len);
        repeat(&mut self.cwnd_pkts, start, len);
        repeat(&mut self.ssthresh_bytes, start, len);
        repeat(&mut self.srtt_ms, start, len);
        repeat(&mut self.rtt_ms, start, len);
        fill(&mut self.retransmits, 0, len);
        fill(&mut self.timeouts, 0, len);
        repeat(&mut self.active, start, len);
    }

    /// Sets the `active` flag of row `row` (which exists).
    #[inline]
    pub fn set_active(&mut self, row: usize, active: bool) {
        self.active[row] = active;
    }

    /// Row `row` (which exists) from a flow's `FlowRow` and the time.
    #[inline]
    pub fn set_flow_row(&mut self, row: usize, t: f64, r: &FlowRow) {
        self.set_row(row, t, r.flow, r.goodput_bps, r.send_rate_bps, r.cwnd_bytes, r.cwnd_pkts, r.ssthresh_bytes, r.srtt_ms, r.rtt_ms, r.retransmits, r.timeouts, r.active);
    }

    /// Appends the batch `rows`, each at time `t`, into the room [`Self::reserve`] made, and
    /// empties it.
    pub fn extend_rows(&mut self, t: f64, rows: &mut Vec<FlowRow>) {
        fill(&mut self.time_s, t, rows.len());
        self.flow.extend(rows.iter().map(|r| r.flow));
        self.goodput_bps.extend(rows.iter().map(|r| r.goodput_bps));
        self.send_rate_bps.extend(rows.iter().map(|r| r.send_rate_bps));
        self.cwnd_bytes.extend(rows.iter().map(|r| r.cwnd_bytes));
        self.cwnd_pkts.extend(rows.iter().map(|r| r.cwnd_pkts));
        self.ssthresh_bytes.extend(rows.iter().map(|r| r.ssthresh_bytes));
        self.srtt_ms.extend(rows.iter().map(|r| r.srtt_ms));
        self.rtt_ms.extend(rows.iter().map(|r| r.rtt_ms));
        self.retransmits.extend(rows.iter().map(|r| r.retransmits));
        self.timeouts.extend(rows.iter().map(|r| r.timeouts));
        self.active.extend(rows.iter().map(|r| r.active));
        rows.clear();
    }
}

impl CcSeries {
    /// Appends a row per metric of the batch `metrics` (name, value), each at time `t` and of the
    /// flow at the same place in `flows`, and empties both; false, and the table marked
    /// incomplete, if memory for them could not be had.
    pub fn extend_metrics(&mut self, t: f64, metrics: &mut Vec<(Name, f64)>, flows: &mut Vec<u64>) -> bool {
        let stored = self.append_metrics(t, metrics, flows);
        metrics.clear();
        flows.clear();
        stored
    }

    fn append_metrics(&mut self, t: f64, metrics: &[(Name, f64)], flows: &[u64]) -> bool {
        debug_assert_eq!(metrics.len(), flows.len());
        if !self.reserve(metrics.len()) {
            return false;
        }
        fill(&mut self.time_s, t, metrics.len());
        self.flow.extend_from_slice(flows);
        self.name.extend(metrics.iter().map(|&(n, _)| n));
        self.value.extend(metrics.iter().map(|&(_, v)| v));
        true
    }

    /// Rows held so far.
    pub fn len(&self) -> usize {
        self.time_s.len()
    }

    /// Appends, at time `t`, a copy of the `len` rows from `start` (the previous sample's metric
    /// rows, which the recorder then overwrites for the flows that changed), into the room
    /// [`Self::reserve`] made.
    pub fn repeat_rows(&mut self, start: usize, len: usize, t: f64) {
        fill(&mut self.time_s, t, len);
        repeat(&mut self.flow, start, len);
        repeat(&mut self.name, start, len);
        repeat(&mut self.value, start, len);
    }

    /// Overwrites the name and value of row `row` (which exists).
    #[inline]
    pub fn set_metric(&mut self, row: usize, name: Name, value: f64) {
        (self.name[row], self.value[row]) = (name, value);
    }

    /// Drops the rows from `rows` on.
    pub fn truncate(&mut self, rows: usize) {
        self.time_s.truncate(rows);
        self.flow.truncate(rows);
        self.name.truncate(rows);
        self.value.truncate(rows);
    }
}

/// Appends `n` copies of `v` to `column`, a chunk at a time (a `memcpy` each).
fn fill<T: Copy>(column: &mut Vec<T>, v: T, n: usize) {
    let chunk = [v; FILL_CHUNK];
    for k in chunks(n) {
        column.extend_from_slice(&chunk[..k]);
    }
}

/// Appends a copy of `column[start..start + len]`, a chunk at a time: a copy of at most
/// `FILL_CHUNK` values stays below glibc's threshold for `rep movsb` (2112 bytes here), which
/// callgrind counts a byte at a time, so the instruction counts keep measuring the simulator.
fn repeat<T: Copy>(column: &mut Vec<T>, start: usize, len: usize) {
    let mut from = start;
    for k in chunks(len) {
        column.extend_from_within(from..from + k);
        from += k;
    }
}

/// Values a fill copies at a time: a copy of a constant slice is a `memcpy`, where a `resize`
/// stores a value at a time.
const FILL_CHUNK: usize = 256;
const ZEROS_U64: [u64; FILL_CHUNK] = [0; FILL_CHUNK];
const ZEROS_F64: [f64; FILL_CHUNK] = [0.0; FILL_CHUNK];
const NANS: [f64; FILL_CHUNK] = [f64::NAN; FILL_CHUNK];

/// `n` as chunks of at most `FILL_CHUNK`.
fn chunks(n: usize) -> impl Iterator<Item = usize> {
    (0..n).step_by(FILL_CHUNK).map(move |i| (n - i).min(FILL_CHUNK))
}

impl LinkSeries {
    /// A row for each of the links `ids` (`0..links`, copied rather than counted) at time `t`, each as a link on which nothing happened in
    /// the interval writes it (no queue, no departures, no drops, no average queue), written a
    /// column at a time into the room [`Self::reserve`] made; [`Self::set_row`] then
    /// overwrites the rows of the links that were not idle. Most links of a run of many flows are
    /// idle in most intervals (the access links), so this costs a fill per column instead of a push
    /// per value.
    pub fn push_idle(&mut self, t: f64, ids: &[Name]) {
        let links = ids.len();
        let times = [t; FILL_CHUNK];
        for n in chunks(links) {
            self.time_s.extend_from_slice(&times[..n]);
            self.queue_pkts.extend_from_slice(&ZEROS_U64[..n]);
            self.queue_bytes.extend_from_slice(&ZEROS_U64[..n]);
            self.qdelay_mean_ms.extend_from_slice(&NANS[..n]);
            self.qdelay_max_ms.extend_from_slice(&ZEROS_F64[..n]);
            self.drops_queue.extend_from_slice(&ZEROS_U64[..n]);
            self.drops_random.extend_from_slice(&ZEROS_U64[..n]);
            self.utilisation.extend_from_slice(&ZEROS_F64[..n]);
            self.tx_bytes.extend_from_slice(&ZEROS_U64[..n]);
            self.drops_early.extend_from_slice(&ZEROS_U64[..n]);
            self.queue_avg.extend_from_slice(&NANS[..n]);
        }
        self.link.extend_from_slice(ids);
    }

    /// Rows held so far.
    pub fn len(&self) -> usize {
        self.time_s.len()
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
        let (mut cc, mut metric_names) = (CcSeries::default(), MetricNames::default());
        // "beta" twice as two pointers to the same text: one name
        let beta_again: &'static str = Box::leak("beta".to_string().into_boxed_str());
        for (flow, name) in [(0, "alpha"), (0, "beta"), (1, "alpha"), (1, beta_again), (2, "gamma")] {
            cc.push(0.1, flow, metric_names.key(name), 1.0);
        }
        let cc = cc.finish(metric_names.into_strings());
        assert_eq!(cc.columns.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["time_s", "flow", "name", "value"]);
        assert_eq!(cc.strs("name"), ["alpha", "beta", "alpha", "beta", "gamma"]);
        let Some(Column::Dict { values, .. }) = cc.column("name") else { panic!("metric names not a dictionary") };
        assert_eq!(values, &["alpha", "beta", "gamma"]);
    }

    #[test]
    fn rows_written_a_column_at_a_time_are_the_rows_pushed_one_by_one() {
        // Links: three samples of five links, some idle (the fill) and some counted (overwritten),
        // more links than a fill chunk in the last sample.
        let (mut bulk, mut one) = (LinkSeries::default(), LinkSeries::default());
        for (sample, links) in [(1u32, 5usize), (2, 5), (3, FILL_CHUNK * 2 + 3)] {
            let t = sample as f64 * 0.1;
            let ids: Vec<Name> = (0..links as u32).map(Name).collect();
            assert!(bulk.reserve(links));
            let base = bulk.len();
            bulk.push_idle(t, &ids);
            for l in 0..links {
                let busy = (l + sample as usize) % 3 == 0;
                let v = (l as u64, l as u64 * 1500, 0.5 * l as f64, 2.0, 1, 2, 0.25, 3000, 1, if l % 2 == 0 { f64::NAN } else { 1.5 });
                if busy {
                    bulk.set_row(base + l, t, Name(l as u32), v.0, v.1, v.2, v.3, v.4, v.5, v.6, v.7, v.8, v.9);
                    one.push(t, Name(l as u32), v.0, v.1, v.2, v.3, v.4, v.5, v.6, v.7, v.8, v.9);
                } else {
                    one.push(t, Name(l as u32), 0, 0, f64::NAN, 0.0, 0, 0, 0.0, 0, 0, f64::NAN);
                }
            }
        }
        let names: Vec<String> = (0..FILL_CHUNK * 2 + 3).map(|l| format!("l{l}")).collect();
        assert_eq!(format!("{:?}", bulk.finish(names.clone())), format!("{:?}", one.finish(names)));

        // Flows: batches of rows against a push per row.
        let (mut bulk, mut one) = (FlowSeries::default(), FlowSeries::default());
        let rows: Vec<FlowRow> = (0..FILL_CHUNK as u64 + 7)
            .map(|k| FlowRow {
                flow: k,
                goodput_bps: k as f64 * 1e3,
                send_rate_bps: 2.0,
                cwnd_bytes: 1448 * k,
                cwnd_pkts: k as f64,
                ssthresh_bytes: if k % 2 == 0 { f64::INFINITY } else { 9.0 },
                srtt_ms: f64::NAN,
                rtt_ms: 10.5,
                retransmits: k % 3,
                timeouts: k % 5,
                active: k % 4 != 0,
            })
            .collect();
        assert!(bulk.reserve(rows.len()));
        let (mut first, mut rest) = (rows[..5].to_vec(), rows[5..].to_vec());
        bulk.extend_rows(0.3, &mut first);
        bulk.extend_rows(0.3, &mut rest);
        assert!(first.is_empty() && rest.is_empty(), "a written batch is emptied");
        for r in &rows {
            one.push(0.3, r.flow, r.goodput_bps, r.send_rate_bps, r.cwnd_bytes, r.cwnd_pkts, r.ssthresh_bytes, r.srtt_ms, r.rtt_ms, r.retransmits, r.timeouts, r.active);
        }
        assert_eq!(format!("{:?}", bulk.finish(Vec::new())), format!("{:?}", one.finish(Vec::new())));

        // Metrics: a batch against a push per row, names keyed the same.
        let metrics: Vec<ccsim_cc::Metric> = vec![("alpha", 1.0), ("beta", 2.0), ("alpha", 3.0), ("gamma", 4.0), ("beta", 5.0)];
        let flows = [0u64, 0, 1, 1, 2];
        let (mut bulk, mut one) = (CcSeries::default(), CcSeries::default());
        let (mut bulk_names, mut one_names) = (MetricNames::default(), MetricNames::default());
        let mut keyed: Vec<(Name, f64)> = metrics.iter().map(|&(n, v)| (bulk_names.key(n), v)).collect();
        let (mut first, mut first_flows) = (keyed[..2].to_vec(), flows[..2].to_vec());
        assert!(bulk.extend_metrics(0.2, &mut first, &mut first_flows));
        assert!(first.is_empty() && first_flows.is_empty(), "a written batch is emptied");
        assert!(bulk.extend_metrics(0.2, &mut keyed.split_off(2), &mut flows[2..].to_vec()));
        for (&(n, v), &f) in metrics.iter().zip(&flows) {
            one.push(0.2, f, one_names.key(n), v);
        }
        let (bulk, one) = (plain(bulk.finish(bulk_names.into_strings())), plain(one.finish(one_names.into_strings())));
        assert_eq!(format!("{bulk:?}"), format!("{one:?}"));
        assert_eq!(bulk.strs("name"), ["alpha", "beta", "alpha", "gamma", "beta"]);
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
