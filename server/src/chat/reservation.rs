//! What a send holds from its checks until its answer ends, and the one place that
//! takes it and gives it back.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use chat_actors::quota::{Counted, Decision};
use chat_contract::states::Service;

use crate::chat::Chat;
use crate::error::{ApiError, ErrorCode};
use crate::plans::PlanType;

/// What a send counts besides its response.
#[derive(Debug, Clone, Copy, Default)]
pub struct Units {
    /// Web searches to reserve.
    pub searches: u32,
    /// An image generation.
    pub image: bool,
}

/// What a send holds from its checks until its answer ends: one of the user's answer
/// slots, the conversation (on every instance, with Redis), and the units counted. The
/// one place that takes them and gives them back.
pub struct Reservation {
    chat: Arc<Chat>,
    user_id: String,
    conversation_id: String,
    /// Web searches counted for this answer (reserved before it starts).
    searches: u32,
    /// Of those, the searches made: the rest go back when the answer ends.
    pub searches_made: Arc<AtomicU32>,
    /// An image generation counted (given back with the response).
    image: bool,
}

impl Reservation {
    /// Takes, in order, a slot, the conversation, a response (and `searches` web
    /// searches, all or none); what fails gives back what was taken before it. Answers
    /// the counters as the check left them.
    pub async fn take(
        chat: &Arc<Chat>,
        user_id: &str,
        plan: PlanType,
        conversation_id: &str,
        units: Units,
    ) -> Result<(Reservation, Counted), ApiError> {
        let mut held = Reservation::hold(chat, user_id, conversation_id).await?;
        // Counted before anything is stored.
        let counted = match chat.quotas.consume_response_on(user_id, plan).await {
            Ok(counted) => counted,
            Err(e) => {
                held.release_claim_and_slot().await;
                return Err(e);
            }
        };
        match held.count(plan, units, counted).await {
            Ok(counted) => Ok((held, counted)),
            Err(e) => {
                held.cancel().await;
                Err(e)
            }
        }
    }

    /// Takes one of the user's answer slots and the conversation (on every instance,
    /// with Redis), nothing counted yet; what fails gives back what was taken.
    async fn hold(chat: &Arc<Chat>, user_id: &str, conversation_id: &str) -> Result<Reservation, ApiError> {
        let realtime = &chat.realtime;
        let slots = &realtime.answers;
        if !slots.take(user_id).await? {
            let max = slots.max() as u64;
            return Err(ApiError::with_max(ErrorCode::TooManyParallelAnswers, None, max));
        }
        let give_slot_back = || slots.give_back(user_id);
        // One answer at a time per conversation, on any instance.
        if realtime.generations.is_running(conversation_id) {
            give_slot_back().await;
            return Err(ErrorCode::GenerationInProgress.into());
        }
        if let Some(relay) = &realtime.relay {
            match relay.claim(conversation_id).await {
                Ok(true) => {}
                Ok(false) => {
                    give_slot_back().await;
                    return Err(ErrorCode::GenerationInProgress.into());
                }
                Err(e) => {
                    give_slot_back().await;
                    return Err(e.into());
                }
            }
        }
        Ok(Reservation {
            chat: chat.clone(),
            user_id: user_id.to_owned(),
            conversation_id: conversation_id.to_owned(),
            // Nothing counted yet: a refusal gives back only the response.
            searches: 0,
            searches_made: Arc::new(AtomicU32::new(0)),
            image: false,
        })
    }

    /// Counts the units besides the response, noting each as it is counted so that a
    /// refusal (after which the caller cancels) gives back exactly those; answers the
    /// counters as the last count left them (`counted` if there was none).
    async fn count(
        &mut self,
        plan: PlanType,
        units: Units,
        mut counted: Counted,
    ) -> Result<Counted, ApiError> {
        let quotas = &self.chat.quotas;
        let user_id = self.user_id.as_str();
        let searches = units.searches;
        // One unit at a time, each checked atomically: parallel sends never pass the
        // limit together, and a deep search that cannot have all it needs gives back
        // what it took.
        while self.searches < searches {
            match quotas.consume_on(user_id, plan, Service::WebSearches).await {
                Ok(
                    now @ Counted {
                        decision: Decision::Allowed { .. },
                        ..
                    },
                ) => {
                    self.searches += 1;
                    counted = now;
                }
                Err(e) => return Err(e),
                Ok(_) if searches > 1 => {
                    return Err(ApiError::with_max(
                        ErrorCode::DeepSearchLimit,
                        None,
                        u64::from(searches),
                    ))
                }
                Ok(_) => return Err(ErrorCode::SearchLimitReached.into()),
            }
        }
        if units.image {
            match quotas.consume_on(user_id, plan, Service::ImageGenerations).await {
                Ok(
                    now @ Counted {
                        decision: Decision::Allowed { .. },
                        ..
                    },
                ) => {
                    self.image = true;
                    counted = now;
                }
                Err(e) => return Err(e),
                Ok(_) => return Err(ErrorCode::ImageLimitReached.into()),
            }
        }
        Ok(counted)
    }

    async fn release_claim_and_slot(&self) {
        let realtime = &self.chat.realtime;
        if let Some(relay) = &realtime.relay {
            relay.release(&self.conversation_id).await;
        }
        realtime.answers.give_back(&self.user_id).await;
    }

    /// Gives back the response (when `response`) and the searches not made.
    async fn refund(&self, response: bool) -> anyhow::Result<()> {
        let quotas = &self.chat.quotas;
        let responses = match response {
            true => quotas.refund(&self.user_id, Service::Responses).await,
            false => Ok(()),
        };
        // An image is made or not with the answer's first text: it goes back with it.
        if response && self.image {
            quotas.refund(&self.user_id, Service::ImageGenerations).await?;
        }
        let made = self.searches_made.load(Ordering::SeqCst).min(self.searches);
        for _ in made..self.searches {
            quotas.refund(&self.user_id, Service::WebSearches).await?;
        }
        Ok(responses?)
    }

    /// Nothing will answer: the units, the conversation and the slot go back, and the
    /// tabs learn their counters.
    pub async fn cancel(self) {
        self.searches_made.store(0, Ordering::SeqCst);
        if let Err(e) = self.refund(true).await {
            crate::outage::log_failure(&e, "giving back units after a failed send");
        }
        self.release_claim_and_slot().await;
        self.chat.announce.usage(&self.user_id).await;
    }

    /// The web searches reserved.
    pub fn searches(&self) -> u32 {
        self.searches
    }

    /// Marks every reserved search as made (the search model searched by itself).
    pub fn all_searches_made(&self) {
        self.searches_made.store(self.searches, Ordering::SeqCst);
    }

    /// Whether giving back would change the counters: a refunded response, or searches
    /// reserved and not made.
    pub fn gives_back(&self, refund: bool) -> bool {
        refund || self.searches_made.load(Ordering::SeqCst) < self.searches
    }

    /// The answer ended: the slot goes back (a tab told it ended may start another), the
    /// response when `refund`, and the searches not made. Searches made stay counted
    /// even when the answer is refunded: cancelling before the text must not make
    /// searches free. The conversation's claim is released by the relay once the
    /// answer's end is written, after its last delta.
    pub async fn settle(self, refund: bool) -> anyhow::Result<()> {
        self.chat.realtime.answers.give_back(&self.user_id).await;
        self.refund(refund).await
    }
}
