//! Characters nobody sees (Unicode format characters: bidi overrides and isolates,
//! zero-width spaces…) are refused in every field a person types on one line, and
//! removed from names nobody typed here (an upload's, a generated title), so
//! `\u{202e}gnp.exe` can never show as `exe.png`. One test per field.

use reqwest::Response;
use serde_json::{json, Value};

use crate::chat::{chat_app, send};
use crate::helpers::{assert_error, assert_ok, spawn_app, TestApp, TestUser};
use crate::ws::WsClient;

/// Right-to-left override: what follows it shows reversed.
const RLO: &str = "\u{202e}";

/// Whether `text` holds a character of Unicode category Cf that is not part of an emoji.
fn has_format_chars(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{ad}')
    })
}

/// A refusal that names the field and says what to remove, in the request's language.
async fn assert_invisible(response: Response, en: &str) {
    let body = assert_error(response, 400, "invisible_characters").await;
    assert_eq!(
        body["message"],
        json!(format!(
            "{en} contains invisible characters, such as text direction controls. Please remove them."
        ))
    );
}

#[actix_web::test]
async fn a_registration_name_with_a_bidi_override_is_refused_in_both_languages() {
    let app = spawn_app().await;
    let body = |name: String, language: &str| {
        json!({"name": name, "email": "ann@example.com", "password": "secret1",
               "privacyAccepted": true, "language": language})
    };
    let refused = app
        .post_lang(
            "/api/auth/register/send-code",
            "en-US",
            body(format!("Ann{RLO}gnp.exe"), "en-US"),
        )
        .await;
    assert_invisible(refused, "Name").await;
    let refused = app
        .post_lang(
            "/api/auth/register/send-code",
            "hu-HU",
            body("Ann\u{2066}x".to_owned(), "hu-HU"),
        )
        .await;
    let refused = assert_error(refused, 400, "invisible_characters").await;
    assert_eq!(
        refused["message"],
        json!("A név láthatatlan karaktereket tartalmaz, például szövegirány-vezérlőt. Kérjük, távolítsa el őket.")
    );
    // Nothing was sent: no code waits for that address.
    assert_eq!(app.mailbox.count_for("ann@example.com"), 0);
    // An e-mail address with a zero-width space is no address.
    let refused = app
        .post_lang(
            "/api/auth/register/send-code",
            "en-US",
            json!({"name": "Ann", "email": "ann\u{200b}@example.com", "password": "secret1",
                   "privacyAccepted": true, "language": "en-US"}),
        )
        .await;
    assert_error(refused, 400, "email_invalid").await;
}

#[actix_web::test]
async fn a_profile_name_with_a_zero_width_space_is_refused_and_the_name_kept() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let refused = app
        .put_auth("/api/auth/profile", &ann.token, json!({"name": "An\u{200b}n"}))
        .await;
    assert_invisible(refused, "Name").await;
    // Emoji keep their joiners: a name is more than ASCII.
    let renamed = app
        .put_auth(
            "/api/auth/profile",
            &ann.token,
            json!({"name": "Ann 👩\u{200d}💻"}),
        )
        .await;
    assert_eq!(assert_ok(renamed).await["name"], json!("Ann 👩\u{200d}💻"));
}

async fn first_conversation(app: &TestApp, user: &TestUser, content: &str) -> (WsClient, Value) {
    let (mut tab, _) = WsClient::ready(app, &user.token).await;
    tab.send(send("c1", None, content)).await;
    tab.until("message.completed").await;
    let titled = tab.until("conversation.updated").await.pop().unwrap();
    (tab, titled["conversation"].clone())
}

#[actix_web::test]
async fn a_conversation_title_is_refused_with_one_and_a_generated_title_never_has_one() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let (_tab, conversation) = first_conversation(&app, &ann, &format!("Hello {RLO}there, friend")).await;
    // The title made of the first words lost the override.
    let title = conversation["title"].as_str().unwrap();
    assert!(!has_format_chars(title), "{title:?}");
    assert!(title.contains("Hello"), "{title:?}");
    let id = conversation["_id"].as_str().unwrap();
    let path = format!("/api/conversations/{id}");
    let refused = app
        .patch_auth(&path, &ann.token, json!({"title": format!("Plans{RLO}fdp.exe")}))
        .await;
    assert_invisible(refused, "Title").await;
    let stored = assert_ok(app.get_auth(&path, &ann.token).await).await;
    assert_eq!(stored["data"]["title"], json!(title));
}

#[actix_web::test]
async fn a_project_name_or_instructions_with_a_bidi_control_are_refused() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    app.set_plan(&ann.id, "plus").await;
    let post = |body: Value| {
        app.client
            .post(app.url("/api/projects"))
            .bearer_auth(&ann.token)
            .json(&body)
            .send()
    };
    let refused = post(json!({"name": format!("Garden{RLO}"), "instructions": ""}))
        .await
        .unwrap();
    assert_invisible(refused, "Name").await;
    let refused = post(json!({"name": "Garden", "instructions": "Answer\u{2067} as a gardener.\nBriefly."}))
        .await
        .unwrap();
    assert_invisible(refused, "Instructions").await;
    let created = post(json!({"name": "Garden", "instructions": "Answer as a gardener.\nBriefly."}))
        .await
        .unwrap();
    let created: Value = created.json().await.unwrap();
    let id = created["data"]["_id"].as_str().unwrap().to_owned();
    let refused = app
        .patch_auth(
            &format!("/api/projects/{id}"),
            &ann.token,
            json!({"name": "Gar\u{feff}den"}),
        )
        .await;
    assert_invisible(refused, "Name").await;
    let listed = assert_ok(app.get_auth("/api/projects", &ann.token).await).await;
    assert_eq!(listed["data"][0]["name"], json!("Garden"));
}

#[actix_web::test]
async fn every_billing_field_and_the_ai_personalization_refuse_invisible_characters() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let complete = json!({"name": "Ann Smith", "companyName": "Acme Kft.", "address": "Fő utca 1",
                          "city": "Budapest", "postalCode": "1011", "country": "HU",
                          "vatNumber": "12345678-2-41"});
    for (field, label) in [
        ("name", "Name"),
        ("companyName", "Company name"),
        ("address", "Address"),
        ("city", "City"),
        ("postalCode", "Postal code"),
        ("country", "Country"),
        ("vatNumber", "VAT number"),
    ] {
        let mut info = complete.clone();
        info[field] = json!(format!("{RLO}{}", complete[field].as_str().unwrap()));
        let refused = app
            .put_auth(
                "/api/settings/billing-info",
                &ann.token,
                json!({"billingType": "company", "billingInfo": info}),
            )
            .await;
        assert_invisible(refused, label).await;
    }
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(settings["billingInfo"], Value::Null, "{settings}");

    for (field, label) in [("userName", "The name the AI uses"), ("userInfo", "About you")] {
        let mut ai = json!({"enabled": true, "userName": "Ann", "userInfo": "I grow roses.\nAnd tulips."});
        ai[field] = json!(format!("Ann\u{200b}{RLO}"));
        let refused = app
            .put_auth("/api/settings", &ann.token, json!({"aiPersonalization": ai}))
            .await;
        assert_invisible(refused, label).await;
    }
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(settings["settings"]["aiPersonalization"]["userName"], json!(""));
}

#[actix_web::test]
async fn an_uploaded_file_name_loses_its_bidi_override() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let mut png = std::io::Cursor::new(Vec::new());
    image::RgbImage::from_pixel(8, 8, image::Rgb([1, 2, 3]))
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(png.into_inner()).file_name(format!("photo{RLO}gnp.exe.png")),
    );
    let uploaded = app
        .client
        .post(app.url("/api/files"))
        .bearer_auth(&ann.token)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.status(), 201);
    let uploaded: Value = uploaded.json().await.unwrap();
    // Shown as what it is, in the order it was written.
    assert_eq!(uploaded["data"]["name"], json!("photognp.exe.jpg"));
}
