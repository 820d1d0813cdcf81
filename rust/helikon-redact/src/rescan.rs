//! Where a repeated scan must look: the lines a mask was spliced into.
//!
//! [`crate::Redactor::findings`] scans the masked text again until nothing new appears (see
//! there). Every matcher but the private-key blocks decides within one line: a key's value
//! ends at the line end, and token, URL and key patterns never match a line break. So a line
//! that no mask touched reads exactly as it did in the previous scan and yields exactly the
//! findings it yielded then; only the touched lines need a new look. [`touched_lines`] lists
//! them as windows of the masked text, each window a run of whole lines, and [`Joined`]
//! puts them into one text so that one scan covers them all.
//!
//! This holds only while masking cannot add or remove a line break and no finding crosses
//! one: the caller falls back to a full rescan when the mask or a known value contains a
//! line break, or the text holds a private-key block ([`is_line_local`]).
//!
//! The windows are found in one forward walk: each line start is searched for only back to
//! the end of the previous window, each line end only forward from the last mask, so the
//! cost is linear in the text however many masks share a line.

use crate::finding::Finding;

/// Can the repeated scan be limited to touched lines? `text_has_pem`: the text holds
/// `PRIVATE KEY`; `masked_has_pem` tells whether the masked text does (asked only when the
/// rest allows a windowed scan).
pub(crate) fn is_line_local(
    text_has_pem: bool,
    masked_has_pem: impl FnOnce() -> bool,
    mask: &str,
    multiline_known: bool,
) -> bool {
    !multiline_known && !mask.contains('\n') && !text_has_pem && !masked_has_pem()
}

/// The runs of whole lines of `masked` that hold one of `masks` (sorted, disjoint byte
/// ranges of `masked`), as sorted, disjoint `(start, end)` byte ranges in `windows`
/// (cleared first); `end` is the position of the line break (or the text end).
pub(crate) fn touched_lines(
    masked: &str,
    masks: impl IntoIterator<Item = (usize, usize)>,
    windows: &mut Vec<(usize, usize)>,
) {
    windows.clear();
    let bytes = masked.as_bytes();
    let mut covered = 0usize;
    for (ms, me) in masks {
        if let Some(last) = windows.last_mut() {
            if ms <= last.1 {
                // Same line (or run) as the previous mask: extend to this mask's line end.
                if me > last.1 {
                    last.1 = line_end(bytes, me);
                    covered = last.1;
                }
                continue;
            }
        }
        let start = bytes
            .get(covered..ms)
            .and_then(|b| memchr::memrchr(b'\n', b))
            .map_or(covered, |i| covered + i + 1);
        let end = line_end(bytes, me);
        windows.push((start, end));
        covered = end;
    }
}

/// The touched lines joined by line breaks into one text, so that one scan covers them all
/// (a scan has a fixed cost; most texts have several touched lines).
/// No `Debug`: the buffers hold pieces of scanned text.
#[derive(Default)]
pub(crate) struct Joined {
    pub(crate) text: String,
    /// `(start in text, start in the masked text)` per line run, sorted.
    pieces: Vec<(usize, usize)>,
}

impl Joined {
    /// Rebuild from `windows` of `masked`, reusing the buffers.
    pub(crate) fn rebuild(&mut self, masked: &str, windows: &[(usize, usize)]) {
        self.text.clear();
        self.pieces.clear();
        for &(ws, we) in windows {
            if !self.text.is_empty() {
                self.text.push('\n');
            }
            self.pieces.push((self.text.len(), ws));
            self.text.push_str(masked.get(ws..we).unwrap_or_default());
        }
    }

    /// Heap bytes held.
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.pieces
            .capacity()
            .saturating_mul(std::mem::size_of::<(usize, usize)>())
            .saturating_add(self.text.capacity())
    }

    /// A finding in [`Joined::text`] as a finding in the masked text. Findings never cross
    /// a joining line break (every matcher is line-local here), so both ends move alike.
    pub(crate) fn to_masked(&self, f: Finding) -> Finding {
        let idx = self.pieces.partition_point(|&(js, _)| js <= f.start);
        let (js, ms) = idx
            .checked_sub(1)
            .and_then(|i| self.pieces.get(i).copied())
            .unwrap_or((0, 0));
        Finding::new(f.kind, f.start - js + ms, f.end - js + ms)
    }
}

/// Position of the first line break at or after `from`, or the text end.
fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes
        .get(from..)
        .and_then(|b| memchr::memchr(b'\n', b))
        .map_or(bytes.len(), |i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touched(masked: &str, masks: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let mut windows = vec![(9, 9)];
        touched_lines(masked, masks.iter().copied(), &mut windows);
        windows
    }

    #[test]
    fn windows_are_whole_touched_lines() {
        let t = "a\nb *** c *** d\ne\n***\nf";
        let masks = [(4, 7), (10, 13), (18, 21)];
        assert_eq!(touched(t, &masks), vec![(2, 15), (18, 21)]);
        assert_eq!(touched("***", &[(0, 3)]), vec![(0, 3)]);
        assert_eq!(touched("x\n***\n", &[(2, 5)]), vec![(2, 5)]);
        assert!(touched("abc", &[]).is_empty());
    }

    #[test]
    fn joined_lines_map_back() {
        let masked = "a\nb *** c\nd\n***\ne";
        let windows = touched(masked, &[(4, 7), (12, 15)]);
        let mut j = Joined::default();
        j.rebuild("stale", &[(0, 5)]);
        j.rebuild(masked, &windows);
        assert_eq!(j.text, "b *** c\n***");
        let kind = crate::FindingKind::KnownValue;
        assert_eq!(
            j.to_masked(Finding::new(kind, 2, 5)),
            Finding::new(kind, 4, 7)
        );
        assert_eq!(
            j.to_masked(Finding::new(kind, 8, 11)),
            Finding::new(kind, 12, 15)
        );
    }

    #[test]
    fn line_local_only_without_line_breaks_in_masks_or_keys() {
        assert!(is_line_local(false, || false, "***", false));
        assert!(!is_line_local(false, || false, "*\n*", false));
        assert!(!is_line_local(false, || false, "***", true));
        assert!(!is_line_local(true, || false, "***", false));
        assert!(!is_line_local(false, || true, "***", false));
    }

    /// The windowed rescan finds exactly what a full rescan finds, on random texts built
    /// from fragments that make masks change what the matchers see.
    #[test]
    fn windowed_rescan_agrees_with_full_rescan() {
        #![allow(clippy::unwrap_used)]
        const FRAGMENTS: &[&str] = &[
            "A_TOKEN",
            "api_key",
            "password",
            "Authorization",
            "=",
            ":",
            " = ",
            ": ",
            "\"",
            "'",
            "\\\"",
            " ",
            "\n",
            ",",
            "{",
            "}",
            "?",
            "&",
            "://",
            "@",
            "u",
            "abc",
            "***",
            "Bearer ",
            "hunter2hunter2",
            "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
            "/",
            "str",
            "(",
            ")",
            "os.environ[",
            "$",
            "${",
            "<",
            ">",
            "eyJhbGciOiJI.eyJzdWIiOiIx.s",
        ];
        let r = crate::Redactor::new(["hunter2hunter2"]).unwrap();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..20_000 {
            let mut next = || {
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                state.wrapping_mul(0x2545_F491_4F6C_DD1D)
            };
            let n = 1 + (next() % 30) as usize;
            let text: String = (0..n)
                .map(|_| FRAGMENTS[(next() % FRAGMENTS.len() as u64) as usize])
                .collect();
            assert_eq!(
                r.findings_repeated(&text, true),
                r.findings_repeated(&text, false),
                "{text:?}"
            );
        }
    }
}
