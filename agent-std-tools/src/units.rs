//! Sizes as messages show them.

/// `bytes` in the largest binary unit that divides it: `4 MiB`, `512 KiB`, `1000 bytes`.
pub(crate) fn binary_size(bytes: u64) -> String {
    match bytes {
        0 => "0 bytes".to_owned(),
        b if b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::binary_size;

    #[test]
    fn sizes_take_the_largest_unit_that_divides_them() {
        assert_eq!(binary_size(4 << 20), "4 MiB");
        assert_eq!(binary_size(2 << 30), "2 GiB");
        assert_eq!(binary_size(1536 << 10), "1536 KiB");
        assert_eq!(binary_size(1000), "1000 bytes");
        assert_eq!(binary_size(0), "0 bytes");
    }
}
