//! `loadtest render`: turns the JSON reports of a `make bench` run into the generated part
//! of docs/performance.md (between its `bench:start` and `bench:end` markers), so the
//! hand-written analysis around it stays.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use serde_json::Value;

const START: &str = "<!-- bench:start -->";
const END: &str = "<!-- bench:end -->";

/// The scenarios of the standard set, in the order the document shows them.
const RUNS: &[(&str, &str)] = &[
    ("idle-1", "Idle sessions, one server (SQLite)"),
    ("idle-3", "Idle sessions, three servers (Postgres + Redis)"),
    ("churn", "Connect / disconnect churn"),
    ("baseline", "Bare actix-ws relay (the floor)"),
    ("chat-5k", "5,000 streams, one tab each"),
    ("chat-2tabs", "1,000 users × 2 tabs streaming"),
    ("logins", "Streaming during a login flood"),
    ("quota", "Quota checks with Redis"),
];

fn load(dir: &Path, name: &str) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.').try_fold(v, |v, k| v.get(k))?.as_f64()
}

fn ms(v: Option<f64>) -> String {
    v.map_or("not run".into(), |x| format!("{x:.2} ms"))
}

fn verdict(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "met",
        Some(false) => "**missed**",
        None => "not run",
    }
}

fn machine() -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kib: f64 = read("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    format!(
        "{cores} cores ({cpu}), {:.0} GiB RAM, Linux {}, open files per process: {}",
        mem_kib / 1024.0 / 1024.0,
        read("/proc/sys/kernel/osrelease").trim(),
        std::env::var("BENCH_NOFILE").unwrap_or_else(|_| "?".into())
    )
}

/// The generated section: machine, budget table, then each run's report and command.
pub fn section(dir: &Path, date: &str) -> String {
    let get = |name: &str| load(dir, name);
    let (idle1, idle3, chat, tabs, logins, quota, base) = (
        get("idle-1"),
        get("idle-3"),
        get("chat-5k"),
        get("chat-2tabs"),
        get("logins"),
        get("quota"),
        get("baseline"),
    );
    let f = |r: &Option<Value>, p: &str| r.as_ref().and_then(|v| num(v, p));
    let mut rows: Vec<[String; 4]> = Vec::new();
    let mut row = |what: &str, budget: &str, measured: String, ok: Option<bool>| {
        rows.push([what.into(), budget.into(), measured, verdict(ok).into()]);
    };
    for (name, r) in [("one server", &idle1), ("three servers", &idle3)] {
        let held = f(r, "sessions_held");
        let per = f(r, "server.rss_per_session_bytes");
        row(
            &format!("Idle sessions held ({name})"),
            "50,000 at ≤ 16 KB RSS each",
            match (held, per) {
                (Some(h), Some(p)) => format!("{h:.0} held, {:.1} KB each", p / 1024.0),
                _ => "not run".into(),
            },
            held.zip(per).map(|(h, p)| h >= 50_000.0 && p <= 16.0 * 1024.0),
        );
    }
    let idle_rss = f(&idle1, "server.rss_before_mb");
    row(
        "Idle server RSS",
        "≤ 50 MB",
        idle_rss.map_or("not run".into(), |m| format!("{m:.1} MB")),
        idle_rss.map(|m| m <= 50.0),
    );
    let beyond = f(&chat, "beyond_batch.p99_ms");
    row(
        "5,000 streams: chunk → tab beyond the batching window, p99",
        "≤ 5 ms",
        ms(beyond),
        beyond.map(|v| v <= 5.0),
    );
    let faults = [
        "lost_deltas",
        "duplicated_deltas",
        "mismatched_answers",
        "error_frames",
        "dropped",
    ]
    .iter()
    .map(|k| f(&chat, k))
    .sum::<Option<f64>>();
    row(
        "5,000 streams: lost, duplicated, mismatched deltas, errors, drops",
        "0",
        faults.map_or("not run".into(), |v| format!("{v:.0}")),
        faults.map(|v| v == 0.0),
    );
    let inter = f(&tabs, "inter_tab.p99_ms");
    row(
        "1,000 users × 2 tabs: tab ↔ tab, p99",
        "≤ 5 ms",
        ms(inter),
        inter.map(|v| v <= 5.0),
    );
    let pre = f(&chat, "pre_stream.p99_ms");
    row(
        "Pre-stream overhead at 5,000 streams, p99",
        "≤ 10 ms",
        ms(pre),
        pre.map(|v| v <= 10.0),
    );
    let pre_light = f(&tabs, "pre_stream.p99_ms");
    row(
        "Pre-stream overhead at 1,000 streams, p99",
        "≤ 10 ms",
        ms(pre_light),
        pre_light.map(|v| v <= 10.0),
    );
    let qps = f(&quota, "checks_per_sec");
    row(
        "Quota checks with Redis",
        "≥ 20,000/s",
        qps.map_or("not run".into(), |v| format!("{v:.0}/s")),
        qps.map(|v| v >= 20_000.0),
    );
    let (l429, lbeyond) = (f(&logins, "logins_429"), f(&logins, "beyond_batch.p99_ms"));
    row(
        "Login flood: 429 past capacity; streaming beyond batching p99",
        "429s; ≤ 5 ms",
        match (l429, lbeyond) {
            (Some(n), Some(b)) => format!("{n:.0} × 429; {b:.2} ms"),
            _ => "not run".into(),
        },
        l429.zip(lbeyond).map(|(n, b)| n > 0.0 && b <= 5.0),
    );
    let (cpu, cpu_base) = (
        f(&chat, "server_cpu_us_per_frame"),
        f(&base, "server_cpu_us_per_frame"),
    );
    let (fps, fps_base) = (f(&chat, "frames_per_sec"), f(&base, "frames_per_sec"));
    row(
        "Throughput against the bare relay (CPU per frame; frames/s)",
        "within 2×",
        match (cpu, cpu_base, fps, fps_base) {
            (Some(c), Some(b), Some(x), Some(y)) => {
                format!(
                    "{c:.1} vs {b:.1} µs/frame ({:.2}×); {x:.0} vs {y:.0} frames/s",
                    c / b
                )
            }
            _ => "not run".into(),
        },
        cpu.zip(cpu_base).map(|(c, b)| c <= 2.0 * b),
    );

    let mut out = String::new();
    let _ = writeln!(out, "{START}");
    let _ = writeln!(
        out,
        "_Generated by `make bench` on {date}; do not edit between the markers._\n"
    );
    let _ = writeln!(out, "Machine: {}. Server and harness share it.\n", machine());
    let _ = writeln!(out, "| Figure | Budget | Measured | |\n|---|---|---|---|");
    for [a, b, c, d] in &rows {
        let _ = writeln!(out, "| {a} | {b} | {c} | {d} |");
    }
    for (name, title) in RUNS {
        let Some(report) = get(name) else { continue };
        let text = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap_or_default();
        let _ = writeln!(out, "\n### {title} (`{name}`)\n");
        if let Some(cmd) = report.get("command").and_then(Value::as_str) {
            let _ = writeln!(out, "```\n{cmd}\n```\n");
        }
        let _ = writeln!(out, "```\n{}\n```", text.trim_end());
    }
    let _ = writeln!(out, "{END}");
    out
}

/// Replaces the generated section of `doc` (or appends it).
pub fn write(dir: &Path, doc: &Path, date: &str) -> anyhow::Result<()> {
    let old = std::fs::read_to_string(doc).unwrap_or_default();
    let new = splice(&old, &section(dir, date));
    std::fs::write(doc, new).with_context(|| format!("writing {}", doc.display()))
}

fn splice(old: &str, section: &str) -> String {
    match (old.find(START), old.find(END)) {
        (Some(a), Some(b)) if a < b => {
            format!("{}{}{}", &old[..a], section.trim_end(), &old[b + END.len()..])
        }
        _ => format!("{}\n{}", old.trim_end(), section),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_replaces_only_what_is_between_the_markers() {
        let doc = format!("# Perf\nintro\n{START}\nold table\n{END}\nanalysis\n");
        let out = splice(&doc, &format!("{START}\nnew\n{END}\n"));
        assert_eq!(out, format!("# Perf\nintro\n{START}\nnew\n{END}\nanalysis\n"));
        let fresh = splice("# Perf", &format!("{START}\nx\n{END}\n"));
        assert!(fresh.starts_with("# Perf\n") && fresh.contains("\nx\n"));
    }

    #[test]
    fn budgets_are_judged_from_the_reports() {
        let dir = std::env::temp_dir().join(format!("render-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chat = serde_json::json!({
            "beyond_batch": {"p99_ms": 3.5}, "pre_stream": {"p99_ms": 12.0},
            "lost_deltas": 0, "duplicated_deltas": 0, "mismatched_answers": 0, "error_frames": 0, "dropped": 0,
            "server_cpu_us_per_frame": 10.0, "frames_per_sec": 1000.0, "command": "loadtest chat"
        });
        std::fs::write(dir.join("chat-5k.json"), chat.to_string()).unwrap();
        std::fs::write(dir.join("chat-5k.txt"), "the report").unwrap();
        std::fs::write(
            dir.join("baseline.json"),
            serde_json::json!({"server_cpu_us_per_frame": 4.0, "frames_per_sec": 1000.0}).to_string(),
        )
        .unwrap();
        let s = section(&dir, "today");
        std::fs::remove_dir_all(&dir).unwrap();
        let line = |start: &str| s.lines().find(|l| l.starts_with(start)).unwrap().to_owned();
        assert!(
            line("| 5,000 streams: chunk").ends_with("| 3.50 ms | met |"),
            "{s}"
        );
        assert!(line("| Pre-stream overhead at 5,000").ends_with("| 12.00 ms | **missed** |"));
        assert!(line("| 5,000 streams: lost").ends_with("| 0 | met |"));
        assert!(line("| Throughput").contains("(2.50×)") && line("| Throughput").ends_with("**missed** |"));
        assert!(line("| Quota").ends_with("| not run | not run |"));
        assert!(s.contains("```\nloadtest chat\n```") && s.contains("the report"));
    }
}
