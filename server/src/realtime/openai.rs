//! Any OpenAI-compatible chat API (OpenAI, Ollama, vLLM, llama.cpp server) through
//! async-openai, streaming.

use async_openai::config::OpenAIConfig;
use async_openai::types::chat::CompletionUsage;
use async_openai::types::chat::{
    CreateChatCompletionRequest, CreateChatCompletionResponse, CreateChatCompletionStreamResponse,
};
use async_openai::types::embeddings::{CreateEmbeddingRequest, EmbeddingInput};
use async_openai::Client;
use chat_actors::model::{
    Answered, Completion, Embedded, ModelError, ModelProvider, ModelRequest, Task, Turn, Usage, UsageNote,
};
use futures_util::future::BoxFuture;
use futures_util::stream::{BoxStream, StreamExt};
use secrecy::{ExposeSecret, SecretString};
use serde_json::json;

pub struct OpenAiProvider {
    client: Client<OpenAIConfig>,
    /// Whether the endpoint is asked for embeddings (`model.embeddings`).
    embeddings: bool,
}

impl OpenAiProvider {
    pub fn new(api_key: &SecretString, base_url: &str, embeddings: bool) -> Self {
        let config = OpenAIConfig::new()
            .with_api_key(api_key.expose_secret())
            .with_api_base(base_url.trim_end_matches('/'));
        OpenAiProvider {
            client: Client::with_config(config),
            embeddings,
        }
    }
}

fn request(
    model: &str,
    messages: serde_json::Value,
    stream: bool,
    max_tokens: Option<u32>,
) -> Result<CreateChatCompletionRequest, ModelError> {
    let mut body = json!({ "model": model, "messages": messages, "stream": stream });
    if stream {
        // A last chunk then tells what the answer used (never sent if it is cut off).
        body["stream_options"] = json!({ "include_usage": true });
    }
    if let Some(max) = max_tokens {
        body["max_completion_tokens"] = json!(max);
    }
    serde_json::from_value(body).map_err(|e| ModelError::Upstream(format!("building the request: {e}")))
}

/// A turn as the chat API takes it: a string, or with images, content parts (the text,
/// then each image inline as a data URL, so the model needs no access to our storage).
fn turn_json(turn: &Turn) -> serde_json::Value {
    use base64::Engine;
    if turn.images.is_empty() {
        return json!({ "role": turn.role, "content": turn.content });
    }
    let mut parts = Vec::with_capacity(turn.images.len() + 1);
    if !turn.content.is_empty() {
        parts.push(json!({ "type": "text", "text": turn.content }));
    }
    for image in &turn.images {
        let data = base64::engine::general_purpose::STANDARD.encode(&image.data);
        let url = format!("data:{};base64,{data}", image.mime);
        parts.push(json!({ "type": "image_url", "image_url": { "url": url } }));
    }
    json!({ "role": turn.role, "content": parts })
}

fn usage_of(usage: &CompletionUsage) -> Usage {
    Usage {
        input_tokens: u64::from(usage.prompt_tokens),
        output_tokens: u64::from(usage.completion_tokens),
    }
}

/// A streamed chunk's text, if it has any; the chunk that tells what the answer used
/// (the last, with no choices) notes it.
fn text_of(chunk: CreateChatCompletionStreamResponse, note: &UsageNote) -> Option<String> {
    if let Some(usage) = &chunk.usage {
        note.set(usage_of(usage));
    }
    let text = chunk.choices.into_iter().next()?.delta.content?;
    (!text.is_empty()).then_some(text)
}

/// Upstream details go to the log; users see a generic model error.
fn upstream(e: impl std::fmt::Display) -> ModelError {
    tracing::warn!(error = %e, "model call failed");
    ModelError::Upstream(e.to_string())
}

impl OpenAiProvider {
    /// One answer in full, to `instructions` and `input`.
    fn answer(
        &self,
        model: &str,
        instructions: &str,
        input: String,
        max_tokens: u32,
    ) -> BoxFuture<'static, Result<Answered, ModelError>> {
        let client = self.client.clone();
        let messages = json!([
            { "role": "system", "content": instructions },
            { "role": "user", "content": input },
        ]);
        let model = model.to_owned();
        Box::pin(async move {
            let request = request(&model, messages, false, Some(max_tokens))?;
            let response: CreateChatCompletionResponse =
                client.chat().create(request).await.map_err(upstream)?;
            let usage = response.usage.as_ref().map(usage_of);
            let text = response
                .choices
                .into_iter()
                .next()
                .and_then(|c| c.message.content)
                .unwrap_or_default();
            Ok(Answered { text, usage })
        })
    }
}

impl ModelProvider for OpenAiProvider {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn stream(&self, req: ModelRequest) -> BoxStream<'static, Result<String, ModelError>> {
        let messages: Vec<_> = req.messages.iter().map(turn_json).collect();
        let client = self.client.clone();
        let note = req.usage.clone();
        let started = async move {
            let request = request(&req.model, json!(messages), true, req.max_tokens)?;
            client.chat().create_stream(request).await.map_err(upstream)
        };
        futures_util::stream::once(started)
            .flat_map(move |opened| match opened {
                Ok(stream) => {
                    let note = note.clone();
                    stream
                        .filter_map(move |chunk| {
                            futures_util::future::ready(match chunk {
                                Ok(chunk) => text_of(chunk, &note).map(Ok),
                                Err(e) => Some(Err(upstream(e))),
                            })
                        })
                        .boxed()
                }
                Err(e) => futures_util::stream::once(async move { Err(e) }).boxed(),
            })
            .boxed()
    }

    fn title(&self, model: &str, first_message: &str) -> BoxFuture<'static, Result<Answered, ModelError>> {
        let answered = self.answer(
            model,
            "Write a title of at most six words for a conversation that starts with the user's message. Answer with the title only, in the message's language, without quotes.",
            first_message.chars().take(2000).collect(),
            24,
        );
        Box::pin(async move {
            let answered = answered.await?;
            let text = answered.text.trim().trim_matches('"').chars().take(80).collect();
            Ok(Answered { text, ..answered })
        })
    }

    fn complete(&self, c: Completion) -> BoxFuture<'static, Result<Answered, ModelError>> {
        let (input, max_tokens) = match c.task {
            Task::Queries => (
                format!("Conversation so far:\n{}\n\nQuestion: {}", c.context, c.question),
                200,
            ),
            Task::PageNotes => (
                format!("Question: {}\n\nWeb page:\n{}", c.question, c.context),
                600,
            ),
            Task::Reflect { round, rounds } => (
                format!(
                    "Question: {}\n\nRound {round} of {rounds}. Notes so far:\n{}",
                    c.question, c.context
                ),
                200,
            ),
        };
        self.answer(&c.model, c.task.instructions(), input, max_tokens)
    }

    fn embed(
        &self,
        model: &str,
        inputs: Vec<String>,
    ) -> BoxFuture<'static, Result<Option<Embedded>, ModelError>> {
        if !self.embeddings {
            return Box::pin(async { Ok(None) });
        }
        let client = self.client.clone();
        let model = model.to_owned();
        Box::pin(async move {
            let count = inputs.len();
            let request = CreateEmbeddingRequest {
                model,
                input: EmbeddingInput::StringArray(inputs),
                ..Default::default()
            };
            let response = client.embeddings().create(request).await.map_err(upstream)?;
            let mut data = response.data;
            if data.len() != count {
                return Err(upstream(format!("{} embeddings for {count} inputs", data.len())));
            }
            // The API answers each with its index; servers need not keep the order.
            data.sort_by_key(|e| e.index);
            Ok(Some(Embedded {
                vectors: data.into_iter().map(|e| e.embedding).collect(),
                input_tokens: Some(u64::from(response.usage.prompt_tokens)),
            }))
        })
    }
}
