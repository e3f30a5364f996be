//! Suspending an account from the operator console (`PUT /api/admin/users/{id}/suspension`):
//! the user's tabs close on every instance, every call and the login answer
//! `account_suspended`, lifting it lets the user sign in again, each change is logged with
//! it, and a plan that renews stops renewing (at Stripe too) while suspended.

use chat_contract::states::{BillingCycle, PlanType};
use chat_server::db::subscriptions::{Activation, SubscriptionRow};
use chat_server::plans::Currency;
use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_ok, spawn_app, TestApp, TestUser};
use crate::stripe::{eventually, spawn_stripe_app, subscribe_monthly};
use crate::ws::WsClient;

fn path(user: &TestUser) -> String {
    format!("/api/admin/users/{}/suspension", user.id)
}

async fn suspend(app: &TestApp, admin: &TestUser, user: &TestUser, suspended: bool) -> Value {
    let body = json!({"suspended": suspended, "reason": "abuse report #12"});
    assert_ok(app.put_auth(&path(user), &admin.token, body).await).await
}

/// Root (an admin) and Ann.
async fn root_and_ann(app: &TestApp) -> (TestUser, TestUser) {
    let root = app.register("Root", "root@example.com", "secret1").await;
    app.grant_admin("root@example.com").await;
    (root, app.register_ann().await)
}

async fn audit_of(app: &TestApp, admin: &TestUser, user: &TestUser) -> Vec<Value> {
    let page = assert_ok(
        app.get_auth(&format!("/api/admin/audit?userId={}", user.id), &admin.token)
            .await,
    )
    .await;
    page["data"].as_array().unwrap().clone()
}

async fn subscription_row(app: &TestApp, user: &TestUser) -> SubscriptionRow {
    app.state
        .db
        .subscription(&user.id, app.clock_now())
        .await
        .unwrap()
}

#[actix_web::test]
async fn a_suspension_closes_the_users_tabs_and_every_call_then_answers_account_suspended() {
    let app = spawn_app().await;
    let (root, ann) = root_and_ann(&app).await;
    let bob = app.register("Bob", "bob@example.com", "secret1").await;
    assert_ok(
        app.put_auth("/api/settings", &bob.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;

    let answer = suspend(&app, &root, &ann, true).await;
    assert_eq!(answer["success"], json!(true));
    assert_eq!(answer["data"]["suspended"], json!(true));
    assert!(answer["data"]["suspendedAt"].is_string(), "{answer}");
    let revoked = tab.expect("session.revoked").await;
    assert_eq!(revoked["reason"], json!("account_suspended"));
    let close = tab.close_frame().await.expect("a close frame");
    assert_eq!(u16::from(close.code), 1008);

    // Every call with the token, whatever the route, in the user's language.
    for route in ["/api/auth/profile", "/api/conversations", "/api/subscription"] {
        let refused = assert_error(app.get_auth(route, &ann.token).await, 403, "account_suspended").await;
        assert_eq!(
            refused["message"],
            json!("This account is suspended. Please contact support.")
        );
    }
    let change = app
        .put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
        .await;
    assert_error(change, 403, "account_suspended").await;
    // The socket's upgrade does not let the token in either.
    let mut again = WsClient::connect(&app, Some(&ann.token)).await;
    assert_eq!(u16::from(again.close_frame().await.unwrap().code), 1008);

    suspend(&app, &root, &bob, true).await;
    let refused = assert_error(
        app.get_auth("/api/auth/profile", &bob.token).await,
        403,
        "account_suspended",
    )
    .await;
    assert_eq!(
        refused["message"],
        json!("Ez a fiók fel van függesztve. Kérjük, forduljon az ügyfélszolgálathoz.")
    );
    // Other users go on as before.
    assert_ok(app.get_auth("/api/auth/profile", &root.token).await).await;
}

#[actix_web::test]
async fn a_suspension_closes_the_users_tabs_on_every_instance() {
    if std::env::var("TEST_REDIS_URL").is_err() {
        // Events reach another instance through Redis; the suite on Redis runs this test.
        return;
    }
    let first = spawn_app().await;
    let second = first.another_instance(|_| {}).await;
    let (root, ann) = root_and_ann(&first).await;
    let (mut here, _) = WsClient::ready(&first, &ann.token).await;
    let (mut there, _) = WsClient::ready(&second, &ann.token).await;

    suspend(&first, &root, &ann, true).await;
    for tab in [&mut here, &mut there] {
        let revoked = tab.expect("session.revoked").await;
        assert_eq!(revoked["reason"], json!("account_suspended"));
        let close = tab.close_frame().await.expect("a close frame");
        assert_eq!(u16::from(close.code), 1008);
    }
    assert_error(
        second.get_auth("/api/auth/profile", &ann.token).await,
        403,
        "account_suspended",
    )
    .await;
    let mut again = WsClient::connect(&second, Some(&ann.token)).await;
    assert_eq!(u16::from(again.close_frame().await.unwrap().code), 1008);
}

#[actix_web::test]
async fn a_suspended_user_cannot_log_in_nor_reset_their_way_in() {
    let app = spawn_app().await;
    let (root, ann) = root_and_ann(&app).await;
    suspend(&app, &root, &ann, true).await;

    // Only the right password learns of the suspension.
    assert_error(
        app.login("ann@example.com", "wrong-password").await,
        401,
        "invalid_credentials",
    )
    .await;
    let refused = assert_error(
        app.login("ann@example.com", "secret1").await,
        403,
        "account_suspended",
    )
    .await;
    assert_eq!(
        refused["message"],
        json!("This account is suspended. Please contact support.")
    );
    let hu = app
        .post_lang(
            "/api/auth/login",
            "hu-HU",
            json!({"email": "ann@example.com", "password": "secret1"}),
        )
        .await;
    let refused = assert_error(hu, 403, "account_suspended").await;
    assert_eq!(
        refused["message"],
        json!("Ez a fiók fel van függesztve. Kérjük, forduljon az ügyfélszolgálathoz.")
    );

    // A reset goes through (it tells nothing either way), yet the new password is refused too.
    let started = assert_ok(
        app.post(
            "/api/auth/forgot-password",
            json!({"email": "ann@example.com", "lang": "en-US"}),
        )
        .await,
    )
    .await;
    let mail = app.mailbox.take_for("ann@example.com").await;
    let verified = assert_ok(
        app.post(
            "/api/auth/verify-reset-code",
            json!({"email": "ann@example.com", "code": mail.code(), "token": started["token"]}),
        )
        .await,
    )
    .await;
    assert_ok(
        app.post(
            "/api/auth/reset-password",
            json!({"token": verified["token"], "newPassword": "newsecret", "lang": "en-US"}),
        )
        .await,
    )
    .await;
    assert_error(
        app.login("ann@example.com", "newsecret").await,
        403,
        "account_suspended",
    )
    .await;

    // Lifted: the new password works.
    suspend(&app, &root, &ann, false).await;
    assert_ok(app.login("ann@example.com", "newsecret").await).await;
}

#[actix_web::test]
async fn lifting_a_suspension_lets_the_user_sign_in_again_but_the_old_tokens_stay_revoked() {
    let app = spawn_app().await;
    let (root, ann) = root_and_ann(&app).await;
    suspend(&app, &root, &ann, true).await;
    let answer = suspend(&app, &root, &ann, false).await;
    assert_eq!(answer["data"], json!({"suspended": false, "suspendedAt": null}));

    // A token from before the suspension does not come back to life.
    assert_error(
        app.get_auth("/api/auth/profile", &ann.token).await,
        401,
        "unauthorized",
    )
    .await;
    let signed_in = assert_ok(app.login("ann@example.com", "secret1").await).await;
    let token = signed_in["token"].as_str().unwrap();
    assert_ok(app.get_auth("/api/auth/profile", token).await).await;
    WsClient::ready(&app, token).await;
}

#[actix_web::test]
async fn each_change_is_logged_with_it_and_a_repeat_changes_and_logs_nothing() {
    let app = spawn_app().await;
    let (root, ann) = root_and_ann(&app).await;

    // Lifting a suspension that is not there: the state, no row.
    let answer = suspend(&app, &root, &ann, false).await;
    assert_eq!(answer["data"]["suspended"], json!(false));
    assert!(audit_of(&app, &root, &ann).await.is_empty());

    let first = suspend(&app, &root, &ann, true).await;
    let version = |app: &TestApp| {
        let id = ann.id.clone();
        let db = app.state.db.clone();
        async move { db.user_by_id(&id).await.unwrap().unwrap().token_version }
    };
    let after_first = version(&app).await;
    let repeat = suspend(&app, &root, &ann, true).await;
    assert_eq!(repeat["data"], first["data"], "the same suspension, unchanged");
    assert_eq!(version(&app).await, after_first, "nothing bumped again");
    suspend(&app, &root, &ann, false).await;
    suspend(&app, &root, &ann, false).await;

    let rows = audit_of(&app, &root, &ann).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    let (lifted, suspended) = (&rows[0], &rows[1]);
    assert_eq!(suspended["action"], json!("user.suspended"));
    assert_eq!(suspended["actor"], json!("root@example.com"));
    assert_eq!(suspended["actorId"], json!(root.id));
    assert_eq!(suspended["target"], json!("ann@example.com"));
    assert_eq!(suspended["reason"], json!("abuse report #12"));
    assert_eq!(suspended["before"], json!({"suspended": "false"}));
    assert_eq!(suspended["after"], json!({"suspended": "true"}));
    assert_eq!(lifted["action"], json!("user.unsuspended"));
    assert_eq!(lifted["before"], json!({"suspended": "true"}));
    assert_eq!(lifted["after"], json!({"suspended": "false"}));
}

#[actix_web::test]
async fn refused_changes_change_nothing_and_log_nothing() {
    let app = spawn_app().await;
    let (root, ann) = root_and_ann(&app).await;
    let put = |body: Value, token: &str, user: &str| {
        let path = format!("/api/admin/users/{user}/suspension");
        let token = token.to_owned();
        let app = &app;
        async move { app.put_auth(&path, &token, body).await }
    };
    let ok = json!({"suspended": true, "reason": "spam"});

    let anonymous = app
        .client
        .put(app.url(&path(&ann)))
        .json(&ok)
        .send()
        .await
        .unwrap();
    assert_error(anonymous, 401, "unauthorized").await;
    assert_error(put(ok.clone(), &ann.token, &root.id).await, 403, "forbidden").await;
    assert_error(
        put(ok.clone(), &root.token, "no-such-user").await,
        404,
        "not_found",
    )
    .await;
    for body in [
        json!({"suspended": true}),
        json!({"suspended": true, "reason": "  "}),
    ] {
        let refused = assert_error(put(body, &root.token, &ann.id).await, 400, "field_required").await;
        assert_eq!(refused["message"], json!("The reason is required"));
    }
    let long = json!({"suspended": true, "reason": "x".repeat(501)});
    let refused = assert_error(put(long, &root.token, &ann.id).await, 400, "field_too_long").await;
    assert_eq!(
        refused["message"],
        json!("The reason must be at most 500 characters")
    );
    for body in [
        json!({"suspended": "yes", "reason": "spam"}),
        json!({"reason": "spam"}),
        json!({"suspended": 1, "reason": "spam"}),
    ] {
        assert_error(put(body, &root.token, &ann.id).await, 400, "validation_error").await;
    }
    let refused = assert_error(
        put(ok.clone(), &root.token, &root.id).await,
        409,
        "cannot_suspend_self",
    )
    .await;
    assert_eq!(refused["message"], json!("You cannot suspend your own account"));
    assert_ok(
        app.put_auth("/api/settings", &root.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let refused = assert_error(
        put(ok.clone(), &root.token, &root.id).await,
        409,
        "cannot_suspend_self",
    )
    .await;
    assert_eq!(refused["message"], json!("A saját fiókját nem függesztheti fel"));
    let refused = assert_error(
        put(json!({"suspended": true}), &root.token, &ann.id).await,
        400,
        "field_required",
    )
    .await;
    assert_eq!(refused["message"], json!("Az indoklás megadása kötelező"));

    // Nothing of it stuck: both work, and the log is empty.
    assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_ok(app.get_auth("/api/auth/profile", &root.token).await).await;
    let all = assert_ok(app.get_auth("/api/admin/audit", &root.token).await).await;
    let suspensions: Vec<_> = all["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"].as_str().unwrap().starts_with("user."))
        .collect();
    assert!(suspensions.is_empty(), "{all}");
}

/// Ann on a monthly `plan` the server renews itself (the demo provider).
async fn on_monthly(app: &TestApp, user: &TestUser, plan: PlanType) {
    let now = app.clock_now();
    let activation = Activation {
        plan_type: plan,
        billing_cycle: BillingCycle::Monthly,
        payment_method: "credit_card",
        currency: Currency::Eur,
        start_date: now,
        end_date: now + 30 * 24 * 3600 * 1000,
    };
    app.state
        .db
        .activate_subscription(&user.id, &activation, now)
        .await
        .unwrap();
}

#[actix_web::test]
async fn a_monthly_plan_stops_renewing_while_suspended_and_renews_again_once_lifted() {
    let app = spawn_app().await;
    let (root, ann) = root_and_ann(&app).await;
    on_monthly(&app, &ann, PlanType::Plus).await;

    suspend(&app, &root, &ann, true).await;
    let held = subscription_row(&app, &ann).await;
    assert_eq!(held.plan_type, PlanType::Plus, "paid for: kept to its end date");
    assert_eq!(
        held.pending_plan_type,
        Some(PlanType::Free),
        "cancelled at period end"
    );
    suspend(&app, &root, &ann, false).await;
    let resumed = subscription_row(&app, &ann).await;
    assert_eq!(resumed.pending_plan_type, None, "renews again");
    assert_eq!(resumed.suspension_renews_as, None);

    // A downgrade the user scheduled comes back as it was.
    let signed_in = assert_ok(app.login("ann@example.com", "secret1").await).await;
    let token = signed_in["token"].as_str().unwrap();
    let scheduled = app
        .put_auth("/api/subscription/change", token, json!({"planType": "base"}))
        .await;
    assert_ok(scheduled).await;
    suspend(&app, &root, &ann, true).await;
    assert_eq!(
        subscription_row(&app, &ann).await.pending_plan_type,
        Some(PlanType::Free)
    );
    suspend(&app, &root, &ann, false).await;
    assert_eq!(
        subscription_row(&app, &ann).await.pending_plan_type,
        Some(PlanType::Base)
    );
}

#[actix_web::test]
async fn a_plan_the_user_cancelled_stays_cancelled_after_the_suspension_is_lifted() {
    let app = spawn_app().await;
    let (root, ann) = root_and_ann(&app).await;
    on_monthly(&app, &ann, PlanType::Plus).await;
    assert_ok(
        app.put_auth("/api/subscription/cancel", &ann.token, json!({}))
            .await,
    )
    .await;
    suspend(&app, &root, &ann, true).await;
    suspend(&app, &root, &ann, false).await;
    let sub = subscription_row(&app, &ann).await;
    assert_eq!(sub.pending_plan_type, Some(PlanType::Free));

    // A plan that ended while suspended is not brought back either.
    let bob = app.register("Bob", "bob@example.com", "secret1").await;
    on_monthly(&app, &bob, PlanType::Pro).await;
    suspend(&app, &root, &bob, true).await;
    app.advance_minutes(31 * 24 * 60);
    app.run_scheduler().await;
    // Root's registration token has expired meanwhile.
    let signed_in = assert_ok(app.login("root@example.com", "secret1").await).await;
    let root = TestUser {
        id: root.id,
        token: signed_in["token"].as_str().unwrap().to_owned(),
    };
    suspend(&app, &root, &bob, false).await;
    let sub = subscription_row(&app, &bob).await;
    assert_eq!((sub.plan_type, sub.pending_plan_type), (PlanType::Free, None));
}

#[actix_web::test]
async fn a_suspension_cancels_the_stripe_renewal_at_period_end_and_lifting_it_renews_again() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let root = app.register("Root", "root@example.com", "secret1").await;
    app.grant_admin("root@example.com").await;
    let ann = app.register_paying("ann@example.com").await;
    let stripe_sub = subscribe_monthly(&s, &ann, "plus").await;
    let remote = || async { s.fake.get(&format!("/v1/subscriptions/{stripe_sub}")).await };

    suspend(app, &root, &ann, true).await;
    assert_eq!(remote().await["cancel_at_period_end"], json!(true));
    assert_eq!(
        subscription_row(app, &ann).await.pending_plan_type,
        Some(PlanType::Free)
    );
    suspend(app, &root, &ann, false).await;
    assert_eq!(remote().await["cancel_at_period_end"], json!(false));
    // Stripe's own event of the change, when it comes, agrees.
    eventually("the local row renews", || async {
        subscription_row(app, &ann).await.pending_plan_type.is_none()
    })
    .await;
}

#[actix_web::test]
async fn a_stripe_plan_the_user_cancelled_stays_cancelled_after_the_suspension() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let root = app.register("Root", "root@example.com", "secret1").await;
    app.grant_admin("root@example.com").await;
    let ann = app.register_paying("ann@example.com").await;
    let stripe_sub = subscribe_monthly(&s, &ann, "plus").await;
    let remote = || async { s.fake.get(&format!("/v1/subscriptions/{stripe_sub}")).await };
    assert_ok(
        app.put_auth("/api/subscription/cancel", &ann.token, json!({}))
            .await,
    )
    .await;

    suspend(app, &root, &ann, true).await;
    suspend(app, &root, &ann, false).await;
    assert_eq!(remote().await["cancel_at_period_end"], json!(true));
    assert_eq!(
        subscription_row(app, &ann).await.pending_plan_type,
        Some(PlanType::Free)
    );
}
