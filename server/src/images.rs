//! Profile images: only JPEG, PNG and WebP are accepted (by content, not by the name the
//! client sent); each is decoded under memory limits, cropped to a square, resized and
//! re-encoded as JPEG, so nothing the client uploaded is served back as it came.

use std::io::Cursor;
use std::sync::Arc;

use image::{imageops::FilterType, DynamicImage, ImageFormat, ImageReader, Limits};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::UploadSettings;
use crate::error::{ApiError, ErrorCode, Result};

/// Decodes uploaded images within bounds: a small file can declare a huge picture (a
/// decompression bomb), and every decode holds its pixels in memory.
#[derive(Clone)]
pub struct ImageDecoder {
    max_pixels: u64,
    max_alloc: u64,
    permits: Arc<Semaphore>,
}

impl ImageDecoder {
    pub fn new(settings: &UploadSettings) -> Self {
        ImageDecoder {
            max_pixels: settings.image_max_pixels,
            max_alloc: settings.image_max_memory_mb * 1024 * 1024,
            permits: Arc::new(Semaphore::new(settings.image_decodes.max(1))),
        }
    }

    /// A decode slot, or 429 `server_busy` when all are taken: an upload flood waits
    /// nowhere and cannot hold more than `image_decodes` decoded images in memory.
    pub fn reserve(&self) -> Result<OwnedSemaphorePermit> {
        self.permits
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::retry_after(ErrorCode::ServerBusy, 1))
    }

    /// Runs `work` on the blocking pool holding a decode slot ([`ImageDecoder::reserve`]):
    /// decodes never run on the request threads, and never more at once than there are
    /// slots.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&ImageDecoder) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let slot = self.reserve()?;
        let decoder = self.clone();
        actix_web::web::block(move || {
            let _slot = slot;
            work(&decoder)
        })
        .await
        .map_err(|e| anyhow::anyhow!("image task: {e}"))?
    }

    /// The square JPEG of a profile image (through [`ImageDecoder::run`]).
    pub fn avatar(&self, bytes: &[u8], size_px: u32) -> Result<Vec<u8>> {
        let image = self.decode(bytes)?;
        let square = image
            .resize_to_fill(size_px, size_px, FilterType::Triangle)
            .to_rgb8();
        jpeg(&DynamicImage::ImageRgb8(square), 85)
    }

    /// An attached image as it is stored: at most `max_px` on its longest side, as JPEG
    /// (PNG when it has transparency), and a JPEG thumbnail within `thumb_px` square.
    /// Re-encoding drops everything but the pixels (EXIF, GPS position, comments). Call
    /// it through [`ImageDecoder::run`].
    pub fn attachment(&self, bytes: &[u8], max_px: u32, thumb_px: u32) -> Result<StoredImage> {
        let mut image = self.decode(bytes)?;
        if image.width().max(image.height()) > max_px {
            image = image.resize(max_px, max_px, FilterType::Triangle);
        }
        let (data, mime) = if image.color().has_alpha() {
            let mut out = Cursor::new(Vec::new());
            image
                .to_rgba8()
                .write_to(&mut out, ImageFormat::Png)
                .map_err(|_| ErrorCode::ImageInvalid)?;
            (out.into_inner(), "image/png")
        } else {
            (jpeg(&image, 88)?, "image/jpeg")
        };
        let thumbnail = jpeg(&image.thumbnail(thumb_px, thumb_px), 80)?;
        Ok(StoredImage {
            data,
            mime,
            width: image.width(),
            height: image.height(),
            thumbnail,
        })
    }

    /// Decodes JPEG, PNG or WebP (told by content), within the pixel and memory limits.
    fn decode(&self, bytes: &[u8]) -> Result<DynamicImage> {
        let format = image_format(bytes).ok_or(ErrorCode::ImageTypeUnsupported)?;
        // The header alone tells the size; refuse before a single pixel is allocated.
        let (width, height) = ImageReader::with_format(Cursor::new(bytes), format)
            .into_dimensions()
            .map_err(|_| ErrorCode::ImageInvalid)?;
        if u64::from(width) * u64::from(height) > self.max_pixels {
            return Err(ErrorCode::ImageTooManyPixels.into());
        }
        let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
        let mut limits = Limits::default();
        limits.max_alloc = Some(self.max_alloc);
        reader.limits(limits);
        reader.decode().map_err(|e| match e {
            image::ImageError::Limits(_) => ApiError::from(ErrorCode::ImageTooManyPixels),
            _ => ErrorCode::ImageInvalid.into(),
        })
    }
}

/// An image ready to store, and its thumbnail.
pub struct StoredImage {
    pub data: Vec<u8>,
    pub mime: &'static str,
    pub width: u32,
    pub height: u32,
    pub thumbnail: Vec<u8>,
}

/// The accepted image format `bytes` start like, if any (the content, not a name).
pub fn image_format(bytes: &[u8]) -> Option<ImageFormat> {
    image::guess_format(bytes)
        .ok()
        .filter(|f| matches!(f, ImageFormat::Jpeg | ImageFormat::Png | ImageFormat::WebP))
}

fn jpeg(image: &DynamicImage, quality: u8) -> Result<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(&image.to_rgb8())
        .map_err(|_| ErrorCode::ImageInvalid)?;
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;

    fn process_avatar(bytes: &[u8], size_px: u32) -> Result<Vec<u8>> {
        ImageDecoder::new(&Settings::defaults().uploads).avatar(bytes, size_px)
    }

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbaImage::from_pixel(w, h, image::Rgba([200, 10, 10, 128]));
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn any_accepted_image_becomes_a_square_jpeg() {
        let jpeg = process_avatar(&png(640, 300), 256).unwrap();
        let back = image::load_from_memory(&jpeg).unwrap();
        assert_eq!((back.width(), back.height()), (256, 256));
        assert_eq!(image::guess_format(&jpeg).unwrap(), ImageFormat::Jpeg);
    }

    #[test]
    fn other_types_and_broken_images_are_refused() {
        let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;";
        assert_eq!(
            process_avatar(gif, 256).unwrap_err().code(),
            ErrorCode::ImageTypeUnsupported
        );
        assert_eq!(
            process_avatar(b"plain text", 256).unwrap_err().code(),
            ErrorCode::ImageTypeUnsupported
        );
        let mut truncated = png(64, 64);
        truncated.truncate(40);
        assert_eq!(
            process_avatar(&truncated, 256).unwrap_err().code(),
            ErrorCode::ImageInvalid
        );
    }

    #[test]
    fn an_attached_image_is_scaled_down_reencoded_and_thumbnailed() {
        let decoder = ImageDecoder::new(&Settings::defaults().uploads);
        // Opaque: JPEG. A JPEG carries no EXIF after re-encoding (none is written).
        let opaque = {
            let img = image::RgbImage::from_pixel(3000, 1500, image::Rgb([10, 200, 10]));
            let mut out = Cursor::new(Vec::new());
            img.write_to(&mut out, ImageFormat::Png).unwrap();
            out.into_inner()
        };
        let stored = decoder.attachment(&opaque, 2048, 256).unwrap();
        assert_eq!(
            (stored.mime, stored.width, stored.height),
            ("image/jpeg", 2048, 1024)
        );
        assert_eq!(image::guess_format(&stored.data).unwrap(), ImageFormat::Jpeg);
        let thumb = image::load_from_memory(&stored.thumbnail).unwrap();
        assert_eq!((thumb.width(), thumb.height()), (256, 128));
        // Transparent and small: PNG, size kept.
        let stored = decoder.attachment(&png(64, 48), 2048, 256).unwrap();
        assert_eq!((stored.mime, stored.width, stored.height), ("image/png", 64, 48));
        assert!(image::load_from_memory(&stored.data).unwrap().color().has_alpha());
    }
}
