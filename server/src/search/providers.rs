//! Search providers: SearXNG's JSON API and Google Programmable Search. Both are
//! endpoints the operator configures, so they are called directly (page fetches go
//! through `fetch`). An answer larger than `MAX_ANSWER` is refused, not read.

use std::time::Duration;

use futures_util::future::BoxFuture;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use crate::config::SearchSettings;

/// Largest provider answer read.
const MAX_ANSWER: usize = 1024 * 1024;

/// A result: a page, its title, and the provider's snippet of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub url: String,
    pub title: String,
    pub snippet: String,
}

pub trait SearchProvider: Send + Sync + 'static {
    fn name(&self) -> &'static str;
    /// At most `count` results for `query`, best first.
    fn search(&self, query: &str, count: usize) -> BoxFuture<'static, anyhow::Result<Vec<Hit>>>;
}

fn client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(3)))
        .build()
        .expect("a client of fixed settings builds")
}

/// The body of `request`'s answer as JSON, refused past `MAX_ANSWER`.
async fn json_of<T: serde::de::DeserializeOwned>(request: reqwest::RequestBuilder) -> anyhow::Result<T> {
    let mut response = request.send().await?.error_for_status()?;
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_ANSWER {
            anyhow::bail!("the search answer is larger than {MAX_ANSWER} bytes");
        }
        body.extend_from_slice(&chunk);
    }
    Ok(serde_json::from_slice(&body)?)
}

/// Only links a browser would open as a page are kept.
fn is_web_link(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// A SearXNG instance (`/search?format=json`; the JSON format must be enabled in its
/// `settings.yml`).
pub struct Searxng {
    client: reqwest::Client,
    url: String,
}

impl Searxng {
    pub fn new(base: &str, timeout: Duration) -> Searxng {
        Searxng {
            client: client(timeout),
            url: format!("{}/search", base.trim_end_matches('/')),
        }
    }
}

#[derive(Deserialize)]
struct SearxngAnswer {
    #[serde(default)]
    results: Vec<SearxngResult>,
}

#[derive(Deserialize)]
struct SearxngResult {
    url: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
}

impl SearchProvider for Searxng {
    fn name(&self) -> &'static str {
        "searxng"
    }

    fn search(&self, query: &str, count: usize) -> BoxFuture<'static, anyhow::Result<Vec<Hit>>> {
        let request =
            self.client
                .get(&self.url)
                .query(&[("q", query), ("format", "json"), ("safesearch", "1")]);
        Box::pin(async move {
            let answer: SearxngAnswer = json_of(request).await?;
            Ok(answer
                .results
                .into_iter()
                .filter(|r| is_web_link(&r.url))
                .take(count)
                .map(|r| Hit {
                    url: r.url,
                    title: r.title,
                    snippet: r.content,
                })
                .collect())
        })
    }
}

/// Google Programmable Search (the Custom Search JSON API).
pub struct Google {
    client: reqwest::Client,
    url: String,
    key: SecretString,
    id: String,
}

impl Google {
    pub fn new(settings: &SearchSettings, timeout: Duration) -> Google {
        Google {
            client: client(timeout),
            url: settings.google_cse_url.clone(),
            key: settings.google_cse_key.clone(),
            id: settings.google_cse_id.clone(),
        }
    }
}

#[derive(Deserialize)]
struct GoogleAnswer {
    #[serde(default)]
    items: Vec<GoogleItem>,
}

#[derive(Deserialize)]
struct GoogleItem {
    link: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    snippet: String,
}

impl SearchProvider for Google {
    fn name(&self) -> &'static str {
        "google"
    }

    fn search(&self, query: &str, count: usize) -> BoxFuture<'static, anyhow::Result<Vec<Hit>>> {
        // Google answers at most 10 a call.
        let num = count.clamp(1, 10).to_string();
        let request = self.client.get(&self.url).query(&[
            ("key", self.key.expose_secret()),
            ("cx", self.id.as_str()),
            ("q", query),
            ("num", num.as_str()),
        ]);
        Box::pin(async move {
            let answer: GoogleAnswer = json_of(request).await?;
            Ok(answer
                .items
                .into_iter()
                .filter(|i| is_web_link(&i.link))
                .take(count)
                .map(|i| Hit {
                    url: i.link,
                    title: i.title,
                    snippet: i.snippet,
                })
                .collect())
        })
    }
}
