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
    (
        "chat-5k-stub",
        "5,000 streams, one tab each, through the model stub",
    ),
    (
        "relay-2tabs",
        "Bare actix-ws relay, 1,000 users × 2 tabs (the floor)",
    ),
    ("chat-2tabs", "1,000 users × 2 tabs streaming"),
    (
        "chat-2tabs-stub",
        "1,000 users × 2 tabs streaming through the model stub",
    ),
    (
        "chat-2inst",
        "1,000 users × 2 tabs, each tab on another instance (Postgres + Redis)",
    ),
    (
        "chat-2inst-stub",
        "1,000 users × 2 tabs, each tab on another instance, through the model stub",
    ),
    ("logins", "Streaming during a login flood"),
    (
        "logins-stub",
        "Streaming through the model stub during a login flood",
    ),
    (
        "cap-relay",
        "Capacity of the bare relay: stepped ramp (the floor)",
    ),
    ("cap-server", "Capacity of the server (SQLite): stepped ramp"),
    (
        "cap-server-stub",
        "Capacity of the server through the model stub: stepped ramp",
    ),
    ("half-relay", "Bare relay at half its capacity, 2 tabs a user"),
    (
        "half-server",
        "The server at half the relay's capacity, 2 tabs a user (SQLite)",
    ),
    (
        "half-server-stub",
        "The server at half the relay's capacity, 2 tabs a user, through the model stub",
    ),
    ("idle-relay", "Bare relay holding idle sockets (the floor)"),
    ("direct-1", "Model stub called directly, 1 user"),
    ("stub-1", "Through the server to the model stub, 1 user"),
    ("direct-50", "Model stub called directly, 50 users"),
    ("stub-50", "Through the server to the model stub, 50 users"),
    ("direct-100", "Model stub called directly, 100 users"),
    ("stub-100", "Through the server to the model stub, 100 users"),
    ("quota", "Quota checks with Redis"),
];

fn load(dir: &Path, name: &str) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.').try_fold(v, |v, k| v.get(k))?.as_f64()
}

/// A number of a report that may not have run.
fn f(report: &Option<Value>, path: &str) -> Option<f64> {
    report.as_ref().and_then(|v| num(v, path))
}

fn ms(v: Option<f64>) -> String {
    v.map_or("not run".into(), |x| format!("{x:.2} ms"))
}

/// A capacity search's result: the users held (0 when not even the first step held) and
/// how to show it: `1750 (2200 did not hold)`, `≥ 10000 (all steps held)`, `< 500`.
fn capacity(report: &Option<Value>) -> Option<(f64, String)> {
    let r = report.as_ref()?;
    let held = r.get("capacity").and_then(Value::as_u64);
    let failed = r.get("failed_at").and_then(Value::as_u64);
    let capped = r.get("capped").and_then(Value::as_bool) == Some(true);
    let shown = match (held, failed) {
        (Some(n), _) if capped => format!("≥ {n} (every step held)"),
        (Some(n), Some(bad)) => format!("{n} ({bad} did not hold)"),
        (Some(n), None) => n.to_string(),
        (None, Some(bad)) => format!("< {bad} (the first step did not hold)"),
        (None, None) => return None,
    };
    Some((held.unwrap_or(0) as f64, shown))
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
    let relay_inter = f(&get("relay-2tabs"), "inter_tab.p99_ms");
    row(
        "1,000 users × 2 tabs: tab ↔ tab, p99",
        "≤ 5 ms",
        match relay_inter {
            Some(r) => format!("{} (bare relay: {r:.2} ms)", ms(inter)),
            None => ms(inter),
        },
        inter.map(|v| v <= 5.0),
    );
    let two = get("chat-2inst");
    let two_faults = ["lost_deltas", "duplicated_deltas", "mismatched_answers"]
        .iter()
        .map(|k| f(&two, k))
        .sum::<Option<f64>>();
    row(
        "Two instances (Postgres + Redis), 1,000 users × 2 tabs apart: lost, duplicated, mismatched deltas",
        "0",
        two_faults.map_or("not run".into(), |v| format!("{v:.0}")),
        two_faults.map(|v| v == 0.0),
    );
    let two_inter = f(&two, "inter_tab.p99_ms");
    row(
        "Two instances, 1,000 users × 2 tabs apart: tab ↔ tab, p99",
        "≤ 5 ms (as on one instance)",
        match inter {
            Some(one) if two_inter.is_some() => format!("{} (one instance: {one:.2} ms)", ms(two_inter)),
            _ => ms(two_inter),
        },
        two_inter.map(|v| v <= 5.0),
    );
    let (cap_server, cap_relay) = (capacity(&get("cap-server")), capacity(&get("cap-relay")));
    row(
        "Capacity: streams held at beyond-batching p99 ≤ 5 ms with no send backlog",
        "≥ 0.8× the relay's",
        match (&cap_server, &cap_relay) {
            (Some((s, server)), Some((r, relay))) if *r > 0.0 => {
                format!("{server} vs relay {relay} ({:.2}×)", s / r)
            }
            (Some((_, server)), Some((_, relay))) => format!("{server} vs relay {relay}"),
            _ => "not run".into(),
        },
        match (&cap_server, &cap_relay) {
            (Some((s, _)), Some((r, _))) if *r > 0.0 => Some(*s >= 0.8 * r),
            _ => None,
        },
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
    let (qps, ceiling) = (f(&quota, "checks_per_sec"), f(&quota, "redis_benchmark_per_sec"));
    row(
        "Quota checks with Redis",
        "≥ 20,000/s, and ≥ 0.5× `redis-benchmark` running the same script",
        match (qps, ceiling) {
            (Some(v), Some(c)) => format!("{v:.0}/s vs {c:.0}/s ({:.2}×)", v / c),
            (Some(v), None) => format!("{v:.0}/s (redis-benchmark not run)"),
            _ => "not run".into(),
        },
        qps.map(|v| v >= 20_000.0 && ceiling.is_none_or(|c| v >= 0.5 * c)),
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
    out.push_str(&real_model(&get));
    out.push_str(&half_capacity(&get));
    out.push_str(&through_stub(&get));
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

/// Concurrencies of the real-model runs (`direct-N` beside `stub-N`).
const REAL_MODEL_USERS: &[u32] = &[1, 50, 100];

/// One real-model run's figures: time to first token p50 and p99, answers per second.
struct Ttft {
    p50: f64,
    p99: f64,
    per_sec: f64,
}

fn ttft(report: &Option<Value>) -> Option<Ttft> {
    let r = report.as_ref()?;
    Some(Ttft {
        p50: num(r, "first_delta.p50_ms")?,
        p99: num(r, "first_delta.p99_ms")?,
        per_sec: num(r, "answers_per_sec")?,
    })
}

/// The real-model path: each concurrency's run through the server beside the stub called
/// directly, and the verdicts on the budgets of issue 12. "Added" is the difference of
/// the two runs' percentiles (the runs are apart; no request is in both).
fn real_model(get: &dyn Fn(&str) -> Option<Value>) -> String {
    let runs: Vec<(u32, Option<Ttft>, Option<Ttft>)> = REAL_MODEL_USERS
        .iter()
        .map(|n| {
            (
                *n,
                ttft(&get(&format!("direct-{n}"))),
                ttft(&get(&format!("stub-{n}"))),
            )
        })
        .collect();
    if runs.iter().all(|(_, d, s)| d.is_none() && s.is_none()) {
        return String::new();
    }
    let pair = |t: &Option<Ttft>| {
        t.as_ref()
            .map_or("not run".into(), |t| format!("{:.2} / {:.2} ms", t.p50, t.p99))
    };
    let mut out = String::from(
        "\n### Real-model path: through the server vs the model stub called directly\n\n\
         The stub (`loadtest model-stub`, its own process) is an OpenAI-compatible API \
         streaming SSE at a model's pace. `direct-N`: N users call it directly, each \
         asking again as soon as its answer is done. `stub-N`: N users send new \
         conversations back to back through the server, which streams from the same stub. \
         Time to first token: request → first content chunk (direct); `chat.send` → first \
         delta at the sending tab (server). Added: the server's percentile less the \
         direct one. Answers completed per second in the measured window.\n\n\
         | Users | TTFT direct p50 / p99 | TTFT via server p50 / p99 | Added p50 / p99 | Answers/s direct | Answers/s via server | Ratio |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for (n, d, s) in &runs {
        let added = match (d, s) {
            (Some(d), Some(s)) => format!("{:+.2} / {:+.2} ms", s.p50 - d.p50, s.p99 - d.p99),
            _ => "not run".into(),
        };
        let rate = |t: &Option<Ttft>| {
            t.as_ref()
                .map_or("not run".into(), |t| format!("{:.2}", t.per_sec))
        };
        let ratio = match (d, s) {
            (Some(d), Some(s)) if d.per_sec > 0.0 => format!("{:.2}×", s.per_sec / d.per_sec),
            _ => "not run".into(),
        };
        let _ = writeln!(
            out,
            "| {n} | {} | {} | {added} | {} | {} | {ratio} |",
            pair(d),
            pair(s),
            rate(d),
            rate(s)
        );
    }
    let at = |n: u32| {
        runs.iter()
            .find(|r| r.0 == n)
            .and_then(|(_, d, s)| d.as_ref().zip(s.as_ref()))
    };
    out.push_str("\n| Budget (issue 12) | Target | Measured | |\n|---|---|---|---|\n");
    let one = at(1).map(|(d, s)| (s.p50 - d.p50, s.p99 - d.p99));
    let _ = writeln!(
        out,
        "| Added time to first token, 1 user | ≤ 1 ms median, ≤ 3 ms p99 | {} | {} |",
        one.map_or("not run".into(), |(a, b)| format!(
            "{a:+.2} ms median, {b:+.2} ms p99"
        )),
        verdict(one.map(|(a, b)| a <= 1.0 && b <= 3.0))
    );
    let hundred = at(100).map(|(d, s)| s.p99 - d.p99);
    let _ = writeln!(
        out,
        "| Added time to first token, 100 concurrent new conversations, p99 | ≤ 5 ms | {} | {} |",
        hundred.map_or("not run".into(), |a| format!("{a:+.2} ms")),
        verdict(hundred.map(|a| a <= 5.0))
    );
    for n in [50, 100] {
        let ratio = at(n)
            .filter(|(d, _)| d.per_sec > 0.0)
            .map(|(d, s)| (s.per_sec, d.per_sec));
        let _ =
            writeln!(
            out,
            "| Answers completed per second, {n} concurrent new conversations | ≥ 0.8× direct | {} | {} |",
            ratio.map_or("not run".into(), |(s, d)| format!("{s:.2} vs {d:.2}/s ({:.2}×)", s / d)),
            verdict(ratio.map(|(s, d)| s >= 0.8 * d))
        );
    }
    out
}

/// The budgets of issue 12 measured against the relay: at half the relay's capacity
/// (`half-server` and `half-server-stub` beside `half-relay`: the same users, two tabs
/// each, at the same pace) and idle sockets (`idle-1` beside `idle-relay`, same count).
fn half_capacity(get: &dyn Fn(&str) -> Option<Value>) -> String {
    let relay = get("half-relay");
    let servers = [
        ("demo model", get("half-server")),
        ("model stub", get("half-server-stub")),
    ];
    if relay.is_none() && servers.iter().all(|(_, r)| r.is_none()) {
        return String::new();
    }
    let users = servers
        .iter()
        .find_map(|(_, r)| f(r, "users"))
        .or_else(|| f(&relay, "users"))
        .map_or("?".into(), |n| format!("{n:.0}"));
    let mut out = format!(
        "\n### Against the relay: {users} streams (half the relay's capacity, two tabs a user), and idle sockets\n\n\
         | Budget (issue 12) | Model | Target | Measured | |\n|---|---|---|---|---|\n"
    );
    for (model, server) in &servers {
        let both = |p: &str| f(server, p).zip(f(&relay, p));
        let mut line = |what: &str, target: &str, measured: Option<String>, ok: Option<bool>| {
            let _ = writeln!(
                out,
                "| {what} | {model} | {target} | {} | {} |",
                measured.unwrap_or_else(|| "not run".into()),
                verdict(ok)
            );
        };
        let cpu = both("server_cpu_us_per_frame");
        line(
            "CPU per delta at half capacity",
            "≤ 1.3× the relay's",
            cpu.map(|(s, r)| format!("{s:.1} vs {r:.1} µs/frame ({:.2}×)", s / r)),
            cpu.map(|(s, r)| s <= 1.3 * r),
        );
        let beyond = both("beyond_batch.p99_ms");
        line(
            "Beyond-batching p99 at half capacity",
            "≤ the relay's + 2 ms",
            beyond.map(|(s, r)| format!("{s:.2} vs {r:.2} ms")),
            beyond.map(|(s, r)| s <= r + 2.0),
        );
        let inter = both("inter_tab.p99_ms");
        line(
            "Tab ↔ tab p99 at half capacity",
            "≤ the 2-tab relay's + 1 ms",
            inter.map(|(s, r)| format!("{s:.2} vs {r:.2} ms")),
            inter.map(|(s, r)| s <= r + 1.0),
        );
        let pre = both("pre_stream.p99_ms");
        line(
            "Pre-stream p99 at half capacity",
            "≤ 5 ms",
            pre.map(|(s, r)| format!("{s:.2} ms (relay: {r:.2} ms)")),
            pre.map(|(s, _)| s <= 5.0),
        );
    }
    let idle = f(&get("idle-1"), "server.rss_per_session_bytes")
        .zip(f(&get("idle-relay"), "server.rss_per_session_bytes"))
        .map(|(s, r)| (s / 1024.0, r / 1024.0));
    let _ = writeln!(
        out,
        "| Idle RSS per socket | either | ≤ 12 KB, and ≤ the relay's + 3 KB | {} | {} |",
        idle.map_or("not run".into(), |(s, r)| format!(
            "{s:.1} KB vs the relay's {r:.1} KB"
        )),
        verdict(idle.map(|(s, r)| s <= 12.0 && s <= r + 3.0))
    );
    out
}

/// The chat scenarios run twice, `NAME` with the demo model and `NAME-stub` through the
/// model stub at the demo model's pace: what the real-model path costs under each load.
const STUB_PAIRS: &[(&str, &str)] = &[
    ("chat-5k", "5,000 streams"),
    ("chat-2tabs", "1,000 users × 2 tabs"),
    ("chat-2inst", "1,000 users × 2 tabs on two instances"),
    ("logins", "1,000 streams in a login flood"),
    ("half-server", "Half the relay's capacity, 2 tabs a user"),
];

/// Every chat scenario with the demo model beside the same run through the model stub.
fn through_stub(get: &dyn Fn(&str) -> Option<Value>) -> String {
    let runs: Vec<_> = STUB_PAIRS
        .iter()
        .map(|(name, what)| (*what, get(name), get(&format!("{name}-stub"))))
        .collect();
    let caps = (capacity(&get("cap-server")), capacity(&get("cap-server-stub")));
    if runs.iter().all(|(_, _, s)| s.is_none()) && caps.1.is_none() {
        return String::new();
    }
    let cell = |r: &Option<Value>, p: &str, unit: &str, digits: usize| {
        f(r, p).map_or("not run".into(), |v| format!("{v:.digits$}{unit}"))
    };
    let mut out = String::from(
        "\n### Every chat scenario with the demo model and through the model stub\n\n\
         The `*-stub` runs are the same loads with the model a stub at the demo model's pace \
         (`loadtest model-stub`, its own process on the same two cores): the server then \
         streams each answer over HTTP and parses its SSE, as with a real model. Server CPU \
         per frame counts the server's process only.\n\n\
         | Load | Model | Answers/s | Pre-stream p99 | Beyond batching p99 | Tab ↔ tab p99 | Server CPU / frame | Lost, duplicated, mismatched |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for (what, demo, stub) in &runs {
        for (model, r) in [("demo", demo), ("stub", stub)] {
            let faults = ["lost_deltas", "duplicated_deltas", "mismatched_answers"]
                .iter()
                .map(|k| f(r, k))
                .sum::<Option<f64>>();
            let _ = writeln!(
                out,
                "| {what} | {model} | {} | {} | {} | {} | {} | {} |",
                cell(r, "answers_per_sec", "", 1),
                cell(r, "pre_stream.p99_ms", " ms", 2),
                cell(r, "beyond_batch.p99_ms", " ms", 2),
                cell(r, "inter_tab.p99_ms", " ms", 2),
                cell(r, "server_cpu_us_per_frame", " µs", 1),
                faults.map_or("not run".into(), |v| format!("{v:.0}")),
            );
        }
    }
    let shown = |c: &Option<(f64, String)>| c.as_ref().map_or("not run".into(), |c| c.1.clone());
    let _ = writeln!(
        out,
        "\nCapacity (streams held at beyond-batching p99 ≤ 5 ms, stepped ramp): demo model {}, \
         model stub {}.",
        shown(&caps.0),
        shown(&caps.1)
    );
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
        let real = |name: &str, p50: f64, p99: f64, per_sec: f64| {
            let r = serde_json::json!({"first_delta": {"p50_ms": p50, "p99_ms": p99}, "answers_per_sec": per_sec});
            std::fs::write(dir.join(format!("{name}.json")), r.to_string()).unwrap();
        };
        let write = |name: &str, v: serde_json::Value| {
            std::fs::write(dir.join(format!("{name}.json")), v.to_string()).unwrap();
        };
        write(
            "cap-relay",
            serde_json::json!({"capacity": 2000, "failed_at": 2500, "capped": false, "steps": []}),
        );
        write(
            "cap-server",
            serde_json::json!({"capacity": 1500, "failed_at": 1900, "capped": false, "steps": []}),
        );
        write(
            "chat-2inst",
            serde_json::json!({"inter_tab": {"p99_ms": 6.5}, "lost_deltas": 0, "duplicated_deltas": 0, "mismatched_answers": 0}),
        );
        // At half capacity: the server with the demo model meets every budget against the
        // relay, the one through the stub misses CPU (1.5×) and tab ↔ tab (+1.5 ms).
        let half = |cpu: f64, inter: f64| {
            serde_json::json!({"users": 300, "server_cpu_us_per_frame": cpu, "beyond_batch": {"p99_ms": 3.0},
                "inter_tab": {"p99_ms": inter}, "pre_stream": {"p99_ms": 2.0}})
        };
        write("half-relay", half(10.0, 2.0));
        write("half-server", half(12.0, 2.5));
        write("half-server-stub", half(15.0, 3.5));
        let mut stub = chat.clone();
        stub["answers_per_sec"] = serde_json::json!(249.5);
        stub["lost_deltas"] = serde_json::json!(2);
        write("chat-5k-stub", stub);
        write(
            "cap-server-stub",
            serde_json::json!({"capacity": 1200, "failed_at": 1500, "capped": false, "steps": []}),
        );
        real("direct-1", 1.0, 2.0, 0.4);
        real("stub-1", 1.5, 4.5, 0.4);
        real("direct-100", 2.0, 10.0, 40.0);
        real("stub-100", 4.0, 14.0, 36.0);
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
        assert!(
            line("| Capacity").ends_with(
                "| 1500 (1900 did not hold) vs relay 2000 (2500 did not hold) (0.75×) | **missed** |"
            ),
            "{s}"
        );
        assert!(line("| Two instances (Postgres + Redis)").ends_with("| 0 | met |"));
        assert!(line("| Two instances, 1,000").ends_with("| 6.50 ms | **missed** |"));
        assert!(s.contains("```\nloadtest chat\n```") && s.contains("the report"));
        // The real-model path: 1 user +0.5 ms median but +2.5 ms p99 (met), 100 users
        // +4 ms p99 (met), 36 vs 40 answers/s (0.90×, met); 50 users not run.
        assert!(line("| 1 |").contains("| +0.50 / +2.50 ms |"), "{s}");
        assert!(line("| 100 |").ends_with("| 40.00 | 36.00 | 0.90× |"), "{s}");
        assert!(
            line("| Added time to first token, 1 user").ends_with("+0.50 ms median, +2.50 ms p99 | met |")
        );
        assert!(line("| Added time to first token, 100").ends_with("| +4.00 ms | met |"));
        assert!(line("| Answers completed per second, 100").ends_with("36.00 vs 40.00/s (0.90×) | met |"));
        assert!(line("| Answers completed per second, 50").ends_with("| not run | not run |"));
        assert!(s.contains("### Against the relay: 300 streams (half the relay's capacity, two tabs a user)"));
        assert!(line("| CPU per delta at half capacity | demo model").ends_with("(1.20×) | met |"));
        assert!(line("| CPU per delta at half capacity | model stub").ends_with("(1.50×) | **missed** |"));
        assert!(line("| Tab ↔ tab p99 at half capacity | demo model").ends_with("| 2.50 vs 2.00 ms | met |"));
        assert!(line("| Tab ↔ tab p99 at half capacity | model stub")
            .ends_with("| 3.50 vs 2.00 ms | **missed** |"));
        // Each load with the demo model beside the stub; a load not run says so.
        assert!(
            line("| 5,000 streams | demo |").ends_with("| 12.00 ms | 3.50 ms | not run | 10.0 µs | 0 |"),
            "{s}"
        );
        assert!(line("| 5,000 streams | stub |").starts_with("| 5,000 streams | stub | 249.5 |"));
        assert!(line("| 5,000 streams | stub |").ends_with("| 2 |"));
        assert!(line("| 1,000 users × 2 tabs | stub |").ends_with("| not run | not run |"));
        assert!(s.contains("demo model 1500 (1900 did not hold), model stub 1200 (1500 did not hold)."));
    }
}
