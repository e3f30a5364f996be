//! What each plan allows: every plan gate and limit in one place. The fixed limits both
//! sides enforce are `chat_contract::limits`; what differs by plan is the catalogue's
//! (`config/plans.toml`), read here.

use crate::error::{ApiError, ErrorCode, Result};
use crate::plans::Plan;

/// Projects: refused with `premium_required` (field `projectManagement`) unless the plan
/// has them.
pub fn require_projects(plan: &Plan) -> Result<()> {
    if plan.features.project_management {
        Ok(())
    } else {
        Err(ApiError::field(ErrorCode::PremiumRequired, "projectManagement"))
    }
}
