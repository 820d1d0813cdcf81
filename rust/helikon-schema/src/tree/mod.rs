//! The schema tree the strict normalizer reads and writes, generic over how strings are held.
//!
//! The normalizer never needs to create text of its own: every string in its output is either a
//! string of the input (a key, a `$ref`, a `type` name) or one of a few static keywords
//! (`additionalProperties`, `"null"`, ...). So a tree is generic over a string handle
//! ([`Text`]): `&str` borrowed from a [`serde_json::Value`] for the Rust API, or a handle to
//! the caller's own string objects in a language binding, which then reuses them in the output
//! instead of copying every key and value through JSON text. Numbers are plain values.
//!
//! [`Obj`] keeps insertion order (like `serde_json` with `preserve_order`); its equality
//! ignores order, as `serde_json`'s does.
mod value;
mod words;

pub use value::{borrow, to_value};
pub use words::known_word;

/// A string of the tree: a handle to input text, or a static keyword the normalizer adds.
pub trait Text: Clone {
    /// The text.
    fn as_str(&self) -> &str;
    /// A handle for a static keyword or type name the normalizer writes.
    fn from_static(s: &'static str) -> Self;
    /// Same text (a handle may answer from identity first).
    fn same_text(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Text for &str {
    fn as_str(&self) -> &str {
        self
    }

    fn from_static(s: &'static str) -> Self {
        s
    }
}

/// A JSON number, with `serde_json`'s distinctions (and equality): a non-negative integer, a
/// negative integer, or a finite float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// An integer `>= 0`.
    Pos(u64),
    /// An integer `< 0`.
    Neg(i64),
    /// A finite float (`1.0` stays a float).
    Float(f64),
}

/// One JSON value whose strings are held as `S`.
#[derive(Debug, Clone)]
pub enum Node<S> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number.
    Num(Num),
    /// A string.
    Str(S),
    /// An array.
    Array(Vec<Node<S>>),
    /// An object.
    Object(Obj<S>),
}

/// A JSON object: entries in insertion order, keys unique.
#[derive(Debug, Clone)]
pub struct Obj<S> {
    entries: Vec<(S, Node<S>)>,
}

impl<S: Text> Node<S> {
    /// A string node holding a static keyword.
    pub fn text(s: &'static str) -> Self {
        Node::Str(S::from_static(s))
    }

    /// The text of a string node.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s.as_str()),
            _ => None,
        }
    }

    /// The map of an object node.
    pub fn as_object(&self) -> Option<&Obj<S>> {
        match self {
            Node::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The members of an array node.
    pub fn as_array(&self) -> Option<&[Node<S>]> {
        match self {
            Node::Array(a) => Some(a),
            _ => None,
        }
    }

    /// True for a string node.
    pub fn is_string(&self) -> bool {
        matches!(self, Node::Str(_))
    }

    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    /// `obj[key]` for an object node.
    pub fn get(&self, key: &str) -> Option<&Node<S>> {
        self.as_object().and_then(|m| m.get(key))
    }

    /// Equal including the order of object keys (what comparing JSON texts would say).
    pub fn identical(&self, other: &Node<S>) -> bool {
        match (self, other) {
            (Node::Object(a), Node::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|((ka, va), (kb, vb))| ka.as_str() == kb.as_str() && va.identical(vb))
            }
            (Node::Array(a), Node::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.identical(y))
            }
            // `0.0` and `-0.0` print differently
            (Node::Num(Num::Float(a)), Node::Num(Num::Float(b))) => a.to_bits() == b.to_bits(),
            _ => self == other,
        }
    }
}

impl<S: Text> PartialEq for Node<S> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Node::Null, Node::Null) => true,
            (Node::Bool(a), Node::Bool(b)) => a == b,
            (Node::Num(a), Node::Num(b)) => a == b,
            (Node::Str(a), Node::Str(b)) => a.as_str() == b.as_str(),
            (Node::Array(a), Node::Array(b)) => a == b,
            (Node::Object(a), Node::Object(b)) => a == b,
            _ => false,
        }
    }
}

impl<S: Text> PartialEq for Obj<S> {
    /// Same keys with equal values, in any order.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(k, v)| other.get(k.as_str()).is_some_and(|w| v == w))
    }
}

impl<S> Default for Obj<S> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<S: Text> Obj<S> {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty object with room for `n` entries.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            entries: Vec::with_capacity(n),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True without entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.entries.iter().position(|(k, _)| k.as_str() == key)
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Node<S>> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_str() == key)
            .map(|(_, v)| v)
    }

    /// The value under `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node<S>> {
        self.entries
            .iter_mut()
            .find(|(k, _)| k.as_str() == key)
            .map(|(_, v)| v)
    }

    /// True if `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Set `key`: an existing entry keeps its position, a new one goes last.
    pub fn insert(&mut self, key: S, value: Node<S>) {
        match self.position(key.as_str()) {
            Some(i) => self.entries[i].1 = value,
            None => self.entries.push((key, value)),
        }
    }

    /// Append an entry whose key the caller knows is absent (input keys, which are unique).
    pub fn push_new(&mut self, key: S, value: Node<S>) {
        debug_assert!(!self.contains_key(key.as_str()));
        self.entries.push((key, value));
    }

    /// Remove `key`, keeping the order of the others.
    pub fn shift_remove(&mut self, key: &str) -> Option<Node<S>> {
        let i = self.position(key)?;
        Some(self.entries.remove(i).1)
    }

    /// Entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&S, &Node<S>)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// Keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &S> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// Insert every entry of `other` (as [`Obj::insert`]).
    pub fn extend(&mut self, other: impl IntoIterator<Item = (S, Node<S>)>) {
        for (k, v) in other {
            self.insert(k, v);
        }
    }

    /// The entries, consumed.
    pub fn into_entries(self) -> Vec<(S, Node<S>)> {
        self.entries
    }

    /// Reorder the entries to follow the key order of `order`; keys `order` lacks go last, in
    /// their current order.
    pub fn sort_like(&mut self, order: &Obj<S>) {
        self.entries
            .sort_by_key(|(k, _)| order.position(k.as_str()).unwrap_or(usize::MAX));
    }
}

impl<S: Text> IntoIterator for Obj<S> {
    type Item = (S, Node<S>);
    type IntoIter = std::vec::IntoIter<(S, Node<S>)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<S: Text> FromIterator<(S, Node<S>)> for Obj<S> {
    fn from_iter<I: IntoIterator<Item = (S, Node<S>)>>(iter: I) -> Self {
        let mut out = Obj::new();
        out.extend(iter);
        out
    }
}
