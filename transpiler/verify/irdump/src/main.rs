//! irdump: reads jobs on stdin, compiles each entry to Tile IR bytecode.
//! Job: {"file": path, "module": name, "entry": name, "generics": [..], "strides": [[param, [..]]],
//!       "target": "sm_90", "out": path}. Stdin is a stream of JSON values, each a job or an array of jobs,
//! read as they come (a caller may send one job, wait for its line, and send the next). Prints one JSON
//! line per job, in order, flushed: {"out", "ok", "error"}.
//!
//! Each job is what `KernelCompiler::compile` does, with one difference of cost only: the module set
//! (`CUDATileModules::from_kernel`: the kernel module's AST and the cuTile modules it uses, parsed and
//! name-resolved) is built once per (file, module) and shared by that module's jobs, instead of once per
//! job. The function compiler only reads it (`CUDATileFunctionCompiler::new` takes it by reference). A job
//! that fails or panics drops the shared sets, so the next job starts from fresh ones as every job did.
//! The allocator is mimalloc: the compiler clones and drops syntax trees all the time, and glibc's malloc
//! was a third of its time.
use cutile::cutile_compiler::ast::{syn, Module};
use cutile::cutile_compiler::compiler::{CUDATileFunctionCompiler, CUDATileModules};
use cutile::cutile_compiler::cuda_tile_runtime_utils::serialize_tile_ir_bytecode_for_version;
use cutile::tile_kernel::{CompileOptions, DebugInfoLevel};
use cutile_ir::bytecode::BytecodeVersion;
use cutile_ir::capabilities::TargetCapabilities;
use serde_json::{json, Value};
use std::io::Write;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Module sets kept (most recently used first): a caller sends a module's jobs together.
const KEEP_MODULES: usize = 4;

fn find_module(file: &syn::File, name: &str) -> Option<syn::ItemMod> {
    file.items.iter().find_map(|item| match item {
        syn::Item::Mod(m) if m.ident == name => Some(m.clone()),
        _ => None,
    })
}

/// The module set of `module` in `path`, as `KernelCompiler::compile` builds it (the file as it is now:
/// hand edits are seen).
fn build_modules(path: &str, module: &str) -> Result<CUDATileModules, String> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let file: syn::File = syn::parse_str(&src).map_err(|e| format!("{path}: parse error: {e}"))?;
    let item = find_module(&file, module).ok_or_else(|| format!("{path}: no module `{module}`"))?;
    let name: &'static str = Box::leak(module.to_string().into_boxed_str());
    CUDATileModules::from_kernel(Module::new(name, item)).map_err(|e| format!("{e}"))
}

type Modules = Vec<((String, String), CUDATileModules)>;

fn run_job(job: &Value, cache: &mut Modules) -> Result<(), String> {
    let path = job["file"].as_str().ok_or("job.file")?;
    let module = job["module"].as_str().ok_or("job.module")?.to_string();
    let entry = job["entry"].as_str().ok_or("job.entry")?.to_string();
    let generics: Vec<String> = job["generics"].as_array().ok_or("job.generics")?
        .iter().map(|g| g.as_str().unwrap_or_default().to_string()).collect();
    let stride_vals: Vec<(String, Vec<i32>)> = job["strides"].as_array().ok_or("job.strides")?
        .iter().map(|s| (s[0].as_str().unwrap_or_default().to_string(),
            s[1].as_array().map(|a| a.iter().map(|v| v.as_i64().unwrap_or(-1) as i32).collect()).unwrap_or_default()))
        .collect();
    let strides: Vec<(&str, &[i32])> = stride_vals.iter().map(|(n, v)| (n.as_str(), v.as_slice())).collect();
    let target = job["target"].as_str().unwrap_or("sm_90");
    let key = (path.to_string(), module.clone());
    match cache.iter().position(|(k, _)| *k == key) {
        Some(i) => {
            let hit = cache.remove(i);
            cache.insert(0, hit);
        }
        None => {
            let built = build_modules(path, &module)?;
            cache.insert(0, (key, built));
            cache.truncate(KEEP_MODULES);
        }
    }
    let modules = &cache[0].1;
    // KernelCompiler::compile: the options with the CUTILE_JIT_* overrides and the default tile libraries,
    // the function compiler at the explicit target and bytecode version, the bytecode of that version
    let version = BytecodeVersion::V13_4;
    let options = CompileOptions::default().debug_info(DebugInfoLevel::None)
        .with_jit_env_overrides().map_err(|e| format!("{e}"))?
        .with_default_tile_libraries();
    let compiler = CUDATileFunctionCompiler::new(modules, &module, &entry, &generics, &strides, &[], &[], None,
                                                 target.to_string(), &options)
        .map_err(|e| format!("{e}"))?
        .with_target_capabilities(TargetCapabilities::new(version, target.to_string()))
        .map_err(|e| format!("{e}"))?;
    let ir = compiler.compile().map_err(|e| format!("{e}"))?;
    let (bc, _) = serialize_tile_ir_bytecode_for_version(&ir, version).map_err(|e| format!("{e}"))?;
    let out = job["out"].as_str().ok_or("job.out")?;
    std::fs::write(out, bc).map_err(|e| format!("{out}: {e}"))?;
    if let Some(txt) = job["ir_text_out"].as_str() {
        std::fs::write(txt, ir.to_mlir_text()).map_err(|e| format!("{txt}: {e}"))?;
    }
    Ok(())
}

fn main() {
    // Keep cutile's registry entry for `cutile::core` linked in.
    let _keep: fn() -> Module = cutile::core::__module_ast_self;
    // one worker thread with a large stack (the compiler recurses deeply) runs the jobs in order
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            let mut cache: Modules = Vec::new();
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout();
            for value in serde_json::Deserializer::from_reader(stdin).into_iter::<Value>() {
                let value = value.expect("stdin must be a stream of JSON jobs or arrays of jobs");
                let jobs = match value {
                    Value::Array(jobs) => jobs,
                    job => vec![job],
                };
                for job in jobs {
                    let out = job["out"].clone();
                    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_job(&job, &mut cache)));
                    let line = match res {
                        Ok(Ok(())) => json!({"out": out, "ok": true}),
                        Ok(Err(e)) => {
                            cache.clear();
                            json!({"out": out, "ok": false, "error": e})
                        }
                        Err(p) => {
                            cache.clear();
                            let msg = p.downcast_ref::<String>().cloned()
                                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_else(|| "panic".into());
                            json!({"out": out, "ok": false, "error": format!("panic: {msg}")})
                        }
                    };
                    let mut lock = stdout.lock();
                    writeln!(lock, "{line}").expect("stdout");
                    lock.flush().expect("stdout");
                }
            }
        })
        .expect("spawn")
        .join()
        .expect("join");
}
