//! Slicing a response payload into the Block2 block a request asked for (RFC 7959 §2.4).

use covey_core::Block;

/// The Block2 slice of `payload` to send for a request that asked for `requested`
/// (or nothing); `None` when the payload fits in one message (`single_limit` bytes, at
/// least one block) and none was asked for, `Err` when the requested block lies beyond the
/// end.
pub(crate) fn slice_block2(
    payload: &[u8],
    requested: Option<Block>,
    preferred_szx: u8,
    single_limit: usize,
) -> Result<Option<(Block, &[u8])>, ()> {
    if requested.is_none() && payload.len() <= single_limit.max(16 << preferred_szx) {
        return Ok(None);
    }
    let szx = requested.map_or(preferred_szx, |b| b.szx.min(preferred_szx));
    let size = 16usize << szx;
    // A request for a larger block than we serve starts at the same byte offset.
    let offset = requested.map_or(0, |b| b.offset());
    if offset > payload.len() || (offset == payload.len() && offset > 0) {
        return Err(());
    }
    let end = (offset + size).min(payload.len());
    let block = Block::new((offset / size) as u32, end < payload.len(), szx).map_err(|_| ())?;
    Ok(Some((block, &payload[offset..end])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn block(num: u32, more: bool, szx: u8) -> Block {
        Block::new(num, more, szx).unwrap()
    }

    #[test]
    fn b5_b6_slicing() {
        let body = [7u8; 2500];
        // B5: client asks SZX 6, server accepts.
        let (b, p) = slice_block2(&body, Some(block(0, false, 6)), 6, 0)
            .unwrap()
            .unwrap();
        assert_eq!((b, p.len()), (block(0, true, 6), 1024));
        let (b, p) = slice_block2(&body, Some(block(2, false, 6)), 6, 0)
            .unwrap()
            .unwrap();
        assert_eq!((b, p.len()), (block(2, false, 6), 452));
        // B6: the server only allows 512.
        let sizes: Vec<(u32, bool, usize)> = (0..5)
            .map(|n| {
                let (b, p) = slice_block2(&body, Some(block(n, false, 5)), 5, 0)
                    .unwrap()
                    .unwrap();
                (b.num, b.more, p.len())
            })
            .collect();
        assert_eq!(
            sizes,
            [
                (0, true, 512),
                (1, true, 512),
                (2, true, 512),
                (3, true, 512),
                (4, false, 452)
            ]
        );
        assert_eq!(slice_block2(&body, Some(block(5, false, 5)), 5, 0), Err(()));
        assert_eq!(slice_block2(&[1, 2], None, 6, 0), Ok(None));
        // A larger single-message limit keeps a 1 200-byte payload whole.
        let big = [7u8; 1200];
        assert_eq!(slice_block2(&big, None, 6, 1200), Ok(None));
        assert!(matches!(slice_block2(&big, None, 6, 0), Ok(Some(_))));
    }
}
