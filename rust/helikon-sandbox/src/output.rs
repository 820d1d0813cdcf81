//! Bounded capture of a child's output: the first and last bytes are kept, the middle counted.
//!
//! The reader never stops reading (a child blocked on a full pipe would only stall until the
//! timeout); it keeps `cap / 2` bytes from the start, the last `cap - cap / 2` bytes in a ring,
//! and counts everything. The rendered text states where and how much was cut.
//!
//! A cut made before redaction leaks (attack R9: a key in the dropped middle frees its value
//! in the tail, a token straddling the cut keeps a piece too short to match). So each buffer
//! holds [`CUT_GUARD`] more bytes on the dropped side of its cut, and a stream that is cut is
//! redacted (this process's secret-named environment values and every pattern) with that
//! context before the cut is made, at a line boundary where one is near (see
//! `helikon_redact::Redactor::redact_head`). A stream under the cap is returned as it is; the
//! agent loop redacts it whole.
use helikon_redact::{Redactor, CUT_GUARD};

/// The redactor for a cut stream: every pattern plus this process's secret-named variables
/// as they are now (built per cut stream, which is rare; the patterns are compiled once).
/// `None` only if it cannot be built; the cut stream then shows no bytes (fails closed).
fn cut_redactor() -> Option<Redactor> {
    Redactor::builder().with_process_env().build().ok()
}

/// Head-and-tail capture of one stream. Both buffers are allocated up front, so [`push`]
/// never allocates (the supervisor fills it; see `sys`).
///
/// [`push`]: HeadTail::push
#[derive(Debug)]
pub(crate) struct HeadTail {
    /// Bytes shown of the start and of the end when the stream is cut.
    keep_head: usize,
    keep_tail: usize,
    head: Box<[u8]>,
    head_len: usize,
    /// A ring: `tail_len` bytes are valid; once full, the oldest byte is at `tail_pos`.
    tail: Box<[u8]>,
    tail_len: usize,
    /// Next write position in `tail`.
    tail_pos: usize,
    total: u64,
}

/// Copy `src` into `dst` when the lengths agree (they always do; no panic path either way).
fn copy(dst: Option<&mut [u8]>, src: Option<&[u8]>) {
    if let (Some(d), Some(s)) = (dst, src) {
        if d.len() == s.len() {
            d.copy_from_slice(s);
        }
    }
}

impl HeadTail {
    /// A capture showing at most `cap` bytes (plus [`CUT_GUARD`] bytes of context kept on
    /// each side for the redaction of a cut).
    pub(crate) fn new(cap: usize) -> Self {
        Self::with_guard(cap, CUT_GUARD)
    }

    /// A capture showing at most `cap` bytes, keeping `guard` more on each side of the cut.
    pub(crate) fn with_guard(cap: usize, guard: usize) -> Self {
        let keep_head = cap / 2;
        let keep_tail = cap - keep_head;
        Self {
            keep_head,
            keep_tail,
            head: vec![0u8; keep_head.saturating_add(guard)].into_boxed_slice(),
            head_len: 0,
            tail: vec![0u8; keep_tail.saturating_add(guard)].into_boxed_slice(),
            tail_len: 0,
            tail_pos: 0,
            total: 0,
        }
    }

    /// Append bytes read from the stream (no allocation, no panic).
    pub(crate) fn push(&mut self, mut data: &[u8]) {
        self.total = self.total.saturating_add(data.len() as u64);
        let head_cap = self.head.len();
        if self.head_len < head_cap {
            let take = (head_cap - self.head_len).min(data.len());
            copy(
                self.head.get_mut(self.head_len..self.head_len + take),
                data.get(..take),
            );
            self.head_len += take;
            data = data.get(take..).unwrap_or(&[]);
        }
        let cap = self.tail.len();
        if cap == 0 || data.is_empty() {
            return;
        }
        if data.len() >= cap {
            copy(Some(&mut self.tail[..]), data.get(data.len() - cap..));
            self.tail_len = cap;
            self.tail_pos = 0;
            return;
        }
        // At most two pieces: up to the end of the ring, then from its start.
        let first = (cap - self.tail_pos).min(data.len());
        copy(
            self.tail.get_mut(self.tail_pos..self.tail_pos + first),
            data.get(..first),
        );
        let rest = data.len() - first;
        copy(self.tail.get_mut(..rest), data.get(first..));
        self.tail_pos = (self.tail_pos + data.len()) % cap;
        self.tail_len = (self.tail_len + data.len()).min(cap);
    }

    /// Bytes seen in total.
    #[cfg(test)]
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Whether the shown text is cut (more bytes than the cap were seen).
    pub(crate) fn truncated(&self) -> bool {
        self.total > (self.keep_head + self.keep_tail) as u64
    }

    /// The kept text (lossy UTF-8). A stream over the cap is redacted with the context
    /// around each cut, then cut, and a marker states the cut.
    pub(crate) fn render(&self) -> String {
        let head = self.head.get(..self.head_len).unwrap_or(&[]);
        let mut tail = Vec::with_capacity(self.tail_len);
        if self.tail_len == self.tail.len() {
            tail.extend_from_slice(self.tail.get(self.tail_pos..).unwrap_or(&[]));
            tail.extend_from_slice(self.tail.get(..self.tail_pos).unwrap_or(&[]));
        } else {
            tail.extend_from_slice(self.tail.get(..self.tail_len).unwrap_or(&[]));
        }
        if !self.truncated() {
            let mut out = String::from_utf8_lossy(head).into_owned();
            out.push_str(&String::from_utf8_lossy(&tail));
            return out;
        }
        let whole = (head.len() + tail.len()) as u64 == self.total;
        let (head_text, tail_text) = if whole {
            // Nothing dropped yet more than the cap: both parts come from the whole text.
            let mut all = head.to_vec();
            all.extend_from_slice(&tail);
            let all = String::from_utf8_lossy(&all).into_owned();
            let from = all.len().saturating_sub(self.tail.len());
            (
                lossy_prefix(&all, self.head.len()),
                all.get(ceil(&all, from)..).unwrap_or_default().to_string(),
            )
        } else {
            (
                String::from_utf8_lossy(head).into_owned(),
                String::from_utf8_lossy(&tail).into_owned(),
            )
        };
        let (shown_head, shown_tail) = match cut_redactor() {
            Some(r) => (
                r.redact_head(&head_text, self.keep_head),
                r.redact_tail(&tail_text, self.keep_tail),
            ),
            None => (String::new(), String::new()),
        };
        let shown = (shown_head.len() + shown_tail.len()) as u64;
        format!(
            "{shown_head}\n[... output truncated: {} of {} bytes omitted; kept the first {} and \
             the last {} bytes ...]\n{shown_tail}",
            self.total.saturating_sub(shown),
            self.total,
            shown_head.len(),
            shown_tail.len()
        )
    }
}

/// The first `n` bytes of `s` or fewer, ending at a character boundary.
fn lossy_prefix(s: &str, n: usize) -> String {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or_default().to_string()
}

/// The first character boundary of `s` at or after `i`.
fn ceil(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::HeadTail;

    #[test]
    fn small_output_is_kept_whole() {
        let mut h = HeadTail::with_guard(10, 0);
        h.push(b"abc");
        h.push(b"de");
        assert_eq!(h.render(), "abcde");
        assert!(!h.truncated());
    }

    #[test]
    fn exact_cap_is_not_truncated() {
        let mut h = HeadTail::with_guard(10, 0);
        h.push(b"0123456789");
        assert_eq!(h.render(), "0123456789");
        assert!(!h.truncated());
    }

    #[test]
    fn head_and_tail_are_kept_and_the_cut_is_stated() {
        let mut h = HeadTail::with_guard(6, 0);
        for chunk in [&b"abcd"[..], b"efgh", b"ijklmnop", b"q", b"rstuvwxyz"] {
            h.push(chunk);
        }
        assert!(h.truncated());
        assert_eq!(h.total(), 26);
        let r = h.render();
        assert!(
            r.starts_with("abc\n[... output truncated: 20 of 26 bytes omitted"),
            "{r}"
        );
        assert!(r.ends_with("...]\nxyz"), "{r}");
    }

    #[test]
    fn ring_wraps_across_its_end_in_chunks() {
        let mut h = HeadTail::with_guard(8, 0); // head 4, tail 4
        h.push(b"abcd"); // head full
        h.push(b"123"); // tail: 123
        h.push(b"45"); // tail ring: 2345 (wrapped)
        h.push(b"6789XY"); // longer than the ring: last 4
        h.push(b"Z"); // wraps again
        let r = h.render();
        assert!(
            r.starts_with("abcd\n[... output truncated: 8 of 16 bytes omitted"),
            "{r}"
        );
        assert!(r.ends_with("...]\n9XYZ"), "{r}");
    }

    #[test]
    fn ring_wraps_byte_by_byte() {
        let mut h = HeadTail::with_guard(4, 0);
        for b in b"0123456789" {
            h.push(std::slice::from_ref(b));
        }
        let r = h.render();
        assert!(r.starts_with("01\n"));
        assert!(r.ends_with("89"));
    }

    /// Attack R9 through the real capture: streams fed in pipe-sized and odd chunks that
    /// split the secret, with the secret across the head cut, across the tail cut, and with
    /// its key in the dropped middle; no 8-byte piece of the value is shown.
    #[test]
    fn a_cut_never_shows_a_piece_of_a_secret() {
        let value = "Qw3rTy8UiOp1AsDfGhJkLz09";
        let filler = "compiling crate 0042 of the build (ok)\n".repeat(4000);
        let cap = 4096;
        let cases = [
            // straddling the head cut
            format!("{}API_KEY={value} x\n{filler}", &filler[..2040]),
            // straddling the tail cut
            format!("{filler}API_KEY={value}\n{}", &filler[..2030]),
            // key in the dropped middle, value on one long line into the tail
            format!("{filler}{} password: {value} {}", "x".repeat(9000), "y".repeat(2030)),
            format!("{filler}ghp_A1b2C3d4E5f6G7h8I9j0{value}\n{}", &filler[..2040]),
        ];
        for (n, text) in cases.iter().enumerate() {
            for chunk in [1, 7, 4096, 65536] {
                let mut h = HeadTail::new(cap);
                for piece in text.as_bytes().chunks(chunk) {
                    h.push(piece);
                }
                assert!(h.truncated());
                let out = h.render();
                assert!(out.contains("[... output truncated"));
                for w in value.as_bytes().windows(8) {
                    let piece = std::str::from_utf8(w).unwrap();
                    assert!(!out.contains(piece), "case {n}: {piece} leaked (chunk {chunk}): {}", &out[out.len().saturating_sub(300)..]);
                }
            }
        }
    }

    #[test]
    fn a_stream_over_the_cap_without_drops_is_still_cut_after_redaction() {
        let mut h = HeadTail::with_guard(20, 100);
        h.push(b"line one\nAPI_KEY=abcdefghijkl\nline three\nline four\n");
        assert!(h.truncated());
        let out = h.render();
        assert!(out.starts_with("line one\n\n[... output truncated"), "{out}");
        assert!(out.ends_with("...]\nline four\n"), "{out}");
        assert!(!out.contains("abcdefgh"), "{out}");
    }
}
