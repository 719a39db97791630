//! The symmetric-heap allocator: pure bookkeeping of offsets, no memory touched.
//!
//! Policy (spec 8.2): sizes rounded up to 16 bytes; best fit (smallest free block that fits, lowest
//! offset on ties); `align` takes the first suitably aligned offset inside the chosen block; freeing
//! merges with both neighbours. The same call sequence gives the same offsets on every PE, which is
//! what makes the memory symmetric.

use std::collections::BTreeMap;

/// Allocation granule.
pub const GRANULE: u64 = 16;

/// Why a free was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum FreeError {
    /// The offset is not the start of a live block (interior pointer, double free, never allocated).
    NotAllocated(u64),
}

/// Free and used blocks of one heap, by offset.
#[derive(Debug, Clone)]
pub struct Allocator {
    size: u64,
    free: BTreeMap<u64, u64>,
    used: BTreeMap<u64, u64>,
}

impl Allocator {
    /// An allocator over `size` bytes (rounded down to the granule), all free.
    pub fn new(size: u64) -> Self {
        let size = size / GRANULE * GRANULE;
        let mut free = BTreeMap::new();
        if size > 0 {
            free.insert(0, size);
        }
        Allocator {
            size,
            free,
            used: BTreeMap::new(),
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes currently free.
    pub fn free_bytes(&self) -> u64 {
        self.free.values().sum()
    }

    /// Allocates `size` bytes at an offset that is a multiple of `align` (a power of two).
    /// Returns `None` for size 0, a bad alignment, or when no block fits.
    pub fn alloc(&mut self, size: u64, align: u64) -> Option<u64> {
        if size == 0 || align == 0 || !align.is_power_of_two() {
            return None;
        }
        let size = size.checked_add(GRANULE - 1)? / GRANULE * GRANULE;
        let align = align.max(GRANULE);
        let mut best: Option<(u64, u64, u64)> = None; // (block len, block off, aligned off)
        for (&off, &len) in &self.free {
            let start = off.checked_add(align - 1)? & !(align - 1);
            let end = match start.checked_add(size) {
                Some(e) => e,
                None => continue,
            };
            if end <= off + len && best.is_none_or(|(bl, _, _)| len < bl) {
                best = Some((len, off, start));
            }
        }
        let (len, off, start) = best?;
        self.free.remove(&off);
        if start > off {
            self.free.insert(off, start - off);
        }
        let end = start + size;
        if end < off + len {
            self.free.insert(end, off + len - end);
        }
        self.used.insert(start, size);
        Some(start)
    }

    /// Size of the live block starting at `off`.
    pub fn block_size(&self, off: u64) -> Option<u64> {
        self.used.get(&off).copied()
    }

    /// Resizes the live block at `off` to `size` bytes (rounded up to the granule) without moving
    /// it: shrinking frees its tail (merged with a free block after it); growing takes the free
    /// block right after it when that is large enough. `Some(true)` when the block now has the new
    /// size, `Some(false)` when it cannot grow there (or `size` is 0), `None` when `off` is not the
    /// start of a live block.
    pub fn resize(&mut self, off: u64, size: u64) -> Option<bool> {
        let len = *self.used.get(&off)?;
        let Some(new) = size.checked_add(GRANULE - 1).map(|s| s / GRANULE * GRANULE) else {
            return Some(false);
        };
        if new == 0 {
            return Some(false);
        }
        let after = self.free.get(&(off + len)).copied();
        if new < len {
            let tail = off + new;
            let end = off + len + after.unwrap_or(0);
            if after.is_some() {
                self.free.remove(&(off + len));
            }
            self.free.insert(tail, end - tail);
        } else if new > len {
            let need = new - len;
            match after {
                Some(a) if a >= need => {
                    self.free.remove(&(off + len));
                    if a > need {
                        self.free.insert(off + new, a - need);
                    }
                }
                _ => return Some(false),
            }
        }
        self.used.insert(off, new);
        Some(true)
    }

    /// Frees the block starting at `off`, merging with free neighbours. Returns its size.
    pub fn free(&mut self, off: u64) -> Result<u64, FreeError> {
        let len = self.used.remove(&off).ok_or(FreeError::NotAllocated(off))?;
        let mut start = off;
        let mut end = off + len;
        if let Some((&poff, &plen)) = self.free.range(..off).next_back()
            && poff + plen == off
        {
            self.free.remove(&poff);
            start = poff;
        }
        if let Some(&nlen) = self.free.get(&end) {
            self.free.remove(&end);
            end += nlen;
        }
        self.free.insert(start, end - start);
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_and_aligns() {
        let mut a = Allocator::new(1024);
        assert_eq!(a.alloc(1, 1), Some(0));
        assert_eq!(a.alloc(17, 1), Some(16));
        assert_eq!(a.alloc(8, 256), Some(256));
        assert_eq!(a.block_size(16), Some(32));
    }

    #[test]
    fn zero_bad_align_and_too_large() {
        let mut a = Allocator::new(1024);
        assert_eq!(a.alloc(0, 16), None);
        assert_eq!(a.alloc(16, 3), None);
        assert_eq!(a.alloc(16, 0), None);
        assert_eq!(a.alloc(1025, 16), None);
        assert_eq!(a.alloc(u64::MAX, 16), None);
        assert_eq!(a.alloc(1024, 16), Some(0));
        assert_eq!(a.alloc(16, 16), None);
    }

    #[test]
    fn best_fit_and_merge() {
        let mut a = Allocator::new(1000 * 16);
        let x = a.alloc(100 * 16, 1).unwrap();
        let y = a.alloc(10 * 16, 1).unwrap();
        let z = a.alloc(50 * 16, 1).unwrap();
        let _w = a.alloc(16, 1).unwrap();
        a.free(x).unwrap();
        a.free(z).unwrap();
        // the 50-granule hole fits better than the 100-granule one
        assert_eq!(a.alloc(40 * 16, 1), Some(z));
        a.free(z).unwrap();
        a.free(y).unwrap();
        // x, y, z merged into one block of 160 granules at offset 0
        assert_eq!(a.alloc(160 * 16, 1), Some(0));
    }

    #[test]
    fn double_and_interior_free_are_refused() {
        let mut a = Allocator::new(4096);
        let p = a.alloc(64, 16).unwrap();
        assert_eq!(a.free(p + 16), Err(FreeError::NotAllocated(p + 16)));
        assert_eq!(a.free(p), Ok(64));
        assert_eq!(a.free(p), Err(FreeError::NotAllocated(p)));
        assert_eq!(a.free_bytes(), 4096);
    }

    #[test]
    fn deterministic_sequences_agree() {
        let run = || {
            let mut a = Allocator::new(1 << 20);
            let mut out = vec![];
            for i in 1..200u64 {
                out.push(a.alloc(i * 37 % 4000 + 1, 1 << (i % 8)));
                if i % 3 == 0 {
                    let off = out[(i / 2) as usize].unwrap();
                    let _ = a.free(off);
                }
            }
            out
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn blocks_resize_in_place_when_the_space_after_them_is_free() {
        let mut a = Allocator::new(1024);
        let x = a.alloc(100, 16).unwrap(); // 112 bytes at 0
        assert_eq!(a.block_size(x), Some(112));
        // the only block grows into the free space after it, to most of the heap
        assert_eq!(a.resize(x, 900), Some(true));
        assert_eq!(a.block_size(x), Some(912));
        assert_eq!(a.free_bytes(), 1024 - 912);
        // not beyond the heap
        assert_eq!(a.resize(x, 1025), Some(false));
        assert_eq!(a.block_size(x), Some(912));
        // shrinking frees the tail, merged with the free block after it
        assert_eq!(a.resize(x, 32), Some(true));
        assert_eq!(a.free_bytes(), 1024 - 32);
        assert_eq!(a.alloc(992, 16), Some(32));
        // a block with a live neighbour after it cannot grow
        a.free(32).unwrap();
        let y = a.alloc(64, 16).unwrap();
        assert_eq!(y, 32);
        assert_eq!(a.resize(x, 48), Some(false));
        assert_eq!(a.resize(x, 0), Some(false));
        assert_eq!(a.resize(8, 64), None);
        // the same resizes give the same offsets on every PE: the next allocations agree
        let mut b = a.clone();
        assert_eq!(a.resize(y, 200), b.resize(y, 200));
        assert_eq!(a.alloc(48, 16), b.alloc(48, 16));
    }

    #[test]
    fn full_space_is_usable() {
        let mut a = Allocator::new(1 << 20);
        assert_eq!(a.alloc(1 << 20, 16), Some(0));
        a.free(0).unwrap();
        assert_eq!(a.alloc(1 << 20, 16), Some(0));
    }
}
