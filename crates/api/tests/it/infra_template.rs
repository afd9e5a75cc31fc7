//! `infra/template.yaml`, checked offline with the tools `cargo xtask test` installs into the
//! suite's Python environment: cfn-lint (informational checks included), `sam validate --lint`,
//! the SAM translator's transform (streaming where it must be, spelled so SAM honours it), and
//! the settings each function reads against what the template gives it.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    process::Command,
};

use serde_json::Value;

fn root() -> PathBuf {
    kakeibo_testkit::workspace_root()
}

fn template() -> PathBuf {
    root().join("infra/template.yaml")
}

/// The suite's Python, or `None` (said plainly; a failure where the whole suite is required)
/// outside `cargo xtask test`.
fn python() -> Option<PathBuf> {
    kakeibo_testkit::python("cfn-lint, sam and the translator")
}

fn tool(python: &Path, name: &str) -> PathBuf {
    python.parent().unwrap().join(name)
}

/// The template after the SAM transform, as plain CloudFormation.
fn transformed(python: &Path, template: &Path) -> Value {
    let out = Command::new(python)
        .arg(root().join("infra/tests/transform.py"))
        .arg(template)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// (path, method, integration) of every route of the REST API.
fn integrations(cfn: &Value) -> Vec<(String, String, Value)> {
    let resources = cfn["Resources"].as_object().unwrap();
    let api = resources
        .values()
        .find(|r| r["Type"] == "AWS::ApiGateway::RestApi")
        .expect("a REST API");
    let mut out = Vec::new();
    for (path, methods) in api["Properties"]["Body"]["paths"].as_object().unwrap() {
        for (method, operation) in methods.as_object().unwrap() {
            out.push((
                path.clone(),
                method.clone(),
                operation["x-amazon-apigateway-integration"].clone(),
            ));
        }
    }
    out
}

fn streams(integration: &Value) -> bool {
    integration["responseTransferMode"] == "STREAM"
        && integration["uri"]["Fn::Sub"].as_str().is_some_and(|u| {
            u.contains("/2021-11-15/functions/") && u.ends_with("/response-streaming-invocations")
        })
}

#[test]
fn cfn_lint_and_sam_validate_pass_with_nothing_to_say() {
    let Some(python) = python() else { return };
    let lint = Command::new(tool(&python, "cfn-lint"))
        .args(["--include-checks", "I", "--"])
        .arg(template())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&lint.stdout);
    assert!(
        lint.status.success() && said.trim().is_empty(),
        "cfn-lint:\n{said}"
    );
    let sam = Command::new(tool(&python, "sam"))
        .args(["validate", "--lint", "-t"])
        .arg(template())
        .env("SAM_CLI_TELEMETRY", "0")
        .output()
        .unwrap();
    assert!(
        sam.status.success(),
        "sam validate --lint:\n{}{}",
        String::from_utf8_lossy(&sam.stdout),
        String::from_utf8_lossy(&sam.stderr)
    );
}

#[test]
fn the_transformed_template_lints_clean_too() {
    // Some faults exist only after the transform: a dependency cycle through the generated
    // API (E3004) passes on the SAM source.
    let Some(python) = python() else { return };
    let cfn = transformed(&python, &template());
    let file = std::env::temp_dir().join(format!("kakeibo-transformed-{}.json", std::process::id()));
    std::fs::write(&file, cfn.to_string()).unwrap();
    let lint = Command::new(tool(&python, "cfn-lint"))
        .arg("--")
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    let said = String::from_utf8_lossy(&lint.stdout);
    assert!(
        lint.status.success() && said.trim().is_empty(),
        "cfn-lint on the transformed template:\n{said}"
    );
}

#[test]
fn chat_and_confirm_stream_and_the_other_routes_are_buffered() {
    let Some(python) = python() else { return };
    let routes = integrations(&transformed(&python, &template()));
    assert!(routes.len() >= 10, "{routes:?}");
    for (path, method, integration) in &routes {
        // The chat and confirm functions answer in streaming mode, so every route they serve
        // must be a streaming integration; runs and admin are buffered.
        let uri = integration["uri"]["Fn::Sub"].as_str().unwrap_or_default();
        let streaming = uri.contains("${ChatFunction.Arn}") || uri.contains("${ConfirmFunction.Arn}");
        assert_eq!(streams(integration), streaming, "{method} {path}: {integration}");
        if !streaming {
            assert!(
                integration["uri"]["Fn::Sub"]
                    .as_str()
                    .unwrap()
                    .contains("/2015-03-31/functions/"),
                "{path} is a plain buffered proxy integration"
            );
        }
    }
    let streamed: BTreeSet<&str> = routes
        .iter()
        .filter(|r| streams(&r.2))
        .map(|r| r.0.as_str())
        .collect();
    assert!(
        streamed.contains("/api/chat") && streamed.contains("/api/confirm"),
        "{streamed:?}"
    );
    assert!(
        !streamed.contains("/api/runs") && !streamed.contains("/api/admin/{proxy+}"),
        "{streamed:?}"
    );
    // The register's and the categories, rules and budgets screens' routes reach the chat function.
    for path in [
        "/api/transactions",
        "/api/transactions/{proxy+}",
        "/api/imports/{proxy+}",
        "/api/edits",
        "/api/edits/{proxy+}",
        "/api/categories",
        "/api/categories/{proxy+}",
        "/api/rules",
        "/api/rules/{proxy+}",
        "/api/budgets",
        "/api/budgets/{proxy+}",
    ] {
        assert!(
            streamed.contains(path),
            "{path} is a route of the chat function: {streamed:?}"
        );
    }

    // The guard works: CloudFormation's spelling, `STREAM`, in a SAM event is silently buffered.
    let wrong = std::env::temp_dir().join(format!("kakeibo-template-{}.yaml", std::process::id()));
    let text = std::fs::read_to_string(template()).unwrap();
    std::fs::write(
        &wrong,
        text.replace(
            "ResponseTransferMode: RESPONSE_STREAM",
            "ResponseTransferMode: STREAM",
        ),
    )
    .unwrap();
    let routes = integrations(&transformed(&python, &wrong));
    let _ = std::fs::remove_file(&wrong);
    assert!(
        !routes.iter().any(|r| streams(&r.2)),
        "with STREAM nothing streams — which this test would catch"
    );
}

/// What each function reads (crates/api's settings, and the ones that lead to secrets).
fn read_by_functions() -> BTreeSet<&'static str> {
    kakeibo_api::config::SETTINGS
        .iter()
        .copied()
        .chain([
            "SECRETS_ARN",
            "DB_OWNER_SECRET_ARN",
            "DB_APP_SECRET_ARN",
            "ORIGIN_VERIFY_SECRET_ARN",
            "DB_HOST",
            "DB_PORT",
            "DB_NAME",
            // lambda_http: REST API stages are not part of the routes' paths.
            "AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH",
            // The provider selection (crates/providers/src/select.rs).
            "KAKEIBO_PROVIDER",
            "AGENT_MODEL",
            "SUMMARIZER_MODEL",
            "JUDGE_MODEL",
            // The admin function's "run the evaluation now" (functions/admin/src/evals.rs).
            "EVAL_FUNCTION_NAME",
        ])
        .collect()
}

/// The logical ids a value refers to (`Ref`, `Fn::GetAtt`, `${X}` in `Fn::Sub`).
fn refs(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner) {
                    ("Ref", Value::String(id)) => {
                        out.insert(id.clone());
                    }
                    ("Fn::GetAtt", Value::Array(parts)) => {
                        if let Some(Value::String(id)) = parts.first() {
                            out.insert(id.clone());
                        }
                    }
                    ("Fn::Sub", Value::String(text)) => {
                        for piece in text.split("${").skip(1) {
                            let name = piece.split(['}', '.']).next().unwrap_or_default();
                            out.insert(name.to_owned());
                        }
                    }
                    _ => refs(inner, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| refs(i, out)),
        _ => {}
    }
}

#[test]
fn every_setting_a_function_needs_is_given_and_every_secret_it_names_exists_and_is_readable() {
    let Some(python) = python() else { return };
    let cfn = transformed(&python, &template());
    let resources = cfn["Resources"].as_object().unwrap();
    let parameters = cfn["Parameters"].as_object().unwrap();
    let functions: Vec<(&String, &Value)> = resources
        .iter()
        .filter(|(_, r)| r["Type"] == "AWS::Lambda::Function")
        .collect();
    assert_eq!(functions.len(), 6, "chat, confirm, runs, admin, reap, eval");
    let reads = read_by_functions();
    for (name, function) in functions {
        let env = function["Properties"]["Environment"]["Variables"]
            .as_object()
            .unwrap();
        // Nothing set that no function reads (a typo would be silently ignored).
        for key in env.keys() {
            assert!(
                reads.contains(key.as_str()),
                "{name} sets {key}, which no function reads"
            );
        }
        // Every secret named exists, and the function's role may read it.
        let mut secrets = BTreeSet::new();
        for key in [
            "SECRETS_ARN",
            "DB_OWNER_SECRET_ARN",
            "DB_APP_SECRET_ARN",
            "ORIGIN_VERIFY_SECRET_ARN",
        ] {
            refs(&env[key], &mut secrets);
        }
        assert_eq!(secrets.len(), 6, "{name}: {secrets:?}");
        let role_id = function["Properties"]["Role"]["Fn::GetAtt"][0].as_str().unwrap();
        let mut readable = BTreeSet::new();
        for policy in resources[role_id]["Properties"]["Policies"].as_array().unwrap() {
            for statement in policy["PolicyDocument"]["Statement"].as_array().unwrap() {
                let actions = &statement["Action"];
                let reads_secret = actions == "secretsmanager:GetSecretValue"
                    || actions
                        .as_array()
                        .is_some_and(|a| a.iter().any(|x| x == "secretsmanager:GetSecretValue"));
                if reads_secret {
                    refs(&statement["Resource"], &mut readable);
                }
            }
        }
        for secret in &secrets {
            assert_eq!(
                resources[secret]["Type"], "AWS::SecretsManager::Secret",
                "{name}: {secret}"
            );
            assert!(readable.contains(secret), "{name} may not read {secret}");
        }
        // What the secrets hold, with the environment, covers what a function needs to start.
        let mut given: BTreeSet<String> = env.keys().cloned().collect();
        for secret in &secrets {
            if let Some(key) =
                resources[secret]["Properties"]["GenerateSecretString"]["GenerateStringKey"].as_str()
            {
                given.insert(key.to_owned());
            }
        }
        given.insert("DATABASE_URL".into()); // from DB_OWNER_SECRET_ARN + DB_HOST
        given.insert("APP_DATABASE_URL".into()); // from DB_APP_SECRET_ARN + DB_HOST
        given.insert("ORIGIN_VERIFY".into()); // from ORIGIN_VERIFY_SECRET_ARN
        for needed in [
            "DATABASE_URL",
            "APP_DATABASE_URL",
            "JWT_SECRET",
            "RATE_LIMIT_SALT",
            "SITE_URL",
            "ORIGIN_VERIFY",
            "DB_HOST",
        ] {
            assert!(given.contains(needed), "{name} is not given {needed}");
        }
        // Every reference in the environment resolves to a resource or a parameter.
        let mut named = BTreeSet::new();
        refs(&Value::Object(env.clone()), &mut named);
        for id in named.iter().filter(|id| !id.starts_with("AWS::")) {
            assert!(
                resources.contains_key(id) || parameters.contains_key(id),
                "{name}: {id} does not exist"
            );
        }
    }
}

/// Every action a role's inline policies allow on `resource_id` (by reference).
fn actions_on(
    resources: &serde_json::Map<String, Value>,
    role_id: &str,
    resource_id: &str,
) -> BTreeSet<String> {
    let mut actions = BTreeSet::new();
    for policy in resources[role_id]["Properties"]["Policies"].as_array().unwrap() {
        for statement in policy["PolicyDocument"]["Statement"].as_array().unwrap() {
            let mut named = BTreeSet::new();
            refs(&statement["Resource"], &mut named);
            if named.contains(resource_id) {
                match &statement["Action"] {
                    Value::String(a) => {
                        actions.insert(a.clone());
                    }
                    Value::Array(list) => {
                        actions.extend(list.iter().filter_map(|a| a.as_str().map(str::to_owned)));
                    }
                    _ => {}
                }
            }
        }
    }
    actions
}

#[test]
fn the_eval_function_runs_nightly_once_at_a_time_and_only_admin_may_start_it() {
    let Some(python) = python() else { return };
    let cfn = transformed(&python, &template());
    let resources = cfn["Resources"].as_object().unwrap();
    let eval = &resources["EvalFunction"];
    assert_eq!(eval["Type"], "AWS::Lambda::Function");
    assert_eq!(eval["Properties"]["Timeout"], 900);
    assert_eq!(eval["Properties"]["ReservedConcurrentExecutions"], 1);

    let schedules: Vec<&Value> = resources
        .values()
        .filter(|r| r["Type"] == "AWS::Scheduler::Schedule")
        .filter(|r| {
            let mut target = BTreeSet::new();
            refs(&r["Properties"]["Target"]["Arn"], &mut target);
            target.contains("EvalFunction")
        })
        .collect();
    assert_eq!(schedules.len(), 1, "one schedule starts the eval function");
    let input: Value =
        serde_json::from_str(schedules[0]["Properties"]["Target"]["Input"].as_str().unwrap()).unwrap();
    assert_eq!(input["trigger"], "schedule");
    assert!(
        schedules[0]["Properties"]["Name"]["Fn::Sub"]
            .as_str()
            .is_some_and(|n| n.contains("${AWS::StackName}")),
        "the schedule's name is the stack's, so two stacks never clash"
    );
    let retries = resources
        .values()
        .find(|r| r["Type"] == "AWS::Lambda::EventInvokeConfig")
        .expect("the eval function's asynchronous invoke settings");
    assert_eq!(retries["Properties"]["MaximumRetryAttempts"], 0);

    // Only the admin function may invoke it, and it knows its name.
    for (id, function) in resources
        .iter()
        .filter(|(_, r)| r["Type"] == "AWS::Lambda::Function")
    {
        let role = function["Properties"]["Role"]["Fn::GetAtt"][0].as_str().unwrap();
        let invokes = actions_on(resources, role, "EvalFunction").contains("lambda:InvokeFunction");
        assert_eq!(
            invokes,
            id == "AdminFunction",
            "{id} may invoke the eval function: {invokes}"
        );
    }
    let mut named = BTreeSet::new();
    refs(
        &resources["AdminFunction"]["Properties"]["Environment"]["Variables"]["EVAL_FUNCTION_NAME"],
        &mut named,
    );
    assert!(named.contains("EvalFunction"), "{named:?}");
    assert!(
        integrations(&cfn)
            .iter()
            .any(|(path, _, integration)| path == "/api/evals/latest" && !streams(integration)),
        "GET /api/evals/latest is a buffered route of the runs function"
    );
}

#[test]
fn the_pages_get_the_content_security_policy_kakeibo_dev_sends() {
    let Some(python) = python() else { return };
    let cfn = transformed(&python, &template());
    let policy = &cfn["Resources"]["SiteHeadersPolicy"]["Properties"]["ResponseHeadersPolicyConfig"];
    assert_eq!(
        policy["SecurityHeadersConfig"]["ContentSecurityPolicy"]["ContentSecurityPolicy"],
        kakeibo_api::headers::SITE_CSP,
        "the CDN's policy is crates/api's SITE_CSP"
    );
    let distribution = &cfn["Resources"]["Distribution"]["Properties"]["DistributionConfig"];
    assert_eq!(
        distribution["DefaultCacheBehavior"]["ResponseHeadersPolicyId"],
        serde_json::json!({"Ref": "SiteHeadersPolicy"}),
        "the pages are served with it"
    );
}
