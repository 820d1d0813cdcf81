//! Where a normalizer is inside a schema: a JSON pointer and a human field path.
//!
//! Both are kept as strings that grow on descent and are truncated on return, so tracking
//! costs O(1) amortized per node.

/// A JSON pointer (RFC 6901) into the input schema plus a dotted field name
/// (`Ticket.meta`, `Ticket.tags[]`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Location {
    pointer: String,
    field: String,
}

/// Lengths to restore after a descent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark(usize, usize);

impl Location {
    pub(crate) fn new(field: &str) -> Self {
        Self {
            pointer: String::new(),
            field: field.to_owned(),
        }
    }

    pub(crate) fn pointer(&self) -> &str {
        &self.pointer
    }

    pub(crate) fn field(&self) -> &str {
        &self.field
    }

    pub(crate) fn mark(&self) -> Mark {
        Mark(self.pointer.len(), self.field.len())
    }

    pub(crate) fn reset(&mut self, mark: Mark) {
        self.pointer.truncate(mark.0);
        self.field.truncate(mark.1);
    }

    /// Append one pointer segment (escaped per RFC 6901).
    pub(crate) fn push_ptr(&mut self, seg: &str) {
        self.pointer.push('/');
        for c in seg.chars() {
            match c {
                '~' => self.pointer.push_str("~0"),
                '/' => self.pointer.push_str("~1"),
                _ => self.pointer.push(c),
            }
        }
    }

    /// Descend into the property `name`.
    pub(crate) fn push_property(&mut self, name: &str) {
        self.push_ptr("properties");
        self.push_ptr(name);
        if !self.field.is_empty() {
            self.field.push('.');
        }
        self.field.push_str(name);
    }

    /// Descend into an array's item schema.
    pub(crate) fn push_items(&mut self, seg: &str) {
        self.push_ptr(seg);
        self.field.push_str("[]");
    }

    /// Replace the whole location (entering a definition), returning the old one.
    pub(crate) fn replace(&mut self, pointer: String, field: String) -> Location {
        std::mem::replace(self, Location { pointer, field })
    }

    /// Restore a location saved by [`Location::replace`].
    pub(crate) fn restore(&mut self, saved: Location) {
        *self = saved;
    }
}

/// Escape one JSON pointer segment.
pub(crate) fn escape_segment(seg: &str) -> String {
    seg.replace('~', "~0").replace('/', "~1")
}

/// Undo pointer escaping and `%XX` URI escaping of one `$ref` segment.
pub(crate) fn unescape_ref_segment(seg: &str) -> String {
    fn hex(b: u8) -> Option<u8> {
        match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            b'A'..=b'F' => Some(b - b'A' + 10),
            _ => None,
        }
    }
    let bytes = seg.as_bytes();
    let mut raw = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = bytes.get(i + 1).copied().and_then(hex);
            let lo = bytes.get(i + 2).copied().and_then(hex);
            if let (Some(hi), Some(lo)) = (hi, lo) {
                raw.push(hi * 16 + lo);
                i += 3;
                continue;
            }
        }
        raw.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&raw)
        .replace("~1", "/")
        .replace("~0", "~")
}
