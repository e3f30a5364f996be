//! Metering: what every model call used and what it cost (issue 35). Each call (an
//! answer, a title, a web search's step, a document's or a question's embedding, an
//! image) is recorded once, when it ends, as a `model_calls` row: its model, its input
//! and output tokens as the provider counted them (or as we count them when it did not
//! say: a cut-off stream, a provider that never tells), and its cost at the catalogue's
//! prices (`config/models.toml`). The operator's stats are read from these rows.
//!
//! Recording never delays or fails what the user waits for: the row is made in the
//! background, and the rows of [`BATCH_EVERY`] are written together, so that under load
//! the calls cost the database a few commits a second rather than one or two an answer
//! (docs/performance.md, "Send path check for issue 35"). A failed write is logged, not
//! retried (docs/operations.md, "What answers cost").

use std::sync::Arc;
use std::time::Duration;

use chat_actors::model::{Turn, Usage};
use chat_contract::states::{CallOutcome, FinishReason, ModelCallKind, PlanType};

use crate::chat::context::ContextSizes;
use crate::clock::SharedClock;
use crate::db::model_calls::CallRow;
use crate::db::Db;
use crate::metrics;

/// How long a call's row waits for others to be written with.
pub const BATCH_EVERY: Duration = Duration::from_millis(250);

/// Records model calls. Cheap to clone.
#[derive(Clone)]
pub struct Meter {
    clock: SharedClock,
    /// The model catalogue: each model's tokenizer and prices.
    catalogue: Arc<ContextSizes>,
    /// To the writer of the rows.
    rows: tokio::sync::mpsc::UnboundedSender<CallRow>,
}

/// Writes the rows as they come: the first of a batch waits [`BATCH_EVERY`] for the
/// others, then all that came are stored, [`MAX_CALLS_AT_ONCE`] a statement.
async fn write_rows(db: Db, mut received: tokio::sync::mpsc::UnboundedReceiver<CallRow>) {
    use crate::db::model_calls::MAX_CALLS_AT_ONCE;
    while let Some(first) = received.recv().await {
        tokio::time::sleep(BATCH_EVERY).await;
        let mut batch = vec![first];
        while let Ok(row) = received.try_recv() {
            batch.push(row);
        }
        for rows in batch.chunks(MAX_CALLS_AT_ONCE) {
            if let Err(e) = db.insert_model_calls(rows).await {
                tracing::error!(error = %e, calls = rows.len(), "recording model calls");
            }
        }
    }
}

/// Adds the call to the Prometheus counters of tokens and cost (no-ops with metrics off).
fn count(row: &CallRow) {
    let (model, kind) = (row.model.clone(), row.kind.as_str());
    let tokens = |direction: &'static str, n: i64| {
        metrics::counter!(metrics::MODEL_TOKENS, "model" => model.clone(), "kind" => kind, "direction" => direction)
            .increment(n.max(0) as u64);
    };
    tokens("input", row.input_tokens);
    tokens("output", row.output_tokens);
    metrics::counter!(metrics::MODEL_COST, "model" => model.clone(), "kind" => kind)
        .increment(row.cost_nanos.max(0) as u64);
}

/// Whom a call is for: the user, and the answer it belongs to (none for a document's
/// embeddings).
#[derive(Debug, Clone)]
pub struct Payer {
    pub user_id: String,
    pub message_id: Option<String>,
}

/// What a call used.
#[derive(Debug)]
pub enum Used {
    /// As its provider said.
    Said(Usage),
    /// Not said: counted by us with the model's tokenizer (or its estimate), from what
    /// was sent and what came back.
    Count { prompt: Vec<Turn>, output: String },
}

impl Used {
    /// What the provider said, else our count of `prompt` and `output`.
    pub fn said_or_count(said: Option<Usage>, prompt: impl FnOnce() -> Vec<Turn>, output: &str) -> Used {
        match said {
            Some(usage) => Used::Said(usage),
            None => Used::Count {
                prompt: prompt(),
                output: output.to_owned(),
            },
        }
    }
}

/// A turn of a call that is not a chat (a search step's or an embedding's input), for
/// counting it.
pub fn text_turn(text: String) -> Turn {
    Turn {
        role: "user",
        content: text,
        images: Vec::new(),
    }
}

/// One model call, as it ended.
#[derive(Debug)]
pub struct Call {
    pub kind: ModelCallKind,
    pub model: String,
    pub used: Used,
    /// Images made (an image call).
    pub images: u64,
    pub outcome: CallOutcome,
}

/// How an answer's call ended, from how the answer did.
pub fn outcome_of(finish: FinishReason) -> CallOutcome {
    match finish {
        FinishReason::Stop => CallOutcome::Complete,
        FinishReason::Cancelled => CallOutcome::Cancelled,
        FinishReason::Error | FinishReason::Interrupted => CallOutcome::Error,
    }
}

impl Meter {
    /// A meter whose rows `db` stores (its writer runs until every meter is dropped).
    pub fn new(db: Db, clock: SharedClock, catalogue: Arc<ContextSizes>) -> Meter {
        let (rows, received) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(write_rows(db, received));
        Meter {
            clock,
            catalogue,
            rows,
        }
    }

    /// Records `call` for `payer` in the background.
    pub fn record(&self, payer: &Payer, call: Call) {
        let (meter, payer) = (self.clone(), payer.clone());
        tokio::spawn(async move {
            let row = meter.row(payer, call).await;
            count(&row);
            // Fails only once the writer is gone: the server is stopping.
            let _ = meter.rows.send(row);
        });
    }

    /// The row of `call`: its tokens (counted off the async workers when we count them:
    /// a long prompt takes milliseconds) and its cost.
    async fn row(&self, payer: Payer, call: Call) -> CallRow {
        let counter = self.catalogue.window(&call.model, 0).counter;
        let (usage, estimated) = match call.used {
            Used::Said(usage) => (usage, false),
            Used::Count { prompt, output } => {
                let counted = tokio::task::spawn_blocking(move || Usage {
                    input_tokens: prompt.iter().map(|t| counter.turn(t) as u64).sum(),
                    output_tokens: if output.is_empty() {
                        0
                    } else {
                        counter.text(&output) as u64
                    },
                })
                .await
                .unwrap_or_default();
                (counted, true)
            }
        };
        let price = self.catalogue.price(&call.model);
        let cost = price.cost(usage.input_tokens, usage.output_tokens, call.images);
        let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        CallRow {
            id: uuid::Uuid::now_v7().to_string(),
            at: self.clock.now_ms(),
            user_id: Some(payer.user_id),
            // Read from the subscription when stored.
            plan_type: PlanType::Free,
            kind: call.kind,
            model: call.model,
            message_id: payer.message_id,
            input_tokens: count(usage.input_tokens),
            output_tokens: count(usage.output_tokens),
            images: count(call.images),
            estimated,
            outcome: call.outcome,
            cost_nanos: cost,
        }
    }
}
