//! What a plan allows, in one place: every plan gate and limit of the chat and files
//! paths (the models it may ask, the images and documents one message may carry, web and
//! deep search, image generation, the kinds and sizes of uploads, the storage), and the
//! fixed limits of [`chat_contract::limits`] that every plan shares. The checks here
//! only read the plan; what the server can do whatever the plan (a search provider set
//! up, a document processed) is the caller's.
//!
//! Each check answers the error the API gives when it fails (`premium_required` with the
//! feature's field, or the limit's own code with its `max`).

use chat_contract::limits;
use chat_contract::states::FileKind;

use crate::db::files::FileRow;
use crate::error::{ApiError, ErrorCode};
use crate::plans::Plan;

const MB: u64 = 1024 * 1024;

/// The most files one message may name, whatever the plan: bounds the lookup before the
/// plan is known (the plan's own limit is checked after).
pub const MAX_ATTACHMENTS: usize = 16;

/// The most documents one message may carry (their excerpts share one prompt).
pub const MAX_DOCUMENTS_PER_MESSAGE: usize = limits::MAX_DOCUMENTS_PER_MESSAGE as usize;

/// The chat model a send is answered by: the one asked for if the plan has it; else the
/// conversation's (`current`) if the plan still has it; else the plan's base model.
pub fn chat_model(plan: &Plan, requested: Option<&str>, current: Option<&str>) -> Result<String, ApiError> {
    let allowed = |m: &str| plan.chat_models.iter().any(|a| a == m);
    match (requested, current) {
        (Some(m), _) if allowed(m) => Ok(m.to_owned()),
        (Some(_), _) => Err(ErrorCode::ModelNotAllowed.into()),
        (None, Some(c)) if allowed(c) => Ok(c.to_owned()),
        (None, _) => Ok(plan.models.base_chat_model.clone().unwrap_or_default()),
    }
}

/// Projects: making, changing and filling them, and starting a conversation in one.
pub fn projects(plan: &Plan) -> Result<(), ApiError> {
    match plan.features.project_management {
        true => Ok(()),
        false => Err(ApiError::field(ErrorCode::PremiumRequired, "projectManagement")),
    }
}

/// An answer that is an image made from the message.
pub fn image_generation(plan: &Plan) -> Result<(), ApiError> {
    match plan.features.image_generation {
        true => Ok(()),
        false => Err(ApiError::field(ErrorCode::PremiumRequired, "imageGeneration")),
    }
}

/// An answer from the web, plain or deep: the plan has a search of either kind (which
/// one this server can run is the search providers' to say).
pub fn web_search(plan: &Plan) -> Result<(), ApiError> {
    let features = &plan.features;
    match features.openai_web_search || features.google_web_search {
        true => Ok(()),
        false => Err(ApiError::field(ErrorCode::PremiumRequired, "webSearch")),
    }
}

/// Documents, uploaded or sent.
pub fn documents(plan: &Plan) -> Result<(), ApiError> {
    match plan.features.document_processing {
        true => Ok(()),
        false => Err(ApiError::field(ErrorCode::PremiumRequired, "documentUpload")),
    }
}

/// The images one message may carry on `plan`, never more than [`MAX_ATTACHMENTS`].
pub fn images_per_message(plan: &Plan) -> usize {
    (plan.max_images_per_message as usize).min(MAX_ATTACHMENTS)
}

/// A send naming more than [`MAX_ATTACHMENTS`] files: since only images and documents
/// exist, one of the two limits is passed; it is told as the images'.
pub fn too_many_attachments(plan: &Plan) -> ApiError {
    ApiError::with_max(ErrorCode::TooManyImages, None, images_per_message(plan) as u64)
}

/// The files one message carries: no more images than the plan takes in one message,
/// documents only on plans with them and no more than [`MAX_DOCUMENTS_PER_MESSAGE`].
pub fn attachments(files: &[FileRow], plan: &Plan) -> Result<(), ApiError> {
    let images = files.iter().filter(|f| f.kind == FileKind::Image).count();
    let max_images = images_per_message(plan);
    if images > max_images {
        return Err(ApiError::with_max(
            ErrorCode::TooManyImages,
            None,
            max_images as u64,
        ));
    }
    let documents_sent = files.iter().filter(|f| f.kind == FileKind::Document).count();
    if documents_sent > 0 {
        // Uploaded on a plan that had them, sent after a downgrade.
        documents(plan)?;
    }
    if documents_sent > MAX_DOCUMENTS_PER_MESSAGE {
        return Err(ApiError::with_max(
            ErrorCode::TooManyDocuments,
            None,
            MAX_DOCUMENTS_PER_MESSAGE as u64,
        ));
    }
    Ok(())
}

/// The largest upload any kind of file may have on `plan`: the body is read up to it, and
/// the kind's own limit ([`upload`]) applied once the content says what it is.
pub fn largest_upload(plan: &Plan) -> usize {
    let limits = plan.files;
    (limits.image_max_mb.max(limits.document_max_mb) * MB) as usize
}

/// An upload of `bytes` bytes whose content is of `kind`: documents only on plans with
/// them, and each kind within its size.
pub fn upload(plan: &Plan, kind: FileKind, bytes: usize) -> Result<(), ApiError> {
    let limits = plan.files;
    let max_mb = match kind {
        FileKind::Image => limits.image_max_mb,
        FileKind::Document => {
            documents(plan)?;
            limits.document_max_mb
        }
    };
    if bytes as u64 > max_mb * MB {
        return Err(ApiError::with_max(ErrorCode::FileTooLarge, None, max_mb));
    }
    Ok(())
}

/// The bytes the user's files may take in all on `plan`.
pub fn storage_bytes(plan: &Plan) -> u64 {
    plan.files.storage_mb * MB
}

/// The refusal of an upload past [`storage_bytes`].
pub fn storage_full(plan: &Plan) -> ApiError {
    ApiError::with_max(ErrorCode::StorageFull, None, plan.files.storage_mb)
}
