//! Profile images: only JPEG, PNG and WebP are accepted (by content, not by the name the
//! client sent); each is decoded under memory limits, cropped to a square, resized and
//! re-encoded as JPEG, so nothing the client uploaded is served back as it came.

use image::{imageops::FilterType, ImageFormat, ImageReader, Limits};
use std::io::Cursor;

use crate::error::{ErrorCode, Result};

pub fn process_avatar(bytes: &[u8], size_px: u32) -> Result<Vec<u8>> {
    let format = image::guess_format(bytes).map_err(|_| ErrorCode::ImageTypeUnsupported)?;
    if !matches!(format, ImageFormat::Jpeg | ImageFormat::Png | ImageFormat::WebP) {
        return Err(ErrorCode::ImageTypeUnsupported.into());
    }
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(12_000);
    limits.max_image_height = Some(12_000);
    limits.max_alloc = Some(256 * 1024 * 1024);
    reader.limits(limits);
    let image = reader.decode().map_err(|_| ErrorCode::ImageInvalid)?;
    let square = image
        .resize_to_fill(size_px, size_px, FilterType::Triangle)
        .to_rgb8();
    let mut out = Cursor::new(Vec::new());
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85)
        .encode_image(&square)
        .map_err(|_| ErrorCode::ImageInvalid)?;
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
