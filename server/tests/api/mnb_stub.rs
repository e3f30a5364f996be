//! A local stand-in for the Hungarian central bank's exchange rate web service (SOAP,
//! `GetExchangeRates`). It answers the EUR rate of the day before the asked `endDate`
//! (as on a Monday, when the last rate is Friday's) and of three days before, in MNB's
//! shape: the result is an escaped XML text with comma decimals.

use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpResponse, HttpServer};
use chrono::NaiveDate;

#[derive(Clone)]
pub struct MnbStub {
    /// The asked `(startDate, endDate, currencyNames)`.
    pub requests: Arc<Mutex<Vec<(String, String, String)>>>,
    /// `None`: the service is down (500).
    pub rate: Arc<Mutex<Option<&'static str>>>,
}

impl MnbStub {
    pub fn requests(&self) -> Vec<(String, String, String)> {
        self.requests.lock().unwrap().clone()
    }

    pub fn down(&self) {
        *self.rate.lock().unwrap() = None;
    }
}

fn element<'a>(body: &'a str, name: &str) -> &'a str {
    let open = format!("<web:{name}>");
    let start = body.find(&open).map(|i| i + open.len()).unwrap_or(0);
    let end = body[start..].find('<').map_or(start, |i| start + i);
    &body[start..end]
}

async fn rates(stub: web::Data<MnbStub>, body: String) -> HttpResponse {
    let asked = (
        element(&body, "startDate").to_owned(),
        element(&body, "endDate").to_owned(),
        element(&body, "currencyNames").to_owned(),
    );
    stub.requests.lock().unwrap().push(asked.clone());
    let Some(rate) = *stub.rate.lock().unwrap() else {
        return HttpResponse::InternalServerError().body("down");
    };
    let end: NaiveDate = asked.1.parse().expect("an ISO endDate");
    let day = |back: i64| end - chrono::Duration::days(back);
    let inner = format!(
        r#"<MNBExchangeRates><Day date="{}"><Rate unit="1" curr="EUR">{rate}</Rate></Day><Day date="{}"><Rate unit="1" curr="EUR">380,00</Rate></Day></MNBExchangeRates>"#,
        day(1),
        day(3)
    )
    .replace('<', "&lt;")
    .replace('>', "&gt;");
    HttpResponse::Ok().content_type("text/xml; charset=utf-8").body(format!(
        r#"<?xml version="1.0" encoding="utf-8"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><GetExchangeRatesResponse xmlns="http://www.mnb.hu/webservices/"><GetExchangeRatesResult>{inner}</GetExchangeRatesResult></GetExchangeRatesResponse></s:Body></s:Envelope>"#
    ))
}

/// Starts the stub answering `rate` (MNB's text, e.g. `391,25`); returns its URL (what
/// `HUF_RATE_URL` would be).
pub fn start(rate: &'static str) -> (String, MnbStub) {
    let stub = MnbStub {
        requests: Arc::default(),
        rate: Arc::new(Mutex::new(Some(rate))),
    };
    let data = web::Data::new(stub.clone());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/arfolyamok.asmx", web::post().to(rates))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let port = server.addrs()[0].port();
    actix_web::rt::spawn(server.run());
    (format!("http://127.0.0.1:{port}/arfolyamok.asmx"), stub)
}
