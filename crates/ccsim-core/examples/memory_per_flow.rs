//! Memory per flow (not a test): bytes each flow costs the engine when its access links never queue.
//!
//! The set-up: a 10 Gbit/s dumbbell (5 ms one-way) with N NewReno flows, each on its own 1 Gbit/s
//! access link, each application writing 10 kbit/s (one 1448-byte segment every 1.16 s). Every flow
//! runs (sender, receiver, timers, RTT samples) but neither its access links nor the bottleneck ever
//! hold more than a packet or two, so what is measured is the cost of a flow and of its idle access
//! links, not of queued packets. The run has one sample (the interval is the whole run): the per-
//! interval series would otherwise grow with simulated time on purpose.
//!
//! Bytes per flow = (peak with 10,000 flows - peak with 1,000 flows) / 9,000, each run in a child
//! process of its own, so the fixed cost of the process cancels out; run at two durations, the
//! figure must stay flat in simulated time. Two peaks: the heap bytes live at once while the
//! simulation is built and run (counted by this program's allocator, from the moment the JSON
//! document it was built from is dropped: that document, ~6 kB per flow here, is the benchmark's, not
//! the engine's), and the process's peak RSS (which also holds the document's freed pages).
//!
//! cargo run --release -p ccsim-core --example memory_per_flow             (the table)
//! cargo run --release -p ccsim-core --example memory_per_flow -- N SECS  (one run: peak RSS in KiB)

use std::alloc::{GlobalAlloc, Layout, System};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use ccsim_core::{fixtures, Simulation};
use serde_json::json;

/// The system allocator, counting the bytes live and the most live at once since the last reset.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            PEAK.fetch_max(LIVE.fetch_add(layout.size(), Relaxed) + layout.size(), Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.split_whitespace().nth(1).unwrap_or("0").parse().unwrap_or(0)))
        .unwrap_or(0)
}

/// Hands the pages of freed allocations back to the kernel (glibc's `malloc_trim`) and resets the
/// process's peak RSS (`/proc/self/clear_refs`), so that the peak RSS from here on is the
/// simulation's, not that of the JSON document it was built from (about 25 kB per flow while it is
/// built). Where either is missing the RSS column still holds the document's pages.
fn release_freed_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: glibc's malloc_trim only returns free memory to the kernel; no preconditions.
        unsafe {
            malloc_trim(0);
        }
    }
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// One run of `flows` light flows for `seconds`; returns (peak live heap bytes of the simulation,
/// the process's peak RSS in KiB).
fn run_once(flows: u64, seconds: u64) -> (usize, u64) {
    let mut light = fixtures::newreno();
    light["app_rate"] = json!({"kind": "limited", "rate_bps": 10_000});
    let traffic: Vec<_> = (0..flows).map(|_| light.clone()).collect();
    let duration_ns = seconds * 1_000_000_000;
    let json = fixtures::dumbbell(10_000_000_000, 5_000_000, 10_000, duration_ns, duration_ns, &traffic).to_string();
    drop(traffic);
    // Only the simulation is alive while it runs: the document it was built from is dropped first.
    let sim = Simulation::from_json(&json, 1);
    drop(json);
    release_freed_pages();
    PEAK.store(LIVE.load(Relaxed), Relaxed);
    let out = sim.and_then(|sim| sim.finish()).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    // Keep the output alive until the peak is read, as a caller would.
    let peaks = (PEAK.load(Relaxed), peak_rss_kib());
    drop(out);
    peaks
}

fn child(flows: u64, seconds: u64) -> (f64, f64) {
    let exe = std::env::current_exe().expect("own path");
    let out = Command::new(exe).args([flows.to_string(), seconds.to_string()]).output().expect("child run");
    assert!(out.status.success(), "child failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text.split_whitespace().map(|x| x.parse().expect("numbers")).collect();
    (v[0], v[1] * 1024.0)
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("numeric argument")).collect();
    if let [flows, seconds] = args[..] {
        let (heap, rss) = run_once(flows, seconds);
        println!("{heap} {rss}");
        return;
    }
    println!("| simulated time | peak heap, 1,000 / 10,000 flows | heap bytes per flow | peak RSS, 1,000 / 10,000 flows | RSS bytes per flow |");
    println!("| --- | --- | --- | --- | --- |");
    let mib = |b: f64| b / (1024.0 * 1024.0);
    for seconds in [10, 60] {
        let ((heap1, rss1), (heap2, rss2)) = (child(1_000, seconds), child(10_000, seconds));
        println!(
            "| {seconds} s | {:.1} / {:.1} MiB | {:.0} B | {:.1} / {:.1} MiB | {:.0} B |",
            mib(heap1),
            mib(heap2),
            (heap2 - heap1) / 9_000.0,
            mib(rss1),
            mib(rss2),
            (rss2 - rss1) / 9_000.0
        );
    }
}
