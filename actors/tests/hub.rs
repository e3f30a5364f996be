//! The hub with a relay to other instances: what it shares with them and when, and the
//! copies it keeps of the answers they run. Here rather than beside the hub because it
//! streams answers too (`generation` imports `hub`, never the other way).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chat_actors::generation::{Generations, Reply, Start};
use chat_actors::hub::{
    Connect, Disconnect, Event, FanOut, FromRemote, Hubs, Presence, RemoteSnapshot, SessionCount,
};
use chat_actors::messages::Deliver;
use chat_actors::shard::Shards;
use chat_actors::tab::{TabFrames, TabSink};
use chat_contract::frames::{ServerFrame, Snapshot};
use futures_util::stream::{self, StreamExt};
use serde_json::Value;

/// Writes down what the hub asks of a relay.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl Recorder {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl FanOut for Recorder {
    fn publish(&self, user: &str, event: &Event) {
        let what = match event {
            Event::Frame(d) => match &d.delta {
                Some(meta) => format!("delta {} {}", meta.seq, meta.text),
                None => "frame".to_owned(),
            },
            Event::Cancel { .. } => "cancel".to_owned(),
            Event::Ended { .. } => unreachable!("ends go to ended"),
            Event::Presence(p) => format!("{p:?}"),
        };
        self.0.lock().unwrap().push(format!("{user}: {what}"));
    }

    fn ended(&self, user: &str, _: &str, heard: bool) {
        let line = format!("{user}: ended{}", if heard { "" } else { " quietly" });
        self.0.lock().unwrap().push(line);
    }

    fn watch(&self, user: &str, watching: bool) {
        self.0.lock().unwrap().push(format!("{user}: watch {watching}"));
    }

    fn welcome(&self, user: &str, answers: &[Snapshot]) {
        for a in answers {
            let line = format!("{user}: welcome {} {} {}", a.conversation_id, a.seq, a.content);
            self.0.lock().unwrap().push(line);
        }
    }

    fn settle(&self) -> Duration {
        Duration::ZERO
    }
}

async fn delta(tab: &mut TabFrames) -> (u64, String) {
    let text = tokio::time::timeout(Duration::from_secs(10), tab.next_text())
        .await
        .expect("a delta")
        .unwrap();
    let frame: Value = serde_json::from_str(&text).unwrap();
    (
        frame["seq"].as_u64().unwrap(),
        frame["delta"].as_str().unwrap().to_owned(),
    )
}

fn remote_delta(origin: &str, message: &str, seq: u64, text: &str) -> FromRemote {
    let frame = ServerFrame::MessageDelta {
        conversation_id: "c1".into(),
        message_id: message.into(),
        seq,
        delta: text.into(),
        emitted_at: None,
    };
    FromRemote {
        user: "u1".into(),
        origin: origin.into(),
        event: Event::Frame(Deliver::frame(&frame)),
    }
}

#[actix_rt::test]
async fn a_hub_keeps_the_text_of_answers_running_elsewhere_as_its_tabs_got_it() {
    let shards = Shards::start(1);
    let hubs = Hubs::start(&shards, Some(Arc::new(Recorder::default())), 4);
    let hub = hubs.of("u1").clone();
    let (sink, _tab) = TabSink::detached(64);
    let connect = Connect {
        user: "u1".into(),
        session: 1,
        sink,
    };
    assert!(hub.send(connect).await.unwrap());
    let snapshot = |origin: &str| RemoteSnapshot {
        user: "u1".into(),
        conversation_id: "c1".into(),
        origin: origin.into(),
    };
    let text = |message: &str, seq: u64, content: &str| Snapshot {
        conversation_id: "c1".into(),
        message_id: message.into(),
        seq,
        content: content.into(),
    };
    let presence = |origin: &str, p: Presence| FromRemote {
        user: "u1".into(),
        origin: origin.into(),
        event: Event::Presence(p),
    };

    // Instance b has not answered this one's announcement: a reader waits for its
    // answer, whose text counts, not the deltas heard before it (they are in it).
    let mut waiting = Box::pin(hub.send(snapshot("b")));
    let early = tokio::time::timeout(Duration::from_millis(50), &mut waiting).await;
    assert!(early.is_err(), "it waits for b to answer");
    hub.send(remote_delta("b", "m1", 3, "c")).await.unwrap();
    let here = Presence::Here("b".into(), vec![text("m1", 3, "abc")]);
    hub.send(presence("b", here)).await.unwrap();
    assert_eq!(waiting.await.unwrap(), Some(text("m1", 3, "abc")));

    // Then every delta adds to it, once.
    hub.send(remote_delta("b", "m1", 4, "d")).await.unwrap();
    hub.send(remote_delta("b", "m1", 4, "d")).await.unwrap();
    assert_eq!(
        hub.send(snapshot("b")).await.unwrap(),
        Some(text("m1", 4, "abcd"))
    );
    // A lost delta leaves no copy rather than a wrong one.
    hub.send(remote_delta("b", "m1", 6, "f")).await.unwrap();
    assert_eq!(hub.send(snapshot("b")).await.unwrap(), None);

    // The next answer starts a copy with its first delta; its end drops it.
    hub.send(remote_delta("b", "m2", 1, "x")).await.unwrap();
    assert_eq!(hub.send(snapshot("b")).await.unwrap(), Some(text("m2", 1, "x")));
    let ended = FromRemote {
        user: "u1".into(),
        origin: "b".into(),
        event: Event::Ended {
            conversation_id: "c1".into(),
        },
    };
    hub.send(ended).await.unwrap();
    assert_eq!(hub.send(snapshot("b")).await.unwrap(), None);

    // An instance that leaves takes its answers' copies with it.
    hub.send(remote_delta("b", "m3", 1, "y")).await.unwrap();
    let joined = Presence::Joined("c".into());
    hub.send(presence("c", joined)).await.unwrap();
    hub.send(presence("b", Presence::Left("b".into()))).await.unwrap();
    assert_eq!(hub.send(snapshot("c")).await.unwrap(), None);
    shards.stop();
}

#[actix_rt::test]
async fn a_user_is_shared_with_other_instances_only_while_one_watches() {
    let shards = Shards::start(1);
    let relay = Arc::new(Recorder::default());
    let hubs = Hubs::start(&shards, Some(relay.clone()), 4);
    let generations = Generations::new(shards.clone(), hubs.clone());
    let hub = hubs.of("u1").clone();
    let presence = |p: Presence| FromRemote {
        user: "u1".into(),
        origin: "b".into(),
        event: Event::Presence(p),
    };
    let (sink, mut tab) = TabSink::detached(64);
    let connect = Connect {
        user: "u1".into(),
        session: 1,
        sink,
    };
    assert!(hub.send(connect).await.unwrap());
    // Until its announcement is out, the hub cannot know who watches: it shares.
    hubs.publish_frame(
        "u1",
        &ServerFrame::ConversationDeleted {
            conversation_id: "c0".into(),
        },
    );
    tab.next_text().await.unwrap();
    assert_eq!(relay.take(), ["u1: watch true", "u1: frame"]);
    hub.send(presence(Presence::Announced)).await.unwrap();

    // Nobody answered: the answer streams to the tab here and nowhere else.
    let (chunks, model) = tokio::sync::mpsc::unbounded_channel::<String>();
    let model = stream::unfold(
        model,
        |mut rx| async move { rx.recv().await.map(|c| (Ok(c), rx)) },
    );
    let started = generations.start(Start {
        user: "u1".into(),
        conversation_id: "c1".into(),
        message_id: "m1".into(),
        model: "demo".into(),
        stream: Reply::SelfLimited(model.boxed()),
        intro: Vec::new(),
        batch: Duration::from_millis(1),
        timestamps: false,
        on_done: Box::new(|_| Box::pin(async {})),
    });
    assert!(started.is_ok());
    chunks.send("Hello".into()).unwrap();
    assert_eq!(delta(&mut tab).await, (1, "Hello".to_owned()));
    assert_eq!(relay.take(), Vec::<String>::new());

    // Another instance joins: it gets the text so far, then every delta.
    hub.send(presence(Presence::Joined("b".into()))).await.unwrap();
    assert_eq!(relay.take(), ["u1: welcome c1 1 Hello"]);
    chunks.send(" world".into()).unwrap();
    assert_eq!(delta(&mut tab).await, (2, " world".to_owned()));
    assert_eq!(relay.take(), ["u1: delta 2  world"]);

    // It leaves: nothing more goes out but the answer's end.
    hub.send(presence(Presence::Left("b".into()))).await.unwrap();
    chunks.send("!".into()).unwrap();
    assert_eq!(delta(&mut tab).await, (3, "!".to_owned()));
    drop(chunks);
    // The model's end: the answer ends, and its claim goes (nobody else hears of it).
    for _ in 0..100 {
        if !generations.is_running("c1") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!generations.is_running("c1"));
    hub.send(SessionCount { user: "u1".into() }).await.unwrap();
    assert_eq!(relay.take(), ["u1: ended quietly"]);

    // A user not watched here may be watched anywhere: shared.
    hubs.publish_frame(
        "u2",
        &ServerFrame::ConversationDeleted {
            conversation_id: "c0".into(),
        },
    );
    hub.send(Disconnect {
        user: "u1".into(),
        session: 1,
    })
    .await
    .unwrap();
    assert_eq!(relay.take(), ["u2: frame", "u1: watch false"]);
    shards.stop();
}

#[actix_rt::test]
async fn a_cancel_another_instance_publishes_stops_the_answer_running_here() {
    let shards = Shards::start(1);
    let hubs = Hubs::start(&shards, Some(Arc::new(Recorder::default())), 4);
    // The registry tells the hubs how to stop its answers itself.
    let generations = Generations::new(shards.clone(), hubs.clone());
    let (done, outcome) = tokio::sync::oneshot::channel();
    let started = generations.start(Start {
        user: "u1".into(),
        conversation_id: "c1".into(),
        message_id: "m1".into(),
        model: "demo".into(),
        stream: Reply::SelfLimited(stream::pending().boxed()),
        intro: Vec::new(),
        batch: Duration::from_millis(1),
        timestamps: false,
        on_done: Box::new(move |o| {
            let _ = done.send(o);
            Box::pin(async {})
        }),
    });
    assert!(started.is_ok());
    let cancel = FromRemote {
        user: "u1".into(),
        origin: "b".into(),
        event: Event::Cancel {
            conversation_id: "c1".into(),
        },
    };
    hubs.of("u1").send(cancel).await.unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(10), outcome)
        .await
        .expect("the answer was stopped")
        .unwrap();
    assert_eq!(outcome.finish, chat_contract::states::FinishReason::Cancelled);
    shards.stop();
}
