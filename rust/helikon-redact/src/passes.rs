//! The scan passes behind [`Redactor::findings`], run in reusable buffers.
//!
//! One pass ([`Redactor::scan_once`]) finds the known values, masks them, runs the pattern
//! matchers over the result and maps their spans back. The repeated passes
//! ([`Redactor::scan_repeated`]) scan the masked text again (only its touched lines when
//! that is exact, see [`crate::rescan`]) until nothing new appears.
//!
//! A scan of a short text is dominated by fixed costs, allocation first among them, so
//! every intermediate vector and string lives in a [`Scratch`] kept per thread and reused
//! by the next call: a call allocates only what it returns.
use std::cell::RefCell;

use crate::finding::{self, Finding, OffsetMap};
use crate::redactor::{Redactor, MAX_PASSES};
use crate::rescan::{self, Joined};
use crate::triggers::Hits;
use crate::{
    aws, cliflags, cookie, formats, keyvalue, namevalue, signed, spaced, tokens, url, vendor,
};

/// Buffers of one pass.
/// No `Debug`: the buffers hold pieces of scanned text.
#[derive(Default)]
pub(crate) struct PassBuffers {
    known: Vec<Finding>,
    known_masked: String,
    known_map: OffsetMap,
    tokens: Vec<Finding>,
    userinfo: Vec<(usize, usize)>,
    blocks: Vec<(usize, usize)>,
    gap: Vec<Finding>,
    hits: Hits,
    /// Whether the text given to the last [`Redactor::scan_once`] holds `PRIVATE KEY`, when
    /// that scan could tell (it scanned the text itself, no known value being masked).
    input_pem: Option<bool>,
}

/// Buffers of the repeated passes; [`Scratch::found`] holds the result.
/// No `Debug`: the buffers hold pieces of scanned text.
#[derive(Default)]
pub(crate) struct Scratch {
    pub(crate) found: Vec<Finding>,
    more: Vec<Finding>,
    all: Vec<Finding>,
    masked: String,
    map: OffsetMap,
    windows: Vec<(usize, usize)>,
    joined: Joined,
    pass: PassBuffers,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Largest buffer (bytes) kept between calls: a call on a huge text does not pin its
/// memory to the thread.
const KEEP_BYTES: usize = 1 << 20;

impl Scratch {
    /// Drop buffers that grew past [`KEEP_BYTES`].
    fn trim(&mut self) {
        fn vec<T>(v: &mut Vec<T>) {
            if v.capacity().saturating_mul(std::mem::size_of::<T>()) > KEEP_BYTES {
                *v = Vec::new();
            }
        }
        fn string(s: &mut String) {
            if s.capacity() > KEEP_BYTES {
                *s = String::new();
            }
        }
        string(&mut self.masked);
        string(&mut self.pass.known_masked);
        vec(&mut self.found);
        vec(&mut self.more);
        vec(&mut self.all);
        vec(&mut self.pass.known);
        vec(&mut self.pass.tokens);
        vec(&mut self.pass.gap);
        vec(&mut self.pass.userinfo);
        vec(&mut self.pass.blocks);
        vec(&mut self.pass.hits.tokens);
        vec(&mut self.pass.hits.urls);
        vec(&mut self.pass.hits.vendor);
        vec(&mut self.pass.hits.cookies);
        vec(&mut self.pass.hits.discord);
        vec(&mut self.pass.hits.flags);
        vec(&mut self.windows);
        if self.joined.capacity_bytes() > KEEP_BYTES {
            self.joined = Joined::default();
        }
        for map in [&mut self.map, &mut self.pass.known_map] {
            if map.capacity_bytes() > KEEP_BYTES {
                *map = OffsetMap::default();
            }
        }
    }
}

/// Run `f` with this thread's scratch buffers (fresh ones if they are in use, which only a
/// re-entrant call could cause, or gone, as while the thread exits).
pub(crate) fn with_scratch<R>(mut f: impl FnMut(&mut Scratch) -> R) -> R {
    SCRATCH
        .try_with(|cell| {
            cell.try_borrow_mut().ok().map(|mut s| {
                let out = f(&mut s);
                s.trim();
                out
            })
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| f(&mut Scratch::default()))
}

impl Redactor {
    /// The regions [`Redactor::redact`] masks, into `s.found` (see [`Redactor::findings`]);
    /// `windowed` allows limiting repeated scans to touched lines.
    pub(crate) fn scan_repeated(&self, text: &str, windowed: bool, s: &mut Scratch) {
        let Scratch {
            found,
            more,
            all,
            masked,
            map,
            windows,
            joined,
            pass,
        } = s;
        let mask = self.mask.as_str();
        self.scan_once(text, pass, found, true);
        let mut text_has_pem = pass.input_pem;
        // Repeated scans see every known value of `text` masked (see `known_inert`).
        let known_again = !self.known_inert;
        for _ in 1..MAX_PASSES {
            if found.is_empty() {
                break;
            }
            finding::apply_into(text, found, mask, masked);
            map.rebuild(found, mask.len());
            let pem = &self.rules.pem;
            let line_local = windowed
                && rescan::is_line_local(
                    *text_has_pem.get_or_insert_with(|| pem.mentioned(text)),
                    || self.mask_may_spell_pem && pem.mentioned(masked),
                    mask,
                    self.known.multiline(),
                );
            if line_local {
                rescan::touched_lines(masked, map.masked_spans(), windows);
                joined.rebuild(masked, windows);
                self.scan_once(&joined.text, pass, more, known_again);
                for f in more.iter_mut() {
                    *f = joined.to_masked(*f);
                }
            } else {
                self.scan_once(masked, pass, more, known_again);
            }
            if more.is_empty() {
                break;
            }
            all.clear();
            all.extend(more.iter().map(|f| map.to_original(*f)));
            all.extend(found.iter().copied());
            finding::merge(all);
            if *all == *found {
                break;
            }
            std::mem::swap(found, all);
        }
    }

    /// One scan into `out` (cleared first). Known values are found first (unless `known`
    /// is false: the caller knows there are none); the pattern matchers then run over the
    /// text with those values already masked (offsets mapped back), so a token glued to a
    /// known secret is seen as it will be seen when the output is redacted again.
    pub(crate) fn scan_once(
        &self,
        text: &str,
        b: &mut PassBuffers,
        out: &mut Vec<Finding>,
        known: bool,
    ) {
        out.clear();
        b.known.clear();
        if known {
            self.known.scan(text, &mut b.known);
        }
        if b.known.is_empty() {
            self.scan_patterns(text, b, out);
            b.input_pem = Some(b.hits.pem);
            finding::merge(out);
            return;
        }
        b.input_pem = None;
        finding::merge(&mut b.known);
        let mut masked = std::mem::take(&mut b.known_masked);
        finding::apply_into(text, &b.known, &self.mask, &mut masked);
        self.scan_patterns(&masked, b, out);
        b.known_masked = masked;
        b.known_map.rebuild(&b.known, self.mask.len());
        for f in out.iter_mut() {
            *f = b.known_map.to_original(*f);
        }
        out.extend(b.known.iter().copied());
        finding::merge(out);
    }

    /// Every matcher except the known-value scan, appending raw spans to `out`. Private-key
    /// blocks are found first; the other matchers scan the text between them, each gap as
    /// a text of its own.
    fn scan_patterns(&self, text: &str, b: &mut PassBuffers, out: &mut Vec<Finding>) {
        let rules = self.rules;
        rules.triggers.find(text, &mut b.hits);
        b.blocks.clear();
        if b.hits.pem {
            rules.pem.scan(text, &self.mask, out, &mut b.blocks);
        }
        if b.blocks.is_empty() {
            self.scan_gap(text, b, out);
            return;
        }
        let blocks = std::mem::take(&mut b.blocks);
        let mut at = 0usize;
        for &(start, end) in blocks.iter().chain(&[(text.len(), text.len())]) {
            if let Some(gap) = text.get(at..start).filter(|g| !g.is_empty()) {
                rules.triggers.find(gap, &mut b.hits);
                let mut found = std::mem::take(&mut b.gap);
                found.clear();
                self.scan_gap(gap, b, &mut found);
                out.extend(
                    found
                        .iter()
                        .map(|f| Finding::new(f.kind, f.start + at, f.end + at)),
                );
                b.gap = found;
            }
            at = end;
        }
        b.blocks = blocks;
        // The hits are the last gap's now; the text as a whole holds a marker.
        b.hits.pem = true;
    }

    /// Tokens, URL passwords and secret-named keys in one gap whose trigger hits are in
    /// `b.hits`, appended to `out`.
    fn scan_gap(&self, gap: &str, b: &mut PassBuffers, out: &mut Vec<Finding>) {
        b.tokens.clear();
        b.userinfo.clear();
        tokens::scan(gap, &b.hits.tokens, &mut b.tokens);
        if !b.hits.vendor.is_empty() || !b.hits.discord.is_empty() {
            vendor::scan(gap, &b.hits.vendor, &b.hits.discord, &mut b.tokens);
            b.tokens.sort_unstable_by_key(|f| (f.start, f.end));
        }
        out.extend(b.tokens.iter().copied());
        aws::scan(gap, &b.tokens, out);
        url::scan(gap, &b.hits.urls, &self.mask, out, &mut b.userinfo);
        keyvalue::scan(gap, &self.mask, &b.tokens, &b.userinfo, out);
        spaced::scan(gap, &self.mask, out);
        cliflags::scan(gap, &b.hits.flags, &self.mask, out);
        cookie::scan(gap, &b.hits.cookies, &self.mask, out);
        signed::scan(gap, &b.hits.urls, out);
        namevalue::scan(gap, &self.mask, out);
        formats::scan(gap, out);
    }
}
