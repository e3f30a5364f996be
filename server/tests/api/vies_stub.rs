//! A local stand-in for the EU's VIES REST API (`POST /check-vat-number`). By default a
//! number ending in `000000000` is not registered (`DE000000000`) and any other is, as
//! "ACME GMBH"; [`ViesStub::answer`] switches every answer to VIES being down or slow.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer {
    ByNumber,
    /// The member state's service is down: VIES's error answer.
    Down,
    /// No answer for a minute.
    Slow,
}

#[derive(Clone)]
pub struct ViesStub {
    pub requests: Arc<Mutex<Vec<Value>>>,
    pub answer: Arc<Mutex<Answer>>,
}

impl ViesStub {
    pub fn set(&self, answer: Answer) {
        *self.answer.lock().unwrap() = answer;
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

async fn check(stub: web::Data<ViesStub>, body: web::Json<Value>) -> HttpResponse {
    let body = body.into_inner();
    stub.requests.lock().unwrap().push(body.clone());
    let answer = *stub.answer.lock().unwrap();
    match answer {
        Answer::Down => {
            return HttpResponse::InternalServerError().json(json!({
                "actionSucceed": false,
                "errorWrappers": [{"error": "MS_UNAVAILABLE", "message": "The member state is not available"}]
            }))
        }
        Answer::Slow => tokio::time::sleep(Duration::from_secs(60)).await,
        Answer::ByNumber => {}
    }
    let number = body["vatNumber"].as_str().unwrap_or_default();
    let valid = !number.ends_with("000000000");
    HttpResponse::Ok().json(json!({
        "countryCode": body["countryCode"],
        "vatNumber": number,
        "requestDate": "2026-03-02T10:15:00.000Z",
        "valid": valid,
        "requestIdentifier": "",
        "name": if valid { "ACME GMBH" } else { "---" },
        "address": if valid { "HAUPTSTRASSE 1\n10115 BERLIN" } else { "---" },
    }))
}

/// Starts the stub; returns its base URL (what `VIES_URL` would be).
pub fn start() -> (String, ViesStub) {
    let stub = ViesStub {
        requests: Arc::default(),
        answer: Arc::new(Mutex::new(Answer::ByNumber)),
    };
    let data = web::Data::new(stub.clone());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/rest-api/check-vat-number", web::post().to(check))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let port = server.addrs()[0].port();
    actix_web::rt::spawn(server.run());
    (format!("http://127.0.0.1:{port}/rest-api"), stub)
}
