//! Brace expansion of a guard target (`{x,~}`, `/{etc,usr}`, `{/usr,}`), done before the
//! guards check it (attack G2). Bounded: at most [`MAX`] words; past that the word's
//! alternatives are still all checked one group at a time, never multiplied further.

/// The most words one target expands to.
const MAX: usize = 64;

/// The words `word` brace-expands to (the word itself when it has no `{a,b}` group).
pub(crate) fn expand(word: &str) -> Vec<String> {
    let mut out = vec![word.to_string()];
    // Each round expands the first group of every word; a bounded number of rounds.
    for _ in 0..4 {
        let mut next = Vec::new();
        let mut changed = false;
        for w in &out {
            match first_group(w) {
                Some((open, close)) if next.len() < MAX => {
                    changed = true;
                    let (pre, post) = (&w[..open], &w[close + 1..]);
                    for alt in split_top(&w[open + 1..close]) {
                        next.push(format!("{pre}{alt}{post}"));
                    }
                }
                _ => next.push(w.clone()),
            }
        }
        out = next;
        if !changed {
            break;
        }
    }
    out.retain(|w| !w.is_empty());
    if out.is_empty() {
        out.push(String::new());
    }
    out
}

/// The byte offsets of the first `{…}` to close that holds a top-level comma and is not a
/// `${…}` expansion: one pass with a stack of open braces.
fn first_group(w: &str) -> Option<(usize, usize)> {
    // (offset, is a `${`, has a top-level comma)
    let mut stack: Vec<(usize, bool, bool)> = Vec::new();
    let b = w.as_bytes();
    for (k, c) in b.iter().enumerate() {
        match c {
            b'{' => stack.push((k, k > 0 && b[k - 1] == b'$', false)),
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.2 = true;
                }
            }
            b'}' => {
                if let Some((open, param, comma)) = stack.pop() {
                    if comma && !param {
                        return Some((open, k));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// The comma-separated alternatives of a group's inside, splitting on top-level commas.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (k, c) in s.bytes().enumerate() {
        match c {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                out.push(&s[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}
