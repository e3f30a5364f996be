use std::io::Cursor;

use reqwest::multipart::{Form, Part};
use serde_json::json;

use crate::helpers::{assert_error, assert_ok, spawn_app, spawn_app_with, TestApp};

fn png(width: u32, height: u32) -> Vec<u8> {
    let img = image::RgbImage::from_pixel(width, height, image::Rgb([10, 120, 200]));
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

async fn upload(app: &TestApp, token: &str, file_name: &str, bytes: Vec<u8>) -> reqwest::Response {
    let form = Form::new().part("image", Part::bytes(bytes).file_name(file_name.to_owned()));
    app.client
        .post(app.url("/api/auth/profile/image"))
        .bearer_auth(token)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

#[actix_web::test]
async fn the_name_can_be_changed_but_not_emptied() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let body = assert_ok(
        app.put_auth("/api/auth/profile", &ann.token, json!({"name": "  Ann Smith "}))
            .await,
    )
    .await;
    assert_eq!(body["name"], json!("Ann Smith"));
    let response = app
        .put_auth("/api/auth/profile", &ann.token, json!({"name": " "}))
        .await;
    assert_error(response, 400, "name_required").await;
    let profile = assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_eq!(profile["name"], json!("Ann Smith"));
}

#[actix_web::test]
async fn changing_the_password_revokes_other_tokens_and_returns_a_fresh_one() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let other_tab = assert_ok(app.login("ann@example.com", "secret1").await).await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let body = assert_ok(
        app.put_auth(
            "/api/auth/password",
            &ann.token,
            json!({"currentPassword": "secret1", "newPassword": "secret2"}),
        )
        .await,
    )
    .await;
    let fresh = body["token"].as_str().unwrap();
    assert_error(
        app.get_auth("/api/auth/profile", &ann.token).await,
        401,
        "unauthorized",
    )
    .await;
    assert_error(
        app.get_auth("/api/auth/profile", &other_tab).await,
        401,
        "unauthorized",
    )
    .await;
    assert_ok(app.get_auth("/api/auth/profile", fresh).await).await;
    assert_ok(app.login("ann@example.com", "secret2").await).await;
    assert_error(
        app.login("ann@example.com", "secret1").await,
        401,
        "invalid_credentials",
    )
    .await;
}

#[actix_web::test]
async fn a_wrong_current_password_changes_nothing() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let response = app
        .put_auth(
            "/api/auth/password",
            &ann.token,
            json!({"currentPassword": "not-it", "newPassword": "secret2"}),
        )
        .await;
    let body = assert_error(response, 400, "wrong_password").await;
    assert_eq!(body["message"], json!("Current password is incorrect"));
    assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_ok(app.login("ann@example.com", "secret1").await).await;
}

#[actix_web::test]
async fn deleting_the_account_removes_the_user_and_their_data() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let billing = json!({"billingType": "private", "billingInfo": {"name": "Ann", "address": "Fő utca 1", "city": "Budapest", "postalCode": "1011", "country": "HU"}});
    assert_ok(
        app.put_auth("/api/settings/billing-info", &ann.token, billing)
            .await,
    )
    .await;
    let image = assert_ok(upload(&app, &ann.token, "me.png", png(64, 64)).await).await;
    let image_file = image["profileImage"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();

    assert_ok(app.delete_auth("/api/auth/profile", &ann.token).await).await;
    assert_error(
        app.get_auth("/api/auth/profile", &ann.token).await,
        401,
        "unauthorized",
    )
    .await;
    assert_error(
        app.login("ann@example.com", "secret1").await,
        401,
        "invalid_credentials",
    )
    .await;
    assert!(app.state.db.billing_info(&ann.id).await.unwrap().is_none());
    assert!(!app
        .data_dir
        .path()
        .join("uploads/avatars")
        .join(image_file)
        .exists());
    // The e-mail is free again.
    app.register("Ann", "ann@example.com", "secret9").await;
}

#[actix_web::test]
async fn a_profile_image_is_stored_as_a_square_jpeg_and_can_be_removed() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let body = assert_ok(upload(&app, &ann.token, "me.png", png(800, 400)).await).await;
    let url = body["profileImage"].as_str().unwrap().to_owned();
    assert!(
        url.starts_with("/uploads/avatars/") && url.ends_with(".jpg"),
        "{url}"
    );
    let served = app.client.get(app.url(&url)).send().await.unwrap();
    assert_eq!(served.status(), 200);
    let stored = image::load_from_memory(&served.bytes().await.unwrap()).unwrap();
    assert_eq!((stored.width(), stored.height()), (256, 256));
    let profile = assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_eq!(profile["profileImage"], json!(url));

    // A new image replaces the old file.
    let second = assert_ok(upload(&app, &ann.token, "me2.png", png(300, 300)).await).await;
    assert_ne!(second["profileImage"], json!(url));
    assert_eq!(app.client.get(app.url(&url)).send().await.unwrap().status(), 404);

    let removed = assert_ok(app.delete_auth("/api/auth/profile/image", &ann.token).await).await;
    assert_eq!(removed["profileImage"], json!(null));
    let profile = assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_eq!(profile["profileImage"], json!(null));
}

#[actix_web::test]
async fn images_of_other_types_too_large_or_missing_are_refused_and_change_nothing() {
    let app = spawn_app_with(|s| s.uploads.avatar_max_mb = 1).await;
    let ann = app.register_ann().await;
    let gif = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x00\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;".to_vec();
    let body = assert_error(
        upload(&app, &ann.token, "me.png", gif).await,
        415,
        "image_type_unsupported",
    )
    .await;
    assert_eq!(
        body["message"],
        json!("Only JPEG, PNG and WebP images are accepted")
    );

    let mut huge = png(16, 16);
    huge.resize(2 * 1024 * 1024, 0);
    let body = assert_error(
        upload(&app, &ann.token, "big.png", huge).await,
        413,
        "image_too_large",
    )
    .await;
    assert_eq!(body["message"], json!("The image must be at most 1 MB"));

    let mut broken = png(64, 64);
    broken.truncate(60);
    assert_error(
        upload(&app, &ann.token, "broken.png", broken).await,
        400,
        "image_invalid",
    )
    .await;

    let no_file = Form::new().text("image", "not a file");
    let response = app
        .client
        .post(app.url("/api/auth/profile/image"))
        .bearer_auth(&ann.token)
        .multipart(no_file)
        .send()
        .await
        .unwrap();
    assert_error(response, 400, "image_required").await;

    let profile = assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_eq!(profile["profileImage"], json!(null));
    let stored = std::fs::read_dir(app.data_dir.path().join("uploads/avatars"))
        .unwrap()
        .count();
    assert_eq!(stored, 0);
}

/// A PNG that declares `width`×`height` pixels in a valid header, with almost no data:
/// a decompression bomb needs nothing more to make a naive decoder allocate.
fn declared_png(width: u32, height: u32) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // 8-bit RGB
    chunk(&mut out, b"IHDR", &ihdr);
    // A zlib stream of a few zero bytes: the rows it would inflate to are never sent.
    chunk(
        &mut out,
        b"IDAT",
        &[0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01],
    );
    chunk(&mut out, b"IEND", &[]);
    out
}

#[actix_web::test]
async fn a_decompression_bomb_is_refused_before_decoding_and_nothing_is_stored() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let bomb = declared_png(20_000, 20_000);
    assert!(bomb.len() < 100);
    let body = assert_error(
        upload(&app, &ann.token, "bomb.png", bomb).await,
        413,
        "image_too_many_pixels",
    )
    .await;
    assert_eq!(
        body["message"],
        json!("The image has too many pixels. Please upload a smaller picture.")
    );
    let profile = assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_eq!(profile["profileImage"], json!(null));
    let stored = std::fs::read_dir(app.data_dir.path().join("uploads/avatars"))
        .unwrap()
        .count();
    assert_eq!(stored, 0);
}

#[actix_web::test]
async fn past_its_decode_slots_an_upload_answers_server_busy() {
    let app = spawn_app_with(|s| s.uploads.image_decodes = 1).await;
    let ann = app.register_ann().await;
    let busy = app.state.images.reserve().unwrap();
    let response = upload(&app, &ann.token, "me.png", png(32, 32)).await;
    assert!(response.headers().contains_key("retry-after"));
    assert_error(response, 429, "server_busy").await;
    drop(busy);
    assert_ok(upload(&app, &ann.token, "me.png", png(32, 32)).await).await;
}
