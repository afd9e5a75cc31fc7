//! `import_statement_csv`: preview a statement (a stored plan), then commit exactly that plan.

use std::path::Path;

use futures_util::future::BoxFuture;
use kakeibo_core::{Tier, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use sqlx::PgConnection;

use super::{
    Scope,
    currency::CurrencyCode,
    write_tool::{WriteTool, in_own_transaction, write_tool},
};
use crate::ToolsError;
use kakeibo_ledger::{
    OwnerId,
    import::{self, Mapping, ParseOptions},
};

/// A statement to preview, or a previewed plan to commit.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ImportInput {
    /// A statement the user uploaded.
    pub upload_id: Option<Uuid>,
    /// A file in the import folder (only where kakeibo runs on the user's own machine).
    pub path: Option<String>,
    /// The plan to commit, as a preview returned it.
    pub plan_id: Option<Uuid>,
    /// The account to import into (default "Checking"; another currency gets its own). Created when missing.
    pub account: Option<String>,
    /// The kind of a new account: checking, savings, card, cash or loan (a card or loan is a liability).
    /// Without it the statement decides (a card's Sale/Payment/Return rows make a card), else checking.
    pub kind: Option<kakeibo_ledger::AccountKind>,
    /// The currency of amounts that name none; needed when the statement names none and the account holds nothing yet.
    pub currency: Option<CurrencyCode>,
    /// Column choices when the headers are not understood: header names or column numbers.
    pub mapping: Option<Mapping>,
    /// Which statement of a file that holds several (an OFX file of a bank account and a card),
    /// by its number (1-based) as the refusal lists them.
    #[serde(default)]
    pub statement: Option<usize>,
    /// true (the default): preview and store a plan; false: commit the plan named by plan_id.
    #[serde(default = "preview_by_default")]
    pub dry_run: bool,
    /// Rows the balance column refuses, taken in at the figure their person chose (the page's
    /// preview). Never the model's to give: it is not in the tool's schema and never read from
    /// its calls.
    #[serde(skip)]
    pub figures: std::collections::BTreeMap<usize, import::Figure>,
}

fn preview_by_default() -> bool {
    true
}

#[derive(Debug)]
pub struct ImportStatementCsv(pub Scope);

impl TypedTool for ImportStatementCsv {
    type Input = ImportInput;
    type Output = ImportOutcome;
    const NAME: &'static str = "import_statement_csv";
    const DESCRIPTION: &'static str = "Import a bank statement (CSV or other delimited text; OFX, QFX or QBO) into the ledger, in two steps that each \
        need the user's confirmation: first a preview (dry_run true, with the upload_id or path) that shows \
        the rows to add, duplicates skipped and rows that could not be read, the account and its kind, the \
        opening balance, and the rows that look like transfers between the user's own accounts (paired with \
        their other side, or waiting in transit: never spending or income); then the commit (dry_run false \
        with the plan_id of that preview), which adds exactly the previewed rows. Importing the same \
        statement twice adds nothing. A file of several statements (a bank account and a card) is refused \
        with the list of them: preview each by its number (statement).";
    const TIER: Tier = Tier::Write;

    fn check(&self, input: &ImportInput) -> Vec<String> {
        match (
            input.dry_run,
            input.upload_id.is_some(),
            input.path.is_some(),
            input.plan_id.is_some(),
        ) {
            (true, true, true, _) => vec!["give either upload_id or path, not both".into()],
            (true, false, false, _) => vec!["a preview needs upload_id or path".into()],
            (false, _, _, false) => {
                vec!["committing needs the plan_id of a preview (preview first with dry_run true)".into()]
            }
            _ => Vec::new(),
        }
    }

    fn summarize(&self, input: &ImportInput) -> String {
        if input.dry_run {
            let source = input
                .path
                .clone()
                .or_else(|| input.upload_id.map(|u| format!("upload {u}")))
                .unwrap_or_default();
            format!("Preview importing {source} (nothing is added yet)")
        } else {
            format!(
                "Import the previewed statement (plan {})",
                input.plan_id.map(|p| p.to_string()).unwrap_or_default()
            )
        }
    }

    /// A commit's card says what the stored plan adds: rows, days, money in and out, the
    /// account — read from the plan, so the person judges the rows, not an id.
    fn describe<'a>(&'a self, input: &'a ImportInput) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let plan_id = input.plan_id.filter(|_| !input.dry_run)?;
            let owner = self.0.owner;
            self.0
                .run(move |conn| {
                    Box::pin(async move { Ok(import::plan_in_words(owner, conn, plan_id).await?) })
                })
                .await
                // No plan to commit (gone, committed, another owner's): the summary names the id,
                // and the commit itself says what is wrong.
                .ok()
        })
    }

    fn run(&self, input: ImportInput) -> BoxFuture<'_, Result<ImportOutcome, ToolError>> {
        in_own_transaction(self, input)
    }
}

write_tool!(ImportStatementCsv, scope import_statement);

/// Previews or commits a statement on a connection already scoped to the owner.
pub async fn import_statement(
    scope: &Scope,
    conn: &mut PgConnection,
    input: ImportInput,
) -> Result<ImportOutcome, ToolsError> {
    if input.dry_run {
        return Ok(ImportOutcome::Preview(Box::new(
            preview_statement(scope, conn, input).await?,
        )));
    }
    let plan_id = input.plan_id.ok_or(ToolsError::MissingPlanId)?;
    let report = import::commit(scope.owner, conn, plan_id, &mut |_, _| {}).await?;
    Ok(ImportOutcome::Committed(CommitOutcome {
        dry_run: false,
        committed: report,
    }))
}

/// What the import tool answers: a preview, or what a commit did.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ImportOutcome {
    Preview(Box<DryRunPreview>),
    Committed(CommitOutcome),
}

/// A plan's preview, nothing added yet (`dry_run` is always true).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DryRunPreview {
    #[serde(flatten)]
    pub preview: import::ImportPreview,
    pub dry_run: bool,
    /// Made by an earlier preview of the same statement with the same choices.
    pub reused: bool,
}

/// What a commit added (`dry_run` is always false).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CommitOutcome {
    pub dry_run: bool,
    pub committed: import::CommitReport,
}

/// The dry run: a plan made (or the same one again) and its preview; nothing is added.
async fn preview_statement(
    scope: &Scope,
    conn: &mut PgConnection,
    input: ImportInput,
) -> Result<DryRunPreview, ToolsError> {
    let owner = scope.owner;
    // One statement of an owner's is read at a time (a parse holds a core): a second preview
    // while one runs is refused at once, not queued behind it.
    let free: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))")
        .bind(format!("import preview|{}", owner.as_uuid()))
        .fetch_one(&mut *conn)
        .await?;
    if !free {
        return Err(ToolsError::PreviewBusy);
    }
    let (filename, bytes) = match (input.upload_id, &input.path) {
        (Some(upload), _) => read_upload(owner, &mut *conn, upload).await?,
        (None, Some(path)) => read_confined(scope.import_root.as_deref(), path)
            .map_err(|e| ToolsError::PathRefused(e.to_string()))?,
        (None, None) => return Err(ToolsError::MissingStatement),
    };
    let account = input.account.as_deref().unwrap_or(kakeibo_ledger::CHECKING);
    let saved = import::saved_mapping(owner, &mut *conn, account).await?;
    let source_sha256 = import::file_sha256(&bytes);
    let options_key = options_key(account, &input, saved.as_ref());
    // The same statement with the same options, and nothing changed in the ledger since: the
    // plan already made is the answer.
    if let Some((plan_id, plan)) =
        import::reusable_plan(owner, &mut *conn, &source_sha256, &options_key).await?
    {
        return Ok(dry_run_preview(plan_id, &plan, true));
    }
    let options = ParseOptions {
        mapping: input.mapping.unwrap_or_default(),
        currency: input.currency.map(CurrencyCode::currency),
        date_hint: None,
        figures: input.figures,
        statement: input.statement,
    };
    // The parse is the CPU-heavy part: off the async workers, so it never holds up other requests.
    let parsed =
        tokio::task::spawn_blocking(move || import::parse_with_saved(&bytes, &options, saved.as_ref()))
            .await
            .map_err(|e| ToolsError::Parser(e.to_string()))?
            .map_err(|source| ToolsError::Unreadable {
                filename: filename.clone(),
                source,
            })?;
    let target = import::Target {
        account: input.account.clone(),
        kind: input.kind,
        window_days: None,
    };
    let (plan_id, plan) =
        import::plan_into(owner, &mut *conn, &filename, &source_sha256, parsed, &target).await?;
    import::keep_plan(owner, conn, plan_id, &options_key).await?;
    Ok(dry_run_preview(plan_id, &plan, false))
}

/// The preview of a stored plan as the tool answers it (`reused`: made by an earlier preview).
fn dry_run_preview(plan_id: Uuid, plan: &import::Plan, reused: bool) -> DryRunPreview {
    DryRunPreview {
        preview: import::preview(plan_id, plan),
        dry_run: true,
        reused,
    }
}

/// A digest of everything besides the bytes that shapes a plan: the account (as the ledger
/// matches it, case-insensitively), the currency, the mapping given and the account's saved one,
/// and the figures chosen for refused rows.
fn options_key(account: &str, input: &ImportInput, saved: Option<&import::SavedMapping>) -> String {
    let shape = json!({
        "account": account.trim().to_lowercase(),
        "kind": input.kind,
        "currency": input.currency.map(|c| format!("{c:?}")),
        "mapping": input.mapping,
        "saved": saved.map(|s| json!({"account": s.account, "mapping": s.mapping})),
        "figures": input.figures,
        "statement": input.statement,
    });
    import::file_sha256(shape.to_string().as_bytes())
}

/// What a person chose on the page's preview of an upload.
#[derive(Debug, Clone, Default)]
pub struct PreviewChoices {
    /// The account to read it into.
    pub account: Option<String>,
    /// The kind of a new account.
    pub kind: Option<kakeibo_ledger::AccountKind>,
    /// The currency of amounts that name none.
    pub currency: Option<CurrencyCode>,
    /// Rows the balance column refuses, taken in at the figure chosen.
    pub figures: std::collections::BTreeMap<usize, import::Figure>,
    /// Which statement of a file of several (1-based).
    pub statement: Option<usize>,
}

/// The dry run of [`import_statement`] on an upload of `scope`'s owner, without the model (the
/// page's preview): the same plan stored in `import_batches` and the same preview JSON as the
/// tool's `dry_run: true`, nothing added to the ledger. `None` when the owner has no such upload;
/// a statement the importer cannot read is [`ToolsError::Unreadable`] with its sentence.
pub async fn preview_upload(
    scope: &Scope,
    upload: Uuid,
    choices: PreviewChoices,
) -> Result<Option<DryRunPreview>, ToolsError> {
    let owner = scope.owner;
    let scope_inner = scope.clone();
    kakeibo_ledger::with_owner(owner, &scope.pool, move |conn| {
        Box::pin(async move {
            let exists: bool =
                sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM uploads WHERE owner_id = $1 AND id = $2)")
                    .bind(owner.as_uuid())
                    .bind(upload)
                    .fetch_one(&mut *conn)
                    .await?;
            if !exists {
                return Ok(None);
            }
            let input = ImportInput {
                upload_id: Some(upload),
                path: None,
                plan_id: None,
                account: choices.account,
                kind: choices.kind,
                currency: choices.currency,
                mapping: None,
                dry_run: true,
                figures: choices.figures,
                statement: choices.statement,
            };
            preview_statement(&scope_inner, conn, input).await.map(Some)
        })
    })
    .await
}

/// The person's answers to a preview's questions (a row with several equal candidates for its
/// other side: by its line, the index of the one it is), kept with the plan for its commit; the
/// preview again, saying what each answered row becomes. The website's, without the model.
pub async fn answer_transfers(
    scope: &Scope,
    plan_id: Uuid,
    answers: std::collections::BTreeMap<usize, usize>,
) -> Result<DryRunPreview, ToolsError> {
    let owner = scope.owner;
    kakeibo_ledger::with_owner(owner, &scope.pool, move |conn| {
        Box::pin(async move {
            let plan = import::answer(owner, conn, plan_id, &answers).await?;
            Ok(dry_run_preview(plan_id, &plan, true))
        })
    })
    .await
}

/// The bytes of an upload of this owner.
async fn read_upload(
    owner: OwnerId,
    conn: &mut PgConnection,
    upload: Uuid,
) -> Result<(String, Vec<u8>), ToolsError> {
    let found: Option<(String, Vec<u8>)> =
        sqlx::query_as("SELECT filename, content FROM uploads WHERE owner_id = $1 AND id = $2")
            .bind(owner.as_uuid())
            .bind(upload)
            .fetch_optional(conn)
            .await?;
    found.ok_or(ToolsError::NoUpload(upload))
}

/// A file under the import folder, and nowhere else. The file is opened once, beneath the folder
/// (no `..` above it, no absolute path, no symbolic link that leads out, however the folder
/// changes meanwhile), and what is read is that open file: its kind and size are the handle's.
/// Every path that is not a readable file inside the folder is refused with one sentence, so a
/// refusal never tells whether something exists outside it; no refusal quotes the file's content.
pub fn read_confined(root: Option<&Path>, path: &str) -> Result<(String, Vec<u8>), ToolError> {
    use cap_fs_ext::OpenOptionsSyncExt as _;
    use std::io::Read as _;

    let refuse = |why: &str| ToolError::Refused(format!("{path:?} cannot be imported: {why}"));
    let too_big = |bytes: u64| {
        ToolError::Refused(format!(
            "{path:?} is {bytes} bytes; statements up to {} bytes are accepted",
            import::MAX_BYTES
        ))
    };
    let root = root.ok_or_else(|| refuse("this kakeibo reads uploaded statements only, not server paths"))?;
    let folder = cap_std::fs::Dir::open_ambient_dir(root, cap_std::ambient_authority())
        .map_err(|_| refuse("the import folder does not exist"))?;
    let not_here = || refuse("no such file in the import folder");
    // Without blocking: a named pipe in the folder is refused below (not a file), not waited on.
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true).nonblock(true);
    let file = folder.open_with(path, &options).map_err(|_| not_here())?;
    let meta = file.metadata().map_err(|_| not_here())?;
    if !meta.is_file() {
        return Err(not_here());
    }
    let max = import::MAX_BYTES as u64;
    if meta.len() > max {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::new();
    // At most one byte past the limit, however the file grows while it is read.
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|_| not_here())?;
    if bytes.len() as u64 > max {
        return Err(too_big(bytes.len() as u64));
    }
    let name = Path::new(path)
        .file_name()
        .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned());
    Ok((name, bytes))
}
