//! Access tokens: HS256 JWTs carrying the user id and the user's token version.

use anyhow::Context;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    pub sub: String,
    /// The user's token version when issued; a password change or reset bumps it.
    pub ver: i64,
    pub iat: i64,
    pub exp: i64,
}

pub struct Tokens {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
}

impl Tokens {
    pub fn new(secret: &[u8]) -> Tokens {
        let mut validation = Validation::new(Algorithm::HS256);
        // Expiry is checked against the server's clock in `verify`, not the library's.
        validation.validate_exp = false;
        validation.required_spec_claims.clear();
        Tokens {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            validation,
        }
    }

    pub fn issue(
        &self,
        user_id: &str,
        version: i64,
        now_ms: i64,
        lifetime_days: i64,
    ) -> anyhow::Result<String> {
        let iat = now_ms / 1000;
        let claims = Claims {
            sub: user_id.to_owned(),
            ver: version,
            iat,
            exp: iat + lifetime_days * 24 * 3600,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .context("signing a token")
    }

    /// The claims of a well-signed, unexpired token.
    pub fn verify(&self, token: &str, now_ms: i64) -> Option<Claims> {
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .ok()?
            .claims;
        (claims.exp * 1000 > now_ms).then_some(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_verifies_until_it_expires() {
        let tokens = Tokens::new(b"secret");
        let now = 1_700_000_000_000;
        let t = tokens.issue("u1", 3, now, 1).unwrap();
        let claims = tokens.verify(&t, now + 1000).unwrap();
        assert_eq!((claims.sub.as_str(), claims.ver), ("u1", 3));
        assert!(tokens.verify(&t, now + 24 * 3600 * 1000).is_none());
    }

    #[test]
    fn a_token_signed_with_another_secret_is_refused() {
        let t = Tokens::new(b"other")
            .issue("u1", 0, 1_700_000_000_000, 1)
            .unwrap();
        assert!(Tokens::new(b"secret").verify(&t, 1_700_000_000_000).is_none());
        assert!(Tokens::new(b"secret").verify("not.a.token", 0).is_none());
    }
}
