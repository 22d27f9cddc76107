//! Truncation of column bounds for metrics (`write.metadata.metrics.*` mode `truncate(N)`):
//! a lower bound is a prefix; an upper bound is a prefix whose last incrementable unit
//! is incremented so that it still sorts at or above every value it bounds.

/// The first `n` Unicode code points of `s` (a valid lower bound for `s`).
pub fn truncate_lower_string(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => s[..i].to_string(),
        None => s.to_string(),
    }
}

/// An upper bound for `s` of at most `n` code points: `s` itself if short enough, else its
/// first `n` code points with the last incrementable code point incremented (later ones
/// dropped). `None` when no code point can be incremented (all are U+10FFFF) or `n == 0`.
/// Surrogates are skipped (U+D7FF increments to U+E000) so the result stays valid UTF-8.
pub fn truncate_upper_string(s: &str, n: usize) -> Option<String> {
    if s.chars().nth(n).is_none() {
        return Some(s.to_string());
    }
    let mut chars: Vec<char> = s.chars().take(n).collect();
    while let Some(last) = chars.pop() {
        let next = match last as u32 {
            0xD7FF => Some('\u{E000}'),
            c => char::from_u32(c + 1),
        };
        if let Some(c) = next {
            chars.push(c);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// The first `n` bytes of `b` (a valid lower bound for `b`).
pub fn truncate_lower_binary(b: &[u8], n: usize) -> Vec<u8> {
    b[..b.len().min(n)].to_vec()
}

/// An upper bound for `b` of at most `n` bytes: `b` itself if short enough, else its first
/// `n` bytes with the last byte below 0xFF incremented (later bytes dropped). `None` when
/// every byte of the prefix is 0xFF or `n == 0`.
pub fn truncate_upper_binary(b: &[u8], n: usize) -> Option<Vec<u8>> {
    if b.len() <= n {
        return Some(b.to_vec());
    }
    let mut out = b[..n].to_vec();
    while let Some(last) = out.pop() {
        if last != 0xff {
            out.push(last + 1);
            return Some(out);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings() {
        assert_eq!(truncate_lower_string("iceberg", 3), "ice");
        assert_eq!(truncate_lower_string("ic", 3), "ic");
        assert_eq!(truncate_lower_string("a\u{1F600}bc", 2), "a\u{1F600}");
        assert_eq!(truncate_upper_string("iceberg", 3).as_deref(), Some("icf"));
        assert_eq!(truncate_upper_string("ice", 3).as_deref(), Some("ice"));
        assert_eq!(truncate_upper_string("a\u{10FFFF}bc", 2).as_deref(), Some("b"));
        assert_eq!(truncate_upper_string("\u{10FFFF}\u{10FFFF}x", 2), None);
        assert_eq!(truncate_upper_string("\u{D7FF}x", 1).as_deref(), Some("\u{E000}"));
        assert_eq!(truncate_upper_string("\u{1F600}\u{1F600}", 1).as_deref(), Some("\u{1F601}"));
        assert_eq!(truncate_upper_string("abc", 0), None);
        assert_eq!(truncate_upper_string("", 0).as_deref(), Some(""));
    }

    #[test]
    fn binary() {
        assert_eq!(truncate_lower_binary(&[1, 2, 3], 2), vec![1, 2]);
        assert_eq!(truncate_upper_binary(&[1, 2, 3], 2), Some(vec![1, 3]));
        assert_eq!(truncate_upper_binary(&[1, 0xff, 3], 2), Some(vec![2]));
        assert_eq!(truncate_upper_binary(&[0xff, 0xff, 3], 2), None);
        assert_eq!(truncate_upper_binary(&[0xff], 2), Some(vec![0xff]));
    }
}
