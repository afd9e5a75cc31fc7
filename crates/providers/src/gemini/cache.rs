//! Gemini's explicit cache: the system instruction and the tools, which every turn of every
//! visitor sends unchanged, stored once as a `cachedContents` resource and referenced by name.
//!
//! A cache is keyed by a hash of (model, system, tools) and carries the key as its display name,
//! so a process that starts cold finds the cache an earlier one made instead of paying for
//! another. It lives 30 minutes and is extended when a request comes within 2 minutes of its
//! expiry; an expired or vanished cache is made again. A prefix below the provider's minimum is
//! not cached: the provider says "too small" (or the estimate says so before asking), that is
//! remembered, and requests rely on implicit caching instead.

use std::{
    collections::HashMap,
    fmt,
    sync::{Arc, Mutex},
    time::Duration,
};

use chrono::{DateTime, Utc};
use kakeibo_core::{ModelRequest, ProviderError};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The clock the cache judges expiry by (replaceable in tests).
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// How the explicit cache behaves.
#[derive(Debug, Clone)]
pub struct CacheSettings {
    /// `EXPLICIT_CACHE=0` turns it off.
    pub enabled: bool,
    pub ttl: Duration,
    /// Extend a cache when a request comes this close to its expiry.
    pub refresh_before: Duration,
    /// The provider's minimum size of cached content, in tokens.
    pub min_tokens: u64,
}

impl Default for CacheSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            ttl: Duration::from_mins(30),
            refresh_before: Duration::from_mins(2),
            min_tokens: 4096,
        }
    }
}

#[derive(Debug, Clone)]
enum Entry {
    Live {
        name: String,
        expires: DateTime<Utc>,
    },
    /// The provider (or the estimate) said the prefix is below its minimum.
    TooSmall,
    /// Making a cache failed for another reason: not tried again before this time.
    Failed {
        until: DateTime<Utc>,
    },
}

/// How long a cache that could not be made is not tried again.
const RETRY_FAILED_AFTER: chrono::TimeDelta = chrono::TimeDelta::minutes(5);

/// What to do for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// No explicit cache: send everything, implicit caching may apply.
    Uncached,
    /// Reference this live cache.
    Use(String),
    /// Extend this cache, then reference it.
    Refresh(String),
    /// Look for a cache an earlier process made; make one when there is none.
    FindOrCreate,
    /// Make a cache (the one known has expired).
    Create,
}

/// The caches this process knows, by key.
pub struct ExplicitCache {
    pub settings: CacheSettings,
    entries: Mutex<HashMap<String, Entry>>,
    clock: Clock,
}

impl fmt::Debug for ExplicitCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExplicitCache")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl ExplicitCache {
    pub fn new(settings: CacheSettings) -> Self {
        Self {
            settings,
            entries: Mutex::default(),
            clock: Arc::new(Utc::now),
        }
    }

    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    pub fn now(&self) -> DateTime<Utc> {
        (self.clock)()
    }

    /// The key of the cacheable part of `request`, or `None` when there is nothing to cache.
    pub fn key(&self, model: &str, request: &ModelRequest) -> Option<String> {
        if !self.settings.enabled || (request.system.is_empty() && request.tools.is_empty()) {
            return None;
        }
        let mut hash = Sha256::new();
        hash.update(model.as_bytes());
        hash.update([0]);
        hash.update(request.system.as_bytes());
        hash.update([0]);
        hash.update(serde_json::to_vec(&request.tools).unwrap_or_default());
        let digest = hash.finalize();
        Some(format!(
            "kakeibo-{}",
            hex::encode(digest.get(..16).unwrap_or_default())
        ))
    }

    /// What to do for the cache `key`.
    pub fn plan(&self, key: &str, request: &ModelRequest) -> Plan {
        let entry = self.lock().get(key).cloned();
        match entry {
            Some(Entry::TooSmall) => Plan::Uncached,
            Some(Entry::Failed { until }) if self.now() < until => Plan::Uncached,
            Some(Entry::Live { name, expires }) => {
                let now = self.now();
                if now >= expires {
                    Plan::Create
                } else if now + self.settings.refresh_before >= expires {
                    Plan::Refresh(name)
                } else {
                    Plan::Use(name)
                }
            }
            None if estimate(request) < self.settings.min_tokens / 2 => {
                self.lock().insert(key.to_owned(), Entry::TooSmall);
                Plan::Uncached
            }
            None | Some(Entry::Failed { .. }) => Plan::FindOrCreate,
        }
    }

    pub fn remember(&self, key: &str, name: String, expires: DateTime<Utc>) {
        self.lock().insert(key.to_owned(), Entry::Live { name, expires });
    }

    pub fn too_small(&self, key: &str) {
        self.lock().insert(key.to_owned(), Entry::TooSmall);
    }

    /// Making the cache failed: requests go uncached for a while rather than each trying again.
    pub fn failed(&self, key: &str) {
        let until = self.now() + RETRY_FAILED_AFTER;
        self.lock().insert(key.to_owned(), Entry::Failed { until });
    }

    pub fn forget(&self, key: &str) {
        self.lock().remove(key);
    }

    /// The expiry a cache resource states, or the one its TTL implies from now.
    pub fn expiry_of(&self, resource: &Value) -> DateTime<Utc> {
        resource
            .get("expireTime")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map_or_else(|| self.now() + self.settings.ttl, |t| t.with_timezone(&Utc))
    }

    /// `"1800s"`, as the API writes durations.
    pub fn ttl(&self) -> String {
        format!("{}s", self.settings.ttl.as_secs())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic elsewhere cannot leave the map half-written: every change is one insert or
        // remove, so a poisoned lock is still consistent.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The cacheable part's tokens by the context estimate: the system prompt and the tools.
fn estimate(request: &ModelRequest) -> u64 {
    let divisors = kakeibo_core::context::Divisors::GEMINI;
    kakeibo_core::context::estimate_tokens(&divisors, &request.system, &[], &request.tools)
}

/// The provider's answer that the content is below its minimum.
pub fn is_too_small(error: &ProviderError) -> bool {
    matches!(error, ProviderError::Rejected { message, .. } if message.to_ascii_lowercase().contains("too small"))
}

/// The provider's answer that a referenced cache no longer exists: a 404, or a 403 about the
/// cached content (Gemini's "CachedContent not found (or permission denied)").
pub fn is_gone(error: &ProviderError) -> bool {
    match error {
        ProviderError::Rejected { status: 404, .. } => true,
        ProviderError::Rejected { status: 403, message } => {
            message.to_ascii_lowercase().contains("cachedcontent")
        }
        _ => false,
    }
}

/// The body that creates a cache of `request`'s system instruction and tools for `model` (a
/// resource name: `models/M` or the Vertex publisher path).
pub fn create_body(model: &str, display_name: &str, request: &ModelRequest, ttl: &str) -> Value {
    let mut body = super::wire::request_body(request, None);
    if let Some(object) = body.as_object_mut() {
        object.remove("contents");
        object.remove("generationConfig");
    }
    crate::http::set(&mut body, "model", json!(model));
    crate::http::set(&mut body, "displayName", json!(display_name));
    crate::http::set(&mut body, "ttl", json!(ttl));
    body
}

#[cfg(test)]
mod tests {
    use kakeibo_core::{Declaration, Message};

    use super::*;

    fn request(system: &str) -> ModelRequest {
        ModelRequest {
            system: system.into(),
            messages: vec![Message::user("hi")],
            tools: vec![Declaration {
                name: "list_accounts",
                description: "Accounts.",
                parameters: json!({"type": "object"}).into(),
            }]
            .into(),
            max_tokens: 10,
        }
    }

    #[test]
    fn keys_follow_model_system_and_tools_only() {
        let cache = ExplicitCache::new(CacheSettings::default());
        let a = cache.key("m", &request("sys")).unwrap();
        let mut later = request("sys");
        later.messages.push(Message::user("more"));
        assert_eq!(
            cache.key("m", &later).unwrap(),
            a,
            "history is not part of the key"
        );
        assert_ne!(cache.key("m2", &request("sys")).unwrap(), a);
        assert_ne!(cache.key("m", &request("sys2")).unwrap(), a);
        let off = ExplicitCache::new(CacheSettings {
            enabled: false,
            ..CacheSettings::default()
        });
        assert_eq!(off.key("m", &request("sys")), None);
    }

    #[test]
    fn plans_follow_the_clock() {
        let start = DateTime::parse_from_rfc3339("2026-11-29T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let offset = Arc::new(Mutex::new(chrono::TimeDelta::zero()));
        let seen = offset.clone();
        let cache = ExplicitCache::new(CacheSettings::default())
            .with_clock(Arc::new(move || start + *seen.lock().unwrap()));
        let big = request(&"x".repeat(20_000));
        let key = cache.key("m", &big).unwrap();
        assert_eq!(cache.plan(&key, &big), Plan::FindOrCreate);
        cache.remember(
            &key,
            "cachedContents/a".into(),
            start + chrono::TimeDelta::minutes(30),
        );
        assert_eq!(cache.plan(&key, &big), Plan::Use("cachedContents/a".into()));
        *offset.lock().unwrap() = chrono::TimeDelta::minutes(28) + chrono::TimeDelta::seconds(1);
        assert_eq!(cache.plan(&key, &big), Plan::Refresh("cachedContents/a".into()));
        *offset.lock().unwrap() = chrono::TimeDelta::minutes(30);
        assert_eq!(cache.plan(&key, &big), Plan::Create);

        cache.failed(&key);
        assert_eq!(
            cache.plan(&key, &big),
            Plan::Uncached,
            "a failure is not retried at once"
        );
        *offset.lock().unwrap() = chrono::TimeDelta::minutes(36);
        assert_eq!(cache.plan(&key, &big), Plan::FindOrCreate, "but after a while");

        let small = request("short");
        let key = cache.key("m", &small).unwrap();
        assert_eq!(
            cache.plan(&key, &small),
            Plan::Uncached,
            "below the minimum by estimate"
        );
    }
}
