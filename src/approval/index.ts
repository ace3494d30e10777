/** Approval for dangerous tools (docs/security.md, "Approval for dangerous tools"). */
export { approvalErrors, createApprovalPlugin, type ApprovalFramework } from "./plugin.ts";
export { approvalNeed, isOutsideWorkspace, type ApprovalNeed } from "./policy.ts";
export { approvalIsSet, approvalSettings, type ApprovalSettings } from "./settings.ts";
