//! Bounded capture of a child's output: the first and last bytes are kept, the middle counted.
//!
//! The reader never stops reading (a child blocked on a full pipe would only stall until the
//! timeout); it keeps `cap / 2` bytes from the start, the last `cap - cap / 2` bytes in a ring,
//! and counts everything. The rendered text states where and how much was cut.

/// Head-and-tail capture of one stream. Both buffers are allocated up front, so [`push`]
/// never allocates (the supervisor fills it; see `sys`).
///
/// [`push`]: HeadTail::push
#[derive(Debug)]
pub(crate) struct HeadTail {
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
    /// A capture keeping at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        Self {
            head: vec![0u8; head_cap].into_boxed_slice(),
            head_len: 0,
            tail: vec![0u8; cap - head_cap].into_boxed_slice(),
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

    /// Whether anything was dropped.
    pub(crate) fn truncated(&self) -> bool {
        self.total > (self.head_len + self.tail_len) as u64
    }

    /// The kept text (lossy UTF-8), with a marker stating the cut when bytes were dropped.
    pub(crate) fn render(&self) -> String {
        let head = self.head.get(..self.head_len).unwrap_or(&[]);
        let mut tail = Vec::with_capacity(self.tail_len);
        if self.tail_len == self.tail.len() {
            tail.extend_from_slice(self.tail.get(self.tail_pos..).unwrap_or(&[]));
            tail.extend_from_slice(self.tail.get(..self.tail_pos).unwrap_or(&[]));
        } else {
            tail.extend_from_slice(self.tail.get(..self.tail_len).unwrap_or(&[]));
        }
        let kept = (head.len() + tail.len()) as u64;
        let mut out = String::from_utf8_lossy(head).into_owned();
        if self.total > kept {
            let omitted = self.total - kept;
            out.push_str(&format!(
                "\n[... output truncated: {omitted} of {} bytes omitted; kept the first {} and \
                 the last {} bytes ...]\n",
                self.total,
                head.len(),
                tail.len()
            ));
        }
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::HeadTail;

    #[test]
    fn small_output_is_kept_whole() {
        let mut h = HeadTail::new(10);
        h.push(b"abc");
        h.push(b"de");
        assert_eq!(h.render(), "abcde");
        assert!(!h.truncated());
    }

    #[test]
    fn exact_cap_is_not_truncated() {
        let mut h = HeadTail::new(10);
        h.push(b"0123456789");
        assert_eq!(h.render(), "0123456789");
        assert!(!h.truncated());
    }

    #[test]
    fn head_and_tail_are_kept_and_the_cut_is_stated() {
        let mut h = HeadTail::new(6);
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
        let mut h = HeadTail::new(8); // head 4, tail 4
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
        let mut h = HeadTail::new(4);
        for b in b"0123456789" {
            h.push(std::slice::from_ref(b));
        }
        let r = h.render();
        assert!(r.starts_with("01\n"));
        assert!(r.ends_with("89"));
    }
}
