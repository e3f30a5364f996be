//! The plan catalogue (`config/plans.toml`): features, quotas, models and prices of the
//! free, base, plus and pro plans, plus the quota timezone; and the VAT rules
//! (`config/vat.toml`, [`crate::billing::vat`]).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use chat_actors::quota::Limits;
use chat_contract::states::Service;
use chat_contract::views;
use chrono_tz::Tz;
use serde::Deserialize;

use crate::billing::vat::VatRules;
use crate::error::{ErrorCode, Result};

const EMBEDDED_PLANS: &str = include_str!("../../config/plans.toml");

pub use chat_contract::states::{Currency, PlanType};
pub use chat_contract::views::{Availability, Features, FileLimits, Models};

/// A plan named by a client; anything but the four plans is `invalid_plan`.
pub fn plan_named(value: Option<&str>) -> Result<PlanType> {
    PlanType::parse(value.unwrap_or("")).ok_or_else(|| ErrorCode::InvalidPlan.into())
}

/// Which features work on this server. A plan card offers only what is available
/// (web/README.md, "Plan cards"): features this build lacks are off here, and web search
/// is on where a provider is configured (`search::Providers`).
pub const AVAILABLE: Availability = Availability {
    google_web_search: false,
    openai_web_search: false,
    document_processing: true,
    project_management: true,
    image_generation: true,
    image_upload: true,
};

/// [`AVAILABLE`], with web search as this server's configuration allows.
pub fn available_with_search(google: bool, openai: bool) -> Availability {
    Availability {
        google_web_search: google,
        openai_web_search: openai,
        ..AVAILABLE
    }
}

/// `models` with the SPEC §9 default in every role it leaves out.
fn with_default_models(mut models: Models) -> Models {
    let fill = |slot: &mut Option<String>, default: &str| {
        if slot.as_deref().is_none_or(str::is_empty) {
            *slot = Some(default.to_owned());
        }
    };
    fill(&mut models.base_chat_model, "gpt-4o-mini");
    fill(&mut models.web_preprocessing_model, "gpt-4.1-nano");
    fill(&mut models.web_content_processing_model, "gpt-4.1-nano");
    fill(&mut models.web_search_model, "gpt-4o-mini-search-preview");
    fill(&mut models.document_processing_model, "gpt-4.1-nano");
    fill(&mut models.embedding_model, "text-embedding-3-small");
    fill(&mut models.image_generation_preprocessing_model, "gpt-image-1");
    fill(&mut models.image_analysis_model, "gpt-4.1-nano");
    models
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanDef {
    name: String,
    rank: u8,
    price_eur: f64,
    price_huf: f64,
    features: Features,
    #[serde(default)]
    limits: BTreeMap<String, Limits>,
    max_images_per_message: u32,
    files: FileLimits,
    chat_models: Vec<String>,
    #[serde(default)]
    models: Models,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub plan_type: PlanType,
    pub name: String,
    pub rank: u8,
    /// Net monthly price in minor units (cents, fillér).
    pub price_eur_minor: i64,
    pub price_huf_minor: i64,
    pub features: Features,
    pub limits: BTreeMap<Service, Limits>,
    pub max_images_per_message: u32,
    pub files: FileLimits,
    pub chat_models: Vec<String>,
    pub models: Models,
}

impl Plan {
    pub fn limits(&self, service: Service) -> Limits {
        self.limits.get(&service).copied().unwrap_or_default()
    }

    /// Whether any service of the plan has a limit.
    pub fn has_limits(&self) -> bool {
        self.limits.values().any(|l| l.day.is_some() || l.month.is_some())
    }

    pub fn net_price_minor(&self, currency: Currency) -> i64 {
        match currency {
            Currency::Eur => self.price_eur_minor,
            Currency::Huf => self.price_huf_minor,
        }
    }

    /// The plan as the API shows it (`subscriptionPlan`, plan cards).
    /// `available`: what works on this server; `deep_searches`: the searches one deep
    /// search reserves.
    pub fn view(&self, vat_rate: f64, available: Availability, deep_searches: u32) -> views::Plan {
        let limit = |service: Service| {
            let l = self.limits(service);
            views::Limit {
                daily: l.day,
                monthly: l.month,
            }
        };
        views::Plan {
            plan_type: self.plan_type,
            name: self.name.clone(),
            rank: self.rank,
            features: self.features,
            available,
            deep_search_searches: deep_searches,
            limits: views::PlanLimits {
                response_limit: limit(Service::Responses),
                web_search_limit: limit(Service::WebSearches),
                image_generation_limit: limit(Service::ImageGenerations),
            },
            max_images_per_message: self.max_images_per_message,
            file_limits: self.files,
            chat_models: self.chat_models.clone(),
            models: self.models.clone(),
            prices: views::Prices {
                eur: price(self.price_eur_minor, vat_rate),
                huf: price(self.price_huf_minor, vat_rate),
            },
        }
    }
}

fn price(net_minor: i64, vat_rate: f64) -> views::Price {
    let (vat, total) = vat_of(net_minor, vat_rate);
    views::Price {
        net: net_minor as f64 / 100.0,
        vat: vat as f64 / 100.0,
        total: total as f64 / 100.0,
    }
}

/// VAT and gross of a net amount in minor units, VAT rounded half up.
pub fn vat_of(net_minor: i64, vat_rate: f64) -> (i64, i64) {
    let vat = (net_minor as f64 * vat_rate).round() as i64;
    (vat, net_minor + vat)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogueFile {
    /// Read from vat.toml since VAT became per buyer; tolerated in old copies.
    vat_rate: Option<f64>,
    timezone: String,
    one_time_days: i64,
    plans: BTreeMap<PlanType, PlanDef>,
}

#[derive(Debug, Clone)]
pub struct Catalogue {
    pub vat: VatRules,
    pub timezone: Tz,
    pub one_time_days: i64,
    plans: BTreeMap<PlanType, Plan>,
}

impl Catalogue {
    /// `$CONFIG_DIR/plans.toml` and `vat.toml` where present, else the embedded copies.
    pub fn load(config_dir: &Path) -> anyhow::Result<Catalogue> {
        let file = config_dir.join("plans.toml");
        let mut catalogue = match std::fs::read_to_string(&file) {
            Ok(text) => Self::parse(&text).with_context(|| format!("in {}", file.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::parse(EMBEDDED_PLANS)?,
            Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
        };
        catalogue.vat = VatRules::load(config_dir)?;
        Ok(catalogue)
    }

    pub fn embedded() -> Catalogue {
        Self::parse(EMBEDDED_PLANS).expect("embedded config/plans.toml is valid")
    }

    pub fn parse(text: &str) -> anyhow::Result<Catalogue> {
        let file: CatalogueFile = toml::from_str(text).context("parsing the plan catalogue")?;
        let timezone: Tz = file
            .timezone
            .parse()
            .map_err(|_| anyhow::anyhow!("unknown timezone {:?}", file.timezone))?;
        if file.vat_rate.is_some() {
            tracing::warn!("plans.toml: vat_rate is ignored; VAT rates are in vat.toml");
        }
        let mut plans = BTreeMap::new();
        for &plan_type in PlanType::ALL {
            let def = file
                .plans
                .get(&plan_type)
                .with_context(|| format!("plan {} is missing", plan_type.as_str()))?;
            let mut limits = BTreeMap::new();
            for (name, l) in &def.limits {
                let service = Service::parse(name).with_context(|| format!("unknown service {name:?}"))?;
                limits.insert(service, *l);
            }
            anyhow::ensure!(
                !def.chat_models.is_empty(),
                "plan {} lists no chat_models",
                plan_type.as_str()
            );
            let models = with_default_models(def.models.clone());
            plans.insert(
                plan_type,
                Plan {
                    plan_type,
                    name: def.name.clone(),
                    rank: def.rank,
                    price_eur_minor: (def.price_eur * 100.0).round() as i64,
                    price_huf_minor: (def.price_huf * 100.0).round() as i64,
                    features: def.features,
                    limits,
                    max_images_per_message: def.max_images_per_message,
                    files: def.files,
                    chat_models: def.chat_models.clone(),
                    models,
                },
            );
        }
        let mut ranks: Vec<u8> = plans.values().map(|p: &Plan| p.rank).collect();
        ranks.sort_unstable();
        ranks.dedup();
        anyhow::ensure!(ranks.len() == plans.len(), "every plan needs a rank of its own");
        Ok(Catalogue {
            vat: VatRules::embedded(),
            timezone,
            one_time_days: file.one_time_days,
            plans,
        })
    }

    pub fn plan(&self, plan_type: PlanType) -> &Plan {
        &self.plans[&plan_type]
    }

    /// Every plan, cheapest (lowest rank) first.
    pub fn all(&self) -> Vec<&Plan> {
        let mut plans: Vec<&Plan> = self.plans.values().collect();
        plans.sort_by_key(|p| p.rank);
        plans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_catalogue_has_the_spec_plans_and_prices() {
        let c = Catalogue::embedded();
        let free = c.plan(PlanType::Free);
        assert_eq!(
            free.limits(Service::Responses),
            Limits {
                day: Some(50),
                month: None
            }
        );
        assert!(!free.features.openai_web_search && !free.features.document_processing);
        assert_eq!(c.plan(PlanType::Pro).max_images_per_message, 5);
        assert_eq!(
            c.plan(PlanType::Pro).limits(Service::Responses),
            Limits::default()
        );
        let eur: Vec<i64> = PlanType::ALL.iter().map(|p| c.plan(*p).price_eur_minor).collect();
        assert_eq!(eur, [0, 500, 1000, 2000]);
        let huf: Vec<i64> = PlanType::ALL
            .iter()
            .map(|p| c.plan(*p).price_huf_minor / 100)
            .collect();
        assert_eq!(huf, [0, 1500, 3000, 6000]);
        let ranks: Vec<u8> = PlanType::ALL.iter().map(|p| c.plan(*p).rank).collect();
        assert_eq!(ranks, [0, 1, 2, 3]);
    }

    #[test]
    fn models_a_plan_leaves_out_take_the_spec_defaults() {
        let c = Catalogue::embedded();
        let free = &c.plan(PlanType::Free).models;
        assert_eq!(free.base_chat_model.as_deref(), Some("gpt-4o-mini"));
        assert_eq!(
            free.web_search_model.as_deref(),
            Some("gpt-4o-mini-search-preview")
        );
        assert_eq!(free.embedding_model.as_deref(), Some("text-embedding-3-small"));
        assert_eq!(
            free.image_generation_preprocessing_model.as_deref(),
            Some("gpt-image-1")
        );
        assert_eq!(free.image_analysis_model.as_deref(), Some("gpt-4.1-nano"));
        let pro = &c.plan(PlanType::Pro).models;
        assert_eq!(pro.web_search_model.as_deref(), Some("gpt-4o-search-preview"));
    }

    #[test]
    fn vat_is_rounded_and_shown_apart() {
        assert_eq!(vat_of(500, 0.27), (135, 635));
        assert_eq!(vat_of(150_000, 0.27), (40_500, 190_500));
    }

    #[test]
    fn only_the_four_plans_parse() {
        assert_eq!(plan_named(Some("plus")).unwrap(), PlanType::Plus);
        for bad in [None, Some(""), Some("Pro"), Some("gold")] {
            assert_eq!(plan_named(bad).unwrap_err().code(), ErrorCode::InvalidPlan);
        }
    }

    #[test]
    fn prices_may_have_cents_and_ranks_must_differ() {
        let cents = EMBEDDED_PLANS.replace("price_eur = 5\n", "price_eur = 4.99\n");
        assert_eq!(
            Catalogue::parse(&cents)
                .unwrap()
                .plan(PlanType::Base)
                .price_eur_minor,
            499
        );
        let same_rank = EMBEDDED_PLANS.replace("rank = 3", "rank = 2");
        assert!(Catalogue::parse(&same_rank).is_err());
        let order: Vec<PlanType> = Catalogue::embedded().all().iter().map(|p| p.plan_type).collect();
        assert_eq!(order, PlanType::ALL);
    }

    #[test]
    fn a_catalogue_missing_a_plan_or_with_a_bad_timezone_is_refused() {
        let without_pro = EMBEDDED_PLANS.split("[plans.pro]").next().unwrap();
        assert!(Catalogue::parse(without_pro).is_err());
        let bad_tz = EMBEDDED_PLANS.replace("timezone = \"UTC\"", "timezone = \"Mars/Olympus\"");
        assert!(Catalogue::parse(&bad_tz).is_err());
    }
}
