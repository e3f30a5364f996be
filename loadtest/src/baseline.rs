//! The floor to compare the server with: a bare `actix-ws` relay that speaks just enough
//! of the protocol for the harness (`ready`, `chat.send`, `message.created`,
//! `message.delta`, `message.completed`) with no auth, storage or quota. A `chat.send`
//! streams an answer at the demo model's pace, batched the same way, to every socket that
//! gave the same name in its Authorization header (a user's tabs).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use actix_ws::{AggregatedMessage, Session};
use futures_util::StreamExt;
use serde_json::json;

use crate::client::wall_us;

#[derive(Clone, Copy)]
pub struct Pace {
    pub tokens_per_sec: u32,
    pub reply_tokens: usize,
    pub batch: Duration,
}

#[derive(Default)]
struct Tabs {
    next_id: AtomicU64,
    by_user: Mutex<HashMap<String, Vec<(u64, Session)>>>,
}

impl Tabs {
    fn forget(&self, user: &str, id: u64) {
        let mut users = self.by_user.lock().expect("tabs lock");
        if let Some(list) = users.get_mut(user) {
            list.retain(|(tab, _)| *tab != id);
            if list.is_empty() {
                users.remove(user);
            }
        }
    }

    fn of(&self, user: &str) -> Vec<Session> {
        let users = self.by_user.lock().expect("tabs lock");
        users
            .get(user)
            .map(|t| t.iter().map(|(_, s)| s.clone()).collect())
            .unwrap_or_default()
    }
}

pub async fn serve(bind: &str, pace: Pace) -> anyhow::Result<()> {
    let tabs = web::Data::new(Tabs::default());
    eprintln!("baseline relay on ws://{bind}/api/ws");
    HttpServer::new(move || {
        App::new()
            .app_data(tabs.clone())
            .app_data(web::Data::new(pace))
            .route("/api/ws", web::get().to(socket))
    })
    .backlog(4096)
    .bind(bind)?
    .run()
    .await?;
    Ok(())
}

async fn socket(
    req: HttpRequest,
    body: web::Payload,
    tabs: web::Data<Tabs>,
    pace: web::Data<Pace>,
) -> actix_web::Result<HttpResponse> {
    let user = req
        .headers()
        .get("Authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let (response, mut session, incoming) = actix_ws::handle(&req, body)?;
    let id = tabs.next_id.fetch_add(1, Ordering::Relaxed);
    tabs.by_user
        .lock()
        .expect("tabs lock")
        .entry(user.clone())
        .or_default()
        .push((id, session.clone()));
    let pace = **pace;
    actix_web::rt::spawn(async move {
        let mut incoming = incoming.aggregate_continuations();
        let _ = session.text(r#"{"type":"ready"}"#).await;
        let mut answers = 0u64;
        while let Some(Ok(msg)) = incoming.next().await {
            match msg {
                AggregatedMessage::Text(text) => {
                    let Ok(frame) = serde_json::from_str::<serde_json::Value>(&text) else {
                        continue;
                    };
                    if frame["type"] == "chat.send" {
                        answers += 1;
                        let message_id = format!("{id}-{answers}");
                        let client_id = frame["clientId"].as_str().unwrap_or("").to_owned();
                        actix_web::rt::spawn(stream_answer(
                            tabs.clone(),
                            user.clone(),
                            client_id,
                            message_id,
                            pace,
                        ));
                    }
                }
                AggregatedMessage::Ping(bytes) => {
                    let _ = session.pong(&bytes).await;
                }
                AggregatedMessage::Close(_) => break,
                _ => {}
            }
        }
        tabs.forget(&user, id);
        let _ = session.close(None).await;
    });
    Ok(response)
}

async fn send_all(tabs: &Tabs, user: &str, text: &str) {
    for mut session in tabs.of(user) {
        let _ = session.text(text.to_owned()).await;
    }
}

/// The demo model's answer, at its pace, batched: a chunk opens a window of `batch`.
async fn stream_answer(
    tabs: web::Data<Tabs>,
    user: String,
    client_id: String,
    message_id: String,
    pace: Pace,
) {
    let created = json!({
        "type": "message.created", "clientId": client_id,
        "message": { "_id": message_id, "role": "assistant", "content": "" },
    });
    send_all(&tabs, &user, &created.to_string()).await;
    let period = Duration::from_secs_f64(1.0 / f64::from(pace.tokens_per_sec.max(1)));
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let (mut content, mut pending, mut seq) = (String::new(), String::new(), 0u64);
    let mut window: Option<(tokio::time::Instant, i64)> = None;
    let mut produced = 0;
    loop {
        let flush_at = window.map(|(at, _)| at);
        tokio::select! {
            _ = ticks.tick(), if produced < pace.reply_tokens => {
                produced += 1;
                if pending.is_empty() {
                    window = Some((tokio::time::Instant::now() + pace.batch, wall_us()));
                }
                pending.push_str("word ");
            }
            _ = async { tokio::time::sleep_until(flush_at.expect("guarded")).await }, if flush_at.is_some() => {
                seq += 1;
                let emitted = window.take().map(|(_, t)| t);
                let delta = json!({
                    "type": "message.delta", "messageId": message_id, "seq": seq,
                    "delta": pending, "emittedAt": emitted,
                });
                content.push_str(&pending);
                pending.clear();
                send_all(&tabs, &user, &delta.to_string()).await;
            }
        }
        if produced >= pace.reply_tokens && window.is_none() {
            break;
        }
    }
    let completed = json!({
        "type": "message.completed", "finishReason": "stop",
        "message": { "_id": message_id, "role": "assistant", "content": content },
    });
    send_all(&tabs, &user, &completed.to_string()).await;
}
