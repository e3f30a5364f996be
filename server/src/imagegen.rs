//! Image generation (`imageGeneration` plans): the plan's
//! `imageGenerationPreprocessingModel` makes one image from the user's message through an
//! OpenAI-compatible images API; without a model endpoint the demo draws a small PNG, so
//! everything works with no key. The image is then treated like an upload (decoded under
//! the same limits, re-encoded, a thumbnail made) and stored as a file of the answer.

use chat_contract::states::FileKind;
use std::io::Cursor;
use std::time::Duration;

use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::types::images::{CreateImageRequest, Image};
use async_openai::Client;
use chat_actors::model::ModelError;
use futures_util::future::BoxFuture;
use secrecy::{ExposeSecret, SecretString};
use serde_json::json;

use crate::clock::SharedClock;
use crate::db::files::FileRow;
use crate::db::Db;
use crate::files::store::FileStore;
use crate::images::ImageDecoder;

/// An image a model made, as its bytes (any format we decode), and the prompt the model
/// says it drew from, when it rewrote ours.
pub struct Generated {
    pub bytes: Vec<u8>,
    pub revised_prompt: Option<String>,
}

pub trait ImageGenerator: Send + Sync + 'static {
    fn generate(&self, model: &str, prompt: &str) -> BoxFuture<'static, Result<Generated, ModelError>>;
}

/// The built-in generator: a 256×256 PNG whose colours come from the prompt, so two
/// prompts give two pictures and the same prompt the same one.
pub struct DemoImages;

impl ImageGenerator for DemoImages {
    fn generate(&self, _model: &str, prompt: &str) -> BoxFuture<'static, Result<Generated, ModelError>> {
        let seed = prompt
            .bytes()
            .fold(2166136261u32, |h, b| (h ^ u32::from(b)).wrapping_mul(16777619));
        let [r, g, b, _] = seed.to_le_bytes();
        let picture = image::RgbImage::from_fn(256, 256, |x, y| {
            let t = ((x + y) / 2) as u8;
            image::Rgb([r ^ t, g.wrapping_add(t / 2), b ^ (255 - t)])
        });
        let mut out = Cursor::new(Vec::new());
        let written = picture.write_to(&mut out, image::ImageFormat::Png);
        Box::pin(async move {
            written.map_err(|e| ModelError::Upstream(format!("drawing the demo image: {e}")))?;
            Ok(Generated {
                bytes: out.into_inner(),
                revised_prompt: None,
            })
        })
    }
}

/// An OpenAI-compatible `/images/generations`, asked for one image as base64.
pub struct OpenAiImages {
    client: Client<OpenAIConfig>,
}

impl OpenAiImages {
    pub fn new(api_key: &SecretString, base_url: &str) -> OpenAiImages {
        let config = OpenAIConfig::new()
            .with_api_key(api_key.expose_secret())
            .with_api_base(base_url.trim_end_matches('/'));
        OpenAiImages {
            client: Client::with_config(config),
        }
    }
}

/// A refusal of the prompt (the provider's safety system) is the user's to fix; anything
/// else is the model failing.
fn model_error(e: OpenAIError) -> ModelError {
    match e {
        OpenAIError::ApiError(api) => {
            let (status, error) = (api.status_code, api.api_error);
            tracing::warn!(error = %error, %status, "image generation failed");
            // A 400 is about the prompt: refused by the safety system, or one the model
            // cannot draw.
            if status == reqwest::StatusCode::BAD_REQUEST {
                ModelError::Refused(error.message)
            } else {
                ModelError::Upstream(error.message)
            }
        }
        e => {
            tracing::warn!(error = %e, "image generation failed");
            ModelError::Upstream(e.to_string())
        }
    }
}

impl ImageGenerator for OpenAiImages {
    fn generate(&self, model: &str, prompt: &str) -> BoxFuture<'static, Result<Generated, ModelError>> {
        let mut body = json!({ "model": model, "prompt": prompt, "n": 1, "size": "1024x1024" });
        // The gpt-image models always answer base64 and refuse the parameter; DALL·E
        // answers a link unless asked.
        if !model.starts_with("gpt-image") {
            body["response_format"] = json!("b64_json");
        }
        let client = self.client.clone();
        Box::pin(async move {
            let request: CreateImageRequest = serde_json::from_value(body)
                .map_err(|e| ModelError::Upstream(format!("building the request: {e}")))?;
            let response = client.images().generate(request).await.map_err(model_error)?;
            let first = response
                .data
                .first()
                .ok_or_else(|| ModelError::Upstream("the images API answered no image".into()))?;
            match first.as_ref() {
                Image::B64Json {
                    b64_json,
                    revised_prompt,
                } => {
                    use base64::Engine;
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(b64_json.as_bytes())
                        .map_err(|e| ModelError::Upstream(format!("the image is not base64: {e}")))?;
                    Ok(Generated {
                        bytes,
                        revised_prompt: revised_prompt.clone(),
                    })
                }
                // Fetching a link the provider chose would be a request to anywhere.
                Image::Url { .. } => Err(ModelError::Upstream("the images API answered a link".into())),
            }
        })
    }
}

/// The generator of the model endpoint when one is set, else the demo's.
pub fn for_settings(model: &crate::config::ModelSettings) -> Box<dyn ImageGenerator> {
    if crate::config::is_set(&model.openai_api_key) {
        Box::new(OpenAiImages::new(&model.openai_api_key, &model.openai_base_url))
    } else {
        Box::new(DemoImages)
    }
}

/// The image generation service: the generator, and where its images are decoded and kept.
pub struct ImageGen {
    pub generator: Box<dyn ImageGenerator>,
    pub db: Db,
    pub files: std::sync::Arc<FileStore>,
    pub images: ImageDecoder,
    pub clock: SharedClock,
    /// The longest side kept and the thumbnail's (`[files]`), as for uploads.
    pub max_px: u32,
    pub thumb_px: u32,
}

impl ImageGen {
    /// Makes the image for `prompt` and stores it as the answer's file (row first, then its
    /// objects, as an upload). Answers the file and what the answer says.
    pub async fn make(
        &self,
        model: &str,
        prompt: &str,
        owner: &FileRow,
        timeout: Duration,
    ) -> Result<(FileRow, String), ModelError> {
        let generated = tokio::time::timeout(timeout, self.generator.generate(model, prompt))
            .await
            .map_err(|_| ModelError::Timeout)??;
        // What a model answers is decoded like an upload: a broken or huge image stops here.
        let (max_px, thumb_px) = (self.max_px, self.thumb_px);
        let bytes = generated.bytes;
        let image = self
            .images
            .run(move |d| d.attachment(&bytes, max_px, thumb_px))
            .await
            .map_err(|e| ModelError::Upstream(format!("the generated image: {e:?}")))?;
        let extension = if image.mime == "image/png" { "png" } else { "jpg" };
        let file = FileRow {
            id: uuid::Uuid::now_v7().to_string(),
            kind: FileKind::Image,
            name: format!("{}.{extension}", file_stem(prompt)),
            mime: image.mime.into(),
            size: (image.data.len() + image.thumbnail.len()) as i64,
            width: Some(image.width as i32),
            height: Some(image.height as i32),
            created_at: self.clock.now_ms(),
            ..owner.clone()
        };
        let stored = async {
            self.db.insert_file(&file).await?;
            self.files.put(&file, false, image.data).await?;
            self.files.put(&file, true, image.thumbnail).await?;
            Ok::<_, anyhow::Error>(())
        }
        .await;
        if let Err(e) = stored {
            tracing::error!(error = ?e, "storing a generated image");
            if let Err(e) = self.db.mark_file_gone(&file.id).await {
                tracing::warn!(error = ?e, "marking a generated image that could not be stored as gone");
            }
            self.files.sweep_soon();
            return Err(ModelError::Upstream("storing the image failed".into()));
        }
        let said = match generated.revised_prompt {
            Some(revised) if !revised.trim().is_empty() => {
                format!("Here is the image: *{}*", revised.trim().replace('*', ""))
            }
            _ => format!("Here is the image: *{}*", prompt.trim().replace('*', "")),
        };
        Ok((file, said))
    }
}

/// A file name from the prompt's first words: `a-red-fox-in-snow`.
fn file_stem(prompt: &str) -> String {
    let words: Vec<String> = prompt
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(6)
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        "image".into()
    } else {
        words.join("-").chars().take(60).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_named_after_the_prompts_first_words() {
        assert_eq!(
            file_stem("A red fox, in the snow at dawn!"),
            "a-red-fox-in-the-snow"
        );
        assert_eq!(file_stem("  ?!  "), "image");
    }

    #[actix_web::test]
    async fn the_demo_draws_a_png_that_differs_by_prompt() {
        let fox = DemoImages.generate("m", "a fox").await.unwrap().bytes;
        let owl = DemoImages.generate("m", "an owl").await.unwrap().bytes;
        assert_eq!(image::guess_format(&fox).unwrap(), image::ImageFormat::Png);
        assert_ne!(fox, owl);
        assert_eq!(fox, DemoImages.generate("m", "a fox").await.unwrap().bytes);
    }
}
