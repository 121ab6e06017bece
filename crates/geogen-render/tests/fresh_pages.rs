//! New maps are all zero whatever pages they get: with [`LargePages`] installed (as the `geogen`
//! binary does), a new map's fresh pages are only faulted in, not written, and its recycled pages
//! (a freed map's, dirty) are zeroed; a block grown from a kept one has both.

use geogen_render::{HeightMap, LargePages, Rect};

#[global_allocator]
static ALLOCATOR: LargePages = LargePages::new();

/// Frees a block of `pixels` dirty pixels, for the next big allocation to recycle.
fn free_dirty_block(pixels: usize) {
    let dirty = vec![f32::NAN; pixels];
    std::hint::black_box(&dirty);
}

fn assert_all_zero(map: &HeightMap, what: &str) {
    let bad = map.data().iter().position(|h| h.to_bits() != 0);
    assert_eq!(bad, None, "{what}: a pixel of {} is not +0.0", map.rect());
}

#[test]
fn new_maps_are_zero_over_fresh_recycled_and_grown_blocks() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    pool.install(|| {
        // 1.6 M pixels (6.4 MB) is above the allocator's threshold; the smaller maps recycle the
        // head of the freed block, the larger ones grow it (a dirty head, a fresh tail).
        for (width, height) in [(1600, 1000), (1200, 1000), (1601, 999), (2000, 1700), (3000, 2100)] {
            let rect = Rect::new(-7, 13, width, height);
            free_dirty_block(1_600_000);
            let zeroed = HeightMap::try_zeroed(rect).unwrap();
            assert_all_zero(&zeroed, "try_zeroed");
            drop(zeroed);

            free_dirty_block(1_600_000);
            let banded = HeightMap::try_from_bands(rect, 37, None, |band| {
                assert_all_zero(band, "a band before its fill");
                Ok(())
            })
            .unwrap();
            assert_all_zero(&banded, "try_from_bands");
        }
        // Larger than anything kept: a kept block grown, most of it fresh.
        let fresh = HeightMap::try_from_bands(Rect::new(0, 0, 4000, 4000), 64, None, |_| Ok(())).unwrap();
        assert_all_zero(&fresh, "a fresh block");
    });
}
