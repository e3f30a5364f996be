//! Answers whose instance died. Every running answer has a lease in Redis that its
//! instance renews ([`RedisRelay::tend_leases`]); when one lapses, another instance ends
//! the answer as interrupted with the text its tabs got (the copy its hub keeps of
//! answers running elsewhere), so no answer stays `streaming` with its text lost, every
//! tab learns it ended, and the conversation takes new messages again.
//!
//! An instance that kept a copy takes a lapsed answer over at once; any instance does
//! after another lease (then with the text stored so far: none, if no instance watched
//! the user).
//!
//! The same loop tells this instance's tabs the ends they missed: an answer running
//! elsewhere that ended while Redis was away (its end could not travel) leaves a copy
//! here that stops growing; once Redis answers, it is looked up and its tabs get its
//! `message.completed` from the database.

use std::sync::Arc;

use chat_actors::hub::{CopyOf, Event, IdleCopies};
use chat_contract::frames::{ServerFrame, Snapshot};
use chat_contract::states::{FinishReason, MessageStatus, Service};

use crate::chat::answer::STORE_FOR;
use crate::chat::Chat;
use crate::outage::until_available;
use crate::realtime::redis_relay::{Lapsed, RedisRelay};
use crate::views::message_view;

/// Renews this instance's leases and takes over lapsed ones, for as long as the server
/// runs (with Redis; without it there is one instance, whose answers a restart closes).
pub fn spawn(chat: Arc<Chat>) {
    let Some(relay) = chat.realtime.relay.clone() else {
        return;
    };
    actix_web::rt::spawn(async move {
        let mut ticks = tokio::time::interval(relay.lease_tick());
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // One line when leases cannot be tended, one when they can again.
        let mut failing = false;
        loop {
            ticks.tick().await;
            match tend(&chat, &relay).await {
                Ok(()) if failing => {
                    failing = false;
                    tracing::info!("answer leases are renewed again");
                }
                Ok(()) => {}
                Err(e) if !failing => {
                    failing = true;
                    tracing::warn!(error = %format!("{e:#}"), "answer leases cannot be renewed (Redis away?)");
                }
                Err(_) => {}
            }
        }
    });
}

async fn tend(chat: &Chat, relay: &RedisRelay) -> anyhow::Result<()> {
    take_over_lapsed(chat, relay).await?;
    tell_missed_ends(chat, relay).await
}

/// Ends answers whose instance stopped renewing their leases.
async fn take_over_lapsed(chat: &Chat, relay: &RedisRelay) -> anyhow::Result<()> {
    for lapsed in relay.tend_leases().await? {
        let hub = chat.realtime.hubs.of(&lapsed.user);
        let ask = |take| CopyOf {
            user: lapsed.user.clone(),
            conversation_id: lapsed.conversation_id.clone(),
            message_id: lapsed.message_id.clone(),
            take,
        };
        let kept = hub.send(ask(false)).await.ok().flatten().is_some();
        if !kept && lapsed.overdue < relay.lease() {
            continue;
        }
        if !relay.take_over(&lapsed).await? {
            continue;
        }
        let copy = hub.send(ask(true)).await.ok().flatten();
        tracing::warn!(
            conversation = %lapsed.conversation_id,
            chars = copy.as_ref().map_or(0, |c| c.content.len()),
            "an answer's instance stopped renewing its lease: storing it as interrupted"
        );
        if let Err(e) = end(chat, &lapsed, copy).await {
            tracing::error!(error = %format!("{e:#}"), conversation = %lapsed.conversation_id, "ending an orphaned answer");
        }
    }
    Ok(())
}

/// Stores the answer as interrupted with the copy's text, releases what its instance
/// held (the conversation's claim, an answer slot, the response it counted: the user is
/// not to blame), and tells every tab.
async fn end(chat: &Chat, lapsed: &Lapsed, copy: Option<Snapshot>) -> anyhow::Result<()> {
    let user = &lapsed.user;
    let content = copy.map(|c| c.content);
    let interrupted = until_available(STORE_FOR, "storing an orphaned answer", || {
        chat.db
            .interrupt_message(&lapsed.message_id, content.as_deref(), chat.now())
    })
    .await?;
    if !interrupted {
        // Its instance stored it after all (and released the conversation, which may
        // hold another answer's claim by now).
        return Ok(());
    }
    // What its own end would have done: the claim goes, other instances drop their copies.
    chat.realtime.hubs.publish(
        user,
        Event::Ended {
            conversation_id: lapsed.conversation_id.clone(),
        },
    );
    if let Some(message) = chat.db.message(&lapsed.message_id).await? {
        let frame = ServerFrame::MessageCompleted {
            conversation_id: lapsed.conversation_id.clone(),
            message: message_view(&message),
            finish_reason: FinishReason::Interrupted,
        };
        chat.realtime.publish(user, &frame);
    }
    chat.realtime.answers.give_back(user).await;
    chat.quotas.refund(user, Service::Responses).await?;
    chat.announce.usage(user).await;
    Ok(())
}

/// Tells this instance's tabs of answers running elsewhere that ended while their end
/// could not reach here (Redis was away, or the relay's queue full): a copy that stopped
/// growing, of an answer Redis no longer has as running and the database has as ended,
/// gets its `message.completed` from the stored message, on this instance only (each
/// instance tells its own tabs).
async fn tell_missed_ends(chat: &Chat, relay: &RedisRelay) -> anyhow::Result<()> {
    let hubs = &chat.realtime.hubs;
    let mut idle = Vec::new();
    for hub in hubs.started() {
        let ask = IdleCopies { idle: relay.lease() };
        idle.extend(hub.send(ask).await.unwrap_or_default());
    }
    let answers: Vec<(String, String)> = idle.iter().map(|(_, c, m)| (c.clone(), m.clone())).collect();
    let running = relay.still_running(&answers).await?;
    for ((user, conversation_id, message_id), running) in idle.into_iter().zip(running) {
        if running {
            continue;
        }
        let Some(message) = chat.db.message(&message_id).await? else {
            continue;
        };
        if message.status == MessageStatus::Streaming {
            // Not ended yet (being stored, or its instance died: its lease says).
            continue;
        }
        let take = CopyOf {
            user: user.clone(),
            conversation_id: conversation_id.clone(),
            message_id,
            take: true,
        };
        if hubs.of(&user).send(take).await.ok().flatten().is_none() {
            // Its end came meanwhile.
            continue;
        }
        let finish_reason = message.finish_reason.unwrap_or(FinishReason::Stop);
        let frame = ServerFrame::MessageCompleted {
            conversation_id,
            message: message_view(&message),
            finish_reason,
        };
        hubs.deliver_here(&user, &frame);
    }
    Ok(())
}
