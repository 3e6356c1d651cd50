//! Counted nouns in messages: "1 member", "2 members".

/// `n` and the noun in the number that fits: `count(1, "entity", "entities")` is "1 entity".
pub fn count(n: usize, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
}

/// `n members` or `1 member`.
pub fn members(n: usize) -> String {
    count(n, "member", "members")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular() {
        assert_eq!(members(0), "0 members");
        assert_eq!(members(1), "1 member");
        assert_eq!(count(1, "entity", "entities"), "1 entity");
        assert_eq!(count(3, "entity", "entities"), "3 entities");
    }
}
