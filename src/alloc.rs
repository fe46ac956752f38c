//! The global allocator of the `lift` binary, its examples and benches:
//! mimalloc, asked through its plain entry points where they suffice.
//!
//! The `mimalloc` crate's `GlobalAlloc` calls `mi_malloc_aligned` for every
//! allocation, whose checks cost about 4% of a compile's instructions
//! (docs/ARCHITECTURE.md, "Compile time"). Plain `mi_malloc` already
//! returns blocks aligned to their size up to 16 bytes (`MI_MAX_ALIGN_SIZE`:
//! blocks of 16 bytes or more are 16-aligned, smaller ones 8-aligned), the
//! same guarantee the standard library relies on for the system allocator,
//! so the aligned path is taken only for larger alignments or for a size
//! below the alignment.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// The alignment `mi_malloc` guarantees for a size at least this large.
const MIN_ALIGN: usize = 16;

/// mimalloc with plain `mi_malloc`/`mi_realloc` for ordinary alignments.
pub struct MiMalloc;

fn plain(align: usize, size: usize) -> bool {
    align <= MIN_ALIGN && align <= size
}

// SAFETY: every pointer comes from mimalloc with at least the layout's
// alignment (see the module comment), and `mi_free` frees blocks from either
// entry point.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(layout.align(), layout.size()) {
            unsafe { libmimalloc_sys::mi_malloc(layout.size()) as *mut u8 }
        } else {
            unsafe { libmimalloc_sys::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(layout.align(), layout.size()) {
            unsafe { libmimalloc_sys::mi_zalloc(layout.size()) as *mut u8 }
        } else {
            unsafe { libmimalloc_sys::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { libmimalloc_sys::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if plain(layout.align(), new_size) {
            unsafe { libmimalloc_sys::mi_realloc(ptr as *mut c_void, new_size) as *mut u8 }
        } else {
            unsafe {
                libmimalloc_sys::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Layouts on both paths (small and large alignments, sizes below and
    // above the alignment) come back aligned, zeroed where asked, and keep
    // their bytes when grown or shrunk.
    #[test]
    fn blocks_are_aligned_and_reallocate() {
        let a = MiMalloc;
        for align in [1usize, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1usize, 7, 8, 15, 16, 24, 40, 100, 1000, 70000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let z = a.alloc_zeroed(layout);
                    assert!(!z.is_null() && (z as usize).is_multiple_of(align), "{size} {align}");
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    a.dealloc(z, layout);
                    for new in [1usize, 9, 17, 300, 90000] {
                        let p = a.alloc(layout);
                        assert!(!p.is_null() && (p as usize).is_multiple_of(align), "{size} {align}");
                        p.write_bytes(0xab, size);
                        let q = a.realloc(p, layout, new);
                        assert!(!q.is_null() && (q as usize).is_multiple_of(align), "{size} {align} {new}");
                        assert!((0..size.min(new)).all(|i| *q.add(i) == 0xab));
                        a.dealloc(q, Layout::from_size_align(new, align).unwrap());
                    }
                }
            }
        }
    }
}
