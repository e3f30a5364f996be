//! localstripe (PyPI), a stateful fake of the Stripe API, started once per test run on a
//! free port and shared: each test uses its own customers and its own webhook secret.
//! `make test-deps` installs it into $CHAT_VENV (default /var/tmp/chat-venv). Without it
//! the Stripe tests are skipped with a note, except under CI, where they fail.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::OnceCell;

/// The base URL of the shared localstripe, or None (after a note) if it is not installed.
pub async fn base_url() -> Option<String> {
    static BASE: OnceCell<Option<String>> = OnceCell::const_new();
    BASE.get_or_init(start).await.clone()
}

async fn start() -> Option<String> {
    let base = crate::venv::serve(
        "localstripe",
        "1.15.10",
        r#"--port "$1" --from-scratch"#,
        "/js.stripe.com/v3/",
    )
    .await;
    if base.is_none() {
        eprintln!("skipping the Stripe tests");
    }
    base
}

/// Calls localstripe as the Stripe API with a secret key (or as Stripe.js would).
pub struct Fake {
    pub base: String,
    client: reqwest::Client,
}

impl Fake {
    pub fn new(base: &str) -> Fake {
        Fake {
            base: base.to_owned(),
            client: reqwest::Client::new(),
        }
    }

    /// POSTs a form; answers the HTTP status and the JSON body.
    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> (u16, Value) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .basic_auth("sk_test_localstripe", Some(""))
            .form(form)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn get(&self, path: &str) -> Value {
        self.client
            .get(format!("{}{path}", self.base))
            .basic_auth("sk_test_localstripe", Some(""))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Sends every event to `url`, signed with `secret`.
    pub async fn register_webhook(&self, name: &str, url: &str, secret: &str) {
        let (status, _) = self
            .post(
                &format!("/_config/webhooks/{name}"),
                &[("url", url), ("secret", secret)],
            )
            .await;
        assert_eq!(status, 200, "registering a localstripe webhook");
    }

    /// Sends no more events to webhook `name`, from a `Drop`: it blocks (hence no
    /// `post`). localstripe delivers each event to every webhook it was ever given, one
    /// after the other in the order they came, so a late test's deliveries waited
    /// behind every earlier test's server, each a new connection and, for the live ones
    /// busy under the parallel suite, a slow answer. It has no route to remove a
    /// webhook; one listening only for an event that never happens is as good. Answers
    /// whether localstripe took it.
    pub fn retire_webhook(&self, name: &str, url: &str, secret: &str) -> bool {
        use std::io::{Read, Write};
        let body = serde_json::json!({"url": url, "secret": secret, "events": ["test.retired"]}).to_string();
        let host = self.base.trim_start_matches("http://");
        let request = format!(
            "POST /_config/webhooks/{name} HTTP/1.1\r\nHost: {host}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        let send = || -> std::io::Result<String> {
            let mut stream = std::net::TcpStream::connect(host)?;
            stream.set_read_timeout(Some(Duration::from_secs(10)))?;
            stream.write_all(request.as_bytes())?;
            let mut answer = String::new();
            stream.read_to_string(&mut answer)?;
            Ok(answer)
        };
        send().is_ok_and(|answer| answer.starts_with("HTTP/1.1 200"))
    }

    /// A card PaymentMethod, as Stripe.js makes from the card form.
    pub async fn card(&self, number: &str) -> String {
        let form = [
            ("type", "card"),
            ("card[number]", number),
            ("card[exp_month]", "12"),
            ("card[exp_year]", "2034"),
            ("card[cvc]", "123"),
        ];
        let (status, pm) = self.post("/v1/payment_methods", &form).await;
        assert_eq!(status, 200, "{pm}");
        pm["id"].as_str().unwrap().to_owned()
    }

    /// Confirms a PaymentIntent with a card, as `stripe.confirmCardPayment` does;
    /// answers localstripe's status code (402 for a declined card).
    pub async fn pay(&self, client_secret: &str, card_number: &str) -> u16 {
        let pi = client_secret.split("_secret_").next().unwrap();
        let pm = self.card(card_number).await;
        let (status, body) = self
            .post(&format!("/v1/payment_intents/{pi}"), &[("payment_method", &pm)])
            .await;
        assert_eq!(status, 200, "{body}");
        self.post(&format!("/v1/payment_intents/{pi}/confirm"), &[])
            .await
            .0
    }
}
