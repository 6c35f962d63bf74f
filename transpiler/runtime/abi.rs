//! The C ABI shared by every `cutile_<kernel>` symbol of this crate.
//!
//! Tensors cross the boundary as [`CutileTensor`] descriptors (pointer, rank, shape, strides in
//! elements, dtype code), borrowed without copies. Every symbol checks its arguments before it
//! touches the GPU, returns one of the `CUTILE_*` codes below, never unwinds across the boundary
//! (panics are caught), and leaves a message for [`cutile_last_error`].
//!
//! Dry run: after `cutile_dry_run(1)` on a thread, the symbols called on that thread run every check,
//! select the entry and compute its generics, grid and output partitions as a launch does, on the same
//! code path, then stop where the launch would take the device: they return `CUTILE_OK` without
//! touching the driver (so a device ordinal is only checked to be non-negative), and [`cutile_last_plan`] gives what would have been launched, as JSON
//! (`{"symbol", "entry", "kernel_fn", "element_type", "generics", "grid", "partitions", "params", "device",
//! "stream"}`: `params` are the values the entry would receive, `[name, [[type, value], ...]]`; see
//! [`dry_run`]). The Python package's `dry_run(plan)` and `explain(kernel, args, grid)` wrap it.
#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock};

use cutile::cuda_core::{Context, Stream};

/// Version of this ABI (descriptor layout, codes, argument conventions).
pub const CUTILE_ABI_VERSION: u32 = 2; // 2: `cutile_hint_next`

/// A borrowed device tensor: `shape[..ndim]` and `strides[..ndim]` (in elements) are read.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CutileTensor {
    pub ptr: *mut c_void,
    pub ndim: i32,
    pub shape: [i64; CUTILE_MAX_RANK],
    pub strides: [i64; CUTILE_MAX_RANK],
    pub dtype: i32,
}

// The return codes (`CUTILE_*`), the dtype codes (`Dtype`), the maximum rank and this crate's digest: rendered per
// crate from the tables the Python package mirrors (transpiler/emit/ffi.py).
include!("abi_tables.rs");

/// A failed check: the code returned across the boundary and the message kept for the caller.
#[derive(Debug)]
pub struct Fail {
    pub code: i32,
    pub message: String,
}

pub fn fail<T>(code: i32, message: String) -> Result<T, Fail> {
    Err(Fail { code, message })
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// The message of the last failed call on this thread ("" after a success). Valid until the next
/// call on the same thread; copy it.
#[unsafe(no_mangle)]
pub extern "C" fn cutile_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

#[unsafe(no_mangle)]
pub extern "C" fn cutile_abi_version() -> u32 {
    CUTILE_ABI_VERSION
}

/// Digest of the generated code this library was built from; the Python package refuses a library
/// whose digest differs from its own (a stale build).
#[unsafe(no_mangle)]
pub extern "C" fn cutile_crate_digest() -> *const c_char {
    CRATE_DIGEST.as_ptr()
}

/// Writes the descriptor layout so that bindings can check they mirror it: size, alignment,
/// offsets of ptr, ndim, shape, strides and dtype, and the maximum rank. Returns how many values
/// exist (8); writes at most `len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cutile_abi_layout(out: *mut u64, len: usize) -> usize {
    let values: [u64; 8] = [
        std::mem::size_of::<CutileTensor>() as u64,
        std::mem::align_of::<CutileTensor>() as u64,
        std::mem::offset_of!(CutileTensor, ptr) as u64,
        std::mem::offset_of!(CutileTensor, ndim) as u64,
        std::mem::offset_of!(CutileTensor, shape) as u64,
        std::mem::offset_of!(CutileTensor, strides) as u64,
        std::mem::offset_of!(CutileTensor, dtype) as u64,
        CUTILE_MAX_RANK as u64,
    ];
    if !out.is_null() {
        for (i, v) in values.iter().take(len).enumerate() {
            *out.add(i) = *v;
        }
    }
    values.len()
}

/// The name of a dtype code (null for an unknown code), so bindings can check their table.
#[unsafe(no_mangle)]
pub extern "C" fn cutile_dtype_name(code: i32) -> *const c_char {
    Dtype::from_code(code).map_or(std::ptr::null(), |d| d.c_name().as_ptr())
}

/// Runs a symbol's body: maps its result to a code, keeps the message, and contains panics.
pub fn guard(body: impl FnOnce() -> Result<(), Fail>) -> i32 {
    // (cleared only when set: a launch allocates nothing here)
    LAST_PLAN.with(|p| {
        if !p.borrow().is_empty() {
            *p.borrow_mut() = CString::default()
        }
    });
    // the launch hints asked for this call (`cutile_hint_next`), for this call only
    HINTS.with(|h| h.set(NEXT_HINTS.with(|n| n.replace(NO_HINTS))));
    let result = catch_unwind(AssertUnwindSafe(body));
    HINTS.with(|h| h.set(NO_HINTS));
    match result {
        Ok(Ok(())) => {
            LAST_ERROR.with(|e| {
                if !e.borrow().is_empty() {
                    *e.borrow_mut() = CString::default()
                }
            });
            CUTILE_OK
        }
        Ok(Err(f)) => {
            set_last_error(&f.message);
            f.code
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            set_last_error(&format!("panic caught at the C boundary: {what}"));
            CUTILE_ERR_PANIC
        }
    }
}

/// Exercises the panic guard, so bindings can test that panics come back as `CUTILE_ERR_PANIC`.
#[unsafe(no_mangle)]
pub extern "C" fn cutile_abi_check_panic_guard() -> i32 {
    guard(|| panic!("panic guard self-test"))
}

/// How a kernel uses an array: written arrays must not overlap themselves; pointer-accessed
/// arrays (gathers, scatters, atomics) must be contiguous in their last dimension.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub written: bool,
    pub pointer: bool,
}

/// A checked descriptor: every value fits the kernel's i32 index type.
pub struct TensorArg {
    pub ptr: u64,
    pub dtype: Dtype,
    pub shape: Vec<i32>,
    pub strides: Vec<i32>,
    /// false: an optional Triton pointer passed as None (null descriptor); the kernel takes a null pointer
    /// and a `<name>_IS_GIVEN` const generic of 0, so it never reads it
    pub given: bool,
}

/// Checks a descriptor against the kernel's rank for the array.
///
/// # Safety
/// `desc` is null or points to a readable `CutileTensor`.
pub unsafe fn tensor_arg(
    desc: *const CutileTensor,
    name: &str,
    rank: usize,
    access: Access,
) -> Result<TensorArg, Fail> {
    if desc.is_null() {
        return fail(CUTILE_ERR_NULL, format!("`{name}`: null descriptor"));
    }
    let d = &*desc;
    if d.ndim < 0 || d.ndim as usize != rank {
        return fail(CUTILE_ERR_RANK, format!("`{name}`: rank {} given, the kernel takes rank {rank}", d.ndim));
    }
    let Some(dtype) = Dtype::from_code(d.dtype) else {
        return fail(CUTILE_ERR_DTYPE, format!("`{name}`: unknown dtype code {}", d.dtype));
    };
    if d.ptr.is_null() {
        return fail(CUTILE_ERR_NULL, format!("`{name}`: null data pointer"));
    }
    if (d.ptr as usize) % dtype.size() != 0 {
        return fail(
            CUTILE_ERR_ALIGN,
            format!("`{name}`: pointer {:p} is not aligned to its {}-byte elements", d.ptr, dtype.size()),
        );
    }
    let (shape, strides) = (&d.shape[..rank], &d.strides[..rank]);
    let mut extent: i64 = 0;
    for i in 0..rank {
        if shape[i] < 0 || shape[i] > i32::MAX as i64 {
            return fail(CUTILE_ERR_SHAPE, format!("`{name}`: dimension {i} is {}, outside 0..=i32::MAX", shape[i]));
        }
        if strides[i] < 0 || strides[i] > i32::MAX as i64 {
            return fail(CUTILE_ERR_STRIDE, format!("`{name}`: stride {i} is {}, outside 0..=i32::MAX", strides[i]));
        }
        if access.written && strides[i] == 0 && shape[i] > 1 {
            return fail(
                CUTILE_ERR_STRIDE,
                format!("`{name}`: output with stride 0 in dimension {i} (overlapping writes)"),
            );
        }
        if shape[i] > 0 {
            extent = extent.saturating_add((shape[i] - 1).saturating_mul(strides[i]));
        }
    }
    if extent > i32::MAX as i64 {
        return fail(
            CUTILE_ERR_SHAPE,
            format!("`{name}`: addresses {extent} elements past its start, beyond the i32 index type"),
        );
    }
    if access.pointer && rank > 0 && shape[rank - 1] > 1 && strides[rank - 1] != 1 {
        return fail(CUTILE_ERR_STRIDE, format!("`{name}`: accessed by pointer, needs stride 1 in its last dimension"));
    }
    Ok(TensorArg {
        ptr: d.ptr as u64,
        dtype,
        shape: shape.iter().map(|&v| v as i32).collect(),
        strides: strides.iter().map(|&v| v as i32).collect(),
        given: true,
    })
}

/// `tensor_arg` for an optional Triton pointer: a null descriptor is Python's None (not given).
///
/// # Safety
/// As for `tensor_arg`.
pub unsafe fn optional_tensor_arg(
    desc: *const CutileTensor,
    name: &str,
    rank: usize,
    access: Access,
) -> Result<TensorArg, Fail> {
    if desc.is_null() {
        return Ok(TensorArg { ptr: 0, dtype: Dtype::F32, shape: vec![0; rank], strides: vec![0; rank], given: false });
    }
    tensor_arg(desc, name, rank, access)
}

/// A parameter the kernel never reads (TileGym's empty placeholder of any dtype): any descriptor or null, passed
/// as an empty f32 vector at the descriptor's pointer (null: 0), so the compiled entry is the same for every
/// argument.
///
/// # Safety
/// `desc` is null or points to a readable `CutileTensor`.
pub unsafe fn unused_arg(desc: *const CutileTensor) -> TensorArg {
    let ptr = if desc.is_null() { 0 } else { (*desc).ptr as u64 };
    TensorArg { ptr, dtype: Dtype::F32, shape: vec![0], strides: vec![1], given: true }
}

/// An array the launch's constants leave unread (its manifest `read_when` is false): the entry compiled for
/// them never touches it, so the descriptor is not read at all (any tensor, or null). The entry gets an empty
/// placeholder of its rank (null pointer, zero extents); `given` false keeps it out of the dtype checks and
/// the element types, and `placeholder_of` gives it the element type the entry takes.
pub fn unread_arg(rank: usize) -> TensorArg {
    TensorArg { ptr: 0, dtype: Dtype::F32, shape: vec![0; rank], strides: vec![0; rank], given: false }
}

/// A placeholder (`given` false) at the element type `dtype` the entry takes for it; a given array as it is.
pub fn placeholder_of(arg: TensorArg, dtype: Dtype) -> TensorArg {
    if arg.given {
        arg
    } else {
        TensorArg { dtype, ..arg }
    }
}

/// A placeholder (`given` false) at the rank `rank` of the entry selected (an array whose rank depends on a
/// constant); a given array as it is (`expect_rank` checked it).
pub fn placeholder_rank(arg: TensorArg, rank: usize) -> TensorArg {
    if arg.given {
        arg
    } else {
        TensorArg { shape: vec![0; rank], strides: vec![0; rank], ..arg }
    }
}

/// The element type `generic` (`E`, `E2`, ...) shared by `arrays`; it must be one of the dtypes the kernel
/// was verified for.
pub fn element_type(generic: &str, arrays: &[(&str, &TensorArg)], allowed: &[Dtype]) -> Result<Dtype, Fail> {
    // optional pointers passed as None say nothing; with none given the kernel never reads the generic's type
    let given: Vec<&(&str, &TensorArg)> = arrays.iter().filter(|(_, a)| a.given).collect();
    let Some(&&(first, arg)) = given.first() else {
        return Ok(allowed[0]);
    };
    for (name, other) in &given[1..] {
        if other.dtype != arg.dtype {
            return fail(
                CUTILE_ERR_DTYPE_MISMATCH,
                format!(
                    "`{name}` is {} but `{first}` is {}: they share the element type {generic}",
                    other.dtype.name(),
                    arg.dtype.name()
                ),
            );
        }
    }
    if !allowed.contains(&arg.dtype) {
        let names: Vec<&str> = allowed.iter().map(|d| d.name()).collect();
        return fail(
            CUTILE_ERR_DTYPE,
            format!("`{first}` is {}; this port takes {}", arg.dtype.name(), names.join(", ")),
        );
    }
    Ok(arg.dtype)
}

/// The rank of an array the kernel takes at one of `ranks`, the one its constants select (its entries
/// differ: the rank depends on a constant); the selected entry checks its own with `expect_rank`.
///
/// # Safety
/// `desc` is null or points to a readable `CutileTensor`.
pub unsafe fn given_rank(desc: *const CutileTensor, name: &str, ranks: &[usize]) -> Result<usize, Fail> {
    if desc.is_null() {
        return fail(CUTILE_ERR_NULL, format!("`{name}`: null descriptor"));
    }
    let n = (*desc).ndim;
    if n < 0 || !ranks.contains(&(n as usize)) {
        return fail(CUTILE_ERR_RANK, format!("`{name}`: rank {n} given, the kernel takes rank {ranks:?}"));
    }
    Ok(n as usize)
}

/// An array whose rank depends on a constant has the rank of the entry the constants select.
pub fn expect_rank(arg: &TensorArg, name: &str, rank: usize) -> Result<(), Fail> {
    if arg.given && arg.shape.len() != rank {
        return fail(
            CUTILE_ERR_RANK,
            format!("`{name}`: rank {} given, the kernel takes rank {rank} with these constants", arg.shape.len()),
        );
    }
    Ok(())
}

/// An array with a concrete element type.
pub fn expect_dtype(arg: &TensorArg, name: &str, dtype: Dtype) -> Result<(), Fail> {
    if arg.given && arg.dtype != dtype {
        return fail(CUTILE_ERR_DTYPE, format!("`{name}` is {}; the kernel takes {}", arg.dtype.name(), dtype.name()));
    }
    Ok(())
}

/// An array whose dtype depends on the entry (a constant's branch picks the dtype of its stored tiles): one of
/// the dtypes its entries take; the selected entry checks its own (`expect_dtype`).
pub fn expect_dtype_in(arg: &TensorArg, name: &str, dtypes: &[Dtype]) -> Result<(), Fail> {
    if arg.given && !dtypes.contains(&arg.dtype) {
        let names: Vec<&str> = dtypes.iter().map(|d| d.name()).collect();
        return fail(
            CUTILE_ERR_DTYPE,
            format!("`{name}` is {}; the kernel takes {}", arg.dtype.name(), names.join(" or ")),
        );
    }
    Ok(())
}

/// A compile-time constant: it becomes a const generic of type i32.
pub fn constant(value: i64, name: &str) -> Result<i64, Fail> {
    if value < i32::MIN as i64 || value > i32::MAX as i64 {
        return fail(CUTILE_ERR_CONST, format!("constant `{name}` = {value} does not fit i32"));
    }
    Ok(value)
}

/// A float constant (ct.Constant[float]), passed as a double: finite and within f32's range. The entries take
/// it as a const generic i32 holding its f32 bits (rounded to nearest, as cuTile Python's f32 constant) and
/// bitcast it back; this returns those bits.
pub fn float_constant(value: f64, name: &str) -> Result<i64, Fail> {
    if !value.is_finite() {
        return fail(CUTILE_ERR_CONST, format!("float constant `{name}` = {value} is not finite"));
    }
    let v = value as f32;
    if !v.is_finite() {
        return fail(CUTILE_ERR_CONST, format!("float constant `{name}` = {value} overflows f32"));
    }
    Ok(v.to_bits() as i32 as i64)
}

/// A boolean constant: 0 or 1 only. The entries compare it with 1 (`if FLAG == 1i32`) while the variant
/// predicates test it for non-zero, so any other value would select one variant and run another's code.
pub fn flag(value: i64, name: &str) -> Result<i64, Fail> {
    if value != 0 && value != 1 {
        return fail(CUTILE_ERR_CONST, format!("bool constant `{name}` = {value}; pass 0 or 1"));
    }
    Ok(value)
}

/// A tile dimension computed from the constants: cuTile tiles have positive power-of-two extents.
pub fn tile_dim(value: i64, what: &str) -> Result<i64, Fail> {
    if value < 1 || value > i32::MAX as i64 || (value & (value - 1)) != 0 {
        return fail(
            CUTILE_ERR_CONST,
            format!("tile dimension `{what}` = {value}; tile sizes must be positive powers of two"),
        );
    }
    Ok(value)
}

/// Python's floor division on constants.
pub fn floordiv(a: i64, b: i64) -> Result<i64, Fail> {
    if b == 0 {
        return fail(CUTILE_ERR_CONST, "a derived constant divides by zero".to_string());
    }
    let q = a / b;
    Ok(if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q })
}

/// Python's true division on float constants (variant predicates over ct.Constant[float] values).
pub fn truediv(a: f64, b: f64) -> Result<f64, Fail> {
    if b == 0.0 {
        return fail(CUTILE_ERR_CONST, "a constant expression divides by zero".to_string());
    }
    Ok(a / b)
}

/// Python's modulo on constants (the sign of the divisor).
pub fn floormod(a: i64, b: i64) -> Result<i64, Fail> {
    Ok(a - b * floordiv(a, b)?)
}

/// The launch grid: every dimension positive and within CUDA's limits.
pub fn grid(dims: [i64; 3]) -> Result<(u32, u32, u32), Fail> {
    let limits = [i32::MAX as i64, 65535, 65535];
    for (i, (&d, &limit)) in dims.iter().zip(limits.iter()).enumerate() {
        if d < 1 || d > limit {
            return fail(CUTILE_ERR_GRID, format!("grid dimension {i} is {d}, outside 1..={limit}"));
        }
    }
    Ok((dims[0] as u32, dims[1] as u32, dims[2] as u32))
}

/// The tile shape of a checked output, from the constants; every dimension must be a positive power of two.
pub fn tile_shape<const R: usize>(dims: [i64; R], name: &str) -> Result<[usize; R], Fail> {
    let mut out = [0usize; R];
    for (i, &d) in dims.iter().enumerate() {
        tile_dim(d, &format!("{name}[{i}]"))?;
        out[i] = d as usize;
    }
    Ok(out)
}

/// A checked output is split into disjoint tiles, one per block: the grid must be that split.
pub fn check_partition_grid(name: &str, arg: &TensorArg, tile: &[usize], grid: (u32, u32, u32)) -> Result<(), Fail> {
    let mut want = [1u64; 3];
    for (i, (&d, &t)) in arg.shape.iter().zip(tile.iter()).enumerate() {
        if d < 1 {
            return fail(
                CUTILE_ERR_SHAPE,
                format!("`{name}`: dimension {i} is {d}; an output split into tiles needs positive dimensions"),
            );
        }
        if i < 3 {
            want[i] = (d as u64).div_ceil(t as u64);
        }
    }
    let given = [grid.0 as u64, grid.1 as u64, grid.2 as u64];
    if arg.shape.len() > 3 || want != given {
        return fail(
            CUTILE_ERR_GRID_MISMATCH,
            format!(
                "grid {given:?} differs from the partition grid {want:?} of `{name}` (shape {:?}, tiles {tile:?})",
                arg.shape
            ),
        );
    }
    Ok(())
}

/// A Triton output whose stores are each program's own tile (passes/views.py): the view of the pointer's
/// span (`arg`, rank 1, stride 1) its stores address, as the tensor the launch splits into tiles. The view
/// must lie in the span and its elements must not overlap (strides ordered, each past the axes inside it),
/// so that the disjoint tiles of the split are disjoint memory.
pub fn triton_view(arg: &TensorArg, name: &str, extents: &[i64], strides: &[i64]) -> Result<TensorArg, Fail> {
    let mut last: i64 = 0;
    for (i, (&d, &s)) in extents.iter().zip(strides.iter()).enumerate() {
        if d < 0 || d > i32::MAX as i64 {
            return fail(CUTILE_ERR_SHAPE, format!("`{name}`: its view's extent {i} is {d}, outside 0..=i32::MAX"));
        }
        if s < 1 || s > i32::MAX as i64 {
            return fail(
                CUTILE_ERR_STRIDE,
                format!("`{name}`: its view's stride {i} is {s}; an output view needs positive strides"),
            );
        }
        if d > 0 {
            last = last.saturating_add((d - 1).saturating_mul(s));
        }
    }
    let mut axes: Vec<usize> = (0..extents.len()).filter(|&i| extents[i] > 1).collect();
    axes.sort_by_key(|&i| strides[i]);
    let mut inner: i64 = 0; // the farthest element of the axes inside
    for &i in &axes {
        if strides[i] <= inner {
            return fail(CUTILE_ERR_STRIDE, format!("`{name}`: its view (extents {extents:?}, strides {strides:?}) addresses an element twice (overlapping writes)"));
        }
        inner = inner.saturating_add((extents[i] - 1).saturating_mul(strides[i]));
    }
    let span = arg.shape.first().copied().unwrap_or(0) as i64;
    if extents.iter().all(|&d| d > 0) && last >= span {
        return fail(CUTILE_ERR_SHAPE, format!("`{name}`: its view (extents {extents:?}, strides {strides:?}) reaches element {last}, past the {span} elements of the argument"));
    }
    Ok(TensorArg {
        ptr: arg.ptr,
        dtype: arg.dtype,
        shape: extents.iter().map(|&v| v as i32).collect(),
        strides: strides.iter().map(|&v| v as i32).collect(),
        given: arg.given,
    })
}

thread_local! {
    static DRY_RUN: Cell<bool> = const { Cell::new(false) };
    static LAST_PLAN: RefCell<CString> = RefCell::new(CString::default());
}

/// Turns dry-run mode on (`on` non-zero) or off for the calling thread; returns the previous setting
/// (0 or 1). In dry-run mode a symbol runs every check and computes its launch exactly as it would
/// launch it, records it for [`cutile_last_plan`] and returns `CUTILE_OK` without touching the driver.
#[unsafe(no_mangle)]
pub extern "C" fn cutile_dry_run(on: i32) -> i32 {
    DRY_RUN.with(|d| d.replace(on != 0)) as i32
}

/// Launch hints: occupancy, CTAs per CGA (cuTile Python's `num_ctas`), worker warps; 0 keeps the entry's own
/// (the kernel's decorator hints, which `verify` compared).
pub type Hints = [i32; 3];
const NO_HINTS: Hints = [0; 3];

thread_local! {
    static NEXT_HINTS: Cell<Hints> = const { Cell::new(NO_HINTS) };
    static HINTS: Cell<Hints> = const { Cell::new(NO_HINTS) };
}

/// Sets the compiler hints the next symbol called on this thread compiles and launches its entry with, as
/// cuTile Python's `kernel.replace_hints(occupancy=.., num_ctas=.., num_worker_warps=..)` does: each
/// value replaces the entry's own (its kernel's decorator hints) for the compile target, and 0 keeps it.
/// They hold for that one call (a failed one too), then the entry's own hints apply again. An entry
/// is compiled once per hints, as per specialization. Returns `CUTILE_ERR_CONST` (nothing set) for a value
/// cuTile Python refuses: occupancy outside 1..=32, `num_ctas` not a power of two up to 16,
/// `num_worker_warps` not a power of two up to 32.
#[unsafe(no_mangle)]
pub extern "C" fn cutile_hint_next(occupancy: i32, num_ctas: i32, num_worker_warps: i32) -> i32 {
    let pow2 = |v: i32, max: i32| v == 0 || (v > 0 && v <= max && v & (v - 1) == 0);
    let why = if !(0..=32).contains(&occupancy) {
        format!("occupancy {occupancy} is outside 1..=32")
    } else if !pow2(num_ctas, 16) {
        format!("num_ctas {num_ctas} is not a power of two up to 16")
    } else if !pow2(num_worker_warps, 32) {
        format!("num_worker_warps {num_worker_warps} is not a power of two up to 32")
    } else {
        NEXT_HINTS.with(|n| n.set([occupancy, num_ctas, num_worker_warps]));
        return CUTILE_OK;
    };
    NEXT_HINTS.with(|n| n.set(NO_HINTS));
    set_last_error(&why);
    CUTILE_ERR_CONST
}

/// The launch hints of the symbol running on this thread (see [`cutile_hint_next`]).
pub fn launch_hints() -> Hints {
    HINTS.with(|h| h.get())
}

/// The compile options that give an entry the launch hints (none: its own).
fn compile_options(h: Hints) -> cutile::tile_kernel::CompileOptions {
    let mut o = cutile::tile_kernel::CompileOptions::default();
    if h[0] > 0 {
        o = o.occupancy(h[0]);
    }
    if h[1] > 0 {
        o = o.num_cta_in_cga(h[1]);
    }
    if h[2] > 0 {
        o = o.num_worker_warps_per_cta(h[2]);
    }
    o
}

/// The launch that the last symbol called on this thread planned in dry-run mode, as JSON; "" when
/// that call failed a check or did not run dry. Valid until the next call on the same thread; copy it.
#[unsafe(no_mangle)]
pub extern "C" fn cutile_last_plan() -> *const c_char {
    LAST_PLAN.with(|p| p.borrow().as_ptr())
}

/// What a launch function is about to launch. `abi::launch` launches these very values, so a dry run
/// reports what a launch would use.
pub struct Launch<'a> {
    /// The C symbol called.
    pub symbol: &'static str,
    /// The entry launched.
    pub entry: &'a Entry,
    /// The element type the arrays typed `E` are borrowed as (`T::DTYPE`), if the kernel has one.
    pub element: Option<&'static str>,
    /// The entry's generic arguments, in its order.
    pub generics: Vec<String>,
    /// The launch grid.
    pub grid: (u32, u32, u32),
    /// The tile shape each checked (`&mut Tensor`) output is partitioned into.
    pub partitions: &'a [(&'static str, &'a [usize])],
    /// The entry's parameters, in its order.
    pub params: &'a [Param<'a>],
    /// The scalars a Triton output's view is made from (`triton_view`), and the strides an entry is specialized
    /// on being 1 (`stride_ak_IS_1`): a prepared launch repeats only with the values it was prepared with
    /// (another value is the symbol's, which makes and checks the view, or selects the entry, again).
    pub pinned: &'a [&'static str],
    pub device: i32,
    /// The caller's stream handle (0: the legacy default stream).
    pub stream: usize,
}

fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The launch as JSON (see [`cutile_last_plan`]) in pieces: the text before each slot's value, then the
/// text before the stream handle, then the end; [`fill_plan`] puts the values in. A prepared launch keeps
/// them, so that a dry repeat reports what the symbol would.
fn plan_pieces(l: &Launch) -> Vec<String> {
    let mut s = String::from("{\"symbol\":");
    json_str(&mut s, l.symbol);
    s.push_str(",\"entry\":");
    json_str(&mut s, l.entry.function);
    s.push_str(",\"kernel_fn\":");
    let op = l.entry.ffi.strip_suffix("::ffi").unwrap_or(l.entry.ffi);
    json_str(&mut s, &format!("{op}::kernel::{}::{}", l.entry.module, l.entry.function));
    s.push_str(",\"element_type\":");
    match l.element {
        Some(e) => json_str(&mut s, e),
        None => s.push_str("null"),
    }
    s.push_str(",\"generics\":[");
    for (i, g) in l.generics.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        json_str(&mut s, g);
    }
    let h = launch_hints();
    s.push_str(&format!(
        "],\"grid\":[{},{},{}],\"hints\":[{},{},{}],\"partitions\":{{",
        l.grid.0, l.grid.1, l.grid.2, h[0], h[1], h[2]
    ));
    for (i, (name, tile)) in l.partitions.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        json_str(&mut s, name);
        let dims: Vec<String> = tile.iter().map(|d| d.to_string()).collect();
        s.push_str(&format!(":[{}]", dims.join(",")));
    }
    s.push_str("},\"params\":[");
    let mut pieces = Vec::new();
    for (i, p) in l.params.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push('[');
        json_str(&mut s, param_name(p));
        s.push_str(",[");
        let mut first = true;
        each_slot(p, &mut |_, ty| {
            if !first {
                s.push(',');
            }
            first = false;
            s.push('[');
            json_str(&mut s, ty);
            s.push(',');
            pieces.push(std::mem::take(&mut s));
            s.push(']');
        });
        s.push_str("]]");
    }
    s.push_str(&format!("],\"device\":{},\"stream\":", l.device));
    pieces.push(s);
    pieces.push("}".to_string());
    pieces
}

/// The plan's JSON from its pieces, the slot values and the stream handle.
fn fill_plan(pieces: &[String], slots: &[u64], stream: usize) -> String {
    let mut s = String::new();
    let values = slots.iter().map(|v| v.to_string()).chain(std::iter::once(stream.to_string()));
    for (piece, value) in pieces.iter().zip(values) {
        s.push_str(piece);
        s.push_str(&value);
    }
    s.push_str(pieces.last().map_or("", |p| p.as_str()));
    s
}

fn slots_of(params: &[Param]) -> Vec<u64> {
    let mut slots = Vec::with_capacity(8 * params.len());
    params.iter().for_each(|p| each_slot(p, &mut |v, _| slots.push(v)));
    slots
}

/// Called by every launch function after all checks, with the values it is about to launch, before
/// it takes the device. In dry-run mode it records them for [`cutile_last_plan`] and returns true:
/// the launch function then returns `Ok(())` without touching the driver. Otherwise returns false.
pub fn dry_run(launch: &Launch) -> bool {
    if !DRY_RUN.with(|d| d.get()) {
        return false;
    }
    let (pieces, slots) = (plan_pieces(launch), slots_of(launch.params));
    let text = CString::new(fill_plan(&pieces, &slots, launch.stream).replace('\0', " ")).unwrap_or_default();
    LAST_PLAN.with(|p| *p.borrow_mut() = text);
    if PREPARE.with(|p| p.replace(false)) {
        keep_prepared(prepared(Run::Dry(pieces), launch, slots));
    }
    true
}

/// Turns on cuTile Rust's on-disk cubin cache once per process, as cuTile Python caches on disk by
/// default, so a new process does not JIT-compile again; `CUTILE_RS_JIT_CACHE=0` (or `off`) leaves it off.
fn enable_jit_cache() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let setting = std::env::var("CUTILE_RS_JIT_CACHE").unwrap_or_default().to_lowercase();
        if !matches!(setting.as_str(), "0" | "off" | "none") {
            let _ = cutile::jit_cache::enable_default(); // no per-user cache directory: compile in memory only
        }
    });
}

/// A device ordinal: not negative (whether the device exists only the driver can say, in [`context`]).
pub fn device_ordinal(device: i32) -> Result<i32, Fail> {
    if device < 0 {
        return fail(CUTILE_ERR_DEVICE, format!("device ordinal {device} is negative"));
    }
    Ok(device)
}

/// The primary context of `device`, retained once per process and made current on this thread.
pub fn context(device: i32) -> Result<Arc<Context>, Fail> {
    static CONTEXTS: OnceLock<Mutex<HashMap<i32, Arc<Context>>>> = OnceLock::new();
    enable_jit_cache();
    device_ordinal(device)?;
    let map = CONTEXTS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(ctx) = map.get(&device) {
        ctx.bind_to_thread()
            .map_err(|e| Fail { code: CUTILE_ERR_DEVICE, message: format!("device {device}: {e:?}") })?;
        return Ok(ctx.clone());
    }
    let ctx = Context::new(device as usize)
        .map_err(|e| Fail { code: CUTILE_ERR_DEVICE, message: format!("device {device}: {e:?}") })?;
    map.insert(device, ctx.clone());
    Ok(ctx)
}

/// The caller's stream (null: the legacy default stream), borrowed, never destroyed here.
///
/// The wrapper is made once per (context, handle) and never dropped: dropping a cuTile Rust stream queries
/// it (`cuStreamQuery`, and when it is busy an event and a completion callback), which costs host time on
/// every launch and breaks a CUDA graph capture of the stream (a query is illegal while it captures).
///
/// # Safety
/// `stream` is null or a live CUDA stream of `ctx`.
pub unsafe fn stream(stream: *mut c_void, ctx: &Arc<Context>) -> Arc<Stream> {
    static STREAMS: OnceLock<Mutex<HashMap<(usize, usize), Arc<Stream>>>> = OnceLock::new();
    let key = (Arc::as_ptr(ctx) as usize, stream as usize); // contexts live for the process (see `context`)
    let map = STREAMS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = map.get(&key) {
        return s.clone();
    }
    if map.len() >= 4096 {
        // many streams (created and destroyed by the caller): forget the wrappers, never drop them
        for (_, old) in map.drain() {
            std::mem::forget(old);
        }
    }
    let s = Stream::borrow_raw(stream, ctx);
    map.insert(key, s.clone());
    s
}

// ---- Direct launch -------------------------------------------------------------------------------
//
// A symbol does not go through the launcher that cuTile Rust's `#[cutile::module]` generates: that
// launcher builds tensors, leases and a submission per call (most of a launch's host time), and it
// specializes on every shape's largest power-of-two divisor (`div_by<8>` for 1000), a hint cuTile
// Python never gives. Instead each launch function lists its entry's parameters (`Param`, in the
// entry's order, pushed as the macro's launcher pushes them), compiles once per specialization with
// cuTile Python's hints (`python_spec`), checks the compiled entry's signature against that list, and
// calls `cuLaunchKernel` with the packed values.

use cutile::cuda_async::device_context::{ValidParamType, Validator};
use cutile::cuda_async::device_operation::ExecutionContext;
use cutile::cuda_core::Function;
use cutile::cutile_compiler::specialization::{compute_spec, DivHint, SpecializationBits};

/// One parameter of an entry, in the entry's order, named as the entry names it.
pub enum Param<'a> {
    /// `&Tensor`: pointer, shape, strides.
    Tensor(&'static str, &'a TensorArg),
    /// `&mut Tensor` split into `tile`: pointer, shape, strides, tile, strides.
    Partition(&'static str, &'a TensorArg, &'a [usize]),
    /// A raw pointer (`*mut T`, `*mut u8`): the address.
    Pointer(&'static str, &'a TensorArg),
    /// An array's dimension or stride passed as an i32 (a pointer-accessed array): hinted 16 where 16
    /// divides it, else not at all (cuTile Python's hint for a shape, Triton's for an integer argument;
    /// fewer than cuTile Python gives a stride of such an array, never more).
    Extent(&'static str, i32),
    I32(&'static str, i32),
    I64(&'static str, i64),
    F32(&'static str, f32),
    F64(&'static str, f64),
    Bool(&'static str, bool),
}

/// cuTile Python's divisibility hint for an array's dimension: 16 where it divides, else none
/// (cuTile Rust's launcher would give the largest power of two up to 16).
fn python_shape_hint(v: i32) -> i32 {
    if v % 16 == 0 {
        16
    } else {
        1
    }
}

/// cuTile Python's hint for a stride (in elements): the elements in 16 bytes, where that divides it.
fn python_stride_hint(v: i32, elem_bytes: usize) -> i32 {
    let per16 = if 16 % elem_bytes == 0 { (16 / elem_bytes) as i32 } else { 1 };
    if v % per16 == 0 {
        per16
    } else {
        1
    }
}

fn hint(divisor: i32) -> DivHint {
    DivHint { divisor, max: 16 }
}

/// The specialization of an array as cuTile Python's JIT makes it: its shape and stride hints replace
/// the ones cuTile Rust derives; pointer alignment, unit strides and disjointness are cuTile Rust's.
pub fn python_spec(arg: &TensorArg) -> SpecializationBits {
    let mut spec = compute_spec(arg.ptr, &arg.shape, &arg.strides, arg.dtype.size() as i32);
    spec.shape_div = arg.shape.iter().map(|&d| hint(python_shape_hint(d))).collect();
    spec.stride_div = arg.strides.iter().map(|&s| hint(python_stride_hint(s, arg.dtype.size()))).collect();
    spec.elements_disjoint = elements_disjoint(&arg.shape, &arg.strides); // as `hint_key` keys it
    spec
}

/// A compiled entry, kept per specialization for the life of the process (it holds its module), with
/// what it was compiled for.
pub struct Compiled {
    device: i32,
    generics: Vec<String>,
    hints: Vec<i32>,
    function: Arc<Function>,
    validator: Arc<Validator>,
}

/// The entries one launch function compiled, by a hash of their specialization: device, generics and
/// the hints of every parameter (what `compile_from_context` keys on, in a compact form).
pub struct Site {
    compiled: OnceLock<Mutex<HashMap<u64, Vec<Arc<Compiled>>>>>,
}

impl Site {
    pub const fn new() -> Self {
        Site { compiled: OnceLock::new() }
    }
}

/// Whether no two elements of an array share an address, as cuTile Rust's `compute_spec` decides it
/// (sorted by stride, each stride at least the extent of the one before), without allocating.
fn elements_disjoint(shape: &[i32], strides: &[i32]) -> bool {
    let mut sorted = [(0i32, 0i32); CUTILE_MAX_RANK];
    let n = shape.len().min(CUTILE_MAX_RANK);
    for i in 0..n {
        sorted[i] = (strides[i], shape[i]);
    }
    let sorted = &mut sorted[..n];
    sorted.sort_unstable();
    if sorted.first().is_some_and(|(s, _)| *s <= 0) {
        return false;
    }
    sorted.windows(2).all(|w| !(w[1].0 <= 0 || w[1].0 < w[0].0.wrapping_mul(w[0].1)))
}

/// What an entry is compiled for: the hints of every parameter, in order, as integers (a tensor: its
/// pointer, then per dimension shape, stride and unit-stride hints, then disjointness; an integer
/// scalar or pointer: its divisor; others: nothing).
fn hint_key(params: &[Param]) -> Vec<i32> {
    let mut key = Vec::with_capacity(4 * params.len());
    for p in params {
        match p {
            Param::Tensor(_, a) | Param::Partition(_, a, _) => {
                key.push(DivHint::from_ptr(a.ptr).divisor);
                for (&d, &s) in a.shape.iter().zip(a.strides.iter()) {
                    key.push(python_shape_hint(d));
                    key.push(python_stride_hint(s, a.dtype.size()));
                    key.push((s == 1) as i32);
                }
                key.push(elements_disjoint(&a.shape, &a.strides) as i32);
            }
            Param::Pointer(_, a) => key.push(DivHint::from_ptr(a.ptr).divisor),
            Param::Extent(_, v) => key.push(python_shape_hint(*v)),
            Param::I32(_, v) => key.push(DivHint::from_value(*v).divisor),
            Param::I64(_, v) => key.push(DivHint::from_value(*v as i32).divisor),
            Param::F32(..) | Param::F64(..) | Param::Bool(..) => {}
        }
    }
    key
}

/// The entry's names and the values it is compiled for, as `compile_from_context` takes them.
fn specialization(
    params: &[Param],
) -> (Vec<(String, Vec<i32>)>, Vec<(String, SpecializationBits)>, Vec<(String, DivHint)>) {
    let (mut strides, mut specs, mut hints) = (Vec::new(), Vec::new(), Vec::new());
    for p in params {
        match p {
            Param::Tensor(n, a) | Param::Partition(n, a, _) => {
                let spec = python_spec(a);
                strides.push((n.to_string(), spec.stride_one.iter().map(|&one| if one { 1 } else { -1 }).collect()));
                specs.push((n.to_string(), spec));
            }
            Param::Pointer(n, a) => hints.push((n.to_string(), DivHint::from_ptr(a.ptr))),
            Param::Extent(n, v) => hints.push((n.to_string(), hint(python_shape_hint(*v)))),
            Param::I32(n, v) => hints.push((n.to_string(), DivHint::from_value(*v))),
            Param::I64(n, v) => hints.push((n.to_string(), DivHint::from_value(*v as i32))),
            Param::F32(..) | Param::F64(..) | Param::Bool(..) => {}
        }
    }
    (strides, specs, hints)
}

fn param_name(p: &Param) -> &'static str {
    match p {
        Param::Tensor(n, _) | Param::Partition(n, _, _) | Param::Pointer(n, _) => n,
        Param::Extent(n, _) | Param::I32(n, _) | Param::I64(n, _) => n,
        Param::F32(n, _) | Param::F64(n, _) | Param::Bool(n, _) => n,
    }
}

/// The compiled entry takes the parameters `params` describes, one by one: same kinds, element types
/// and tile shapes. A difference would make `cuLaunchKernel` read the wrong values, so it fails the launch.
fn check_signature(entry: &str, params: &[Param], validator: &Validator) -> Result<(), Fail> {
    let bad = |what: String| {
        fail(CUTILE_ERR_LAUNCH, format!("`{entry}`: the compiled entry's parameters differ from the launch's ({what}); this is a bug of the generated crate"))
    };
    if validator.params.len() != params.len() {
        return bad(format!("{} parameters compiled, {} passed", validator.params.len(), params.len()));
    }
    for (p, v) in params.iter().zip(validator.params.iter()) {
        let name = param_name(p);
        let ok = match (p, v) {
            (Param::Tensor(_, a), ValidParamType::Tensor(t)) => {
                t.element_type == a.dtype.name()
                    && t.shape.len() == a.shape.len()
                    && t.shape.iter().zip(a.shape.iter()).all(|(&w, &g)| w == -1 || w == g)
            }
            (Param::Partition(_, a, tile), ValidParamType::Tensor(t)) => {
                t.element_type == a.dtype.name()
                    && t.shape.len() == tile.len()
                    && t.shape.iter().zip(tile.iter()).all(|(&w, &g)| w as i64 == g as i64)
            }
            (Param::Pointer(..), ValidParamType::Pointer(_)) => true,
            (Param::Extent(..) | Param::I32(..), ValidParamType::Scalar(s)) => s.element_type == "i32",
            (Param::I64(..), ValidParamType::Scalar(s)) => s.element_type == "i64",
            (Param::F32(..), ValidParamType::Scalar(s)) => s.element_type == "f32",
            (Param::F64(..), ValidParamType::Scalar(s)) => s.element_type == "f64",
            (Param::Bool(..), ValidParamType::Scalar(s)) => s.element_type == "bool",
            _ => false,
        };
        if !ok {
            return bad(format!("`{name}` compiled as {v:?}"));
        }
    }
    Ok(())
}

/// Where the entry is: its module's AST and source hash, and its names.
pub struct Entry {
    pub module_ast: fn() -> cutile::cutile_compiler::ast::Module,
    pub module: &'static str,
    pub function: &'static str,
    pub source_hash: &'static str,
    /// `module_path!()` of the launch function (`<crate>::<op>::ffi`)
    pub ffi: &'static str,
}

fn compiled(site: &Site, launch: &Launch, stream: &Arc<Stream>) -> Result<Arc<Compiled>, Fail> {
    use std::hash::{Hash, Hasher};
    let (entry, params) = (launch.entry, launch.params);
    let launch_hints = launch_hints();
    let mut hints = hint_key(params);
    hints.extend_from_slice(&launch_hints); // an entry compiled with other launch hints is another one
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (launch.device, &launch.generics, &hints).hash(&mut h);
    let hash = h.finish();
    let map = site.compiled.get_or_init(|| Mutex::new(HashMap::new()));
    let found = |map: &HashMap<u64, Vec<Arc<Compiled>>>| {
        map.get(&hash)?
            .iter()
            .find(|c| c.device == launch.device && c.generics == launch.generics && c.hints == hints)
            .cloned()
    };
    if let Some(c) = found(&map.lock().unwrap_or_else(|e| e.into_inner())) {
        return Ok(c);
    }
    let (strides, specs, scalar_hints) = specialization(params);
    let exec = ExecutionContext::new(stream.clone());
    let entry_name = format!("{}_entry", entry.function);
    let (function, validator) = cutile::tile_kernel::compile_from_context(
        &exec,
        entry.module_ast,
        entry.module,
        entry.function,
        &entry_name,
        launch.generics.clone(),
        strides,
        specs,
        scalar_hints,
        None,
        compile_options(launch_hints),
        entry.source_hash,
    )
    .map_err(|e| Fail { code: CUTILE_ERR_LAUNCH, message: format!("{e}") })?;
    check_signature(entry.function, params, &validator)?;
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = found(&map) {
        return Ok(c); // compiled by another thread meanwhile
    }
    let c = Arc::new(Compiled { device: launch.device, generics: launch.generics.clone(), hints, function, validator });
    map.entry(hash).or_default().push(c.clone());
    Ok(c)
}

/// The launch checks cuTile Rust's compiler hoisted out of the entry, run as its launcher runs them.
fn launch_checks(c: &Compiled, params: &[Param], grid: (u32, u32, u32)) -> Result<(), Fail> {
    if c.validator.launch_checks.is_empty() {
        return Ok(());
    }
    let mut shapes = vec![Vec::new(); params.len()];
    let mut views = vec![Vec::new(); params.len()];
    for (i, p) in params.iter().enumerate() {
        match p {
            Param::Tensor(_, a) => {
                shapes[i] = a.shape.clone();
                views[i] = a.shape.clone();
            }
            Param::Partition(_, a, tile) => {
                shapes[i] = a.shape.clone();
                views[i] = tile.iter().map(|&t| t as i32).collect();
            }
            _ => {}
        }
    }
    cutile::tile_kernel::validate_launch_checks(&c.validator.launch_checks, &shapes, &views, grid)
        .map_err(|e| Fail { code: CUTILE_ERR_LAUNCH, message: format!("{e}") })
}

/// Calls `f` with each value the entry takes for `p`, in order, as the macro's launcher pushes them, and
/// its type: an 8-byte slot whose first bytes (little endian) hold the value, which the driver reads.
fn each_slot(p: &Param, f: &mut impl FnMut(u64, &'static str)) {
    let i32s = |v: &[i32], f: &mut dyn FnMut(u64, &'static str)| v.iter().for_each(|&x| f(x as u32 as u64, "i32"));
    match p {
        Param::Tensor(_, a) => {
            f(a.ptr, "ptr");
            i32s(&a.shape, f);
            i32s(&a.strides, f);
        }
        Param::Partition(_, a, tile) => {
            f(a.ptr, "ptr");
            i32s(&a.shape, f);
            i32s(&a.strides, f);
            tile.iter().for_each(|&t| f(t as i32 as u32 as u64, "i32"));
            i32s(&a.strides, f);
        }
        Param::Pointer(_, a) => f(a.ptr, "ptr"),
        Param::Extent(_, v) | Param::I32(_, v) => f(*v as u32 as u64, "i32"),
        Param::I64(_, v) => f(*v as u64, "i64"),
        Param::F32(_, v) => f(v.to_bits() as u64, "f32"),
        Param::F64(_, v) => f(v.to_bits(), "f64"),
        Param::Bool(_, v) => f(*v as u64, "bool"),
    }
}

/// Compiles (once per specialization) and enqueues the entry on `stream`, without waiting: as with any
/// CUDA launch, the caller keeps the memory alive and ordered on that stream.
///
/// # Safety
/// Every array in `params` stays valid until the stream has run the kernel.
pub unsafe fn launch(site: &Site, launch: &Launch, stream: &Arc<Stream>) -> Result<(), Fail> {
    let (c, params) = (compiled(site, launch, stream)?, launch.params);
    launch_checks(&c, params, launch.grid)?;
    let mut slots = slots_of(params);
    let mut ptrs: Vec<*mut c_void> = slots.iter_mut().map(|s| s as *mut u64 as *mut c_void).collect();
    cutile::cuda_core::launch_kernel_on_stream(&c.function, launch.grid, (1, 1, 1), 0, stream, &mut ptrs)
        .map_err(|e| Fail { code: CUTILE_ERR_LAUNCH, message: format!("cuLaunchKernel: {e:?}") })?;
    if PREPARE.with(|p| p.replace(false)) {
        keep_prepared(prepared(Run::Launch(c, stream.context().clone()), launch, slots));
    }
    Ok(())
}

// ---- Prepared launches -------------------------------------------------------------------------
//
// A caller that launches one layout again and again (the Python package's fast path) asks the symbol to
// keep what its first launch checked and computed (`cutile_prepare_next`, then `cutile_take_prepared`):
// the compiled entry, its context, the grid and the launch's slots. A repeat launch of that layout then
// passes only the values that change from call to call, one word per array (its data pointer) and per
// scalar, in the kernel's parameter order (`cutile_fire`): the layout itself (shapes, strides, dtypes,
// device, constants, grid) is the caller's to check, once per call, against the one prepared. A value
// that would compile another specialization (a pointer or an integer with another divisibility hint), a
// null or misaligned pointer, or a dry-run setting other than the one it was prepared in makes
// `cutile_fire` return `CUTILE_FIRE_MISS` without launching: the caller then calls the symbol, whose checks
// and messages apply. (Prepared in dry-run mode, a repeat in dry-run mode records the symbol's plan.)

/// `cutile_fire`'s answer when it did not launch: call the symbol itself.
pub const CUTILE_FIRE_MISS: i32 = -1;

thread_local! {
    static PREPARE: Cell<bool> = const { Cell::new(false) };
    static PREPARED: Cell<*mut Prepared> = const { Cell::new(std::ptr::null_mut()) };
}

/// What a value word is and what it must keep for the prepared specialization to apply.
#[derive(Clone, Copy, Debug)]
enum Value {
    /// An array's data pointer: aligned to `size`, with this divisibility hint; 0 for an optional array
    /// passed as None (`given` false).
    Pointer {
        size: u64,
        hint: i32,
        given: bool,
    },
    I32 {
        hint: i32,
    },
    I64 {
        hint: i32,
    },
    /// A scalar a Triton output's view reads, or a stride an entry is specialized on being 1 (`Launch::pinned`):
    /// this slot value only.
    Exact {
        slot: u64,
        wide: bool,
    },
    F32,
    F64,
    Bool,
}

/// How a prepared launch runs: on the device, or (prepared in dry-run mode) as a plan only.
enum Run {
    /// The compiled entry and its device's context.
    Launch(Arc<Compiled>, Arc<Context>),
    /// The plan's pieces (`plan_pieces`): a repeat in dry-run mode records its plan as the symbol would.
    Dry(Vec<String>),
}

/// A checked launch kept for repeats (see above).
pub struct Prepared {
    run: Run,
    grid: (u32, u32, u32),
    /// The launch's slots, each value's slot overwritten per call.
    slots: Vec<u64>,
    /// Per value word, in order: its slot and what it is.
    values: Vec<(usize, Value)>,
}

fn keep_prepared(p: Prepared) {
    let old = PREPARED.with(|k| k.replace(Box::into_raw(Box::new(p))));
    if !old.is_null() {
        drop(unsafe { Box::from_raw(old) });
    }
}

fn prepared(run: Run, launch: &Launch, slots: Vec<u64>) -> Prepared {
    let mut values = Vec::new();
    let mut at = 0;
    for p in launch.params {
        let value = match p {
            Param::Tensor(_, a) | Param::Partition(_, a, _) | Param::Pointer(_, a) => Some(Value::Pointer {
                size: a.dtype.size() as u64,
                hint: DivHint::from_ptr(a.ptr).divisor,
                given: a.given,
            }),
            Param::Extent(..) => None, // an array's dimension or stride: part of the layout
            Param::I32(n, v) if launch.pinned.contains(n) => Some(Value::Exact { slot: *v as u32 as u64, wide: false }),
            Param::I64(n, v) if launch.pinned.contains(n) => Some(Value::Exact { slot: *v as u64, wide: true }),
            Param::I32(_, v) => Some(Value::I32 { hint: DivHint::from_value(*v).divisor }),
            Param::I64(_, v) => Some(Value::I64 { hint: DivHint::from_value(*v as i32).divisor }),
            Param::F32(..) => Some(Value::F32),
            Param::F64(..) => Some(Value::F64),
            Param::Bool(..) => Some(Value::Bool),
        };
        if let Some(v) = value {
            values.push((at, v)); // a value's slot is its parameter's first
        }
        each_slot(p, &mut |_, _| at += 1);
    }
    Prepared { run, grid: launch.grid, slots, values }
}

/// The slot a value word fills, or None where it would need another specialization or the symbol's checks.
fn slot_of(value: Value, word: u64) -> Option<u64> {
    match value {
        Value::Pointer { given: false, .. } => (word == 0).then_some(0),
        Value::Pointer { size, hint, .. } => {
            (word != 0 && word % size == 0 && DivHint::from_ptr(word).divisor == hint).then_some(word)
        }
        Value::I32 { hint } | Value::I64 { hint } => {
            let w = if matches!(value, Value::I32 { .. }) { word as u32 as u64 } else { word };
            (DivHint::from_value(w as u32 as i32).divisor == hint).then_some(w)
        }
        Value::Exact { slot, wide } => {
            let w = if wide { word } else { word as u32 as u64 };
            (w == slot).then_some(w)
        }
        Value::F32 => Some(word as u32 as u64),
        Value::F64 => Some(word),
        Value::Bool => Some((word != 0) as u64),
    }
}

/// Asks the next launch of a symbol on this thread to keep a prepared launch (`on` non-zero), or not;
/// a prepared launch not taken before is released.
#[unsafe(no_mangle)]
pub extern "C" fn cutile_prepare_next(on: i32) {
    PREPARE.with(|p| p.set(on != 0));
    let old = PREPARED.with(|p| p.replace(std::ptr::null_mut()));
    if !old.is_null() {
        drop(unsafe { Box::from_raw(old) });
    }
}

/// The prepared launch the last launch on this thread kept (null: none; see `cutile_prepare_next`), now
/// the caller's, to be released with `cutile_release_prepared`. Also ends the request.
#[unsafe(no_mangle)]
pub extern "C" fn cutile_take_prepared() -> *mut Prepared {
    PREPARE.with(|p| p.set(false));
    PREPARED.with(|p| p.replace(std::ptr::null_mut()))
}

/// Releases a prepared launch (null: nothing).
///
/// # Safety
/// `p` came from `cutile_take_prepared` and is released once, and no `cutile_fire` with it runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cutile_release_prepared(p: *mut Prepared) {
    if !p.is_null() {
        drop(unsafe { Box::from_raw(p) });
    }
}

/// Whether `values` (`n` words) are the values of the launch `p` was prepared from, word for word: the
/// caller's check that it orders and encodes value words as the symbol does (1 yes, 0 no).
///
/// # Safety
/// `p` is a live prepared launch; `values` points to `n` words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cutile_prepared_matches(p: *const Prepared, values: *const u64, n: usize) -> i32 {
    if p.is_null() || values.is_null() {
        return 0;
    }
    let (p, values) = unsafe { (&*p, std::slice::from_raw_parts(values, n)) };
    let same =
        p.values.len() == n && p.values.iter().zip(values).all(|(&(slot, v), &w)| slot_of(v, w) == Some(p.slots[slot]));
    same as i32
}

/// Launches the prepared launch `p` again with new values (one word per array and scalar, in the kernel's
/// order, as `cutile_prepared_matches` accepts them) on `stream`: `CUTILE_OK`, `CUTILE_ERR_DEVICE` or
/// `CUTILE_ERR_LAUNCH` (with a message for `cutile_last_error`), or `CUTILE_FIRE_MISS` (nothing launched).
///
/// # Safety
/// `p` is a live prepared launch, `values` points to its number of values, `stream` is null or a live
/// stream of its device's primary context, and the arrays stay valid until the stream has run the kernel.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cutile_fire(p: *const Prepared, values: *const u64, stream: *mut c_void) -> i32 {
    if p.is_null() || values.is_null() {
        return CUTILE_FIRE_MISS;
    }
    let p = unsafe { &*p };
    let dry = DRY_RUN.with(|d| d.get());
    if dry != matches!(p.run, Run::Dry(_)) {
        return CUTILE_FIRE_MISS; // dry-run mode switched since it was prepared: the symbol's path
    }
    let values = unsafe { std::slice::from_raw_parts(values, p.values.len()) };
    const ON_STACK: usize = 64; // slots of most entries: no allocation per launch
    let n = p.slots.len();
    let (mut small, mut large) = ([0u64; ON_STACK], Vec::new());
    let slots: &mut [u64] = if n <= ON_STACK {
        small[..n].copy_from_slice(&p.slots);
        &mut small[..n]
    } else {
        large.extend_from_slice(&p.slots);
        &mut large
    };
    for (&(slot, v), &w) in p.values.iter().zip(values) {
        match (slot_of(v, w), slots.get_mut(slot)) {
            (Some(s), Some(to)) => *to = s,
            _ => return CUTILE_FIRE_MISS,
        }
    }
    let (mut small_ptrs, mut large_ptrs) = ([std::ptr::null_mut::<c_void>(); ON_STACK], Vec::new());
    let ptrs: &mut [*mut c_void] = if n <= ON_STACK {
        small_ptrs.iter_mut().zip(slots.iter_mut()).for_each(|(q, s)| *q = s as *mut u64 as *mut c_void);
        &mut small_ptrs[..n]
    } else {
        large_ptrs.extend(slots.iter_mut().map(|s| s as *mut u64 as *mut c_void));
        &mut large_ptrs
    };
    let (compiled, ctx) = match &p.run {
        Run::Launch(compiled, ctx) => (compiled, ctx),
        Run::Dry(pieces) => {
            let text = CString::new(fill_plan(pieces, slots, stream as usize)).unwrap_or_default();
            LAST_PLAN.with(|p| *p.borrow_mut() = text);
            return CUTILE_OK;
        }
    };
    if let Err(e) = ctx.bind_to_thread() {
        set_last_error(&format!("device {}: {e:?}", compiled.device));
        return CUTILE_ERR_DEVICE;
    }
    let f = unsafe { compiled.function.cu_function() };
    match unsafe { cutile::cuda_core::launch_kernel(f, p.grid, (1, 1, 1), 0, stream as _, ptrs) } {
        Ok(()) => CUTILE_OK,
        Err(e) => {
            set_last_error(&format!("cuLaunchKernel: {e:?}"));
            CUTILE_ERR_LAUNCH
        }
    }
}
