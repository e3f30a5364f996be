//! From what the tabs saw, what the server stored and its quota counters, one row of
//! figures per fault: sends, answers, tabs, quota drift and time to recover.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::users::{AnswerRec, Book, ANSWER_LIMIT};

/// One answer as `GET /api/conversations/{id}` returned it.
#[derive(Clone, Debug)]
pub struct Stored {
    pub status: String,
    pub content: String,
}

/// What the read-back found for an answer id.
#[derive(Clone, Debug)]
pub enum ReadBack {
    Found(Stored),
    /// Its conversation was read and the message is not in it.
    Missing,
    /// Its conversation could not be read.
    Unread(String),
}

/// One tab × answer with a gap.
#[derive(Clone, Debug, Serialize)]
pub struct GapSample {
    pub answer: String,
    /// The tab's instance, and the instance the answer ran on (none: its send unknown).
    pub tab: usize,
    pub answer_instance: Option<usize>,
    pub lost: u64,
    pub first_seq: Option<u64>,
    pub deltas: u64,
    pub snapshots: u32,
    pub completed: bool,
}

/// One stretch of the run: the load resumes (a short lead-in), the fault starts and
/// ends, the recovery window runs, the load stops and drains, and the quota counters
/// are read. The baseline phase has no fault.
#[derive(Debug)]
pub struct Phase {
    pub fault: String,
    pub start: Instant,
    pub fault_start: Option<Instant>,
    /// Redis answers again, Postgres is up, the instance is started.
    pub fault_end: Option<Instant>,
    pub recovery_end: Instant,
    pub skipped: Option<String>,
    pub notes: Vec<String>,
    /// Each user's responses used today, before and after the phase.
    pub usage_before: Vec<Option<i64>>,
    pub usage_after: Vec<Option<i64>>,
}

/// How a stored answer compares with what the tabs got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Complete,
    /// Stored as ended early (`error`; an interrupted answer is stored so): whether the
    /// stored text is a prefix of what the tabs got.
    Interrupted {
        prefix: bool,
    },
    Lost(Lost),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lost {
    Streaming,
    Empty,
    Differs,
    Missing,
    Unread,
}

/// The text tabs were left showing: a `message.completed`'s content when one came (it
/// replaces what the deltas built), else the longest text a tab assembled.
pub fn shown(a: &AnswerRec) -> &str {
    if let Some((_, content)) = a.tabs.iter().find_map(|t| t.completed.as_ref()) {
        return content;
    }
    a.tabs
        .iter()
        .map(|t| t.text.as_str())
        .max_by_key(|t| t.len())
        .unwrap_or("")
}

pub fn classify(a: &AnswerRec, stored: &ReadBack) -> Class {
    let s = match stored {
        ReadBack::Found(s) => s,
        ReadBack::Missing => return Class::Lost(Lost::Missing),
        ReadBack::Unread(_) => return Class::Lost(Lost::Unread),
    };
    let shown = shown(a);
    match s.status.as_str() {
        "streaming" => Class::Lost(Lost::Streaming),
        "complete" if s.content == shown => Class::Complete,
        "complete" => Class::Lost(Lost::Differs),
        _ if s.content.is_empty() && !shown.is_empty() => Class::Lost(Lost::Empty),
        _ => Class::Interrupted {
            prefix: shown.starts_with(&s.content),
        },
    }
}

/// Whether the server gave the answer's unit back (docs/api.md, GET /api/usage/limits):
/// an interrupted answer always; one that failed or was cancelled before any delta. The
/// tabs' view stands in for "a delta went out".
fn refunded(a: &AnswerRec, stored: Option<&ReadBack>) -> bool {
    match a.finish.as_deref() {
        Some("interrupted") => true,
        Some("error") | Some("cancelled") => !a.any_text(),
        Some(_) => false,
        // No tab heard the end: judge by what was stored.
        None => {
            matches!(stored, Some(ReadBack::Found(s)) if s.status == "error" && s.content.is_empty() && !a.any_text())
        }
    }
}

/// The figures of one phase.
#[derive(Debug, Default, Serialize)]
pub struct Row {
    pub fault: String,
    pub skipped: Option<String>,
    pub notes: Vec<String>,
    /// Seconds from the fault's start to its end (the outage), and of the whole phase.
    pub fault_secs: Option<f64>,
    pub phase_secs: f64,
    pub sends: u64,
    /// Sends that continued a conversation (the others started one).
    pub follow_ups: u64,
    pub accepted: u64,
    pub refused: u64,
    pub refused_by_code: BTreeMap<String, u64>,
    pub unanswered: u64,
    /// Of the unanswered: the sending tab's socket closed before a verdict.
    pub unanswered_socket_closed: u64,
    /// Of the unanswered: a verdict came, after the limit.
    pub answered_late: u64,
    /// The `clientId`s of the unanswered (the first 20), to look for in the logs.
    pub unanswered_ids: Vec<String>,
    /// Sends due while neither of the user's tabs was connected (not sent).
    pub not_sent: u64,
    /// `error` frames with the `clientId` after the send was accepted, by code.
    pub failed_after_accept: BTreeMap<String, u64>,
    pub answers: u64,
    pub complete: u64,
    pub interrupted: u64,
    pub interrupted_prefix: u64,
    pub lost: u64,
    pub lost_by_reason: BTreeMap<String, u64>,
    /// Why conversations could not be read back (their answers count as lost, `unread`).
    pub read_errors: BTreeMap<String, u64>,
    /// How the answers ended for the tabs (`message.completed`'s finish reason, or none).
    pub finish_by_reason: BTreeMap<String, u64>,
    /// Deltas a tab never got, neither as a delta nor in a snapshot (a gap in `seq`),
    /// summed over tabs and answers; the answers with any; deltas that came twice.
    pub seq_gaps: u64,
    pub answers_with_gaps: u64,
    pub duplicates: u64,
    /// Tab × answer pairs where the tab came back after the answer started and joined
    /// it mid-stream (not gaps).
    pub joined_mid_stream: u64,
    /// Tab × answer pairs where the tab saw text and never its `message.completed`.
    pub completed_missing: u64,
    /// Tab × answer pairs whose deltas (and snapshots) did not add up to the completed
    /// text, where the tab was not waiting for a snapshot.
    pub tab_text_mismatch: u64,
    /// `conversation.open` sent after a gap.
    pub resyncs: u64,
    /// The first tab × answer pairs with a gap, to tell where deltas went missing.
    pub gap_samples: Vec<GapSample>,
    /// The server's count minus the harness's, summed over users, and the largest one
    /// user's (by size, with its sign); none when a counter could not be read.
    pub quota_drift_total: Option<i64>,
    pub quota_drift_max: Option<i64>,
    pub users_drifting: u64,
    /// Milliseconds from the fault's end to the first delta of a send accepted after it
    /// and answered to the end, per instance (A, B).
    pub recover_ms: [Option<u64>; 2],
    pub tab_drops: u64,
    /// The close codes and reasons of the drops.
    pub drops_by_reason: BTreeMap<String, u64>,
    pub reconnects: u64,
    pub connect_failures: u64,
    pub connect_failures_by_reason: BTreeMap<String, u64>,
    /// `error` frames not about a send (`conversation.open`, …), by code.
    pub other_errors: BTreeMap<String, u64>,
}

fn bump(map: &mut BTreeMap<String, u64>, key: &str) {
    *map.entry(key.to_owned()).or_default() += 1;
}

/// The phase `t` falls in: the last one started by then.
fn phase_of(phases: &[Phase], t: Instant) -> Option<usize> {
    phases.iter().rposition(|p| p.start <= t)
}

/// A connect failure's reason without what varies (addresses, ports).
fn reason_kind(reason: &str) -> String {
    let r = reason.split(':').next().unwrap_or(reason).trim();
    r.chars().take(60).collect()
}

pub fn rows(phases: &[Phase], books: &[Book], stored: &HashMap<String, ReadBack>) -> Vec<Row> {
    let mut rows: Vec<Row> = phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let end = phases.get(i + 1).map_or(p.recovery_end, |n| n.start);
            Row {
                fault: p.fault.clone(),
                skipped: p.skipped.clone(),
                notes: p.notes.clone(),
                fault_secs: match (p.fault_start, p.fault_end) {
                    (Some(s), Some(e)) => Some(e.duration_since(s).as_secs_f64()),
                    _ => None,
                },
                phase_secs: end.duration_since(p.start).as_secs_f64(),
                ..Row::default()
            }
        })
        .collect();
    let mut expected: Vec<Vec<i64>> = vec![vec![0; books.len()]; phases.len()];
    for (u, book) in books.iter().enumerate() {
        for s in &book.sends {
            let Some(p) = phase_of(phases, s.sent_at) else {
                continue;
            };
            let row = &mut rows[p];
            row.sends += 1;
            row.follow_ups += u64::from(s.follow_up);
            let within = |t: Instant| t.duration_since(s.sent_at) <= ANSWER_LIMIT;
            match (&s.refused, s.accepted_at) {
                (Some((t, code)), _) if within(*t) => {
                    row.refused += 1;
                    bump(&mut row.refused_by_code, code);
                }
                (_, Some(t)) if within(t) => row.accepted += 1,
                (refused, accepted) => {
                    row.unanswered += 1;
                    if row.unanswered_ids.len() < 20 {
                        row.unanswered_ids.push(s.client_id.clone());
                    }
                    if s.socket_closed {
                        row.unanswered_socket_closed += 1;
                    }
                    if refused.is_some() || accepted.is_some() {
                        row.answered_late += 1;
                    }
                }
            }
            if let Some(code) = &s.late_error {
                bump(&mut row.failed_after_accept, code);
            }
            // The quota counts every send the server accepted, late or not.
            if s.accepted_at.is_some() {
                let answer = s
                    .answer
                    .as_ref()
                    .and_then(|id| book.answers.get(id).map(|a| (id, a)));
                let back = match answer {
                    Some((id, a)) => refunded(a, stored.get(id)),
                    // Failed after counting, before its answer was announced: given back.
                    None => s.late_error.is_some(),
                };
                if !back {
                    expected[p][u] += 1;
                }
            }
        }
        for &t in &book.not_sent {
            if let Some(p) = phase_of(phases, t) {
                rows[p].not_sent += 1;
            }
        }
        for (t, code) in &book.other_errors {
            if let Some(p) = phase_of(phases, *t) {
                bump(&mut rows[p].other_errors, code);
            }
        }
        for (t, _, why) in &book.drops {
            if let Some(p) = phase_of(phases, *t) {
                rows[p].tab_drops += 1;
                bump(&mut rows[p].drops_by_reason, why);
            }
        }
        for (t, _) in &book.reconnects {
            if let Some(p) = phase_of(phases, *t) {
                rows[p].reconnects += 1;
            }
        }
        for (t, _, reason) in &book.connect_failures {
            if let Some(p) = phase_of(phases, *t) {
                rows[p].connect_failures += 1;
                bump(&mut rows[p].connect_failures_by_reason, &reason_kind(reason));
            }
        }
        for (id, a) in &book.answers {
            let born = a.send.map_or(a.first_seen, |i| book.sends[i].sent_at);
            let Some(p) = phase_of(phases, born) else { continue };
            let row = &mut rows[p];
            row.answers += 1;
            bump(&mut row.finish_by_reason, a.finish.as_deref().unwrap_or("none"));
            let back = stored
                .get(id)
                .cloned()
                .unwrap_or_else(|| ReadBack::Unread("not read".into()));
            if let ReadBack::Unread(why) = &back {
                bump(&mut row.read_errors, why);
            }
            match classify(a, &back) {
                Class::Complete => row.complete += 1,
                Class::Interrupted { prefix } => {
                    row.interrupted += 1;
                    row.interrupted_prefix += u64::from(prefix);
                }
                Class::Lost(why) => {
                    row.lost += 1;
                    bump(&mut row.lost_by_reason, &format!("{why:?}").to_lowercase());
                }
            }
            let mut gapped = false;
            for (tab, t) in a.tabs.iter().enumerate() {
                let missing = t.missing();
                if missing > 0 && row.gap_samples.len() < 10 {
                    row.gap_samples.push(GapSample {
                        answer: id.clone(),
                        tab,
                        answer_instance: a.send.map(|i| book.sends[i].instance),
                        lost: missing,
                        first_seq: t.first_seq,
                        deltas: t.deltas,
                        snapshots: t.snapshots,
                        completed: t.completed.is_some(),
                    });
                }
                row.seq_gaps += missing;
                row.duplicates += t.duplicates;
                row.resyncs += u64::from(t.resyncs);
                row.joined_mid_stream += u64::from(t.joined);
                gapped |= missing > 0;
                let saw_text = t.deltas > 0 || !t.text.is_empty();
                match &t.completed {
                    None if saw_text => row.completed_missing += 1,
                    Some((_, content)) if saw_text && !t.stale && t.text != *content => {
                        row.tab_text_mismatch += 1
                    }
                    _ => {}
                }
            }
            row.answers_with_gaps += u64::from(gapped);
        }
    }
    for ((phase, row), expected) in phases.iter().zip(rows.iter_mut()).zip(&expected) {
        let mut total = 0i64;
        let mut max = 0i64;
        let mut known = true;
        for (u, want) in expected.iter().enumerate() {
            let (Some(Some(before)), Some(Some(after))) =
                (phase.usage_before.get(u), phase.usage_after.get(u))
            else {
                known = false;
                continue;
            };
            let drift = (after - before) - want;
            total += drift;
            if drift.abs() > max.abs() {
                max = drift;
            }
            row.users_drifting += u64::from(drift != 0);
        }
        if known && !books.is_empty() {
            row.quota_drift_total = Some(total);
            row.quota_drift_max = Some(max);
        }
        if let Some(end) = phase.fault_end {
            row.recover_ms = [0, 1].map(|inst| recovery(books, inst, end, phase.recovery_end));
        }
    }
    rows
}

/// From `end` (the fault's end) to the first delta of a send on `instance` accepted
/// after it, before `until`, whose answer completed (`stop`).
pub fn recovery(books: &[Book], instance: usize, end: Instant, until: Instant) -> Option<u64> {
    books
        .iter()
        .filter_map(|b| first_answered(b, instance, end, until))
        .min()
        .map(|t| t.duration_since(end).as_millis() as u64)
}

/// The first delta of one user's first send on `instance` accepted after `end` (and
/// sent before `until`) whose answer completed.
pub fn first_answered(b: &Book, instance: usize, end: Instant, until: Instant) -> Option<Instant> {
    b.sends
        .iter()
        .filter(|s| s.instance == instance && s.sent_at < until)
        .filter(|s| s.accepted_at.is_some_and(|t| t >= end))
        .filter_map(|s| {
            let a = b.answers.get(s.answer.as_ref()?)?;
            (a.finish.as_deref() == Some("stop")).then_some(a.first_delta_at?)
        })
        .min()
}

fn count_codes(map: &BTreeMap<String, u64>) -> String {
    if map.is_empty() {
        return "–".into();
    }
    map.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn ms(v: Option<u64>) -> String {
    match v {
        Some(ms) => format!("{:.1} s", ms as f64 / 1000.0),
        None => "never".into(),
    }
}

/// The markdown table of the rows, one line each.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| fault | sends: accepted / refused / unanswered | refused by code | answers: complete / interrupted / lost | seq gaps / duplicates | `completed` missing | quota drift: total / max per user | recovery A / B | notes |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        if let Some(why) = &r.skipped {
            out.push_str(&format!(
                "| {} | skipped: {} | | | | | | | |\n",
                r.fault,
                why.replace('|', "/")
            ));
            continue;
        }
        let unanswered = if r.unanswered == 0 {
            "0".to_owned()
        } else {
            format!(
                "**{}** ({} socket closed, {} late)",
                r.unanswered, r.unanswered_socket_closed, r.answered_late
            )
        };
        let interrupted = if r.interrupted == 0 {
            "0".to_owned()
        } else {
            format!("{} ({} prefix)", r.interrupted, r.interrupted_prefix)
        };
        let lost = if r.lost == 0 {
            "0".to_owned()
        } else {
            format!("**{}** ({})", r.lost, count_codes(&r.lost_by_reason))
        };
        let drift = match (r.quota_drift_total, r.quota_drift_max) {
            (Some(t), Some(m)) => format!("{t:+} / {m:+}"),
            _ => "unread".into(),
        };
        let recovery = if r.fault_secs.is_some() {
            format!("{} / {}", ms(r.recover_ms[0]), ms(r.recover_ms[1]))
        } else {
            "–".into()
        };
        let mut notes = r.notes.clone();
        if r.answers_with_gaps > 0 {
            notes.push(format!(
                "gaps in {} answers, {} snapshots asked after a gap",
                r.answers_with_gaps, r.resyncs
            ));
        }
        if !r.failed_after_accept.is_empty() {
            notes.push(format!(
                "failed after accept: {}",
                count_codes(&r.failed_after_accept)
            ));
        }
        if r.not_sent > 0 {
            notes.push(format!("{} sends due with no tab connected", r.not_sent));
        }
        if r.tab_drops > 0 {
            notes.push(format!(
                "{} tab drops ({}), {} reconnects",
                r.tab_drops,
                count_codes(&r.drops_by_reason),
                r.reconnects
            ));
        }
        if r.tab_text_mismatch > 0 {
            notes.push(format!("{} tab texts ≠ completed", r.tab_text_mismatch));
        }
        if !r.other_errors.is_empty() {
            notes.push(format!("other errors: {}", count_codes(&r.other_errors)));
        }
        out.push_str(&format!(
            "| {} | {} / {} / {} | {} | {} / {} / {} | {} / {} | {} | {} | {} | {} |\n",
            r.fault,
            r.accepted,
            r.refused,
            unanswered,
            count_codes(&r.refused_by_code),
            r.complete,
            interrupted,
            lost,
            r.seq_gaps,
            r.duplicates,
            r.completed_missing,
            drift,
            recovery,
            notes.join("; ").replace('|', "/"),
        ));
    }
    out
}

/// Whether the goal of the issue holds for a row: nothing unanswered, nothing lost, no
/// quota drift, recovery within `limit` on both instances.
pub fn meets_goal(r: &Row, limit: Duration) -> bool {
    let recovered = r.fault_secs.is_none()
        || r.recover_ms
            .iter()
            .all(|m| m.is_some_and(|m| m <= limit.as_millis() as u64));
    r.skipped.is_some()
        || (r.unanswered == 0
            && r.lost == 0
            && r.quota_drift_total == Some(0)
            && r.users_drifting == 0
            && recovered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored(status: &str, content: &str) -> ReadBack {
        ReadBack::Found(Stored {
            status: status.into(),
            content: content.into(),
        })
    }

    /// A book where user 0 sent once on A, and the answer streamed "Hello" to both tabs.
    fn one_answer(complete: bool) -> Book {
        let mut b = Book::new(0);
        let t = Instant::now();
        b.on_up(0, t);
        b.on_up(1, t);
        b.next_send(t).unwrap();
        for tab in 0..2 {
            for (role, id) in [("user", "q"), ("assistant", "a")] {
                b.on_frame(
                    tab,
                    t,
                    &json!({"type":"message.created","conversationId":"c","clientId":"f0-0",
                    "message":{"_id":id,"role":role,"content":""}}),
                );
            }
            for (seq, d) in [(1, "Hel"), (2, "lo")] {
                b.on_frame(
                    tab,
                    t,
                    &json!({"type":"message.delta","conversationId":"c","messageId":"a","seq":seq,"delta":d}),
                );
            }
            if complete {
                b.on_frame(
                    tab,
                    t,
                    &json!({"type":"message.completed","conversationId":"c","finishReason":"stop",
                    "message":{"_id":"a","role":"assistant","content":"Hello"}}),
                );
            }
        }
        b
    }

    #[test]
    fn answers_are_classified_against_what_tabs_showed() {
        let b = one_answer(true);
        let a = &b.answers["a"];
        assert_eq!(classify(a, &stored("complete", "Hello")), Class::Complete);
        assert_eq!(
            classify(a, &stored("complete", "Hell")),
            Class::Lost(Lost::Differs)
        );
        assert_eq!(
            classify(a, &stored("streaming", "")),
            Class::Lost(Lost::Streaming)
        );
        assert_eq!(classify(a, &stored("error", "")), Class::Lost(Lost::Empty));
        assert_eq!(
            classify(a, &stored("error", "Hel")),
            Class::Interrupted { prefix: true }
        );
        assert_eq!(
            classify(a, &stored("error", "Jel")),
            Class::Interrupted { prefix: false }
        );
        assert_eq!(classify(a, &ReadBack::Missing), Class::Lost(Lost::Missing));
        // Nothing shown, nothing stored: the answer failed before its first word.
        let mut silent = a.clone();
        silent.tabs = Default::default();
        assert_eq!(
            classify(&silent, &stored("error", "")),
            Class::Interrupted { prefix: true }
        );
    }

    #[test]
    fn a_phase_counts_sends_answers_drift_and_recovery() {
        let b = one_answer(true);
        let t0 = b.sends[0].sent_at;
        let phase = Phase {
            fault: "redis-kill".into(),
            start: t0 - Duration::from_millis(1),
            fault_start: Some(t0 - Duration::from_millis(1)),
            fault_end: Some(t0 - Duration::from_millis(1)),
            recovery_end: t0 + Duration::from_secs(20),
            skipped: None,
            notes: vec![],
            usage_before: vec![Some(4)],
            usage_after: vec![Some(6)],
        };
        let mut back = HashMap::new();
        back.insert("a".to_owned(), stored("complete", "Hello"));
        let rows = rows(&[phase], &[b], &back);
        let r = &rows[0];
        assert_eq!((r.sends, r.accepted, r.refused, r.unanswered), (1, 1, 0, 0));
        assert_eq!((r.answers, r.complete, r.lost), (1, 1, 0));
        assert_eq!((r.seq_gaps, r.duplicates, r.completed_missing), (0, 0, 0));
        // The server counted 2, the harness saw 1 accepted: one unit too many.
        assert_eq!(
            (r.quota_drift_total, r.quota_drift_max, r.users_drifting),
            (Some(1), Some(1), 1)
        );
        assert!(r.recover_ms[0].is_some() && r.recover_ms[1].is_none());
        assert!(!meets_goal(r, Duration::from_secs(5)));
        let md = table(&rows);
        assert!(md.contains("| redis-kill | 1 / 0 / 0 |"), "{md}");
        assert!(md.contains("+1 / +1"), "{md}");
    }

    #[test]
    fn a_tab_that_never_heard_the_end_is_counted_and_refunds_follow_the_rules() {
        let b = one_answer(false);
        let a = &b.answers["a"];
        assert_eq!(shown(a), "Hello");
        assert_eq!(
            classify(a, &stored("streaming", "")),
            Class::Lost(Lost::Streaming)
        );
        // Text went out: an error keeps the unit; an interrupted answer gives it back.
        let mut a2 = a.clone();
        a2.finish = Some("error".into());
        assert!(!refunded(&a2, None));
        a2.finish = Some("interrupted".into());
        assert!(refunded(&a2, None));
        let mut silent = a.clone();
        silent.tabs = Default::default();
        assert!(refunded(&silent, Some(&stored("error", ""))));
        assert!(!refunded(&silent, Some(&stored("streaming", ""))));
    }
}
