//! What the screens' routes answer around the register's own types: a list under its name, or
//! the id of what was deleted.

use schemars::JsonSchema;
use serde::Serialize;
use uuid::Uuid;

use crate::{categories::Category, edits::Edit, rules::Rule};

/// `GET /api/categories`: the person's chart of categories.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CategoryList {
    pub categories: Vec<Category>,
}

/// `GET /api/rules`: the rules in the order they are tried.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RuleList {
    pub rules: Vec<Rule>,
}

/// `GET /api/edits` (the newest first), and what a change to a transaction recorded.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EditList {
    pub edits: Vec<Edit>,
}

/// `DELETE` of a rule or a budget: the id of what is gone.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Deleted {
    pub deleted: Uuid,
}
