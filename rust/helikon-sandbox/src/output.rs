//! Bounded capture of a child's output: the first and last bytes are kept, the middle counted.
//!
//! The reader never stops reading (a child blocked on a full pipe would only stall until the
//! timeout); it keeps `cap / 2` bytes from the start, the last `cap - cap / 2` bytes in a ring,
//! and counts everything. The rendered text states where and how much was cut.

/// Head-and-tail capture of one stream.
#[derive(Debug)]
pub(crate) struct HeadTail {
    head: Vec<u8>,
    head_cap: usize,
    tail: Vec<u8>,
    tail_cap: usize,
    /// Next write position in `tail` once it is full.
    tail_pos: usize,
    total: u64,
}

impl HeadTail {
    /// A capture keeping at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        Self {
            head: Vec::new(),
            head_cap,
            tail: Vec::new(),
            tail_cap: cap - head_cap,
            tail_pos: 0,
            total: 0,
        }
    }

    /// Append bytes read from the stream.
    pub(crate) fn push(&mut self, mut data: &[u8]) {
        self.total = self.total.saturating_add(data.len() as u64);
        if self.head.len() < self.head_cap {
            let take = (self.head_cap - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..take]);
            data = &data[take..];
        }
        if self.tail_cap == 0 || data.is_empty() {
            return;
        }
        if data.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend_from_slice(&data[data.len() - self.tail_cap..]);
            self.tail_pos = 0;
            return;
        }
        for &b in data {
            if self.tail.len() < self.tail_cap {
                self.tail.push(b);
            } else {
                self.tail[self.tail_pos] = b;
                self.tail_pos = (self.tail_pos + 1) % self.tail_cap;
            }
        }
    }

    /// Bytes seen in total.
    #[cfg(test)]
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Whether anything was dropped.
    pub(crate) fn truncated(&self) -> bool {
        self.total > (self.head.len() + self.tail.len()) as u64
    }

    /// The kept text (lossy UTF-8), with a marker stating the cut when bytes were dropped.
    pub(crate) fn render(&self) -> String {
        let mut tail = Vec::with_capacity(self.tail.len());
        if self.tail.len() == self.tail_cap && self.tail_cap > 0 {
            tail.extend_from_slice(&self.tail[self.tail_pos..]);
            tail.extend_from_slice(&self.tail[..self.tail_pos]);
        } else {
            tail.extend_from_slice(&self.tail);
        }
        let kept = (self.head.len() + tail.len()) as u64;
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.total > kept {
            let omitted = self.total - kept;
            out.push_str(&format!(
                "\n[... output truncated: {omitted} of {} bytes omitted; kept the first {} and \
                 the last {} bytes ...]\n",
                self.total,
                self.head.len(),
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
