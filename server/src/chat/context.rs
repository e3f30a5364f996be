//! What fits in a model's context window (`config/models.toml`): every prompt is cut to
//! its model's window less the answer's room. The system turns and the question always
//! go; the history goes newest first, an exchange (a question and its answers) whole or
//! not at all. A question that cannot fit even alone is refused before anything is
//! counted (`message_too_long`).
//!
//! Tokens are counted by OpenAI's own encodings for the models that name one, and by a
//! safe estimate for the others. Counting is skipped whenever a prompt's bytes already
//! fit (a token is at least one byte), so the common send counts nothing; a prompt that
//! needs counting is counted on the blocking pool, never on an async worker.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Context;
use chat_actors::model::{ImagePart, Turn};
use serde::Deserialize;

use crate::error::{ApiError, ErrorCode};

const EMBEDDED_MODELS: &str = include_str!("../../../config/models.toml");

/// What every turn costs besides its text: OpenAI's chat format wraps each message in a
/// few tokens (3 today); one more for safety.
const TURN_TOKENS: usize = 4;
/// The tokens that start the answer (`<|start|>assistant<|message|>`).
const REPLY_TOKENS: usize = 3;
/// The answer's room when no token limit is asked of the model.
const DEFAULT_ANSWER_TOKENS: usize = 4096;
/// The estimate's rate, for models without a known encoding: a token for every this many
/// bytes. OpenAI's encodings take some 5 bytes a token of English, but under 3 of
/// Hungarian or code (and little more than 1 of hex ids, which no estimate short of one
/// token a byte covers): a prompt counted short fails every send, one counted long only
/// forgets older exchanges sooner.
const BYTES_PER_TOKEN: usize = 2;

/// An OpenAI encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// gpt-4o, gpt-4.1 and the o-series.
    O200kBase,
    /// gpt-4, gpt-4-turbo and gpt-3.5-turbo.
    Cl100kBase,
}

impl Encoding {
    /// The encoder, loaded once for the process on its first use (o200k_base: some 0.6 s
    /// and 50 MB kept; cl100k_base 0.25 s and 25 MB). Counting runs on the blocking pool,
    /// and only for a prompt whose bytes could overflow its window (or an answer the
    /// provider did not count), so many servers load none. Not at start-up: both
    /// encoders would be most of an idle server's memory.
    fn bpe(self) -> &'static tiktoken_rs::CoreBPE {
        match self {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        }
    }
}

/// How a model's tokens are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    Exact(Encoding),
    /// A token for every [`BYTES_PER_TOKEN`] bytes, rounded up.
    Estimate,
}

impl Counter {
    pub fn text(self, text: &str) -> usize {
        match self {
            // User text is text: a special token's name in it is not that token.
            Counter::Exact(encoding) => encoding.bpe().encode_ordinary(text).len(),
            Counter::Estimate => text.len().div_ceil(BYTES_PER_TOKEN),
        }
    }

    pub fn turn(self, turn: &Turn) -> usize {
        TURN_TOKENS + self.text(&turn.content) + images(&turn.images)
    }

    /// The start of `text` that takes at most `tokens` tokens.
    fn truncate(self, text: &str, tokens: usize) -> String {
        let end = match self {
            Counter::Exact(encoding) => {
                let bpe = encoding.bpe();
                let all = bpe.encode_ordinary(text);
                if all.len() <= tokens {
                    return text.to_owned();
                }
                // Its tokens are pieces of `text`, in order: their bytes are its start.
                bpe.decode_bytes(&all[..tokens]).map_or(0, |b| b.len())
            }
            Counter::Estimate => tokens * BYTES_PER_TOKEN,
        };
        let mut end = end.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text[..end].to_owned()
    }
}

/// No prompt takes more tokens than this: every token stands for at least one byte.
fn bound(turn: &Turn) -> usize {
    TURN_TOKENS + turn.content.len() + images(&turn.images)
}

fn images(images: &[ImagePart]) -> usize {
    images.iter().map(|i| image_tokens(i.width, i.height)).sum()
}

/// What an image costs, as OpenAI counts one at high detail: scaled into 2048×2048, then
/// its shorter side down to 768, and 170 tokens for each 512-pixel tile it covers, plus
/// 85. Models we cannot count are charged the same. An image of unknown size is charged
/// the most any can cost (8 tiles).
pub fn image_tokens(width: u32, height: u32) -> usize {
    let (mut w, mut h) = (f64::from(width.max(1)), f64::from(height.max(1)));
    if width == 0 || height == 0 {
        (w, h) = (2048.0, 768.0);
    }
    let fit = (2048.0 / w.max(h)).min(1.0);
    (w, h) = (w * fit, h * fit);
    let shorter = (768.0 / w.min(h)).min(1.0);
    (w, h) = (w * shorter, h * shorter);
    let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
    85 + 170 * tiles as usize
}

/// A model's window.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Tokens of the prompt and the answer together.
    pub context: usize,
    /// Kept for the answer: the token limit asked of the model.
    pub answer: usize,
    pub counter: Counter,
}

impl Window {
    /// The tokens the prompt may take.
    pub fn budget(&self) -> usize {
        self.context.saturating_sub(self.answer)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelDef {
    context_tokens: usize,
    tokenizer: Option<Encoding>,
    #[serde(default)]
    input_price: f64,
    #[serde(default)]
    output_price: f64,
    #[serde(default)]
    image_price: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct DefaultDef {
    context_tokens: usize,
    #[serde(default)]
    input_price: f64,
    #[serde(default)]
    output_price: f64,
    #[serde(default)]
    image_price: f64,
}

/// Prices as the catalogue writes them (serde cannot flatten them into both tables
/// while refusing unknown keys): euros per million tokens, euros per image.
struct PricesDef {
    input_price: f64,
    output_price: f64,
    image_price: f64,
}

impl PricesDef {
    fn check(&self, name: &str) -> anyhow::Result<Price> {
        let nanos = |eur: f64, per: f64, what: &str| -> anyhow::Result<u64> {
            anyhow::ensure!(
                eur.is_finite() && (0.0..=1_000_000.0).contains(&eur),
                "{name}: {what} must be a number of euros from 0 to 1000000"
            );
            Ok((eur * per).round() as u64)
        };
        Ok(Price {
            // € per million tokens is 1000 × € 10⁻⁹ per token.
            input_nanos: nanos(self.input_price, 1e3, "input_price")?,
            output_nanos: nanos(self.output_price, 1e3, "output_price")?,
            image_nanos: nanos(self.image_price, 1e9, "image_price")?,
        })
    }
}

/// A model's prices in billionths of a euro: integers, so that costs add up exactly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Price {
    /// A token of the prompt.
    pub input_nanos: u64,
    /// A token of the answer.
    pub output_nanos: u64,
    /// An image made.
    pub image_nanos: u64,
}

impl Price {
    /// What a call that used these costs, in billionths of a euro.
    pub fn cost(&self, input_tokens: u64, output_tokens: u64, images: u64) -> i64 {
        let nanos = input_tokens.saturating_mul(self.input_nanos)
            + output_tokens.saturating_mul(self.output_nanos)
            + images.saturating_mul(self.image_nanos);
        i64::try_from(nanos).unwrap_or(i64::MAX)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelsFile {
    default: DefaultDef,
    #[serde(default)]
    models: HashMap<String, ModelDef>,
}

/// The model catalogue, `config/models.toml`: each model's context window and prices.
#[derive(Debug, Clone)]
pub struct ContextSizes {
    default: usize,
    models: HashMap<String, ModelDef>,
    /// Of every model the catalogue names, and of any other (`[default]`).
    prices: HashMap<String, Price>,
    default_price: Price,
}

impl ContextSizes {
    /// `$CONFIG_DIR/models.toml` where present, else the embedded copy.
    pub fn load(config_dir: &Path) -> anyhow::Result<ContextSizes> {
        let file = config_dir.join("models.toml");
        match std::fs::read_to_string(&file) {
            Ok(text) => Self::parse(&text).with_context(|| format!("in {}", file.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::parse(EMBEDDED_MODELS),
            Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
        }
    }

    pub fn embedded() -> ContextSizes {
        Self::parse(EMBEDDED_MODELS).expect("embedded config/models.toml is valid")
    }

    pub fn parse(text: &str) -> anyhow::Result<ContextSizes> {
        let file: ModelsFile = toml::from_str(text).context("parsing the model catalogue")?;
        // Below this, the system prompt alone would not fit.
        const SMALLEST: usize = 256;
        anyhow::ensure!(
            file.default.context_tokens >= SMALLEST,
            "[default] context_tokens must be at least {SMALLEST}"
        );
        for (name, model) in &file.models {
            anyhow::ensure!(
                model.context_tokens >= SMALLEST,
                "model {name:?}: context_tokens must be at least {SMALLEST}"
            );
        }
        let mut prices = HashMap::with_capacity(file.models.len());
        for (name, model) in &file.models {
            let def = PricesDef {
                input_price: model.input_price,
                output_price: model.output_price,
                image_price: model.image_price,
            };
            prices.insert(name.clone(), def.check(&format!("model {name:?}"))?);
        }
        Ok(ContextSizes {
            default: file.default.context_tokens,
            default_price: PricesDef {
                input_price: file.default.input_price,
                output_price: file.default.output_price,
                image_price: file.default.image_price,
            }
            .check("[default]")?,
            models: file.models,
            prices,
        })
    }

    /// What `model` costs (`input_price`, `output_price`, `image_price`).
    pub fn price(&self, model: &str) -> Price {
        self.prices.get(model).copied().unwrap_or(self.default_price)
    }

    /// `model`'s window when answers are limited to `max_tokens` (0: no limit asked). The
    /// answer gets at most half the window, so a small model still reads a question.
    pub fn window(&self, model: &str, max_tokens: u32) -> Window {
        let (context, counter) = match self.models.get(model) {
            Some(m) => (
                m.context_tokens,
                m.tokenizer.map_or(Counter::Estimate, Counter::Exact),
            ),
            None => (self.default, Counter::Estimate),
        };
        let answer = match max_tokens {
            0 => DEFAULT_ANSWER_TOKENS,
            n => n as usize,
        };
        Window {
            context,
            answer: answer.min(context / 2),
            counter,
        }
    }
}

/// Where a prompt's parts are: `turns[..lead]` are the leading system turns (the
/// service's prompt, a project's instructions), `turns[tail..]` the question and the
/// system turns right before it (document excerpts, web results); the history between.
fn parts(turns: &[Turn]) -> Option<(usize, usize)> {
    let question = turns.len().checked_sub(1)?;
    if turns[question].role != "user" {
        return None;
    }
    let lead = turns.iter().take_while(|t| t.role == "system").count();
    let mut tail = question;
    while tail > lead && turns[tail - 1].role == "system" {
        tail -= 1;
    }
    Some((lead.min(tail), tail))
}

/// `turns` (system turns, history, context turns, the question) cut to `window`: the
/// system turns and the question always, then the latest exchanges that fit. An answer
/// whose question is not sent is never sent. Context turns too long to fit even without
/// history are shortened from their end. Counts only when the bytes do not fit; may then
/// take milliseconds for a long history: call it off the async workers ([`fit`]).
pub fn fit_now(mut turns: Vec<Turn>, window: &Window) -> Vec<Turn> {
    let Some((lead, tail)) = parts(&turns) else {
        return turns;
    };
    // The oldest history turns may be answers whose question was left out of the history.
    let start = (lead..tail).find(|&i| turns[i].role == "user").unwrap_or(tail);
    turns.drain(lead..start);
    let tail = tail - (start - lead);
    let budget = window.budget();
    if REPLY_TOKENS + turns.iter().map(bound).sum::<usize>() <= budget {
        return turns;
    }
    let counter = window.counter;
    let fixed: usize = REPLY_TOKENS
        + turns[..lead]
            .iter()
            .chain(&turns[tail..])
            .map(|t| counter.turn(t))
            .sum::<usize>();
    let mut room = budget.saturating_sub(fixed);
    let mut keep_from = tail;
    let mut exchange = 0;
    for i in (lead..tail).rev() {
        exchange += counter.turn(&turns[i]);
        if turns[i].role == "user" {
            if exchange > room {
                break;
            }
            room -= exchange;
            keep_from = i;
            exchange = 0;
        }
    }
    let dropped = keep_from - lead;
    turns.drain(lead..keep_from);
    let tail = tail - dropped;
    if fixed > budget {
        // Excerpts or web results longer than the window leaves them: the latest added
        // is shortened first, from its end (the least relevant pieces).
        let mut over = fixed - budget;
        let question = turns.len() - 1;
        for turn in turns[tail..question].iter_mut().rev() {
            if over == 0 {
                break;
            }
            let tokens = counter.text(&turn.content);
            let keep = tokens.saturating_sub(over);
            turn.content = counter.truncate(&turn.content, keep);
            over -= tokens - keep;
        }
    }
    if dropped > 0 {
        tracing::debug!(dropped, budget, "history cut to the model's window");
    }
    turns
}

/// [`fit_now`], on the blocking pool when the prompt needs counting.
pub async fn fit(turns: Vec<Turn>, window: Window) -> anyhow::Result<Vec<Turn>> {
    if REPLY_TOKENS + turns.iter().map(bound).sum::<usize>() <= window.budget() {
        return Ok(fit_now(turns, &window));
    }
    let fitted = actix_web::rt::task::spawn_blocking(move || fit_now(turns, &window)).await;
    fitted.context("fitting a prompt to its model")
}

/// Refuses a question that does not fit `window` even alone with `system` (the turns
/// always sent with it) and its images: `message_too_long`, with about the characters
/// that would fit. Counts on the blocking pool, and only when the bytes do not fit.
pub async fn check_question(
    system: Vec<Turn>,
    question: &str,
    image_tokens: usize,
    window: Window,
    max_chars: usize,
) -> Result<(), ApiError> {
    let budget = window.budget();
    let bound =
        REPLY_TOKENS + TURN_TOKENS + image_tokens + question.len() + system.iter().map(bound).sum::<usize>();
    if bound <= budget {
        return Ok(());
    }
    let chars = question.chars().count();
    let question = question.to_owned();
    let counter = window.counter;
    let counted = actix_web::rt::task::spawn_blocking(move || {
        let around =
            REPLY_TOKENS + TURN_TOKENS + image_tokens + system.iter().map(|t| counter.turn(t)).sum::<usize>();
        (around, counter.text(&question))
    })
    .await;
    let (around, tokens) = counted.map_err(|e| ApiError::from(anyhow::anyhow!("counting tokens: {e}")))?;
    if around + tokens <= budget {
        return Ok(());
    }
    // In characters, as the user writes: at the rate of the question's own text.
    let room = budget.saturating_sub(around);
    let fitting = match tokens {
        0 => room * BYTES_PER_TOKEN,
        _ => room * chars / tokens,
    };
    Err(ApiError::with_max(
        ErrorCode::MessageTooLong,
        None,
        fitting.min(max_chars) as u64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(role: &'static str, content: &str) -> Turn {
        Turn {
            role,
            content: content.to_owned(),
            images: Vec::new(),
        }
    }

    fn image(width: u32, height: u32) -> ImagePart {
        ImagePart {
            name: "a.png".into(),
            mime: "image/png".into(),
            width,
            height,
            data: bytes::Bytes::new(),
        }
    }

    /// A window of `budget` prompt tokens, counted by the estimate.
    fn estimate(budget: usize) -> Window {
        Window {
            context: budget + 100,
            answer: 100,
            counter: Counter::Estimate,
        }
    }

    fn cost(role: &'static str, content: &str) -> usize {
        Counter::Estimate.turn(&turn(role, content))
    }

    fn contents(turns: &[Turn]) -> Vec<String> {
        turns
            .iter()
            .map(|t| format!("{}:{}", t.role, t.content))
            .collect()
    }

    const SYSTEM: &str = "You are helpful.";
    const QUESTION: &str = "the new question";

    fn asked(i: usize) -> String {
        format!("question {i:02}, padded to thirty.")
    }

    fn answered(i: usize) -> String {
        format!("answer {i:02} is padded to thirty.")
    }

    /// What the system prompt and the question take, with the reply's start.
    fn fixed() -> usize {
        REPLY_TOKENS + cost("system", SYSTEM) + cost("user", QUESTION)
    }

    /// What one exchange takes (every one the same).
    fn exchange() -> usize {
        cost("user", &asked(0)) + cost("assistant", &answered(0))
    }

    /// The system prompt, `n` exchanges, the question.
    fn conversation(n: usize) -> Vec<Turn> {
        let mut turns = vec![turn("system", SYSTEM)];
        for i in 0..n {
            turns.push(turn("user", &asked(i)));
            turns.push(turn("assistant", &answered(i)));
        }
        turns.push(turn("user", QUESTION));
        turns
    }

    #[test]
    fn a_prompt_that_fits_is_sent_whole() {
        let turns = conversation(5);
        assert_eq!(fit_now(turns.clone(), &estimate(fixed() + 5 * exchange())), turns);
    }

    #[test]
    fn the_oldest_exchanges_go_first_and_always_whole() {
        // Room for three exchanges and most of a fourth: three.
        let kept = fit_now(conversation(10), &estimate(fixed() + 4 * exchange() - 1));
        assert_eq!(
            contents(&kept),
            [
                format!("system:{SYSTEM}"),
                format!("user:{}", asked(7)),
                format!("assistant:{}", answered(7)),
                format!("user:{}", asked(8)),
                format!("assistant:{}", answered(8)),
                format!("user:{}", asked(9)),
                format!("assistant:{}", answered(9)),
                format!("user:{QUESTION}"),
            ]
        );
        // Nothing but the system turn and the question fit.
        let kept = fit_now(conversation(10), &estimate(fixed() + exchange() - 1));
        assert_eq!(
            contents(&kept),
            [format!("system:{SYSTEM}"), format!("user:{QUESTION}")]
        );
    }

    #[test]
    fn an_answer_without_its_question_is_never_sent() {
        let mut turns = conversation(2);
        // The history read back starts with an answer: its question was older.
        turns.remove(1);
        let kept = fit_now(turns, &estimate(10_000));
        assert_eq!(kept.len(), 4);
        assert_eq!(kept[1].content, asked(1));
        // A question whose answer failed (none stored) is an exchange of its own.
        let mut turns = conversation(3);
        turns.remove(4);
        let alone = cost("user", &asked(1));
        let kept = fit_now(turns, &estimate(fixed() + exchange() + alone));
        assert_eq!(
            contents(&kept)[1..],
            [
                format!("user:{}", asked(1)),
                format!("user:{}", asked(2)),
                format!("assistant:{}", answered(2)),
                format!("user:{QUESTION}"),
            ]
        );
    }

    #[test]
    fn images_count_and_an_exchange_with_an_image_goes_whole() {
        assert_eq!(image_tokens(512, 512), 85 + 170);
        // 1024² → 768² → 2×2 tiles.
        assert_eq!(image_tokens(1024, 1024), 85 + 4 * 170);
        // 4096×8192 → 1024×2048 → 768×1536 → 2×3 tiles.
        assert_eq!(image_tokens(4096, 8192), 85 + 6 * 170);
        assert_eq!(image_tokens(0, 0), 85 + 8 * 170);
        let mut turns = conversation(3);
        turns[3].images = vec![image(512, 512)];
        // Room for three plain exchanges: the latest goes, the one with the image (255
        // more) does not, nor anything older than it.
        let kept = fit_now(turns.clone(), &estimate(fixed() + 3 * exchange()));
        assert_eq!(kept.len(), 4);
        assert_eq!(kept[1].content, asked(2));
        let kept = fit_now(turns, &estimate(fixed() + 3 * exchange() + 255));
        assert_eq!(kept.len(), 8);
        assert_eq!(kept[3].images.len(), 1);
    }

    #[test]
    fn excerpts_and_instructions_count_and_stay() {
        let instructions = "The user's instructions for this project: be brief.";
        let excerpts = "excerpt ".repeat(30);
        let mut turns = conversation(4);
        turns.insert(1, turn("system", instructions));
        let question = turns.len() - 1;
        turns.insert(question, turn("system", &excerpts));
        let more = cost("system", instructions) + cost("system", &excerpts);
        // Room for two exchanges once both are counted.
        let kept = fit_now(turns.clone(), &estimate(fixed() + more + 2 * exchange()));
        assert_eq!(
            contents(&kept),
            [
                format!("system:{SYSTEM}"),
                format!("system:{instructions}"),
                format!("user:{}", asked(2)),
                format!("assistant:{}", answered(2)),
                format!("user:{}", asked(3)),
                format!("assistant:{}", answered(3)),
                format!("system:{excerpts}"),
                format!("user:{QUESTION}"),
            ]
        );
        // Excerpts longer than the window leaves them are shortened, never dropped: here
        // to 10 tokens (20 bytes).
        let short = fixed() + more - cost("system", &excerpts) + TURN_TOKENS + 10;
        let kept = fit_now(turns, &estimate(short));
        assert_eq!(kept.len(), 4);
        assert_eq!(kept[2].content, "excerpt excerpt exce");
    }

    #[test]
    fn openai_models_are_counted_by_their_encoding_and_others_estimated() {
        let sizes = ContextSizes::embedded();
        let mini = sizes.window("gpt-4o-mini", 4096);
        assert_eq!(
            (mini.context, mini.answer, mini.counter),
            (128_000, 4096, Counter::Exact(Encoding::O200kBase))
        );
        assert_eq!(
            sizes.window("gpt-3.5-turbo", 0).counter,
            Counter::Exact(Encoding::Cl100kBase)
        );
        // An operator's own model: the default window, the estimate, half for the answer.
        let own = sizes.window("llama3:8b", 16_000);
        assert_eq!(
            (own.context, own.answer, own.counter),
            (8192, 4096, Counter::Estimate)
        );
        let o200k = Counter::Exact(Encoding::O200kBase);
        assert_eq!(o200k.text("hello world"), 2);
        assert_eq!(Counter::Exact(Encoding::Cl100kBase).text("hello world"), 2);
        // A special token's name in a message is text, not that token.
        assert!(o200k.text("<|endoftext|>") > 1);
        // The estimate is not below what OpenAI's encodings count of prose in any
        // language, or of code (random ids and hex take more: 1.2 bytes a token).
        for text in [
            "The quick brown fox jumps over the lazy dog.",
            "Árvíztűrő tükörfúrógép: a magyar ékezetes betűk próbája.",
            "fn main() { let x: Vec<u32> = (0..10).map(|i| i * 2).collect(); }",
            "日本語のテキストはトークンが多くなります。",
        ] {
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let exact = Counter::Exact(encoding).text(text);
                assert!(Counter::Estimate.text(text) >= exact, "{text}: {exact}");
            }
        }
        assert_eq!(o200k.truncate("hello world, and more", 2), "hello world");
        assert_eq!(Counter::Estimate.truncate("héllo", 1), "h");
    }

    #[test]
    fn a_catalogue_with_a_tiny_window_or_an_unknown_field_is_refused() {
        assert!(ContextSizes::parse("[default]\ncontext_tokens = 100\n").is_err());
        assert!(ContextSizes::parse("[default]\ncontext_tokens = 8192\nmax = 1\n").is_err());
        let bad =
            "[default]\ncontext_tokens = 8192\n[models.x]\ncontext_tokens = 9000\ntokenizer = \"p50k\"\n";
        assert!(ContextSizes::parse(bad).is_err());
        let ok = "[default]\ncontext_tokens = 8192\n[models.x]\ncontext_tokens = 9000\n";
        assert_eq!(ContextSizes::parse(ok).unwrap().window("x", 0).context, 9000);
    }

    #[test]
    fn prices_are_kept_in_billionths_of_a_euro_and_a_bad_one_is_refused() {
        let sizes = ContextSizes::parse(
            "[default]\ncontext_tokens = 8192\ninput_price = 0.5\n\
             [models.x]\ncontext_tokens = 9000\ninput_price = 2.15\noutput_price = 8.6\nimage_price = 0.036\n",
        )
        .unwrap();
        let x = sizes.price("x");
        assert_eq!(
            (x.input_nanos, x.output_nanos, x.image_nanos),
            (2150, 8600, 36_000_000)
        );
        // 1000 tokens in, 500 out, 2 images: 2.15 + 4.3 milli-euros and 7.2 cents.
        assert_eq!(x.cost(1000, 500, 2), 2_150_000 + 4_300_000 + 72_000_000);
        // A model the catalogue does not name costs [default]'s prices.
        assert_eq!(sizes.price("other").input_nanos, 500);
        assert_eq!(sizes.price("other").output_nanos, 0);
        for bad in ["input_price = -1", "output_price = nan", "image_price = \"1\""] {
            let text =
                format!("[default]\ncontext_tokens = 8192\n[models.x]\ncontext_tokens = 9000\n{bad}\n");
            assert!(ContextSizes::parse(&text).is_err(), "{bad}");
        }
        // The embedded catalogue prices the plans' models.
        let embedded = ContextSizes::embedded();
        assert!(embedded.price("gpt-4o-mini").output_nanos > 0);
        assert!(embedded.price("gpt-image-1").image_nanos > 0);
    }

    /// Not a rule: how long counting takes (the figures in a debug build are some 20
    /// times a release build's). `cargo test -p chat-server --lib counting_a_long_history
    /// -- --nocapture` prints them.
    #[test]
    fn counting_a_long_history_takes_milliseconds() {
        let started = std::time::Instant::now();
        Encoding::O200kBase.bpe();
        let loaded = started.elapsed();
        let text = "The quick brown fox jumps over the lazy dog, és a magyar szöveg is számít. ".repeat(20);
        let mut turns = vec![turn("system", SYSTEM)];
        for i in 0..100 {
            turns.push(turn("user", &format!("{i} {text}")));
            turns.push(turn("assistant", &format!("{i} {text}")));
        }
        turns.push(turn("user", QUESTION));
        let window = Window {
            context: 1_000_000,
            answer: 0,
            counter: Counter::Exact(Encoding::O200kBase),
        };
        let started = std::time::Instant::now();
        let tokens: usize = turns.iter().map(|t| window.counter.turn(t)).sum();
        let counted = started.elapsed();
        // Every byte of it fits: nothing is counted.
        let started = std::time::Instant::now();
        assert_eq!(fit_now(turns.clone(), &window).len(), turns.len());
        let skipped = started.elapsed();
        println!(
            "o200k_base loaded in {loaded:?}; 200 turns ({} KB, {tokens} tokens) counted in {counted:?}; \
             a prompt whose bytes fit checked in {skipped:?}",
            turns.iter().map(|t| t.content.len()).sum::<usize>() / 1024
        );
        assert!(tokens > 200 * text.len() / 6);
    }
}
