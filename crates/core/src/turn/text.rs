//! What the model and a person are told: the fixed results of calls that did not run, the fence
//! around tool data, the clipped summaries events carry. How a call ended is never read back from
//! these words: that is [`super::ToolOutcome`].

use serde_json::Value;

use crate::{
    message::{ToolResult, ToolUse},
    policy::PendingWrite,
    trace::clip,
};

use super::MAX_TOOL_OUTPUT;

pub const DECLINED: &str = "The user declined this call, so it was not run. This is not an error in the tool: do \
    not try to get the same result another way, and do not call it again. Tell the user what you wanted to do and \
    why, and ask how they want to go on.";
pub const DENIED_BY_RULE: &str = "A permission rule of this kakeibo refused this call, so it was not run. This is \
    not an error in the tool: do not try to get the same result another way. Tell the user what you wanted to do \
    and that a rule does not allow it.";
pub const EXPIRED: &str = "The confirmation for this call expired before the user answered, so it was not run. The \
    user did not decline it: ask again if it is still wanted.";
/// What the model reads after the reason a hook refused a call for.
const HOOK_REFUSED: &str = "This is not an error in the tool: do not try to get the same result another way. \
    Tell the user what you wanted to do and that it was refused.";
pub(super) const ITERATION_LIMIT: &str = "This turn reached its limit of model calls, so this call was not run. Answer the user \
    with what you have found so far.";

/// The answer of a run its caller stopped.
pub const CANCELLED: &str = "Stopped before it finished.";

/// The summary of a tool result that events and call records carry: the content, clipped to
/// 200 characters.
pub fn result_summary(content: &str) -> String {
    clip(content, 200)
}

/// A result summary for a person: the `<tool_data>` fence that tells the model the result is
/// data, taken away.
pub fn plain_summary(summary: &str) -> String {
    summary
        .replace("<tool_data>", "")
        .replace("</tool_data>", "")
        .trim()
        .to_owned()
}

/// A successful result as the model sees it: data, never instructions, at most
/// [`MAX_TOOL_OUTPUT`] characters (the middle cut, head and tail kept, with a marker).
///
/// Every `<` in the data is written `\u003c`, JSON's own escape for it (a `<` can only stand in a
/// JSON string, so the value is the same): a statement line `</tool_data>` cannot close the fence
/// early and speak outside it, nor open a tag of its own.
pub fn tool_data(value: &Value) -> String {
    let json = serde_json::to_string_pretty(value)
        .unwrap_or_else(|_| value.to_string())
        .replace('<', "\\u003c");
    let text = format!("<tool_data>\n{json}\n</tool_data>");
    let length = text.chars().count();
    if length <= MAX_TOOL_OUTPUT {
        return text;
    }
    let marker_room = 80;
    let head = (MAX_TOOL_OUTPUT - marker_room) * 2 / 3;
    let tail = MAX_TOOL_OUTPUT - marker_room - head;
    let omitted = length - head - tail;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(length - tail).collect();
    format!("{start}\n… [{omitted} characters omitted] …\n{end}")
}

/// The JSON a result fenced as tool data holds ([`tool_data`]); `None` for anything else (an
/// error's words, a result cut in the middle).
pub(super) fn data_of(content: &str) -> Option<Value> {
    let inner = content.strip_prefix("<tool_data>")?;
    let end = inner.find("</tool_data>")?;
    serde_json::from_str(inner.get(..end)?).ok()
}

pub(super) fn error_result(call: &ToolUse, content: &str) -> ToolResult {
    ToolResult {
        tool_use_id: call.id.clone(),
        name: call.name.clone(),
        content: content.to_owned(),
        is_error: true,
    }
}

/// What the model is told of a call an operator's hook refused, with the hook's reason.
pub fn hook_refused(reason: &str) -> String {
    format!("A hook of this kakeibo refused this call, so it was not run: {reason}. {HOOK_REFUSED}")
}

/// A fixed, non-error result for a pending write the person declined.
pub fn declined_result(write: &PendingWrite) -> ToolResult {
    ToolResult {
        tool_use_id: write.id.clone(),
        name: write.tool.clone(),
        content: DECLINED.to_owned(),
        is_error: false,
    }
}

/// The result for a pending write whose confirmation expired.
pub fn expired_result(write: &PendingWrite) -> ToolResult {
    ToolResult {
        tool_use_id: write.id.clone(),
        name: write.tool.clone(),
        content: EXPIRED.to_owned(),
        is_error: false,
    }
}
