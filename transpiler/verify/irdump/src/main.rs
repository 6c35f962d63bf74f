//! irdump: reads a JSON job list on stdin, compiles each entry to Tile IR bytecode.
//! Job: {"file": path, "module": name, "entry": name, "generics": [..], "strides": [[param, [..]]],
//!       "target": "sm_90", "out": path}. Prints one JSON line per job: {"out", "ok", "error"}.
use cutile::compile_api::KernelCompiler;
use cutile::cutile_compiler::ast::{syn, Module};
use cutile::tile_kernel::{CompileOptions, DebugInfoLevel};
use cutile_ir::bytecode::BytecodeVersion;
use serde_json::{json, Value};
use std::io::Read;

fn find_module(file: &syn::File, name: &str) -> Option<syn::ItemMod> {
    file.items.iter().find_map(|item| match item {
        syn::Item::Mod(m) if m.ident == name => Some(m.clone()),
        _ => None,
    })
}

fn run_job(job: &Value) -> Result<(), String> {
    let path = job["file"].as_str().ok_or("job.file")?;
    let module = job["module"].as_str().ok_or("job.module")?.to_string();
    let entry = job["entry"].as_str().ok_or("job.entry")?.to_string();
    let src = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let file: syn::File = syn::parse_str(&src).map_err(|e| format!("{path}: parse error: {e}"))?;
    let item = find_module(&file, &module).ok_or_else(|| format!("{path}: no module `{module}`"))?;
    let generics: Vec<String> = job["generics"].as_array().ok_or("job.generics")?
        .iter().map(|g| g.as_str().unwrap_or_default().to_string()).collect();
    let stride_vals: Vec<(String, Vec<i32>)> = job["strides"].as_array().ok_or("job.strides")?
        .iter().map(|s| (s[0].as_str().unwrap_or_default().to_string(),
            s[1].as_array().map(|a| a.iter().map(|v| v.as_i64().unwrap_or(-1) as i32).collect()).unwrap_or_default()))
        .collect();
    let strides: Vec<(&str, &[i32])> = stride_vals.iter().map(|(n, v)| (n.as_str(), v.as_slice())).collect();
    let name: &'static str = Box::leak(module.clone().into_boxed_str());
    let target = job["target"].as_str().unwrap_or("sm_90");
    let art = KernelCompiler::new(move || Module::new(name, item.clone()), &module, &entry)
        .generics(generics)
        .strides(&strides)
        .target(target)
        .bytecode_version(BytecodeVersion::V13_4)
        .options(CompileOptions::default().debug_info(DebugInfoLevel::None))
        .compile()
        .map_err(|e| format!("{e}"))?;
    let bc = art.bytecode().map_err(|e| format!("{e}"))?;
    let out = job["out"].as_str().ok_or("job.out")?;
    std::fs::write(out, bc).map_err(|e| format!("{out}: {e}"))?;
    if let Some(txt) = job["ir_text_out"].as_str() {
        std::fs::write(txt, art.ir_text()).map_err(|e| format!("{txt}: {e}"))?;
    }
    Ok(())
}

fn main() {
    // Keep cutile's registry entry for `cutile::core` linked in.
    let _keep: fn() -> Module = cutile::core::__module_ast_self;
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let jobs: Vec<Value> = serde_json::from_str(&input).expect("job list must be a JSON array");
    for job in jobs {
        let out = job["out"].clone();
        let res = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || std::panic::catch_unwind(|| run_job(&job)))
            .expect("spawn")
            .join()
            .expect("join");
        let line = match res {
            Ok(Ok(())) => json!({"out": out, "ok": true}),
            Ok(Err(e)) => json!({"out": out, "ok": false, "error": e}),
            Err(p) => {
                let msg = p.downcast_ref::<String>().cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panic".into());
                json!({"out": out, "ok": false, "error": format!("panic: {msg}")})
            }
        };
        println!("{line}");
    }
}
