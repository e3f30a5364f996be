//! `/api/invoices`: the user's invoices and credit notes, and their PDFs. Another user's
//! invoice is a 404, as if it did not exist.

use actix_web::http::header::{ContentDisposition, DispositionParam, DispositionType};
use actix_web::{web, HttpResponse};
use chat_contract::answers;
use chat_contract::states::InvoiceKind;

use crate::db::invoices::InvoiceRow;
use crate::error::{ErrorCode, Result};
use crate::http::auth_user::AuthUser;
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/invoices")
            .route("", web::get().to(list))
            .route("/{id}.pdf", web::get().to(pdf)),
    );
}

type Data = web::Data<AppState>;

async fn list(state: Data, user: AuthUser) -> Result<HttpResponse> {
    let invoices = state.billing.invoices_of(user.id()).await?;
    let data: Vec<_> = invoices.iter().map(crate::views::invoice).collect();
    Ok(HttpResponse::Ok().json(answers::Data::new(data)))
}

async fn pdf(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    let invoice = state
        .billing
        .invoice_of_user(user.id(), &id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    pdf_answer(&state, &invoice)
}

/// An invoice or credit note as a PDF download (the user's own, or any for an admin).
pub fn pdf_answer(state: &AppState, invoice: &InvoiceRow) -> Result<HttpResponse> {
    let bytes = state.billing.invoice_pdf(invoice)?;
    Ok(HttpResponse::Ok()
        .content_type("application/pdf")
        .insert_header(ContentDisposition {
            disposition: DispositionType::Attachment,
            parameters: vec![DispositionParam::Filename(format!(
                "{}-{}.pdf",
                match invoice.kind {
                    InvoiceKind::Invoice => "invoice",
                    InvoiceKind::CreditNote => "credit-note",
                },
                invoice.number
            ))],
        })
        // Invoices hold personal data: no shared cache keeps them.
        .insert_header(("Cache-Control", "private, no-store"))
        .body(bytes))
}
