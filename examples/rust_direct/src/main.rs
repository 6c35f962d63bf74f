//! `vector_add` from the corpus, ported by cutile-transpile, launched through cuTile Rust directly.
//!
//! Build and run it (a GPU is needed to run, not to build):
//!     eval "$(cutile-transpile env)"   # CUDA_TOOLKIT_PATH: the CUDA headers cuTile Rust builds against
//!     cargo run --release
use cutile::prelude::*;
use corpus::vector_add::kernel::vector_add_kernels as ports;

fn main() -> Result<(), Error> {
    const TILE: usize = 1024;
    let n = 1 << 20;
    let a = api::ones::<f32>(&[n]);
    let b = api::ones::<f32>(&[n]);
    // the output is split into disjoint tiles: the launch grid is the tile grid (n / TILE blocks)
    let c = api::zeros::<f32>(&[n]).partition([TILE]);
    // the entry's generics, in the manifest's order: the element type E, then the constant TILE
    let (_a, _b, c) = ports::vector_add(a, b, c)
        .generics(vec!["f32".to_string(), TILE.to_string()])
        .sync()?;
    let sum = c.unpartition().to_host_vec().sync()?;
    assert!(sum.iter().all(|&v| v == 2.0));
    println!("vector_add: {} elements, all 2.0", sum.len());
    Ok(())
}
