//! `kakeibo providers check`: which model provider the settings select, the model of each role,
//! one real call when one is possible, and the environment lines to keep.

use std::{process::ExitCode, time::Instant};

use clap::{Args, Subcommand};
use kakeibo_core::{Declaration, Message, ModelRequest, Provider, StopReason, provider::complete};
use kakeibo_providers::{
    OpenAi, OpenAiConfig,
    select::{Choice, ModelRole, SelectError, Settings},
};

use serde_json::json;

use crate::terminal::visible;

#[derive(Debug, Args)]
pub struct ProvidersArgs {
    #[command(subcommand)]
    command: ProvidersCommand,
}

#[derive(Debug, Subcommand)]
enum ProvidersCommand {
    /// Show the provider and models the environment selects, and call the agent model once.
    #[command(
        after_help = "Settings read: KAKEIBO_PROVIDER (gemini | anthropic | openai | script:PATH), \
        GEMINI_API_KEY, GEMINI_BASE_URL, GEMINI_AUTH=vertex with GEMINI_SERVICE_ACCOUNT_JSON or \
        GOOGLE_APPLICATION_CREDENTIALS and VERTEX_PROJECT, VERTEX_LOCATION, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, OPENAI_BASE_URL, \
        OPENAI_API_KEY, AGENT_MODEL, SUMMARIZER_MODEL, JUDGE_MODEL.\n\n\
        Exit status: 0 the provider answered, 1 it is configured but failed, 2 nothing is configured.\n\n\
        Examples:\n  GEMINI_API_KEY=... kakeibo providers check\n  \
        OPENAI_BASE_URL=http://localhost:11434/v1 AGENT_MODEL=qwen3 kakeibo providers check\n  \
        kakeibo providers check --no-call"
    )]
    Check(CheckArgs),
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Only read the settings; make no call to the provider.
    #[arg(long)]
    no_call: bool,
}

pub async fn run(args: ProvidersArgs) -> ExitCode {
    match args.command {
        ProvidersCommand::Check(check_args) => check(&check_args).await,
    }
}

/// Settings that are safe to print as they are (never keys).
const SHOWN: [&str; 13] = [
    "GEMINI_AUTH",
    "GEMINI_BASE_URL",
    "VERTEX_PROJECT",
    "VERTEX_LOCATION",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "EXPLICIT_CACHE",
    "REPLAY",
    "RECORD",
    "KAKEIBO_FIXTURES",
];

async fn check(args: &CheckArgs) -> ExitCode {
    let lookup = |name: &str| std::env::var(name).ok();
    let settings = Settings::new(&lookup);
    let choice = match settings.choice() {
        Ok(choice) => choice,
        Err(SelectError::NothingConfigured) => {
            outln!("No model provider is configured, so kakeibo cannot answer questions yet.");
            outln!("Set one of these, then run this check again:");
            outln!("  GEMINI_API_KEY=<key>                      Gemini (https://aistudio.google.com/apikey)");
            outln!("  ANTHROPIC_API_KEY=<key> AGENT_MODEL=<id>  Anthropic");
            outln!(
                "  OPENAI_BASE_URL=<url> AGENT_MODEL=<id>    any OpenAI-compatible server (OPENAI_API_KEY if it needs one)"
            );
            outln!("  KAKEIBO_PROVIDER=script:PATH              scripted replies from a file, no model");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("kakeibo: error: {}", visible(&e.to_string()));
            return ExitCode::FAILURE;
        }
    };
    let why = match &choice {
        Choice::Script(_) => "scripted replies, no model".to_owned(),
        _ if settings.get("KAKEIBO_PROVIDER").is_some() => "KAKEIBO_PROVIDER".to_owned(),
        Choice::Gemini => match settings.get("GEMINI_AUTH") {
            Some(auth) => format!("GEMINI_AUTH={auth}"),
            None => "GEMINI_API_KEY is set".to_owned(),
        },
        Choice::Anthropic => "ANTHROPIC_API_KEY is set".to_owned(),
        Choice::OpenAi => "OPENAI_BASE_URL is set".to_owned(),
    };
    outln!("provider    {choice} ({why})");
    let mut lines = vec![format!("KAKEIBO_PROVIDER={}", choice.setting())];
    let mut complete_settings = true;
    for role in ModelRole::ALL {
        let label = format!("{role:?}").to_lowercase();
        match settings.model(&choice, role) {
            Ok((model, source)) => {
                outln!("{label:<11} {model} ({source})");
                // A role that falls back to the agent's model needs no line of its own.
                let falls_back = role != ModelRole::Agent && source == ModelRole::Agent.variable();
                if !matches!(choice, Choice::Script(_)) && !falls_back {
                    lines.push(format!("{}={model}", role.variable()));
                }
            }
            Err(e) => {
                outln!("{label:<11} not set: {}", visible(&e.to_string()));
                complete_settings = false;
            }
        }
    }
    for name in SHOWN {
        if let Some(value) = settings.get(name) {
            lines.push(format!("{name}={}", without_credentials(&value)));
        }
    }
    for (name, provider) in [
        ("GEMINI_API_KEY", Choice::Gemini),
        ("ANTHROPIC_API_KEY", Choice::Anthropic),
        ("OPENAI_API_KEY", Choice::OpenAi),
        ("GEMINI_SERVICE_ACCOUNT_JSON", Choice::Gemini),
    ] {
        if provider == choice && settings.get(name).is_some() {
            lines.push(format!("{name}=<your key, set>"));
        }
    }

    if choice == Choice::OpenAi {
        where_it_runs(&settings).await;
    }
    let passed = if args.no_call {
        // Building the provider makes no call but checks every setting it needs.
        match settings.provider(ModelRole::Agent) {
            Ok(_) => {
                outln!("call        skipped (--no-call)");
                complete_settings
            }
            Err(e) => {
                outln!("call        not possible: {}", visible(&e.to_string()));
                false
            }
        }
    } else {
        call(&settings, &choice).await
    };
    outln!();
    outln!("Environment lines for this setup:");
    for line in lines {
        outln!("  {line}");
    }
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Where an OpenAI-compatible server is — on this machine (nothing leaves it) or elsewhere —
/// and the models it says it serves, with a word when `AGENT_MODEL` is not among them.
async fn where_it_runs(settings: &Settings<'_>) {
    let var = |name: &str| settings.get(name);
    let model = settings.get("AGENT_MODEL").unwrap_or_default();
    let Some(server) = OpenAiConfig::from_vars(&model, &var).and_then(|c| OpenAi::new(c).ok()) else {
        return;
    };
    let base = settings.get("OPENAI_BASE_URL").unwrap_or_default();
    let at = visible(&without_credentials(&base)).into_owned();
    if server.is_local() {
        outln!("server      on this machine ({at}): nothing kakeibo sends leaves it");
    } else {
        outln!("server      {at}: questions and ledger figures are sent there");
    }
    match server.served_models().await {
        Ok(models) if !models.is_empty() => {
            let listed: Vec<String> = models.iter().take(8).map(|m| visible(m).into_owned()).collect();
            outln!("serves      {}", listed.join(", "));
            if !model.is_empty() && !models.contains(&model) {
                outln!("            AGENT_MODEL={} is not among them", visible(&model));
            }
        }
        Ok(_) => outln!("serves      (the server lists no models)"),
        Err(e) => outln!(
            "serves      (the server does not list its models: {})",
            visible(&e.to_string())
        ),
    }
}

/// One small request to the agent model; says what came back (and for an OpenAI-compatible
/// server, whether tool declarations reach the model).
async fn call(settings: &Settings<'_>, choice: &Choice) -> bool {
    let provider = match settings.provider(ModelRole::Agent) {
        Ok(provider) => provider,
        Err(e) => {
            outln!("call        not made: {}", visible(&e.to_string()));
            return false;
        }
    };
    let request = ModelRequest {
        system: "Reply with the single word OK.".into(),
        messages: vec![Message::user("Are you there?")],
        tools: Vec::new().into(),
        max_tokens: 256,
    };
    let started = Instant::now();
    match complete(provider.as_ref(), &request, &mut |_| {}).await {
        Ok(reply) => {
            let text: String = reply.message.text().chars().take(60).collect();
            let version = reply.model_version.unwrap_or_else(|| provider.model().to_owned());
            let version = visible(&version);
            outln!(
                "call        answered in {} ms by {version}: {} ({} tokens in, {} out)",
                started.elapsed().as_millis(),
                visible(&format!("{text:?}")),
                reply.usage.input_tokens,
                reply.usage.output_tokens
            );
            if reply.stop_reason != StopReason::End {
                outln!("            stopped: {:?}", reply.stop_reason);
            }
            if *choice == Choice::OpenAi {
                tools_reach(provider.as_ref()).await;
            }
            true
        }
        Err(e) => {
            outln!(
                "call        failed after {} ms: {}",
                started.elapsed().as_millis(),
                visible(&e.to_string())
            );
            false
        }
    }
}

/// Whether a tool declaration reaches the model: the same one-token request with and without
/// one, their prompt tokens compared. A server whose chat template for the model has no place for
/// tools drops the declarations without a word — and then the model cannot call kakeibo's.
async fn tools_reach(provider: &dyn Provider) {
    let request = |tools: Vec<Declaration>| ModelRequest {
        system: "Reply with the single word OK.".into(),
        messages: vec![Message::user("Are you there?")],
        tools: tools.into(),
        max_tokens: 1,
    };
    let tool = Declaration {
        name: "get_balances",
        description: "The balance of every account of the ledger, by account.",
        parameters: json!({"type": "object", "properties": {"as_of": {"type": "string", "description": "YYYY-MM-DD"}}})
            .into(),
    };
    let without = complete(provider, &request(Vec::new()), &mut |_| {}).await;
    let with = complete(provider, &request(vec![tool]), &mut |_| {}).await;
    match (without, with) {
        (Ok(without), Ok(with)) => {
            let (bare, declared) = (without.usage.input_tokens, with.usage.input_tokens);
            if declared > bare {
                outln!(
                    "tools       reach the model (one declaration: {} prompt tokens)",
                    declared - bare
                );
            } else if bare > 0 {
                outln!(
                    "tools       left out: a request with a tool counts the same {bare} prompt tokens as one \
                     without — the server's chat template for this model has no place for tools, so the \
                     model cannot call kakeibo's (use a model whose template takes tools)"
                );
            } else {
                outln!("tools       not known (the server reports no prompt tokens)");
            }
        }
        (Err(e), _) | (_, Err(e)) => outln!("tools       not checked: {}", visible(&e.to_string())),
    }
}

/// A URL with any `user:password@` removed; other values as they are.
fn without_credentials(value: &str) -> String {
    match reqwest::Url::parse(value) {
        Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.to_string()
        }
        _ => value.to_owned(),
    }
}
