//! Where a normalizer is inside a schema: a JSON pointer and a human field path.
//!
//! Both are kept as strings that grow on descent and are truncated on return, so tracking
//! costs O(1) amortized per node. Entering a definition starts a new location at the end of
//! the same buffers (and leaving it truncates back), so nothing is allocated per definition.
use std::fmt::Write;

/// A JSON pointer (RFC 6901) into the input schema plus a dotted field name
/// (`Ticket.meta`, `Ticket.tags[]`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Location {
    pointer: String,
    field: String,
    /// Where the current location starts in `pointer` and `field`.
    base: (usize, usize),
}

/// Lengths to restore after a descent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark(usize, usize);

/// The location to restore when leaving a definition.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outer {
    base: (usize, usize),
    mark: Mark,
}

impl Location {
    pub(crate) fn new(field: &str) -> Self {
        // room for a few levels, so that descending rarely reallocates
        let mut own = String::with_capacity(field.len() + 64);
        own.push_str(field);
        Self {
            pointer: String::with_capacity(128),
            field: own,
            base: (0, 0),
        }
    }

    pub(crate) fn pointer(&self) -> &str {
        self.pointer.get(self.base.0..).unwrap_or_default()
    }

    pub(crate) fn field(&self) -> &str {
        self.field.get(self.base.1..).unwrap_or_default()
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
        if !seg.bytes().any(|b| b == b'~' || b == b'/') {
            self.pointer.push_str(seg);
            return;
        }
        for c in seg.chars() {
            match c {
                '~' => self.pointer.push_str("~0"),
                '/' => self.pointer.push_str("~1"),
                _ => self.pointer.push(c),
            }
        }
    }

    /// Append an array index segment.
    pub(crate) fn push_index(&mut self, i: usize) {
        let _ = write!(self.pointer, "/{i}");
    }

    /// Descend into the property `name`.
    pub(crate) fn push_property(&mut self, name: &str) {
        self.push_ptr("properties");
        self.push_ptr(name);
        if self.field.len() > self.base.1 {
            self.field.push('.');
        }
        self.field.push_str(name);
    }

    /// Descend into an array's item schema.
    pub(crate) fn push_items(&mut self, seg: &str) {
        self.push_ptr(seg);
        self.field.push_str("[]");
    }

    /// Start a new location: the definition `/{table}/{name}` (the root for an empty
    /// `table`) titled `field`. [`Location::leave`] restores the current one.
    pub(crate) fn enter(&mut self, table: &str, name: &str, field: &str) -> Outer {
        let outer = Outer {
            base: self.base,
            mark: self.mark(),
        };
        self.base = (self.pointer.len(), self.field.len());
        if !table.is_empty() {
            self.push_ptr(table);
            self.push_ptr(name);
        }
        self.field.push_str(field);
        outer
    }

    /// Go back to the location that [`Location::enter`] left.
    pub(crate) fn leave(&mut self, outer: Outer) {
        self.reset(outer.mark);
        self.base = outer.base;
    }
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
