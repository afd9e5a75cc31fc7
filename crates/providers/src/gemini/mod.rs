//! Gemini over its REST API (`streamGenerateContent?alt=sse`, `countTokens`, `cachedContents`),
//! with an API key.

pub mod cache;
pub mod vertex;
pub mod wire;

use std::{sync::Arc, time::Duration};

use cache::{CacheSettings, Clock, ExplicitCache, Plan};

use futures_util::{Stream, future::BoxFuture, stream::BoxStream};
use kakeibo_core::{ModelRequest, Provider, ProviderError, StreamEvent};
use serde_json::{Value, json};

use crate::http;

pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// As whom to call Gemini.
#[derive(Debug, Clone)]
pub enum GeminiAuth {
    /// The Gemini API with an API key (`x-goog-api-key`).
    ApiKey(http::Secret),
    /// Vertex AI with a service account's access tokens, in one project and location.
    Vertex {
        tokens: Arc<vertex::TokenSource>,
        project: String,
        location: String,
    },
}

/// Where and as whom to call Gemini.
#[derive(Debug, Clone)]
pub struct GeminiConfig {
    pub auth: GeminiAuth,
    pub model: String,
    /// Without a trailing slash: for an API key `GEMINI_BASE_URL` or the public endpoint; for
    /// Vertex the project's location, `…/v1/projects/P/locations/L`.
    pub base_url: String,
    /// For one whole request, reply included.
    pub timeout: Duration,
    pub cache: CacheSettings,
}

fn cache_settings(var: &dyn Fn(&str) -> Option<String>) -> CacheSettings {
    CacheSettings {
        enabled: var("EXPLICIT_CACHE").is_none_or(|v| v != "0"),
        ..CacheSettings::default()
    }
}

impl GeminiConfig {
    /// From `GEMINI_API_KEY` (and `GEMINI_BASE_URL`, `EXPLICIT_CACHE`) as `var` reads them;
    /// `None` without a key.
    pub fn from_vars(model: &str, var: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        Some(Self {
            auth: GeminiAuth::ApiKey(http::Secret(var("GEMINI_API_KEY")?)),
            model: model.to_owned(),
            base_url: var("GEMINI_BASE_URL")
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            timeout: http::timeout_setting(var),
            cache: cache_settings(var),
        })
    }

    /// Vertex AI (`GEMINI_AUTH=vertex`): the service-account key from
    /// `GEMINI_SERVICE_ACCOUNT_JSON` or the file `GOOGLE_APPLICATION_CREDENTIALS` names; the
    /// project from `VERTEX_PROJECT`, `GOOGLE_CLOUD_PROJECT` or the key; the location from
    /// `VERTEX_LOCATION` or `GOOGLE_CLOUD_LOCATION`, else `global`. `GEMINI_BASE_URL` replaces
    /// the endpoint's origin.
    ///
    /// # Errors
    /// What is missing or unreadable, in words; never the key's text.
    pub fn vertex_from_vars(model: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<Self, String> {
        let key = match (
            var("GEMINI_SERVICE_ACCOUNT_JSON"),
            var("GOOGLE_APPLICATION_CREDENTIALS"),
        ) {
            (Some(json), _) => json,
            (None, Some(path)) => std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read the service-account key {path}: {e}"))?,
            (None, None) => {
                return Err(
                    "GEMINI_AUTH=vertex needs GEMINI_SERVICE_ACCOUNT_JSON or GOOGLE_APPLICATION_CREDENTIALS"
                        .into(),
                );
            }
        };
        let account = vertex::ServiceAccount::from_json(&key)?;
        let project = var("VERTEX_PROJECT")
            .or_else(|| var("GOOGLE_CLOUD_PROJECT"))
            .or_else(|| account.project_id.clone())
            .ok_or_else(|| "GEMINI_AUTH=vertex needs VERTEX_PROJECT".to_owned())?;
        let location = var("VERTEX_LOCATION")
            .or_else(|| var("GOOGLE_CLOUD_LOCATION"))
            .unwrap_or_else(|| "global".to_owned());
        let origin = var("GEMINI_BASE_URL").map_or_else(
            || {
                if location == "global" {
                    "https://aiplatform.googleapis.com".to_owned()
                } else {
                    format!("https://{location}-aiplatform.googleapis.com")
                }
            },
            |url| url.trim_end_matches('/').to_owned(),
        );
        let timeout = http::timeout_setting(var);
        Ok(Self {
            base_url: format!("{origin}/v1/projects/{project}/locations/{location}"),
            auth: GeminiAuth::Vertex {
                tokens: Arc::new(vertex::TokenSource::new(
                    account,
                    http::client(timeout).map_err(|e| e.to_string())?,
                )),
                project,
                location,
            },
            model: model.to_owned(),
            timeout,
            cache: cache_settings(var),
        })
    }

    /// The URL of a resource the API named (`cachedContents/X`, or on Vertex
    /// `projects/P/locations/L/cachedContents/X`, which is relative to the version root).
    pub fn resource_url(&self, name: &str) -> String {
        match &self.auth {
            GeminiAuth::ApiKey(_) => format!("{}/{name}", self.base_url),
            GeminiAuth::Vertex { .. } => {
                let root = self
                    .base_url
                    .split_once("/projects/")
                    .map_or(self.base_url.as_str(), |(root, _)| root);
                format!("{root}/{name}")
            }
        }
    }

    /// The model as a resource name (`models/M`, or the Vertex publisher path).
    pub fn model_resource(&self) -> String {
        match &self.auth {
            GeminiAuth::ApiKey(_) => format!("models/{}", self.model),
            GeminiAuth::Vertex {
                project, location, ..
            } => {
                format!(
                    "projects/{project}/locations/{location}/publishers/google/models/{}",
                    self.model
                )
            }
        }
    }
}

/// The Gemini provider.
#[derive(Debug, Clone)]
pub struct Gemini {
    config: GeminiConfig,
    client: reqwest::Client,
    /// Shared by clones: one process, one view of its caches.
    cache: Arc<ExplicitCache>,
}

impl Gemini {
    pub fn new(config: GeminiConfig) -> Result<Self, ProviderError> {
        let client = http::client(config.timeout)?;
        let cache = Arc::new(ExplicitCache::new(config.cache.clone()));
        Ok(Self {
            config,
            client,
            cache,
        })
    }

    /// The same provider judging cache expiry by `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.cache = Arc::new(ExplicitCache::new(self.config.cache.clone()).with_clock(clock));
        self
    }

    fn url(&self, method: &str) -> String {
        match self.config.auth {
            GeminiAuth::ApiKey(_) => {
                format!("{}/models/{}:{method}", self.config.base_url, self.config.model)
            }
            GeminiAuth::Vertex { .. } => format!(
                "{}/publishers/google/models/{}:{method}",
                self.config.base_url, self.config.model
            ),
        }
    }

    async fn open(&self, body: Value) -> Result<reqwest::Response, ProviderError> {
        let url = format!("{}?alt=sse", self.url("streamGenerateContent"));
        self.send(reqwest::Method::POST, &url, Some(&body)).await
    }

    async fn send(
        &self,
        method: reqwest::Method,
        url: &str,
        body: Option<&Value>,
    ) -> Result<reqwest::Response, ProviderError> {
        let (header, value) = match &self.config.auth {
            GeminiAuth::ApiKey(key) => ("x-goog-api-key", key.0.clone()),
            GeminiAuth::Vertex { tokens, .. } => {
                ("authorization", format!("Bearer {}", tokens.token().await?.0))
            }
        };
        http::send(
            || {
                let request = self.client.request(method.clone(), url).header(header, &value);
                match body {
                    Some(body) => request.json(body),
                    None => request,
                }
            },
            wire::error_from,
            wire::retry_delay,
        )
        .await
    }

    async fn call(
        &self,
        method: reqwest::Method,
        url: &str,
        body: Option<&Value>,
    ) -> Result<Value, ProviderError> {
        let response = self.send(method, url, body).await?;
        response
            .json()
            .await
            .map_err(|e| ProviderError::Protocol(format!("a cache reply that is not JSON: {e}")))
    }

    /// The cache to reference for `request` (its key and name), making, finding or extending
    /// one as needed; `None` to send the request whole.
    async fn cached(&self, request: &ModelRequest) -> Option<(String, String)> {
        let key = self.cache.key(&self.config.model, request)?;
        let name = match self.cache.plan(&key, request) {
            Plan::Uncached => return None,
            Plan::Use(name) => name,
            Plan::Refresh(name) => match self.refresh(&key, &name).await {
                Err(e) if cache::is_gone(&e) => self.create(&key, request).await?,
                // Extended; or not, but still live until its expiry.
                _ => name,
            },
            Plan::FindOrCreate => match self.find(&key).await {
                Some(name) => name,
                None => self.create(&key, request).await?,
            },
            Plan::Create => self.create(&key, request).await?,
        };
        Some((key, name))
    }

    async fn create(&self, key: &str, request: &ModelRequest) -> Option<String> {
        let body = cache::create_body(&self.config.model_resource(), key, request, &self.cache.ttl());
        let url = format!("{}/cachedContents", self.config.base_url);
        match self.call(reqwest::Method::POST, &url, Some(&body)).await {
            Ok(resource) => {
                let name = resource.get("name").and_then(Value::as_str)?.to_owned();
                self.cache
                    .remember(key, name.clone(), self.cache.expiry_of(&resource));
                Some(name)
            }
            Err(e) if cache::is_too_small(&e) => {
                self.cache.too_small(key);
                None
            }
            // Not cached; requests go uncached for a while before trying again.
            Err(_) => {
                self.cache.failed(key);
                None
            }
        }
    }

    async fn refresh(&self, key: &str, name: &str) -> Result<(), ProviderError> {
        let url = format!("{}?updateMask=ttl", self.config.resource_url(name));
        let body = json!({"ttl": self.cache.ttl()});
        let resource = self.call(reqwest::Method::PATCH, &url, Some(&body)).await?;
        self.cache
            .remember(key, name.to_owned(), self.cache.expiry_of(&resource));
        Ok(())
    }

    /// A live cache an earlier process made for `key`, if the provider lists one.
    async fn find(&self, key: &str) -> Option<String> {
        let model = self.config.model_resource();
        let mut page: Option<String> = None;
        for _ in 0..10 {
            let mut url = reqwest::Url::parse(&format!("{}/cachedContents", self.config.base_url)).ok()?;
            url.query_pairs_mut().append_pair("pageSize", "100");
            if let Some(token) = &page {
                url.query_pairs_mut().append_pair("pageToken", token);
            }
            let listing = self.call(reqwest::Method::GET, url.as_str(), None).await.ok()?;
            for resource in listing
                .get("cachedContents")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let expires = self.cache.expiry_of(resource);
                // The API may name the model more fully than we did (a project number on Vertex).
                let same_model = resource
                    .get("model")
                    .and_then(Value::as_str)
                    .is_some_and(|m| m == model || m.ends_with(&format!("/models/{}", self.config.model)));
                if resource.get("displayName").and_then(Value::as_str) == Some(key)
                    && same_model
                    && expires > self.cache.now() + self.cache.settings.refresh_before
                    && let Some(name) = resource.get("name").and_then(Value::as_str)
                {
                    self.cache.remember(key, name.to_owned(), expires);
                    return Some(name.to_owned());
                }
            }
            page = Some(listing.get("nextPageToken").and_then(Value::as_str)?.to_owned());
        }
        None
    }

    /// Opens the reply, referencing the explicit cache when there is one; a cache that vanished
    /// in the meantime is made again once.
    async fn open_cached(&self, request: &ModelRequest) -> Result<reqwest::Response, ProviderError> {
        let cached = self.cached(request).await;
        let opened = self
            .open(wire::request_body(
                request,
                cached.as_ref().map(|(_, name)| name.as_str()),
            ))
            .await;
        match (opened, cached) {
            (Err(e), Some((key, _))) if cache::is_gone(&e) => {
                self.cache.forget(&key);
                let again = self.cached(request).await;
                self.open(wire::request_body(
                    request,
                    again.as_ref().map(|(_, name)| name.as_str()),
                ))
                .await
            }
            (opened, _) => opened,
        }
    }
}

impl Provider for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        http::reply_stream(self.open_cached(request), wire::Accumulator::default())
    }

    fn count_tokens<'a>(&'a self, request: &'a ModelRequest) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async move {
            let mut inner = wire::request_body(request, None);
            if let Some(config) = inner.as_object_mut() {
                config.remove("generationConfig");
                config.remove("toolConfig");
            }
            // Vertex counts the request's fields themselves; the Gemini API wants them wrapped.
            let body = match self.config.auth {
                GeminiAuth::Vertex { .. } => inner,
                GeminiAuth::ApiKey(_) => {
                    crate::http::set(&mut inner, "model", json!(self.config.model_resource()));
                    json!({"generateContentRequest": inner})
                }
            };
            let url = self.url("countTokens");
            let response = self.send(reqwest::Method::POST, &url, Some(&body)).await.ok()?;
            response.json::<Value>().await.ok()?.get("totalTokens")?.as_u64()
        })
    }
}

/// Turns response chunks into stream events: text deltas as they come, then the whole reply.
pub fn events<S>(chunks: S) -> impl Stream<Item = Result<StreamEvent, ProviderError>>
where
    S: Stream<Item = Result<Value, ProviderError>> + Send,
{
    http::events(chunks, wire::Accumulator::default())
}
