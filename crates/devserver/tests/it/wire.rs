//! The wire the web app reads — the event stream and every REST answer a page reads — as one
//! JSON Schema made from the Rust types of every function, checked against the committed
//! `web/src/api/wire.schema.json` (from which `npm run wire` makes `wire.ts`).
//!
//! After changing a type of the wire: `KAKEIBO_WRITE_WIRE=1 cargo test -p kakeibo-devserver
//! --test it wire`, then `npm run wire` in `web/`.

use std::path::PathBuf;

use kakeibo_admin::{Action, ActionDone, AdminOverview};
use kakeibo_agent::{
    conversations::Conversation,
    runs::{FigureRows, RunDetail},
};
use kakeibo_api::error::ErrorBody;
use kakeibo_chat::{
    SessionView, SignedIn,
    answers::{Gone, HomeCurrency, Reset, Sent, SignedOut, Verified},
};
use kakeibo_core::wire::WireSchema;
use kakeibo_evals::EvalReport;
use kakeibo_operator::uploads::{Kept, UploadList};
use kakeibo_register::{
    answers::{CategoryList, Deleted, EditList, RuleList},
    budgets::{Budget, MonthView},
    categories::Category,
    edits::Edit,
    query::Page,
    rules::{Like, Rule, RuleInput},
};
use kakeibo_runs::{ConversationList, RunList, ToolList};
use kakeibo_tools::{DryRunPreview, dashboard::Dashboard};
use serde_json::Value;

/// The schema of the event stream and of each REST answer, named as the pages name them.
fn wire() -> Value {
    let mut wire = WireSchema::events();
    wire.add::<RunList>("run_list")
        .add::<RunDetail>("run_detail")
        .add::<FigureRows>("figure_rows")
        .add::<ToolList>("tool_list")
        .add::<ConversationList>("conversation_list")
        .add::<Conversation>("conversation")
        .add::<Dashboard>("dashboard")
        .add::<EvalReport>("eval_report")
        .add::<AdminOverview>("admin_overview")
        .add::<Action>("admin_action")
        .add::<ActionDone>("admin_action_done")
        .add::<Page>("register_page")
        .add::<EditList>("edit_list")
        .add::<Edit>("edit")
        .add::<CategoryList>("category_list")
        .add::<Category>("category")
        .add::<RuleList>("rule_list")
        .add::<Rule>("rule")
        .add::<RuleInput>("rule_input")
        .add::<Like>("rule_preview")
        .add::<MonthView>("budget_month")
        .add::<Budget>("budget")
        .add::<Deleted>("deleted")
        .add::<SessionView>("session")
        .add::<SignedIn>("signed_in")
        .add::<SignedOut>("signed_out")
        .add::<Sent>("sent")
        .add::<Reset>("reset")
        .add::<Verified>("verified")
        .add::<Gone>("gone")
        .add::<HomeCurrency>("home_currency")
        .add::<UploadList>("upload_list")
        .add::<Kept>("upload")
        .add::<ErrorBody>("error_body")
        .add::<DryRunPreview>("import_preview");
    wire.finish()
}

fn committed() -> PathBuf {
    kakeibo_testkit::workspace_root().join("web/src/api/wire.schema.json")
}

#[test]
fn the_committed_wire_schema_is_what_the_types_say() {
    let generated = format!("{}\n", serde_json::to_string_pretty(&wire()).unwrap());
    let path = committed();
    if std::env::var_os("KAKEIBO_WRITE_WIRE").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{} is not what the Rust types say: run `KAKEIBO_WRITE_WIRE=1 cargo test -p kakeibo-devserver --test it wire`, then `npm run wire` in web/",
        path.display()
    );
}

#[test]
fn every_answer_a_page_reads_is_named() {
    let schema = wire();
    for name in [
        "event",
        "run_list",
        "run_detail",
        "tool_list",
        "conversation_list",
        "conversation",
    ] {
        assert!(schema["properties"].get(name).is_some(), "{name}");
    }
    // A typed message, not any JSON: the page reads its blocks.
    let text = schema.to_string();
    assert!(text.contains("tool_use_id"), "stored messages are typed");
}
