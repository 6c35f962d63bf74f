"""Real-size cases of the Triton corpus for the GPU check (`tools/triton_gpu_check.py --sizes real`).

The tiny cases of `tools/triton_reference.py` (`cases()`) run in a few microseconds: on a GPU they measure launch
latency, not kernels. Here every kernel with tiny cases gets one or two configurations at the sizes training and
serving code launches (row kernels 16384 x 4096 and wider, elementwise 64-128 Mi elements, GEMMs 8192^3,
attention with batch * heads * seq_len in the hundreds of thousands), so that one launch runs well over 100 µs or
moves several times the 50-60 MB L2 of an H100 / H200. Where the kernel masks its edges a second, ragged
configuration (sizes that are no multiple of the block) comes along. Block sizes, grids and num_warps are those
of the corpus' host functions (`corpus/triton/workloads/*.py`, liger-kernel / Triton tutorial style); kernels of
tests/fixtures/triton_unseen whose launch is a single program of constexpr size cannot grow and are listed in
`NO_REAL_SIZE` with the reason.

The case format is `triton_reference.case`'s, plus two optional keys: `options` (Triton launch options such as
num_warps, passed on both sides as the autotuned launch passes a config's) and `traffic_bytes` (the minimal
traffic where reading every input once would misstate it: gathers that read only some rows of a table).
These cases have no numpy reference: the GPU check compares Triton's outputs with the port's.
Inputs are built on the GPU (tools/triton_gpu_check.py `torch_inputs`): at these sizes numpy on the host is slow.
"""
from __future__ import annotations

import math

import triton_reference
from triton_reference import UNSEEN_PKG, _cdiv, _npo2, inp

H100_SMS = 132  # an H100 SXM and an H200 both have 132 SMs: the persistent GEMM's grid, as its host function sizes it
GIB = 1 << 30
MAX_CASE_BYTES = 8 * GIB  # pristine inputs + a copy per side must fit with room to spare
INT32_MAX = 2 ** 31 - 1  # kernels index with int32 offsets: no tensor may have more elements
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "int64": 8, "int8": 1, "uint8": 1, "int16": 2, "bool": 1,
            "float8_e4m3fn": 1}

# kernels whose real-size launch moves little data but runs long (atomics, a serial scan per program)
LATENCY_BOUND = {("moe_align", "moe_count_kernel"), ("moe_align", "moe_align_kernel")}
# kernels whose launch is one program over a constexpr-sized tile: no size to grow (the kernel would change)
NO_REAL_SIZE = {
    ("helper_dispatch", "copy_heads_kernel"): "a row copy through a helper's advanced pointers (the row kernels of "
                                              "the corpus have real sizes)",
    ("host_dtype_fn", "quant_bytes_kernel"): "an elementwise fp8 quantization of a vector (the fp8 corpus kernel has real sizes)",
    ("pointer_tables", "pointer_tile_kernel"): "one program over a constexpr table of pointers",
    ("float_atomics", "exchange_max_kernel"): "one program, BLOCK covers n",
    ("gather", "row_pick_kernel"): "one program, the tile is (BC, BK)",
    ("gather", "permute_kernel"): "one program, the tile is N (a gather within one tile)",
    ("interleave", "interleave_kernel"): "one program, BLOCK covers n",
    ("interleave", "interleave_rows_kernel"): "one program over ROWS x 8",
    ("interleave", "interleave_halves_kernel"): "one program, the tile is 2 * HALF",
    ("tile_numel", "flatten_mean_kernel"): "one program over an R x C tile",
    ("false_tile", "group_mask_kernel"): "one program, BLOCK covers n",
    ("block_ptr_arms", "load_state_kernel"): "one program per BV columns of a [K, V] state whose extents are "
    "constexprs (a state is 128 x 128)",
    # language constructs of unseen libraries (issue 34, 2026-12-06): their numbers are checked on the CPU by the
    # Tile IR interpreter; none is a speed workload of its own yet (issue 38 would time them at real sizes)
    **{k: "a language-construct fixture (issue 34), numbers checked on the CPU; no real-size case yet" for k in (
        ("arm_defined_names", "group_starts_kernel"), ("arm_flags", "gated_scan_kernel"),
        ("block_ptr_helpers", "block_sums_kernel"), ("block_ptr_helpers", "scaled_rows_kernel"),
        ("block_ptr_helpers", "state_kernel"), ("carried_stats", "resume_row_stats_kernel"),
        ("constexpr_functions", "pow2_rows_kernel"), ("countdown_loops", "suffix_blocks_kernel"),
        ("dot_operand_dtypes", "decayed_gram_kernel"), ("dot_precision", "chain_kernel"),
        ("dtype_names", "scale_into_kernel"), ("fast_math", "fast_features_kernel"),
        ("flag_conditions", "window_start_kernel"), ("inline_asm", "bit_ops_kernel"),
        ("bit_atomics", "token_bits_kernel"), ("bit_atomics", "parity_kernel"), ("bit_atomics", "claim_kernel"),
        ("string_helper_choice", "act_mul_kernel"), ("descriptor_advanced_base", "varlen_scale_kernel"),
        ("sum_dtype", "row_sums_kernel"), ("inline_asm", "dot_mov_kernel"), ("inline_asm", "softplus_asm_kernel"),
        ("inline_asm", "two_outputs_kernel"), ("inline_asm", "const_operand_kernel"), ("int_min", "sign_bits_kernel"),
        ("pointer_rows", "gather_rows_kernel"), ("widened_arms", "head_rows_kernel"),
        ("rn_arithmetic", "rn_ops_kernel"), ("gather", "nibble_lookup_kernel"),
        ("call_jit", "scale_rows_kernel"), ("constexpr_locals", "routed_rows_kernel"), ("constexpr_locals", "flagged_scale_kernel"),
        ("arm_forwarders", "widen_rows_kernel"), ("scalar_neg", "neg_exp_rows_kernel"),
        ("arm_rebinds", "lse_max_kernel"), ("arm_rebinds", "round_to_int8_kernel"),
        ("combine_fns", "int_bits_kernel"), ("combine_fns", "products_kernel"), ("combine_fns", "row_flags_kernel"),
        ("combine_fns", "running_flags_kernel"), ("dtype_predicates", "fill_kernel"),
        ("dtype_predicates", "masked_min_kernel"), ("dtype_predicates", "running_max_kernel"),
        ("dtype_predicates", "widen_by_dtype_kernel"), ("pointer_choice", "elif_rows_kernel"),
        ("pointer_choice", "if_arms_kernel"), ("pointer_choice", "ifexp_atomic_kernel"),
        ("pointer_choice", "in_place_max_kernel"), ("pointer_choice", "lane_choice_kernel"),
        ("pointer_choice", "rebound_in_arm_kernel"), ("pointer_choice", "rebound_index_kernel"),
        ("pointer_choice", "two_loops_kernel"), ("pointer_choice", "where_rows_kernel"),
        ("round_half_even", "round_even_kernel"), ("carried_types", "rebound_loop_var_kernel"),
        ("libdevice_math", "angle_math_kernel"), ("libdevice_math", "float_class_kernel"),
        ("functional_ops", "functional_axpby_kernel"), ("constexpr_rebind", "clipped_chunk_sum_kernel"),
        ("constexpr_arms", "scaled_tile_kernel"), ("constexpr_arms", "gram_kernel"),
        ("generic_bitcast", "exponent_bits_kernel"),
        ("carried_types", "first_program_totals_kernel"), ("carried_types", "last_program_mean_kernel"),
        ("carried_types", "bucket_slots_kernel"),
        ("pointer_sums", "gather_by_ids_kernel"), ("pointer_sums", "scaled_rows_kernel"),
        ("pointer_sums", "chosen_rows_kernel"),
        ("const_dims", "row_col_means_kernel"), ("literal_stages", "walsh_rows_kernel"),
        ("loop_bounds", "grid_stride_scale_kernel"), ("loop_bounds", "valid_prefix_sum_kernel"),
        ("loop_bounds", "loaded_length_sum_kernel"), ("compat_try", "compat_noise_kernel"),
        ("compat_try", "lowest_padded_max_kernel"), ("compat_try", "fp8_bits_kernel"),
        ("compat_try", "device_count_rows_kernel"), ("compat_libm", "libm_rows_kernel"),
        ("propagate_nan", "nan_clamp_kernel"), ("scalar_typing", "resample_rows_kernel"),
        ("scalar_typing", "stack_two_kernel"), ("scalar_typing", "first_of_runs_kernel"),
        ("scalar_typing", "split_lengths_kernel"), ("scalar_typing", "step_flags_kernel"),
        ("scalar_typing", "compact_kernel"), ("scalar_typing", "row_mean_kernel"),
        ("scalar_typing", "positive_ranks_kernel"), ("precision_local", "gram_kernel"))},
    # narrow integer tensors through the host layer (uint8 bytes, torch.bool masks, int16 ids, an int32 counter):
    # dtype fixtures whose numbers are checked on the CPU; the fp8 and gather corpus kernels have real sizes
    **{k: "a narrow-dtype fixture (uint8 / bool / int16 / int32 counter), numbers checked on the CPU" for k in (
        ("narrow_ints", "fp8_bytes_kernel"), ("narrow_ints", "keep_where_kernel"), ("narrow_ints", "id_rows_kernel"),
        ("narrow_ints", "bucket_count_kernel"), ("bool_mask", "masked_fill_kernel"))},
    # a name-resolution fixture: the same row reduction as tl.sum / tl.max, named through triton.language.standard
    ("standard_names", "centered_rows_kernel"): "a name-resolution fixture (tl.sum / tl.max rows named through "
    "triton.language.standard), numbers checked on the CPU",
    # tl.flip / tl.sort / tl.topk and an argmax pair reduce: one program over a small tile (the one-hot forms are
    # quadratic in the extent, so a real-size case would time the emulation, not a workload)
    **{k: "an emulation fixture (flip / sort / topk / argmax pair), one program over a small tile; numbers checked "
       "on the CPU" for k in (
        ("flips", "rotate_pairs_kernel"), ("flips", "rotate_vector_kernel"), ("flips", "reverse_quads_kernel"),
        ("flips", "flip_2d_kernel"), ("flips", "sort_rows_kernel"), ("flips", "topk_rows_kernel"),
        ("flips", "streaming_topk_kernel"), ("flips", "int_rows_kernel"), ("flips", "sorted_gather_kernel"),
        ("pair_reduce", "row_argmax_kernel"), ("pair_reduce", "column_argmin_kernel"))},
}


def case(*args, options=None, traffic_bytes=None, **kwargs):
    """`triton_reference.case` plus the launch options and the traffic override (see the module's doc)."""
    c = triton_reference.case(*args, **kwargs)
    c["id"] = "real__" + c["id"]  # apart from the tiny cases' ids (results of both may sit side by side)
    return {**c, **({"options": dict(options)} if options else {}),
            **({"traffic_bytes": int(traffic_bytes)} if traffic_bytes is not None else {})}


def _elementwise(out, F=("float32", "float16")):
    # 64 Mi float32 (256 MiB an array) aligned to the block, and 128 Mi + 3 float16 (ragged: a masked last block)
    for n, dt in [(1 << 26, "float32"), ((1 << 27) + 3, "float16")]:
        out.append(case("vector_add", "add_kernel", f"n{n}_{dt}",
                        [inp("x", [n], dt, "randn"), inp("y", [n], dt, "randn"), inp("out", [n], dt, "poison")],
                        ["x", "y", "out", "n"], [_cdiv(n, 1024)], ["out"], "", {"n": n}, {"BLOCK_SIZE": 1024}))
    for n, p, dt in [((1 << 27), 0.1, "float16"), ((1 << 26) + 3, 0.3, "float32")]:
        out.append(case("dropout", "dropout_fwd_kernel", f"n{n}_p{p:g}_{dt}",
                        [inp("x", [n], dt, "randn"), inp("out", [n], dt, "poison")],
                        ["x", "out", "n", "p", "seed"], [_cdiv(n, 1024)], ["out"], "",
                        {"n": n, "p": p, "seed": 1234}, {"BLOCK_SIZE": 1024}))
    exact = {"bits": (0, 0), "uniform": (0, 0), "mixed": (0, 0)}
    n = (1 << 26) + 5
    out.append(case("random_numbers", "random_draws_kernel", f"n{n}_seed1234",
                    [inp("bits", [n], "int32", "poison"), inp("uniform", [n], "float32", "poison")],
                    ["bits", "uniform", "n", "seed"], [_cdiv(n, 1024)], ["bits", "uniform"], "",
                    {"n": n, "seed": 1234}, {"BLOCK": 1024}, tol=exact))
    n = (1 << 24) + 7
    out.append(case("random_numbers", "random_streams_kernel", f"n{n}_seed42_rounds10",
                    [inp("bits", [4 * n], "int32", "poison"), inp("uniform", [4 * n], "float32", "poison"),
                     inp("mixed", [n], "float32", "poison")],
                    ["bits", "uniform", "mixed", "n", "seed"], [_cdiv(n, 256)], ["bits", "uniform", "mixed"], "",
                    {"n": n, "seed": 42}, {"N_ROUNDS": 10, "BLOCK": 256}, tol=exact))


def _rows_kernels(out):
    def softmax(r, c, dt):
        bn = _npo2(c)
        return case("softmax", "softmax_kernel", f"{r}x{c}_{dt}",
                    [inp("x", [r, c], dt, "randn", scale=3.0), inp("y", [r, c], dt, "poison")],
                    ["y", "x", "stride", "stride", "n_cols"], [r], ["y"], "", {"stride": c, "n_cols": c},
                    {"BLOCK_N": bn}, options={"num_warps": 4 if bn <= 2048 else 8})
    out += [softmax(16384, 4096, "float32"), softmax(32768, 3000, "float16")]
    out.append(case("softmax", "row_normalize_kernel", "16384x4000_float16",
                    [inp("x", [16384, 4000], "float16", "uniform", lo=0.5, hi=1.5),
                     inp("y", [16384, 4000], "float16", "poison")],
                    ["y", "x", "stride", "n_cols"], [16384], ["y"], "", {"stride": 4000, "n_cols": 4000},
                    {"BLOCK_N": 4096}, options={"num_warps": 8}))
    for r, c, dt in [(8192, 8192, "float32"), (4096, 10000, "float16")]:
        out.append(case("online_softmax", "online_softmax_kernel", f"{r}x{c}_{dt}",
                        [inp("x", [r, c], dt, "randn", scale=3.0), inp("y", [r, c], dt, "poison")],
                        ["x", "y", "stride", "n_cols"], [r], ["y"], "", {"stride": c, "n_cols": c}, {"BLOCK_N": 1024}))

    for r, c, dt in [(16384, 4096, "float16"), (16384, 5000, "float32")]:
        out.append(case("layer_norm", "layer_norm_fwd_kernel", f"{r}x{c}_{dt}",
                        [inp("x", [r, c], dt, "randn", scale=2.0), inp("y", [r, c], dt, "poison"),
                         inp("w", [c], dt, "randn"), inp("b", [c], dt, "randn"),
                         inp("mean", [r], "float32", "poison"), inp("rstd", [r], "float32", "poison")],
                        ["x", "y", "w", "b", "mean", "rstd", "stride", "n_cols", "eps"], [r], ["y", "mean", "rstd"],
                        "", {"stride": c, "n_cols": c, "eps": 1e-5}, {"BLOCK_N": _npo2(c)}, options={"num_warps": 8}))
    r, c, dt = 16384, 4096, "float16"
    parts = _cdiv(r, 16)
    out.append(case("layer_norm", "layer_norm_bwd_dx_kernel", f"{r}x{c}_{dt}",
                    [inp("dx", [r, c], dt, "poison"), inp("dy", [r, c], dt, "randn"), inp("x", [r, c], dt, "randn"),
                     inp("w", [c], dt, "randn"), inp("mean", [r], "float32", "randn", scale=0.1),
                     inp("rstd", [r], "float32", "uniform", lo=0.5, hi=2.0),
                     inp("dw_part", [parts, c], "float32", "poison"), inp("db_part", [parts, c], "float32", "poison")],
                    ["dx", "dy", "x", "w", "mean", "rstd", "dw_part", "db_part", "stride", "n_rows", "n_cols"],
                    [parts], ["dx", "dw_part", "db_part"], "", {"stride": c, "n_rows": r, "n_cols": c},
                    {"ROWS_PER_PROGRAM": 16, "BLOCK_N": _npo2(c)}))
    p, c = 4000, 8000  # partial sums of 64000 rows: 2 x 122 MiB read
    out.append(case("layer_norm", "layer_norm_bwd_dwdb_kernel", f"{p}x{c}_float32",
                    [inp("dw_part", [p, c], "float32", "randn"), inp("db_part", [p, c], "float32", "randn"),
                     inp("dw", [c], "float32", "poison"), inp("db", [c], "float32", "poison")],
                    ["dw_part", "db_part", "dw", "db", "n_parts", "n_cols"], [_cdiv(c, 128)], ["dw", "db"], "",
                    {"n_parts": p, "n_cols": c}, {"BLOCK_P": 32, "BLOCK_N": 128}))

    for r, c, dt, off in [(16384, 4096, "float16", 0.0), (16384, 3000, "float32", 1.0)]:
        out.append(case("rms_norm", "rms_norm_fwd_kernel", f"{r}x{c}_{dt}_offset{off:g}",
                        [inp("x", [r, c], dt, "randn"), inp("w", [c], dt, "randn"), inp("y", [r, c], dt, "poison"),
                         inp("rstd", [r], "float32", "poison")],
                        ["x", "w", "y", "rstd", "stride", "stride", "n_cols", "eps"], [r], ["y", "rstd"], "",
                        {"stride": c, "n_cols": c, "eps": 1e-6}, {"OFFSET": off, "BLOCK_N": _npo2(c)}))
    out += [case(*triton_reference.rms_norm_rows_args(r, c, dt, rs))
            for r, c, dt, rs in [(16384, 4096, "float16", 2), (16384, 3000, "float32", 1)]]
    r, c, dt = 16384, 4096, "float16"
    out.append(case("rms_norm", "rms_norm_bwd_kernel", f"{r}x{c}_{dt}",
                    [inp("dy", [r, c], dt, "randn"), inp("x", [r, c], dt, "randn"), inp("w", [c], dt, "randn"),
                     inp("rstd", [r], "float32", "uniform", lo=0.5, hi=2.0), inp("dx", [r, c], dt, "poison"),
                     inp("dw", [c], "float32", "zeros")],
                    ["dy", "x", "w", "rstd", "dx", "dw", "stride", "n_cols"], [r], ["dx", "dw"], "",
                    {"stride": c, "n_cols": c}, {"OFFSET": 0.0, "BLOCK_N": _npo2(c)}))

    for (r, c), given, alpha, dt in [((16384, 4096), ("res", "h_out", "w"), 1.0, "float16"),
                                     ((16384, 3000), ("res",), 0.5, "float32")]:
        inputs = [inp("x", [r, c], dt, "randn")] + \
            [inp(n, [r, c], dt, "randn" if n == "res" else "poison") for n in ("res", "h_out") if n in given] + \
            ([inp("w", [c], dt, "randn")] if "w" in given else []) + [inp("y", [r, c], dt, "poison")]
        out.append(case("fused_add_norm", "fused_add_rms_norm_kernel", f"{r}x{c}_{dt}_{'_'.join(given)}_alpha{alpha:g}",
                        inputs, ["x"] + [n if n in given else "none" for n in ("res", "h_out", "w")] +
                        ["y", "stride", "n_cols", "eps"], [r], [n for n in ("h_out",) if n in given] + ["y"], "",
                        {"none": None, "stride": c, "n_cols": c, "eps": 1e-6}, {"ALPHA": alpha, "BLOCK_N": _npo2(c)}))

    for r, c, xdt, dt in [(16384, 4096, "float16", "float16"), (16384, 3000, "float32", "float32")]:
        out.append(case("grad_scale", "grad_scale_kernel", f"{r}x{c}_{dt}",
                        [inp("dy", [r, c], dt, "randn"), inp("x", [r, c], dt, "randn"),
                         inp("dx", [r, c], dt, "poison")],
                        ["dy", "x", "dx", "stride", "n_cols"], [r], ["dx"], "", {"stride": c, "n_cols": c},
                        {"X_DTYPE": xdt, "BLOCK_N": _npo2(c)}))

    # the MLP widths of Llama models: 4096 and 11008 (ragged: a 16384 block, 67% used)
    for r, c in [(16384, 4096), (8192, 11008)]:
        dt = "float16"
        out.append(case("swiglu", "swiglu_fwd_kernel", f"{r}x{c}_{dt}",
                        [inp("a", [r, c], dt, "randn", scale=2.0), inp("b", [r, c], dt, "randn"),
                         inp("c", [r, c], dt, "poison")],
                        ["a", "b", "c", "stride", "n_cols"], [r], ["c"], "", {"stride": c, "n_cols": c},
                        {"BLOCK_N": _npo2(c)}, options={"num_warps": 4}))
    r, c, dt = 8192, 11008, "float16"
    out.append(case("swiglu", "swiglu_bwd_kernel", f"{r}x{c}_{dt}",
                    [inp("dc", [r, c], dt, "randn"), inp("a", [r, c], dt, "randn", scale=2.0),
                     inp("b", [r, c], dt, "randn")],
                    ["dc", "a", "b", "stride", "n_cols"], [r], ["a", "b"], "", {"stride": c, "n_cols": c},
                    {"BLOCK_N": _npo2(c)}))
    for r, c, dt in [(16384, 4096, "float16"), (8191, 11008, "float32")]:
        out.append(case("geglu", "geglu_fwd_kernel", f"{r}x{c}_{dt}",
                        [inp("a", [r, c], dt, "randn", scale=2.0), inp("b", [r, c], dt, "randn"),
                         inp("c", [r, c], dt, "poison")],
                        ["a", "b", "c", "n_rows", "n_cols"], [_cdiv(r, 4), _cdiv(c, 256)], ["c"], "",
                        {"n_rows": r, "n_cols": c}, {"BLOCK_M": 4, "BLOCK_N": 256}))
    r, c, dt = 16384, 4096, "float16"
    out.append(case("geglu", "geglu_bwd_kernel", f"{r}x{c}_{dt}",
                    [inp("dc", [r, c], dt, "randn"), inp("a", [r, c], dt, "randn", scale=2.0),
                     inp("b", [r, c], dt, "randn"), inp("da", [r, c], dt, "poison"), inp("db", [r, c], dt, "poison")],
                    ["dc", "a", "b", "da", "db", "n_rows", "n_cols"], [_cdiv(r, 4), _cdiv(c, 256)], ["da", "db"], "",
                    {"n_rows": r, "n_cols": c}, {"BLOCK_M": 4, "BLOCK_N": 256}))

    # vocabularies of Llama 3 (128256) and Llama 2 (32000), both ragged against BLOCK_V = 4096
    for (r, v), ls, dt in [((4096, 128256), 0.0, "float16"), ((8192, 32000), 0.1, "float32")]:
        out.append(case("cross_entropy", "cross_entropy_kernel", f"{r}x{v}_{dt}_ls{ls:g}",
                        [inp("logits", [r, v], dt, "randn", scale=2.0),
                         inp("target", [r], "int64", "randint", lo=0, hi=v, ignore=-100, every=3),
                         inp("loss", [r], "float32", "poison")],
                        ["logits", "stride", "target", "loss", "n_cols", "n_non_ignore", "ignore_index",
                         "label_smoothing"], [r], ["logits", "loss"], "",
                        {"stride": v, "n_cols": v, "n_non_ignore": r - _cdiv(r, 3), "ignore_index": -100,
                         "label_smoothing": ls},
                        {"BLOCK_V": min(4096, _npo2(v)), "HAS_SMOOTHING": ls > 0.0}, options={"num_warps": 16}))

    # GRPO-sized: 8 sequences of 1024 positions over a 32000-token vocabulary (float32 logits: 1 GiB read)
    out += [case(*triton_reference.token_logprob_args(b, l, n, dt, 4096))
            for (b, l, n), dt in [((8, 1024, 32000), "float32"), ((4, 1024, 128256), "float16")]]

    for (r, c), beta, dt in [((4096, 32000), 0.5, "float32"), ((2048, 128256), 0.0, "float16")]:
        out.append(case("jsd", "jsd_kernel", f"{r}x{c}_{dt}_beta{beta:g}",
                        [inp("x", [r, c], dt, "log_softmax", scale=2.0), inp("y", [r, c], dt, "log_softmax", scale=2.0),
                         inp("loss", [r], "float32", "poison"), inp("dx", [r, c], dt, "poison")],
                        ["x", "y", "loss", "dx", "stride", "n_cols", "n_rows", "beta"], [r], ["loss", "dx"], "",
                        {"stride": c, "n_cols": c, "n_rows": r, "beta": beta}, {"BLOCK_N": min(8192, _npo2(c))},
                        tol={"dx": (1e-6, 4e-3)}))

    for r, c, dt in [(16384, 4096, "float16"), (16384, 5000, "float32")]:
        out.append(case("fp8_quant", "fp8_row_quant_kernel", f"{r}x{c}_{dt}",
                        [inp("x", [r, c], dt, "randn", scale=3.0), inp("q", [r, c], "float8_e4m3fn", "poison"),
                         inp("scale", [r], "float32", "poison")],
                        ["x", "q", "scale", "stride", "stride", "n_cols"], [r], ["q", "scale"], "",
                        {"stride": c, "n_cols": c}, {"FP8_MAX": 448.0, "BLOCK_N": _npo2(c)}))

    r, c, p, dt = 16384, 4096, 0.25, "float16"
    out.append(case("random_numbers", "row_dropout_kernel", f"{r}x{c}_p{p:g}_{dt}",
                    [inp("x", [r, c], dt, "randn"), inp("seeds", [r], "int64", "randint", lo=-2 ** 40, hi=2 ** 40),
                     inp("out", [r, c], dt, "poison")],
                    ["x", "seeds", "out", "n_cols", "stride", "p"], [r], ["out"], "",
                    {"n_cols": c, "stride": c, "p": p}, {"BLOCK": _npo2(c)}))

    for r, c, dt in [(16384, 4096, "float16"), (16383, 4001, "float32")]:
        out.append(case("bias_act", "bias_relu_kernel", f"{r}x{c}_{dt}",
                        [inp("x", [r, c], dt, "randn"), inp("bias", [c], dt, "randn"), inp("y", [r, c], dt, "poison")],
                        ["x", "bias", "y", "n_rows", "n_cols", "stride"], [_cdiv(r, 32), _cdiv(c, 128)], ["y"], "",
                        {"n_rows": r, "n_cols": c, "stride": c}, {"BLOCK_M": 32, "BLOCK_N": 128}))

    for (r, c), dt in [((16384, 4096), "float32"), ((8192, 10000), "int32")]:
        acc = "int32" if dt == "int32" else "float32"
        init = ("randint", {"lo": -50, "hi": 50}) if dt == "int32" else ("randn", {})
        out.append(case("cumsum", "row_cumsum_kernel", f"{r}x{c}_{dt}",
                        [inp("x", [r, c], dt, init[0], **init[1]), inp("y", [r, c], acc, "poison")],
                        ["x", "y", "stride", "stride", "n_cols"], [r], ["y"], "", {"stride": c, "n_cols": c},
                        {"ACC_DTYPE": acc, "BLOCK_N": 512}, tol={"y": (1e-4, 1e-5)} if acc == "float32" else None))


def _attention(out):
    # causal: 4 x 32 heads x 4096 tokens, head_dim 64; full: ragged 3000 tokens, head_dim 128
    for (b, h, s, d), causal in [((4, 32, 4096, 64), True), ((2, 16, 3000, 128), False)]:
        dt, shp = "float16", [b, h, s, d]
        out.append(case("flash_attention", "attn_fwd_kernel", f"b{b}h{h}s{s}d{d}_{'causal' if causal else 'full'}",
                        [inp("q", shp, dt, "randn"), inp("k", shp, dt, "randn"), inp("v", shp, dt, "randn"),
                         inp("o", shp, dt, "poison"), inp("lse", [b, h, s], "float32", "poison")],
                        ["q", "k", "v", "o", "lse", "sm_scale", "n_heads", "seq_len", "sb", "sh", "ss"],
                        [_cdiv(s, 128), b * h], ["o", "lse"], "",
                        {"sm_scale": 1.0 / math.sqrt(d), "n_heads": h, "seq_len": s, "sb": h * s * d, "sh": s * d,
                         "ss": d},
                        {"HEAD_DIM": d, "BLOCK_M": 128, "BLOCK_N": 64, "IS_CAUSAL": causal},
                        tol={"o": (4e-3, 4e-3), "lse": (1e-4, 1e-4)}, options={"num_warps": 8, "num_stages": 3}))
    for bh, t, d in [(128, 4096, 64), (64, 3000, 64)]:
        shp = [bh, t, d]
        out.append(case("block_ptr_ops", "bp_attn_fwd_kernel", f"bh{bh}t{t}d{d}",
                        [inp("q", shp, "float16", "randn"), inp("k", shp, "float16", "randn"),
                         inp("v", shp, "float16", "randn"), inp("o", shp, "float16", "poison")],
                        ["q", "k", "v", "o", "T", "scale"], [_cdiv(t, 64), bh], ["o"], "",
                        {"T": t, "scale": 1.0 / math.sqrt(d)}, {"D": d, "BT": 64, "BS": 32}, tol={"o": (4e-3, 4e-3)}))
    for bh, t, dt in [(4096, 16384, "float32"), (2048, 30001, "float16")]:
        out.append(case("block_ptr_ops", "chunk_local_cumsum_kernel", f"bh{bh}t{t}_{dt}",
                        [inp("s", [bh, t], dt, "randn"), inp("out", [bh, t], dt, "poison")],
                        ["s", "out", "T"], [_cdiv(t, 64), bh], ["out"], "", {"T": t}, {"BT": 64}))

    # decode: 64 sequences of 1000-8000 tokens (ragged against the 16-token pages), 32 query heads on 8 KV heads
    bsz, hq, hkv, d, page = 64, 32, 8, 128, 16
    seq_lens = [1000 + (i * 2741) % 7001 for i in range(bsz)]
    max_pages = max(_cdiv(s, page) for s in seq_lens)
    n_pages = bsz * max_pages
    dt = "float16"
    kv_read = 2 * sum(seq_lens) * hkv * d * ITEMSIZE[dt]  # each sequence's K and V once (the query group shares them)
    out.append(case("paged_decode_attention", "paged_decode_kernel", f"b{bsz}_hq{hq}_hkv{hkv}_d{d}_{dt}",
                    [inp("q", [bsz, hq, d], dt, "randn"), inp("k_cache", [n_pages, page, hkv, d], dt, "randn"),
                     inp("v_cache", [n_pages, page, hkv, d], dt, "randn"),
                     inp("block_table", [bsz, max_pages], "int32", "rows_of_randperm", size=n_pages),
                     inp("seq_lens", [bsz], "int32", "given", values=seq_lens), inp("o", [bsz, hq, d], dt, "poison")],
                    ["q", "k_cache", "v_cache", "block_table", "seq_lens", "o", "sm_scale", "sqb", "sqh",
                     "sbt", "spage", "stok", "skvh"], [bsz, hq], ["o"], "",
                    {"sm_scale": 1.0 / math.sqrt(d), "sqb": hq * d, "sqh": d, "sbt": max_pages,
                     "spage": page * hkv * d, "stok": hkv * d, "skvh": d},
                    {"N_KV_GROUP": hq // hkv, "HEAD_DIM": d, "PAGE_SIZE": page},
                    traffic_bytes=kv_read + 2 * bsz * hq * d * ITEMSIZE[dt] + bsz * (max_pages + 1) * 4))

    for (h, ql, kl), dt, out_dt in [((16, 4096, 4096), "float32", "float32"), ((8, 3000, 5000), "int32", "int64")]:
        name = f"h{h}_q{ql}_k{kl}{'' if dt == 'float32' else f'_{dt}_to_{out_dt}'}"
        out.append(case("rel_pos_bias", "rel_pos_bias_kernel", name,
                        [inp("table", [h, 32], dt, *(("randint",) if dt == "int32" else ("randn",)),
                             **({"lo": -1000, "hi": 1000} if dt == "int32" else {})),
                         inp("out", [h, ql, kl], out_dt, "poison")],
                        ["table", "out", "q_len", "k_len"], [_cdiv(ql, 32), _cdiv(kl, 64), h], ["out"], "",
                        {"q_len": ql, "k_len": kl}, {"N_BUCKETS": 32, "BUCKET_WIDTH": 8, "BLOCK_Q": 32, "BLOCK_K": 64}))


def _gemms(out):
    gemm_tol = {"c": (2e-2, 1e-2)}
    # the autotuner's largest config (128, 128, 64, GROUP_M 8; 8 warps, 3 stages): the launch picks its options
    for (M, N, K), act in [((8192, 8192, 8192), ""), ((4000, 5000, 3000), "leaky_relu")]:
        dt = "float16"
        out.append(case("matmul", "matmul_kernel", f"{M}x{N}x{K}_{dt}{'_' + act if act else ''}",
                        [inp("a", [M, K], dt, "randn"), inp("b", [K, N], dt, "randn"), inp("c", [M, N], dt, "poison")],
                        ["a", "b", "c", "M", "N", "K", "K", "one", "N", "one", "N", "one"],
                        [_cdiv(M, 128) * _cdiv(N, 128)], ["c"], "", {"M": M, "N": N, "K": K, "one": 1},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "ACTIVATION": act}, tol=gemm_tol))
    for M, N, K in [(8192, 8192, 8192), (4000, 5000, 3000)]:
        dt = "float16"
        out.append(case("persistent_matmul", "persistent_matmul_kernel", f"{M}x{N}x{K}_sms{H100_SMS}",
                        [inp("a", [M, K], dt, "randn"), inp("b", [K, N], dt, "randn"), inp("c", [M, N], dt, "poison")],
                        ["a", "b", "c", "M", "N", "K", "K", "one", "N", "one", "N", "one"],
                        [min(H100_SMS, _cdiv(M, 128) * _cdiv(N, 128))], ["c"], "", {"M": M, "N": N, "K": K, "one": 1},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "NUM_SMS": H100_SMS},
                        tol=gemm_tol, options={"num_warps": 8, "num_stages": 3}))
    # split-K serves skinny products: few rows, a long K
    for (M, N, K), dt in [((128, 8192, 16384), "float16"), ((100, 5000, 12000), "float32")]:
        out.append(case("split_k_gemm", "split_k_gemm_kernel", f"{M}x{N}x{K}_{dt}",
                        [inp("a", [M, K], dt, "randn"), inp("b", [K, N], dt, "randn"),
                         inp("c", [M, N], "float32", "zeros")],
                        ["a", "b", "c", "M", "N", "K", "K", "N", "N"], [_cdiv(M, 16) * _cdiv(N, 64), 4], ["c"], "",
                        {"M": M, "N": N, "K": K}, {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128, "SPLIT_K": 4},
                        tol={"c": (1e-3, 1e-4)}))
    for M, N, K in [(8192, 8192, 8192), (4000, 5000, 3000)]:
        dt = "float16"
        out.append(case("descriptor_gemm", "descriptor_gemm_kernel", f"{M}x{N}x{K}_{dt}",
                        [inp("x", [M, K], dt, "randn"), inp("w", [N, K], dt, "randn"),
                         inp("out", [M, N], dt, "poison")],
                        ["x", "w", "out", "M", "N", "K"], [_cdiv(M, 128), _cdiv(N, 128)], ["out"], "",
                        {"M": M, "N": N, "K": K}, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
                        tol={"out": (2e-2, 1e-2)}))
    # int8 GEMMs with the tile an int8 GEMM would use (the fixture's host defaults, 32 x 32 x 32, are test sizes)
    m, n, k = 8192, 8192, 8192
    out.append(case("int8_matmul", "int8_gemm_kernel", f"{m}x{n}x{k}",
                    [inp("a", [m, k], "int8", "randint", lo=-128, hi=128),
                     inp("b", [k, n], "int8", "randint", lo=-128, hi=128),
                     inp("c", [m, n], "int32", "poison")],
                    ["a", "b", "c", "M", "N", "K", "sak", "one", "sbk", "one", "scm", "one"],
                    [_cdiv(m, 128), _cdiv(n, 128)], ["c"], "",
                    {"M": m, "N": n, "K": k, "sak": k, "sbk": n, "scm": n, "one": 1},
                    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, options={"num_warps": 8}))
    for (m, n, k), dt in [((8192, 8192, 8192), "float16"), ((4000, 5000, 3000), "float32")]:
        out.append(case("int8_matmul", "int8_gemm_rowscale_kernel", f"{m}x{n}x{k}_{dt}",
                        [inp("a", [m, k], "int8", "randint", lo=-128, hi=128),
                         inp("b", [k, n], "int8", "randint", lo=-128, hi=128),
                         inp("scale", [m], dt, "uniform", lo=1e-5, hi=2e-5), inp("out", [m, n], dt, "poison")],
                        ["a", "b", "scale", "out", "M", "N", "K", "sak", "one", "sbk", "one", "som", "one"],
                        [_cdiv(m, 128), _cdiv(n, 128)], ["out"], "",
                        {"M": m, "N": n, "K": k, "sak": k, "sbk": n, "som": n, "one": 1},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, options={"num_warps": 8}))
    # host descriptors: the autotuner's larger config (128, 64, 32; 8 warps); the block shapes its pre_hook sets
    M, N, K, (bm, bn, bk) = 4096, 4096, 4096, (128, 64, 32)
    out.append(case("host_descriptor_matmul", "host_desc_matmul_kernel", f"{M}x{N}x{K}_float32",
                    [inp("a", [M, K], "float32", "randn"), inp("b", [K, N], "float32", "randn"),
                     inp("c", [M, N], "float32", "poison")],
                    ["a_desc", "b_desc", "c_desc", "K"], [_cdiv(M, bm), _cdiv(N, bn)], ["c"], "", {"K": K},
                    {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, tol={"c": (2e-2, 1e-2)},
                    descriptors={"a_desc": {"base": "a", "block": [bm, bk]}, "b_desc": {"base": "b", "block": [bk, bn]},
                                 "c_desc": {"base": "c", "block": [bm, bn]}}, package=UNSEEN_PKG,
                    options={"num_warps": 8}))


def _sequence_and_tables(out):
    # Llama-style rotary embeddings: 32768 tokens x 32 query / 8 KV heads x 128 (ragged: 28 / 4 heads of BLOCK_H 32)
    for (t, hq, hk, d), dt in [((32768, 32, 8, 128), "float16"), ((16384, 28, 4, 128), "float32")]:
        out.append(case("rope", "rope_kernel", f"t{t}_hq{hq}_hk{hk}_d{d}_{dt}",
                        [inp("q", [t, hq, d], dt, "randn"), inp("k", [t, hk, d], dt, "randn"),
                         inp("cos", [8192, d // 2], "float32", "uniform", lo=-1.0, hi=1.0),
                         inp("sin", [8192, d // 2], "float32", "uniform", lo=-1.0, hi=1.0),
                         inp("pos", [t], "int32", "randint", lo=0, hi=8192)],
                        ["q", "k", "cos", "sin", "pos", "q_stride", "k_stride", "cs_stride", "hq", "hk"], [t],
                        ["q", "k"], "",
                        {"q_stride": hq * d, "k_stride": hk * d, "cs_stride": d // 2, "hq": hq, "hk": hk},
                        {"HEAD_DIM": d, "BLOCK_H": _npo2(max(hq, hk))}))
    for (t, h, half), dt in [((32768, 32, 64), "float16"), ((16384, 40, 64), "float32")]:
        out.append(case("rope_complex", "rope_complex_kernel", f"t{t}_h{h}_half{half}_{dt}",
                        [inp("q", [t, h, 2 * half], dt, "randn"),
                         inp("freqs", [8192, half, 2], "float32", "uniform", lo=-1.0, hi=1.0),
                         inp("pos", [t], "int32", "randint", lo=0, hi=8192)],
                        ["q", "freqs", "pos", "q_stride", "n_heads"], [t], ["q"], "",
                        {"q_stride": h * 2 * half, "n_heads": h}, {"HALF": half, "BLOCK_H": _npo2(h)}))

    for (b, d, t), act, dt in [((8, 4096, 4096), True, "float16"), ((4, 3000, 5000), False, "float32")]:
        out.append(case("causal_conv1d", "causal_conv1d_kernel", f"b{b}d{d}t{t}_{dt}_{'silu' if act else 'id'}",
                        [inp("x", [b, d, t], dt, "randn"), inp("w", [d, 4], dt, "randn", scale=0.5),
                         inp("bias", [d], dt, "randn"), inp("y", [b, d, t], dt, "poison")],
                        ["x", "w", "bias", "y", "dim", "seq_len", "sb", "sd"], [b, _cdiv(d, 64), _cdiv(t, 64)],
                        ["y"], "", {"dim": d, "seq_len": t, "sb": d * t, "sd": t},
                        {"WIDTH": 4, "BLOCK_D": 64, "BLOCK_T": 64, "SILU": act}))

    # 60000 token ids (every 4th the pad id) into a 32000 x 4096 table, the batch padded to 65536 rows
    n_rows, padded, vocab, hidden, dt = 60000, 65536, 32000, 4096, "float16"
    gathered = (n_rows - _cdiv(n_rows, 4)) * hidden * ITEMSIZE[dt]  # pad rows read nothing
    out.append(case("embedding", "embedding_kernel", f"rows{n_rows}of{padded}_v{vocab}_h{hidden}_{dt}",
                    [inp("ids", [n_rows], "int32", "randint", lo=0, hi=vocab, ignore=-1, every=4),
                     inp("weight", [vocab, hidden], dt, "randn"), inp("out", [padded, hidden], dt, "poison")],
                    ["ids", "weight", "out", "n_rows", "hidden", "hidden", "hidden", "pad_id"], [padded], ["out"], "",
                    {"n_rows": n_rows, "hidden": hidden, "pad_id": -1}, {"BLOCK_H": 512},
                    traffic_bytes=n_rows * 4 + gathered + n_rows * hidden * ITEMSIZE[dt]))

    for (r, c), dt, blk in [((8192, 8192), "float32", 1024), ((8191, 5000), "float16", 1024)]:
        out.append(case("transpose", "transpose_kernel", f"{r}x{c}_{dt}",
                        [inp("x", [r, c], dt, "randn"), inp("y", [c, r], dt, "poison")],
                        ["x", "y", "n_rows", "n_cols"], [_cdiv(r * c, blk)], ["y"], "", {"n_rows": r, "n_cols": c},
                        {"BLOCK": blk}))
    for (r, c), shift in [((8192, 8192), 1000), ((5000, 3001), -77)]:
        out.append(case("transpose", "roll_kernel", f"{r}x{c}_shift{shift}",
                        [inp("x", [r, c], "float32", "randn"), inp("y", [r, c], "float32", "poison")],
                        ["x", "y", "n_rows", "n_cols", "shift"], [_cdiv(r, 16), _cdiv(c, 128)], ["y"], "",
                        {"n_rows": r, "n_cols": c, "shift": shift}, {"BLOCK_M": 16, "BLOCK_N": 128}))

    # MoE routing (top-2 over 64 experts): counting and aligning a 262144-token batch (their work is atomics and a
    # serial scan per expert: long launches on little data), permuting 65536 tokens of hidden size 4096
    n_experts, dt = 64, "float16"
    for n_tokens in (262144, 65536):
        n_slots = n_tokens * 2
        topk = inp("topk_ids", [n_tokens, 2], "int32", "randint", lo=0, hi=n_experts)
        max_padded = n_slots + n_experts * 63
        if n_tokens == 262144:
            out.append(case("moe_align", "moe_count_kernel", f"t{n_tokens}_e{n_experts}",
                            [topk, inp("counts", [n_experts], "int32", "zeros")], ["topk_ids", "counts", "n_slots"],
                            [_cdiv(n_slots, 256)], ["counts"], "", {"n_slots": n_slots}, {"BLOCK": 256}))
            out.append(case("moe_align", "moe_align_kernel", f"t{n_tokens}_e{n_experts}",
                            [topk, inp("counts", [n_experts], "int32", "bincount", of="topk_ids", minlength=n_experts),
                             inp("sorted_ids", [max_padded], "int32", "poison"),
                             inp("expert_offsets", [n_experts + 1], "int32", "poison")],
                            ["topk_ids", "counts", "sorted_ids", "expert_offsets", "n_slots", "n_experts"],
                            [n_experts], ["sorted_ids", "expert_offsets"], "",
                            {"n_slots": n_slots, "n_experts": n_experts},
                            {"BLOCK_SIZE": 64, "BLOCK_E": _npo2(n_experts), "BLOCK": 256}))
            continue
        hidden = 4096
        out.append(case("moe_align", "moe_permute_kernel", f"t{n_tokens}_e{n_experts}_h{hidden}_{dt}",
                        [topk, inp("x", [n_tokens, hidden], dt, "randn"),
                         inp("sorted_ids", [max_padded], "int32", "moe_sorted_ids", of="topk_ids",
                             n_experts=n_experts, block_size=64),
                         inp("out", [max_padded, hidden], dt, "poison")],
                        ["x", "sorted_ids", "out", "n_slots", "hidden"], [max_padded], ["out"], "",
                        {"n_slots": n_slots, "hidden": hidden}, {"TOP_K": 2, "BLOCK_H": 1024},
                        # each token's row read once per slot (top-2), every padded row written
                        traffic_bytes=max_padded * 4 + (n_slots + max_padded) * hidden * ITEMSIZE[dt]))


def _unseen(out):
    r, c = 262144, 256  # a TMA box is at most 256 wide: the weight's block is the whole row
    out.append(case("host_descriptor_norm", "host_desc_row_norm_kernel", f"{r}x{c}_float32",
                    [inp("x", [r, c], "float32", "randn"), inp("out", [r, c], "float32", "poison"),
                     inp("w", [c], "float32", "randn")],
                    ["x", "out", "w_desc", "stride", "eps"], [r], ["out"], "", {"stride": c, "eps": 1e-5},
                    {"BLOCK_N": c}, descriptors={"w_desc": {"base": "w", "block": [c]}}, package=UNSEEN_PKG))
    rows, n_valid = 1 << 22, (1 << 22) - 1000
    out.append(case("descriptor_computed_shape", "desc_computed_shape_kernel", f"{rows}rows_{n_valid}valid",
                    [inp("x", [rows, 16], "float32", "randn"), inp("count", [1], "int32", "given", values=[n_valid]),
                     inp("out", [rows, 16], "float32", "poison")],
                    ["x", "count", "out"], [_cdiv(rows, 128)], ["out"], "", {}, {"D": 16, "BLOCK_M": 128},
                    package=UNSEEN_PKG))
    for n_words, out_dt in (((1 << 25) + 17, "float16"),):
        out.append(case("pointer_tables", "dequant4_words_kernel", f"w{n_words}_{out_dt}",
                        [inp("w", [n_words], "int32", "randint", lo=-2 ** 31, hi=2 ** 31),
                         inp("scale", [_cdiv(n_words, 64)], "float32", "uniform", lo=0.5, hi=2.0),
                         inp("out", [n_words * 8], out_dt, "poison")],
                        ["w", "scale", "out", "n_words"], [_cdiv(n_words, 64)], ["out"], "", {"n_words": n_words},
                        {"WORDS": 64}))
    n_words = (1 << 25) + 3
    out.append(case("pointer_tables", "dequant4_bytes_kernel", f"w{n_words}",
                    [inp("w", [n_words], "int32", "randint", lo=-2 ** 31, hi=2 ** 31),
                     inp("out", [n_words * 8], "float32", "poison")],
                    ["w", "out", "n_bytes"], [_cdiv(n_words * 4, 256)], ["out"], "", {"n_bytes": n_words * 4},
                    {"BLOCK": 256}))
    # 32 groups of 512 rows x 4096 columns (one program per group walks its rows)
    groups, rows, n_cols = 32, 512, 4096
    xs = [inp(f"x{i}", [rows, n_cols], "float32", "randn") for i in range(groups)]
    ys = [inp(f"y{i}", [rows, n_cols], "float32", "poison") for i in range(groups)]
    out.append(case("pointer_tables", "grouped_row_scale_kernel", f"g{groups}r{rows}c{n_cols}_int32",
                    xs + ys + [inp("x_table", [groups], "int64", "addresses", of=[x["name"] for x in xs]),
                               inp("y_table", [groups], "int64", "addresses", of=[y["name"] for y in ys]),
                               inp("rows", [groups], "int32", "given", values=[rows] * groups),
                               inp("scale", [groups], "float32", "uniform", lo=-2.0, hi=2.0)],
                    ["x_table", "y_table", "rows", "scale", "n_cols"], [groups], [y["name"] for y in ys], "",
                    {"n_cols": n_cols}, {"BLOCK": _npo2(n_cols)}))
    n = (1 << 26) + 11
    out.append(case("float_atomics", "absmax_kernel", f"n{n}",
                    [inp("x", [n], "float32", "randn", scale=100.0),
                     inp("amax", [1], "float32", "given", values=[0.0])],
                    ["x", "amax", "n"], [_cdiv(n, 512)], ["amax"], "", {"n": n}, {"BLOCK": 512}))
    rows, n_cols = 8192, 4096
    out.append(case("float_atomics", "col_extrema_kernel", f"{rows}x{n_cols}",
                    [inp("x", [rows, n_cols], "float32", "randn"), inp("mx", [n_cols], "float32", "randn"),
                     inp("mn", [n_cols], "float32", "randn")],
                    ["x", "mx", "mn", "n_cols"], [rows], ["mx", "mn"], "", {"n_cols": n_cols}, {"BLOCK": n_cols},
                    tol={"mx": (0, 0), "mn": (0, 0)}))
    n_words = (1 << 24) + 5
    out.append(case("int_bitcast", "nibble_bits_kernel", f"w{n_words}_int64",
                    [inp("w", [n_words], "int32", "randint", lo=-2 ** 31, hi=2 ** 31),
                     inp("idx", [n_words], "int64", "randint", lo=0, hi=n_words),
                     inp("zero", [_cdiv(n_words, 8)], "int32", "randint", lo=-2 ** 31, hi=2 ** 31),
                     inp("out", [n_words * 8], "float32", "poison")],
                    ["w", "idx", "zero", "out", "n_words"], [_cdiv(n_words, 64)], ["out"], "", {"n_words": n_words},
                    {"WORDS": 64}))
    n = (1 << 26) + 1
    out.append(case("python_assert", "asserted_scale_kernel", f"n{n}",
                    [inp("x", [n], "float32", "randn"), inp("out", [n], "float32", "poison")],
                    ["x", "out", "n", "stride_x"], [_cdiv(n, 1024)], ["out"], "", {"n": n, "stride_x": 1},
                    {"BLOCK": 1024}))
    n = (1 << 26) + 7
    out.append(case("exact_gelu", "erf_kernel", f"n{n}", [inp("x", [n], "float32", "randn", scale=2.5),
                                                          inp("y", [n], "float32", "poison")],
                    ["x", "y", "n"], [_cdiv(n, 1024)], ["y"], "", {"n": n}, {"BLOCK": 1024}))
    for n, dt in [((1 << 27) + 7, "float16")]:
        out.append(case("exact_gelu", "geglu_forward_kernel", f"n{n}_{dt}",
                        [inp("x", [n], dt, "randn", scale=2.0), inp("g", [n], dt, "randn"),
                         inp("y", [n], dt, "poison")],
                        ["x", "g", "y", "n"], [_cdiv(n, 1024)], ["y"], "", {"n": n}, {"BLOCK": 1024}))
    for n, dt in [((1 << 26) + 7, "float32")]:
        out.append(case("exact_gelu", "gelu_backward_kernel", f"n{n}_{dt}",
                        [inp("dy", [n], dt, "randn"), inp("x", [n], dt, "randn", scale=2.0),
                         inp("dx", [n], dt, "poison")],
                        ["dy", "x", "dx", "n"], [_cdiv(n, 1024)], ["dx"], "", {"n": n}, {"BLOCK": 1024}))
    n = (1 << 26) + 3
    out.append(case("const_math", "scaled_rows_kernel", f"n{n}_d96",
                    [inp("q", [n], "float32", "randn"), inp("out", [n], "float32", "poison")],
                    ["q", "out", "n"], [_cdiv(n, 1024)], ["out"], "", {"n": n}, {"HEAD_DIM": 96, "BLOCK": 1024}))
    # token shift over a batch of fixed-length sequences (32 x 4096 tokens x 1024 features, f16: 256 MiB a side)
    B, T, D = 32, 4096, 1024
    fixed = [inp("x", [B * T * D], "float16", "randn"), inp("y", [B * T * D], "float16", "poison"),
             inp("scale", [B], "float32", "uniform", lo=0.5, hi=2.0), inp("cu", [2], "int32", "given", values=[0, 0])]
    out.append(case("varlen_shift", "shift_tokens_kernel", f"fixed_b{B}t{T}d{D}_float16", fixed,
                    ["x", "y", "scale", "cu", "T"], [B, T], ["y"], "", {"T": T}, {"D": D, "BD": D, "IS_VARLEN": False}))
    out.append(case("varlen_shift", "shift_chunks_kernel", f"fixed_b{B}t{T}d{D}_float16",
                    fixed + [inp("chunks", [2], "int32", "given", values=[0, 0])],
                    ["x", "y", "scale", "cu", "chunks", "T"], [(D // 256) * _cdiv(T, 64), B], ["y"], "", {"T": T},
                    {"D": D, "BD": 256, "BT": 64, "ND": D // 256, "IS_VARLEN": False}))


def real_cases() -> list[dict]:
    out: list[dict] = []
    _elementwise(out)
    _rows_kernels(out)
    _attention(out)
    _gemms(out)
    _sequence_and_tables(out)
    _unseen(out)
    return out


# ------------------------------------------------------------------------------------------ consistency

def _numel(shape) -> int:
    return math.prod(shape)


def case_memory(c: dict) -> int:
    """Bytes of the case's tensors (each is held three times on the GPU: pristine, Triton's, the port's)."""
    return sum(_numel(i["shape"]) * ITEMSIZE[i["dtype"]] for i in c["inputs"])


def problems(c: dict) -> list[str]:
    """What is inconsistent in a case: an argument that names nothing, an unused input, a grid that is not
    1-3 positive ints, an output that is no input, a tensor too large for int32 offsets, a case too large for
    the GPU, a scalar that disagrees with the shape it describes."""
    names = {i["name"]: i for i in c["inputs"]}
    descs = c.get("descriptors", {})
    out = [f"argument {a!r} is no input, scalar or descriptor" for a in c["args"]
           if a not in names and a not in c["scalars"] and a not in descs]
    used = set(c["args"]) | {d["base"] for d in descs.values()}
    used |= {n for i in c["inputs"] for n in i["init"].get("of", []) if isinstance(i["init"].get("of"), list)}
    used |= {i["init"]["of"] for i in c["inputs"] if isinstance(i["init"].get("of"), str)}
    out += [f"input {n!r} is not passed" for n in names if n not in used]
    if not (1 <= len(c["grid"]) <= 3 and all(isinstance(g, int) and g > 0 for g in c["grid"])):
        out.append(f"grid {c['grid']} is not 1-3 positive ints")
    if any(g >= 2 ** 31 for g in c["grid"][:1]) or any(g >= 65536 for g in c["grid"][1:]):
        out.append(f"grid {c['grid']} beyond CUDA's limits")
    out += [f"output {o!r} is no input" for o in c["outputs"] if o not in names]
    out += [f"input {i['name']!r} has {_numel(i['shape'])} elements, beyond int32 offsets"
            for i in c["inputs"] if _numel(i["shape"]) > INT32_MAX]
    if 3 * case_memory(c) > MAX_CASE_BYTES:
        out.append(f"{3 * case_memory(c) / GIB:.1f} GiB on the GPU (3 copies), above {MAX_CASE_BYTES / GIB:.0f}")
    first = next((names[a] for a in c["args"] if a in names and names[a]["init"]["kind"] != "addresses"), None)
    s = c["scalars"]
    if first is not None:
        shape = first["shape"]
        if "n_cols" in s and len(shape) == 2 and shape[-1] != s["n_cols"]:
            out.append(f"n_cols {s['n_cols']} is not the last dimension of {first['name']} {shape}")
        if "n" in s and _numel(shape) not in (s["n"], 4 * s["n"]) and s["n"] not in shape:  # (or one axis: a row)
            out.append(f"n {s['n']} is not the size of {first['name']} {shape}")
    if {"M", "N", "K"} <= set(s):
        o = names[next(iter(c["outputs"]))]["shape"]
        if sorted(o) != sorted([s["M"], s["N"]]):
            out.append(f"M x N {s['M']} x {s['N']} is not the output's shape {o}")
    return out


def check_all(cs: list[dict] | None = None) -> dict[str, list[str]]:
    """Case id -> its problems, for the cases that have any (empty: all consistent)."""
    cs = real_cases() if cs is None else cs
    return {c["id"]: p for c in cs if (p := problems(c))}
