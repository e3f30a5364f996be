//! The demo provider's checkout page (`GET /api/payments/demo/{id}`): plain HTML from the
//! server, in the owner's language and the product's colours (light or dark as the
//! system is), with no script (its policy allows none) and forms for "Pay" and "Cancel".

use chat_contract::states::{BillingCycle, PaymentStatus};

use crate::billing::invoices::pdf::{money, percent};
use crate::db::payments::PaymentRow;
use crate::i18n::Lang;

/// The page's words in one language.
struct Words {
    lang: &'static str,
    title: &'static str,
    intro: &'static str,
    plan: &'static str,
    net: &'static str,
    vat: &'static str,
    total: &'static str,
    pay: &'static str,
    cancel: &'static str,
    monthly: &'static str,
    one_time: &'static str,
    /// What the page says instead of the buttons once the payment is no longer open.
    succeeded: &'static str,
    failed: &'static str,
    canceled: &'static str,
    back: &'static str,
    decimal: char,
}

const EN: Words = Words {
    lang: "en",
    title: "Demo checkout",
    intro: "This is the built-in demo payment provider: no card is charged.",
    plan: "Plan",
    net: "Net",
    vat: "VAT",
    total: "Total",
    pay: "Pay",
    cancel: "Cancel",
    monthly: "monthly",
    one_time: "one-time",
    succeeded: "This payment is complete.",
    failed: "This payment failed.",
    canceled: "This payment was cancelled.",
    back: "Back to the plans",
    decimal: '.',
};

const HU: Words = Words {
    lang: "hu",
    title: "Bemutató fizetés",
    intro: "Ez a beépített bemutató fizetési szolgáltató: kártyát nem terhelünk.",
    plan: "Csomag",
    net: "Nettó",
    vat: "Áfa",
    total: "Összesen",
    pay: "Fizetés",
    cancel: "Mégse",
    monthly: "havi",
    one_time: "egyszeri",
    succeeded: "Ez a fizetés már megtörtént.",
    failed: "Ez a fizetés nem sikerült.",
    canceled: "Ezt a fizetést megszakították.",
    back: "Vissza a csomagokhoz",
    decimal: ',',
};

/// The product's colours (web/src/styles/global.css), light and dark.
const STYLE: &str = "\
:root{color-scheme:light dark;--bg:#f7f7f9;--surface:#fff;--text:#1b1d23;--muted:#5b606b;\
--border:#d9dce3;--primary:#3b5bdb;--primary-text:#fff;--focus:#4c6ef5}\
@media (prefers-color-scheme:dark){:root{--bg:#121318;--surface:#1b1d24;--text:#e8e9ee;\
--muted:#a3a7b3;--border:#343845;--primary:#748ffc;--primary-text:#0d1022;--focus:#91a7ff}}\
*{box-sizing:border-box}\
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;\
padding:1rem;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,sans-serif}\
main{width:100%;max-width:26rem;background:var(--surface);border:1px solid var(--border);\
border-radius:12px;padding:1.5rem}\
h1{font-size:1.35rem;margin:0 0 .5rem}p{margin:0 0 1rem;color:var(--muted)}\
table{width:100%;border-collapse:collapse;margin:0 0 1.25rem}\
td{padding:.4rem 0;border-bottom:1px solid var(--border)}td:last-child{text-align:right}\
tr:last-child td{border-bottom:0;font-weight:600}\
.actions{display:flex;gap:.75rem;flex-wrap:wrap}form{margin:0;flex:1 1 auto}\
button,a.button{display:block;width:100%;font:inherit;font-weight:600;padding:.65rem 1rem;\
border-radius:8px;border:1px solid var(--border);background:var(--surface);color:var(--text);\
cursor:pointer;text-align:center;text-decoration:none;white-space:nowrap}\
button.primary{background:var(--primary);border-color:var(--primary);color:var(--primary-text)}\
button:focus-visible,a:focus-visible{outline:2px solid var(--focus);outline-offset:2px}";

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page of `payment` in `lang`; `plan_name` as the catalogue names its plan.
pub fn page(lang: Lang, payment: &PaymentRow, plan_name: &str) -> String {
    let w = match lang {
        Lang::HuHu => &HU,
        Lang::EnUs => &EN,
    };
    // The invoice's own number formats, with the language's decimal mark.
    let local = |text: String| {
        if w.decimal == '.' {
            text
        } else {
            text.replace('.', ",")
        }
    };
    let amount = |minor: i64| local(money(minor, payment.currency.as_str()));
    let vat_pct = local(percent(payment.vat_rate));
    let cycle = match payment.billing_cycle {
        BillingCycle::Monthly => w.monthly,
        BillingCycle::OneTime => w.one_time,
    };
    let id = escape(&payment.id);
    let actions = match payment.status {
        PaymentStatus::Pending => format!(
            r#"<div class="actions"><form method="post" action="/api/payments/demo/{id}/pay"><button class="primary">{pay} {total}</button></form>
<form method="post" action="/api/payments/demo/{id}/cancel"><button>{cancel}</button></form></div>"#,
            pay = w.pay,
            total = amount(payment.total_amount),
            cancel = w.cancel,
        ),
        done => {
            let said = match done {
                PaymentStatus::Succeeded => w.succeeded,
                PaymentStatus::Failed => w.failed,
                _ => w.canceled,
            };
            format!(
                r#"<p>{said}</p><a class="button" href="/settings#subscription">{}</a>"#,
                w.back
            )
        }
    };
    format!(
        r#"<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>
<style>{STYLE}</style></head><body><main><h1>{title}</h1><p>{intro}</p>
<table><tr><td>{plan_label}</td><td>{plan} ({cycle})</td></tr>
<tr><td>{net_label}</td><td>{net}</td></tr><tr><td>{vat_label} {vat_pct}</td><td>{vat}</td></tr>
<tr><td>{total_label}</td><td>{total}</td></tr></table>
{actions}</main></body></html>"#,
        lang = w.lang,
        title = w.title,
        intro = w.intro,
        plan_label = w.plan,
        plan = escape(plan_name),
        net_label = w.net,
        net = amount(payment.net_amount),
        vat_label = w.vat,
        vat = amount(payment.vat_amount),
        total_label = w.total,
        total = amount(payment.total_amount),
    )
}
