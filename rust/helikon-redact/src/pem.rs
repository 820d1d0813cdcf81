//! PEM private-key blocks: the body between `-----BEGIN ... PRIVATE KEY-----` and the
//! matching `-----END ... PRIVATE KEY-----` is masked; the two marker lines stay so the
//! reader still sees what was there.
//!
//! A block without an END marker (truncated output) is masked to the end of the text.
//! The block, markers included, is a region of its own: the other matchers scan only the
//! text between blocks, so nothing they mask can move a marker or a quote across one and a
//! second redaction sees the same blocks (idempotence).
//! Markers are found in one pass each and paired by position, so many unterminated
//! BEGIN lines cost linear time, not quadratic.
use memchr::memmem::Finder;
use regex::Regex;

use crate::finding::{Finding, FindingKind};

/// The words every marker holds.
pub(crate) const KEYWORD: &str = "PRIVATE KEY";

pub(crate) struct PemMarkers {
    begin: Regex,
    end: Regex,
    /// `PRIVATE KEY`, which every marker holds.
    keyword: Finder<'static>,
}

impl std::fmt::Debug for PemMarkers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PemMarkers")
    }
}

impl PemMarkers {
    pub(crate) fn compile() -> Result<Self, regex::Error> {
        Ok(Self {
            begin: Regex::new(r"(?-u)-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")?,
            end: Regex::new(r"(?-u)-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")?,
            keyword: Finder::new(KEYWORD),
        })
    }

    /// Does `text` hold `PRIVATE KEY` (so possibly a marker)?
    pub(crate) fn mentioned(&self, text: &str) -> bool {
        self.keyword.find(text.as_bytes()).is_some()
    }

    /// Where a text cut at its start may begin to be shown: after the line of its first END
    /// marker when no BEGIN marker comes before it (the text starts inside a block whose
    /// BEGIN was cut off); `None` otherwise.
    pub(crate) fn orphan_end(&self, text: &str) -> Option<usize> {
        if !self.mentioned(text) {
            return None;
        }
        let end = self.end.find(text)?;
        if self
            .begin
            .find(text)
            .is_some_and(|b| b.start() < end.start())
        {
            return None;
        }
        let rest = text.get(end.end()..).unwrap_or_default();
        Some(end.end() + rest.find('\n').map_or(rest.len(), |i| i + 1))
    }

    /// Append body spans to `out` and each block's range (BEGIN marker start to END marker
    /// end, or to the end of the text) to `blocks` (sorted, disjoint).
    pub(crate) fn scan(
        &self,
        text: &str,
        mask: &str,
        out: &mut Vec<Finding>,
        blocks: &mut Vec<(usize, usize)>,
    ) {
        if !self.mentioned(text) {
            return;
        }
        let ends: Vec<(usize, usize)> = self
            .end
            .find_iter(text)
            .map(|m| (m.start(), m.end()))
            .collect();
        let mut consumed = 0usize;
        for b in self.begin.find_iter(text) {
            if b.start() < consumed {
                continue;
            }
            let body_start = b.end();
            let idx = ends.partition_point(|&(s, _)| s < body_start);
            let (body_end, next) = match ends.get(idx) {
                Some(&(s, e)) => (s, e),
                None => (text.len(), text.len()),
            };
            consumed = next;
            blocks.push((b.start(), next));
            push_body(text, body_start, body_end, mask, out);
        }
    }
}

/// Mask the body `text[start..end]`. A part of the body sharing a line with BEGIN or END is
/// masked separately, keeping its newline, so masking never joins a marker's line with
/// other text (a second pass then reads the same lines: idempotence).
fn push_body(text: &str, start: usize, end: usize, mask: &str, out: &mut Vec<Finding>) {
    let body = text.get(start..end).unwrap_or_default();
    let s = start + (body.len() - body.trim_start().len());
    let e = start + body.trim_end().len();
    if s >= e {
        return;
    }
    let trimmed = text.get(s..e).unwrap_or_default();
    let mut pieces: Vec<(usize, usize)> = Vec::with_capacity(3);
    let shares_begin = !text.get(start..s).unwrap_or_default().contains('\n');
    let shares_end = !text.get(e..end).unwrap_or_default().contains('\n') && end < text.len();
    let (first_nl, last_nl) = (trimmed.find('\n'), trimmed.rfind('\n'));
    let mut mid_start = s;
    let mut mid_end = e;
    if let (true, Some(nl)) = (shares_begin, first_nl) {
        pieces.push((s, s + nl));
        mid_start = s + nl + 1;
    }
    if let (true, Some(nl)) = (shares_end, last_nl) {
        if s + nl + 1 >= mid_start {
            pieces.push((s + nl + 1, e));
            mid_end = s + nl;
        }
    }
    pieces.push((mid_start, mid_end));
    for (a, b) in pieces {
        let piece = text.get(a..b).unwrap_or_default();
        let a2 = a + (piece.len() - piece.trim_start().len());
        let b2 = a + piece.trim_end().len();
        if a2 < b2 && text.get(a2..b2) != Some(mask) {
            out.push(Finding::new(FindingKind::PrivateKey, a2, b2));
        }
    }
}
