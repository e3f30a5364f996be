//! An invoice as a one-page A4 PDF, labels in Hungarian and English.
//!
//! The text is set in DejaVu Sans (its licence allows embedding; `assets/fonts/`), because
//! the standard PDF fonts with their Latin-1 encoding cannot show ő or ű. Only the glyphs
//! the invoice uses are embedded (a few kB), as a CID font with a ToUnicode map so the
//! text can be searched and copied.

use std::collections::BTreeSet;

use anyhow::Context;
use chrono::TimeZone;
use chrono_tz::Tz;
use pdf_writer::types::{CidFontType, FontFlags, SystemInfo};
use pdf_writer::{Content, Filter, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

use crate::billing::huf_rate::{HufVat, Source};
use crate::billing::vat::{Treatment, VatRules};
use crate::db::invoices::InvoiceRow;
use chat_contract::states::{BillingCycle, InvoiceKind};
use chat_contract::views::VatCheckStatus;

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

const PAGE_WIDTH: f32 = 595.0;
const PAGE_HEIGHT: f32 = 842.0;
const MARGIN: f32 = 56.0;

/// A piece of text at a place on the page.
struct Run {
    x: f32,
    y: f32,
    size: f32,
    text: String,
}

/// The page being laid out; the font is written once every glyph is known.
struct Page<'f> {
    face: ttf_parser::Face<'f>,
    runs: Vec<Run>,
    lines: Vec<(f32, f32, f32)>,
}

impl Page<'_> {
    fn width(&self, text: &str, size: f32) -> f32 {
        let units = f32::from(self.face.units_per_em());
        text.chars()
            .filter_map(|c| self.face.glyph_index(c))
            .filter_map(|g| self.face.glyph_hor_advance(g))
            .map(|a| f32::from(a) * size / units)
            .sum()
    }

    fn text(&mut self, x: f32, y: f32, size: f32, text: impl Into<String>) {
        self.runs.push(Run {
            x,
            y,
            size,
            text: text.into(),
        });
    }

    /// Text that ends at `right`.
    fn text_right(&mut self, right: f32, y: f32, size: f32, text: impl Into<String>) {
        let text = text.into();
        let x = right - self.width(&text, size);
        self.text(x, y, size, text);
    }

    fn rule(&mut self, y: f32) {
        self.lines.push((MARGIN, PAGE_WIDTH - MARGIN, y));
    }
}

/// Minor units as `1 234.56 EUR`.
pub fn money(minor: i64, currency: &str) -> String {
    let sign = if minor < 0 { "-" } else { "" };
    let minor = minor.abs();
    format!("{sign}{}.{:02} {currency}", grouped(minor / 100), minor % 100)
}

/// Whole forints, as Hungarian invoices state them: `-1 056 HUF`.
pub fn forints(huf: i64) -> String {
    let sign = if huf < 0 { "-" } else { "" };
    format!("{sign}{} HUF", grouped(huf.abs()))
}

/// `1234567` as `1 234 567`.
fn grouped(whole: i64) -> String {
    let whole = whole.to_string();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(' ');
        }
        grouped.push(c);
    }
    grouped
}

fn date(ms: i64, tz: Tz) -> String {
    tz.timestamp_millis_opt(ms)
        .single()
        .map_or_else(String::new, |t| t.format("%Y-%m-%d").to_string())
}

/// A VAT rate as `27%` or `5.5%`.
pub fn percent(rate: f64) -> String {
    let pct = (rate * 1000.0).round() / 10.0;
    if pct.fract() == 0.0 {
        format!("{pct:.0}%")
    } else {
        format!("{pct:.1}%")
    }
}

/// The invoice's PDF. `tz` dates it, `vat` gives the notes for 0 % invoices.
pub fn render(invoice: &InvoiceRow, tz: Tz, vat: &VatRules) -> anyhow::Result<Vec<u8>> {
    let face = ttf_parser::Face::parse(FONT, 0).context("reading the embedded font")?;
    let mut page = Page {
        face,
        runs: Vec::new(),
        lines: Vec::new(),
    };
    lay_out(&mut page, invoice, tz, vat);
    write(&page, invoice)
}

/// The page of the invoice, top to bottom; each part answers where the next begins.
fn lay_out(page: &mut Page<'_>, i: &InvoiceRow, tz: Tz, vat: &VatRules) {
    let y = heading(page, i, tz);
    let y = parties(page, i, y);
    let y = item(page, i, tz, y);
    let y = totals(page, i, y);
    notes(page, i, tz, vat, y);
    page.text(
        MARGIN,
        MARGIN,
        8.0,
        "A számla elektronikusan készült, aláírás nélkül érvényes. / Issued electronically; valid without signature.",
    );
}

/// The document's title, in both languages as everything printed: a credit note is a
/// "Jóváíró számla" (it refunds, with negative amounts, part or all of an invoice).
fn title(i: &InvoiceRow) -> &'static str {
    match i.kind {
        InvoiceKind::Invoice => "Számla / Invoice",
        InvoiceKind::CreditNote => "Jóváíró számla / Credit note",
    }
}

/// The number and the dates of the invoice.
fn heading(page: &mut Page<'_>, i: &InvoiceRow, tz: Tz) -> f32 {
    let right = PAGE_WIDTH - MARGIN;
    let mut y = PAGE_HEIGHT - MARGIN - 10.0;
    page.text(MARGIN, y, 22.0, title(i));
    page.text_right(right, y, 14.0, i.number.clone());
    y -= 30.0;
    let mut facts = vec![
        ("Kelt / Issued", date(i.issued_at, tz)),
        ("Teljesítés / Date of supply", date(i.period_start, tz)),
        ("Fizetés módja / Payment", "bankkártya / card, paid".to_owned()),
        ("Tranzakció / Transaction", i.transaction_id.clone()),
    ];
    if i.kind == InvoiceKind::CreditNote {
        // What a credit note corrects: the invoice it refers to, by its number.
        facts[2] = ("Visszatérítés / Refund", "bankkártyára / to the card".to_owned());
        let referred = i.credit_note_of_number.clone().unwrap_or_default();
        facts.insert(0, ("Helyesbített számla / Refers to invoice", referred));
    }
    for (label, value) in facts {
        page.text(MARGIN, y, 9.0, label);
        page.text(MARGIN + 150.0, y, 9.0, value);
        y -= 13.0;
    }
    y
}

/// The seller and the buyer, side by side.
fn parties(page: &mut Page<'_>, i: &InvoiceRow, mut y: f32) -> f32 {
    y -= 16.0;
    let column = MARGIN + (PAGE_WIDTH - 2.0 * MARGIN) / 2.0;
    page.text(MARGIN, y, 10.0, "Eladó / Seller");
    page.text(column, y, 10.0, "Vevő / Buyer");
    y -= 16.0;
    let seller = [
        i.seller_name.clone(),
        i.seller_address.clone(),
        i.seller_country.clone(),
        format!("Adószám / VAT no.: {}", i.seller_vat_number),
    ];
    let mut buyer = Vec::new();
    if let Some(company) = i.buyer_company.as_deref().filter(|c| !c.is_empty()) {
        buyer.push(company.to_owned());
    }
    buyer.push(i.buyer_name.clone());
    buyer.push(i.buyer_address.clone());
    buyer.push(format!("{} {}", i.buyer_postal_code, i.buyer_city));
    buyer.push(i.buyer_country.clone());
    if let Some(number) = i.buyer_vat_number.as_deref().filter(|n| !n.is_empty()) {
        buyer.push(format!("Adószám / VAT no.: {number}"));
    }
    let rows = seller.len().max(buyer.len());
    for row in 0..rows {
        if let Some(line) = seller.get(row) {
            page.text(MARGIN, y, 10.0, line.clone());
        }
        if let Some(line) = buyer.get(row) {
            page.text(column, y, 10.0, line.clone());
        }
        y -= 14.0;
    }
    y
}

/// The columns of the item and totals: net, VAT %, VAT, gross (right edges).
fn amount_columns() -> [f32; 4] {
    let right = PAGE_WIDTH - MARGIN;
    [right - 250.0, right - 175.0, right - 90.0, right]
}

/// The plan bought, its amounts and its period.
fn item(page: &mut Page<'_>, i: &InvoiceRow, tz: Tz, mut y: f32) -> f32 {
    y -= 20.0;
    let cols = amount_columns();
    page.text(MARGIN, y, 9.0, "Megnevezés / Description");
    page.text_right(cols[0], y, 9.0, "Nettó / Net");
    page.text_right(cols[1], y, 9.0, "ÁFA % / VAT %");
    page.text_right(cols[2], y, 9.0, "ÁFA / VAT");
    page.text_right(cols[3], y, 9.0, "Bruttó / Gross");
    y -= 6.0;
    page.rule(y);
    y -= 16.0;
    let cycle = if i.billing_cycle == BillingCycle::Monthly {
        "havi / monthly"
    } else {
        "egyszeri / one-time"
    };
    page.text(MARGIN, y, 10.0, format!("{} ({cycle})", i.plan_name));
    page.text_right(cols[0], y, 10.0, money(i.net_amount, i.currency.as_str()));
    page.text_right(cols[1], y, 10.0, percent(i.vat_rate));
    page.text_right(cols[2], y, 10.0, money(i.vat_amount, i.currency.as_str()));
    page.text_right(cols[3], y, 10.0, money(i.total_amount, i.currency.as_str()));
    y -= 13.0;
    page.text(
        MARGIN,
        y,
        8.0,
        format!(
            "Időszak / Period: {} – {}",
            date(i.period_start, tz),
            date(i.period_end, tz)
        ),
    );
    y -= 10.0;
    page.rule(y);
    y -= 18.0;
    y
}

fn totals(page: &mut Page<'_>, i: &InvoiceRow, mut y: f32) -> f32 {
    let (right, cols) = (PAGE_WIDTH - MARGIN, amount_columns());
    let totals = [
        (
            "Nettó összesen / Total net",
            money(i.net_amount, i.currency.as_str()),
        ),
        (
            "ÁFA összesen / Total VAT",
            money(i.vat_amount, i.currency.as_str()),
        ),
    ];
    for (label, value) in totals {
        page.text_right(cols[1], y, 10.0, label);
        page.text_right(right, y, 10.0, value);
        y -= 15.0;
    }
    let due = match i.kind {
        InvoiceKind::Invoice => "Fizetendő / Total due",
        InvoiceKind::CreditNote => "Visszatérítendő / Total refunded",
    };
    page.text_right(cols[1], y, 12.0, due);
    page.text_right(right, y, 12.0, money(i.total_amount, i.currency.as_str()));
    y -= 15.0;
    // Hungarian VAT law: an invoice in another currency states its VAT in forints too.
    if let Some(huf) = HufVat::from_json(i.huf_vat.as_deref()) {
        page.text_right(cols[1], y, 10.0, "ÁFA forintban / VAT in HUF");
        page.text_right(right, y, 10.0, forints(huf.vat_huf));
        y -= 12.0;
        let rate = format!("{:.2}", huf.rate);
        let line = match huf.source {
            Source::Mnb => format!("MNB árfolyam / MNB rate ({}): 1 EUR = {rate} HUF", huf.rate_date),
            Source::Fallback => format!("Árfolyam / Exchange rate ({}): 1 EUR = {rate} HUF", huf.rate_date),
        };
        page.text_right(right, y, 8.0, line);
        y -= 12.0;
    }
    y - 15.0
}

/// Why the VAT is what it is, when it is not the standard rate.
fn notes(page: &mut Page<'_>, i: &InvoiceRow, tz: Tz, vat: &VatRules, mut y: f32) {
    let right = PAGE_WIDTH - MARGIN;
    // What the reverse charge rested on, for an auditor years later.
    if let Some(check) = crate::billing::vies::Check::from_json(i.vat_check.as_deref())
        .filter(|c| i.vat_treatment == Treatment::ReverseCharge && c.status == VatCheckStatus::Valid)
    {
        let line = format!(
            "Közösségi adószám ellenőrizve (VIES) / VAT number confirmed in VIES: {}, {}",
            check.vat_number,
            date(check.checked_at, tz)
        );
        for line in wrap(page, &line, 9.0, right - MARGIN) {
            page.text(MARGIN, y, 9.0, line);
            y -= 12.0;
        }
    }
    let note = match i.vat_treatment {
        Treatment::ReverseCharge => Some(vat.reverse_charge_note.as_str()),
        Treatment::OutsideEu => Some(vat.outside_eu_note.as_str()),
        Treatment::Standard => None,
    };
    if let Some(note) = note {
        for line in wrap(page, note, 9.0, right - MARGIN) {
            page.text(MARGIN, y, 9.0, line);
            y -= 12.0;
        }
    }
}

/// `text` broken into lines no wider than `width`.
fn wrap(page: &Page<'_>, text: &str, size: f32, width: f32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_owned()
        } else {
            format!("{line} {word}")
        };
        if !line.is_empty() && page.width(&candidate, size) > width {
            lines.push(std::mem::replace(&mut line, word.to_owned()));
        } else {
            line = candidate;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

fn deflate(data: &[u8]) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec_zlib(data, 6)
}

/// The font's glyphs the page uses, renumbered from 1 in the subset (0 is .notdef).
struct Subset {
    /// Each glyph used (its id in the full font) with the character it shows.
    used: BTreeSet<(u16, char)>,
    remapper: subsetter::GlyphRemapper,
    /// The subset font file.
    font: Vec<u8>,
}

impl Subset {
    fn of(page: &Page<'_>) -> anyhow::Result<Subset> {
        let face = &page.face;
        let mut used = BTreeSet::new();
        for run in &page.runs {
            used.extend(
                run.text
                    .chars()
                    .filter_map(|c| face.glyph_index(c).map(|g| (g.0, c))),
            );
        }
        let mut remapper = subsetter::GlyphRemapper::new();
        for (glyph, _) in &used {
            remapper.remap(*glyph);
        }
        let font = subsetter::subset(FONT, 0, &remapper)
            .map_err(|e| anyhow::anyhow!("subsetting the font: {e:?}"))?;
        Ok(Subset { used, remapper, font })
    }

    fn new_id(&self, old: u16) -> u16 {
        self.remapper.get(old).unwrap_or(0)
    }
}

/// The ids of the PDF's objects.
struct Ids {
    catalog: Ref,
    pages: Ref,
    page: Ref,
    content: Ref,
    type0: Ref,
    cid: Ref,
    descriptor: Ref,
    font_file: Ref,
    cmap: Ref,
    info: Ref,
}

const FONT_NAME: Name<'static> = Name(b"F1");
const BASE_FONT: Name<'static> = Name(b"AAAAAA+DejaVuSans");

fn write(page: &Page<'_>, invoice: &InvoiceRow) -> anyhow::Result<Vec<u8>> {
    let subset = Subset::of(page)?;
    let mut refs = (1..).map(Ref::new);
    let mut next = || refs.next().expect("enough object ids");
    let ids = Ids {
        catalog: next(),
        pages: next(),
        page: next(),
        content: next(),
        type0: next(),
        cid: next(),
        descriptor: next(),
        font_file: next(),
        cmap: next(),
        info: next(),
    };
    let mut pdf = Pdf::new();
    write_page(&mut pdf, &ids, page, &subset, invoice);
    write_font(&mut pdf, &ids, &page.face, &subset);
    Ok(pdf.finish())
}

/// The document, its one page and the page's content: the rules and the text runs.
fn write_page(pdf: &mut Pdf, ids: &Ids, page: &Page<'_>, subset: &Subset, invoice: &InvoiceRow) {
    pdf.catalog(ids.catalog).pages(ids.pages);
    pdf.pages(ids.pages).kids([ids.page]).count(1);
    let mut p = pdf.page(ids.page);
    p.media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT))
        .parent(ids.pages)
        .contents(ids.content);
    p.resources().fonts().pair(FONT_NAME, ids.type0);
    p.finish();
    pdf.document_info(ids.info)
        .title(TextStr(&format!(
            "{} {}",
            match invoice.kind {
                InvoiceKind::Invoice => "Invoice",
                InvoiceKind::CreditNote => "Credit note",
            },
            invoice.number
        )))
        .producer(TextStr("chat-server"));

    let mut content = Content::new();
    content.set_line_width(0.5);
    for &(x1, x2, y) in &page.lines {
        content.move_to(x1, y).line_to(x2, y).stroke();
    }
    for run in &page.runs {
        let glyphs: Vec<u8> = run
            .text
            .chars()
            .filter_map(|c| page.face.glyph_index(c))
            .flat_map(|g| subset.new_id(g.0).to_be_bytes())
            .collect();
        content
            .begin_text()
            .set_font(FONT_NAME, run.size)
            .next_line(run.x, run.y)
            .show(Str(&glyphs))
            .end_text();
    }
    let content = deflate(&content.finish());
    pdf.stream(ids.content, &content).filter(Filter::FlateDecode);
}

/// The embedded subset font: its objects, widths, file and the map back to text.
fn write_font(pdf: &mut Pdf, ids: &Ids, face: &ttf_parser::Face<'_>, subset: &Subset) {
    pdf.type0_font(ids.type0)
        .base_font(BASE_FONT)
        .encoding_predefined(Name(b"Identity-H"))
        .descendant_font(ids.cid)
        .to_unicode(ids.cmap);
    let system_info = SystemInfo {
        registry: Str(b"Adobe"),
        ordering: Str(b"Identity"),
        supplement: 0,
    };
    let scale = 1000.0 / f32::from(face.units_per_em());
    let mut cid_font = pdf.cid_font(ids.cid);
    cid_font
        .subtype(CidFontType::Type2)
        .base_font(BASE_FONT)
        .system_info(system_info)
        .font_descriptor(ids.descriptor)
        .default_width(0.0)
        .cid_to_gid_map_predefined(Name(b"Identity"));
    {
        let mut widths = cid_font.widths();
        for (glyph, _) in &subset.used {
            let advance = face.glyph_hor_advance(ttf_parser::GlyphId(*glyph)).unwrap_or(0);
            widths.consecutive(subset.new_id(*glyph), [f32::from(advance) * scale]);
        }
    }
    cid_font.finish();

    let bbox = face.global_bounding_box();
    pdf.font_descriptor(ids.descriptor)
        .name(BASE_FONT)
        .flags(FontFlags::NON_SYMBOLIC)
        .bbox(Rect::new(
            f32::from(bbox.x_min) * scale,
            f32::from(bbox.y_min) * scale,
            f32::from(bbox.x_max) * scale,
            f32::from(bbox.y_max) * scale,
        ))
        .italic_angle(0.0)
        .ascent(f32::from(face.ascender()) * scale)
        .descent(f32::from(face.descender()) * scale)
        .cap_height(f32::from(face.capital_height().unwrap_or(face.ascender())) * scale)
        .stem_v(80.0)
        .font_file2(ids.font_file);
    let font = deflate(&subset.font);
    pdf.stream(ids.font_file, &font).filter(Filter::FlateDecode);

    let mut cmap = pdf_writer::types::UnicodeCmap::new(Name(b"Custom"), system_info);
    for (glyph, c) in &subset.used {
        cmap.pair(subset.new_id(*glyph), *c);
    }
    let cmap = cmap.finish();
    pdf.cmap(ids.cmap, &cmap);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_is_grouped_with_two_decimals() {
        assert_eq!(money(635, "EUR"), "6.35 EUR");
        assert_eq!(money(190_500, "HUF"), "1 905.00 HUF");
        assert_eq!(money(123_456_789, "EUR"), "1 234 567.89 EUR");
        assert_eq!(percent(0.27), "27%");
        assert_eq!(percent(0.255), "25.5%");
        assert_eq!(percent(0.0), "0%");
    }
}
