//! Which fields of a conversation count: the walk over items and their content parts.
//!
//! An item counts the sum of its content parts, except a `tool_call` item, which counts its
//! name plus the compact JSON of its arguments. A part counts by its tag: `text` / `reasoning`
//! their text, `image` / `audio` zero, `tool_use` name plus arguments, `tool_result` its own
//! content parts (one level deeper). A part written as a model (not a mapping) with another
//! or no tag counts its content parts too (a nested result's shape); a mapping with another
//! tag counts zero.

/// Deepest nested `tool_result` part the walk follows before failing with [`TooDeep`].
pub const MAX_PART_DEPTH: usize = 256;

/// The `type` tags the walk tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// `text` or `reasoning` part: counts its text.
    Text,
    /// `image` or `audio` part: counts zero.
    Media,
    /// `tool_use` part: counts name + compact JSON of its arguments.
    ToolUse,
    /// `tool_call` item: counts name + compact JSON of its arguments.
    ToolCall,
    /// `tool_result` part: counts its content parts.
    ToolResult,
    /// Any other tag (messages), or a `type` that is not a string.
    Other,
}

impl Tag {
    /// The tag a `type` string names.
    ///
    /// ```
    /// use helikon_tokens::Tag;
    /// assert_eq!(Tag::of("reasoning"), Tag::Text);
    /// assert_eq!(Tag::of("user_message"), Tag::Other);
    /// ```
    #[must_use]
    pub fn of(type_name: &str) -> Tag {
        match type_name {
            "text" | "reasoning" => Tag::Text,
            "image" | "audio" => Tag::Media,
            "tool_use" => Tag::ToolUse,
            "tool_call" => Tag::ToolCall,
            "tool_result" => Tag::ToolResult,
            _ => Tag::Other,
        }
    }
}

/// How a node is written: as a typed model (read by attribute) or as a mapping (its tagged
/// JSON form, read by key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// A typed item model.
    Model,
    /// A mapping (the tagged JSON form).
    Mapping,
}

/// Where content parts are read: an item's `content`, or a part's (a nested result's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// An item's content.
    Item,
    /// A part's content (one `tool_result` level deeper).
    Part,
}

/// `tool_result` parts nested deeper than [`MAX_PART_DEPTH`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooDeep;

impl std::fmt::Display for TooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tool_result parts nested deeper than {MAX_PART_DEPTH} levels"
        )
    }
}

impl std::error::Error for TooDeep {}

/// An item or content part as the walk reads it. The host decides how a field is read from
/// its own values; the walk decides which fields count.
pub trait Node: Sized {
    /// The host's error (reading a field can fail); a part nested too deep is [`TooDeep`].
    type Error: From<TooDeep>;

    /// How the node is written.
    fn form(&self) -> Form;

    /// The node's tag; `None` for a model without a string `type`.
    ///
    /// # Errors
    /// The host could not read the `type` field.
    fn tag(&self) -> Result<Option<Tag>, Self::Error>;

    /// Characters of the `text` field (0 when absent).
    ///
    /// # Errors
    /// The host could not read or measure the field.
    fn text_chars(&self) -> Result<usize, Self::Error>;

    /// Characters of the `name` field.
    ///
    /// # Errors
    /// The host could not read or measure the field.
    fn name_chars(&self) -> Result<usize, Self::Error>;

    /// Compact-JSON length of the `args` field (`null`, 4, when absent), usually through
    /// [`crate::json::json_len`].
    ///
    /// # Errors
    /// The host could not read or measure the arguments.
    fn args_chars(&self) -> Result<usize, Self::Error>;

    /// The sum of `visit` over the node's content parts (0 when it has none).
    ///
    /// # Errors
    /// The host could not read the content, or `visit` failed.
    fn content_chars(
        &self,
        level: Level,
        visit: &mut dyn FnMut(&Self) -> Result<usize, Self::Error>,
    ) -> Result<usize, Self::Error>;
}

/// Characters of one item.
///
/// # Errors
/// The host's reading errors; [`TooDeep`] for nesting past [`MAX_PART_DEPTH`].
pub fn item_chars<N: Node>(item: &N) -> Result<usize, N::Error> {
    match item.tag()? {
        Some(Tag::ToolCall) => call_chars(item),
        _ => item.content_chars(Level::Item, &mut |part| part_chars(part, 0)),
    }
}

/// Characters of one content part, `depth` levels of `tool_result` deep.
///
/// # Errors
/// The host's reading errors; [`TooDeep`] when `depth` exceeds [`MAX_PART_DEPTH`].
pub fn part_chars<N: Node>(part: &N, depth: usize) -> Result<usize, N::Error> {
    if depth > MAX_PART_DEPTH {
        return Err(TooDeep.into());
    }
    match part.tag()? {
        Some(Tag::Text) => part.text_chars(),
        Some(Tag::Media) => Ok(0),
        Some(Tag::ToolUse) => call_chars(part),
        Some(Tag::ToolResult) => nested(part, depth),
        Some(Tag::ToolCall | Tag::Other) | None => match part.form() {
            Form::Model => nested(part, depth),
            Form::Mapping => Ok(0),
        },
    }
}

fn nested<N: Node>(part: &N, depth: usize) -> Result<usize, N::Error> {
    part.content_chars(Level::Part, &mut |inner| part_chars(inner, depth + 1))
}

fn call_chars<N: Node>(node: &N) -> Result<usize, N::Error> {
    Ok(node.name_chars()?.saturating_add(node.args_chars()?))
}
