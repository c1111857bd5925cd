//! Prometheus metrics: requests per route and status, request latency histograms per route,
//! and stored memories per status.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds (seconds) of the latency histogram buckets.
const BUCKETS: [f64; 12] =
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0];

#[derive(Debug, Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

/// Counters and histograms of one server process.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
}

impl Metrics {
    pub(crate) fn record(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let mut requests = self.requests.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *requests.entry((method.to_owned(), route.to_owned(), status)).or_insert(0) += 1;
        drop(requests);
        let mut latency = self.latency.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let h = latency.entry(route.to_owned()).or_default();
        let seconds = elapsed.as_secs_f64();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                h.counts[i] += 1;
            }
        }
        h.sum += seconds;
        h.count += 1;
    }

    /// The text exposition format, with `memories` (status, count) appended.
    pub(crate) fn render(
        &self,
        memories: &[(String, u64)],
        refining: Option<&mnemo::RefineStatus>,
    ) -> String {
        let mut out = String::new();
        let _ =
            writeln!(out, "# HELP mnemo_http_requests_total HTTP requests by route and status.");
        let _ = writeln!(out, "# TYPE mnemo_http_requests_total counter");
        for ((method, route, status), n) in
            self.requests.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter()
        {
            let _ = writeln!(
                out,
                "mnemo_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {n}"
            );
        }
        let _ =
            writeln!(out, "# HELP mnemo_http_request_duration_seconds Request latency by route.");
        let _ = writeln!(out, "# TYPE mnemo_http_request_duration_seconds histogram");
        for (route, h) in
            self.latency.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter()
        {
            for (bound, count) in BUCKETS.iter().zip(h.counts) {
                let _ = writeln!(
                    out,
                    "mnemo_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                out,
                "mnemo_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "mnemo_http_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "mnemo_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                h.count
            );
        }
        let _ = writeln!(out, "# HELP mnemo_memories Stored memories by status.");
        let _ = writeln!(out, "# TYPE mnemo_memories gauge");
        for (status, n) in memories {
            let _ = writeln!(out, "mnemo_memories{{status=\"{status}\"}} {n}");
        }
        if let Some(refining) = refining {
            for (name, kind, help, value) in [
                (
                    "mnemo_refine_waiting_notebooks",
                    "gauge",
                    "Notebooks whose records wait for their vectors to be refined.",
                    refining.notebooks_waiting as u64,
                ),
                (
                    "mnemo_refined_vectors_total",
                    "counter",
                    "Record vectors replaced by the refining encoder.",
                    refining.refined,
                ),
                (
                    "mnemo_refine_failures_total",
                    "counter",
                    "Refinement batches that failed (retried at the notebook's next call).",
                    refining.failures,
                ),
            ] {
                let _ = writeln!(out, "# HELP {name} {help}");
                let _ = writeln!(out, "# TYPE {name} {kind}");
                let _ = writeln!(out, "{name} {value}");
            }
        }
        out
    }
}
