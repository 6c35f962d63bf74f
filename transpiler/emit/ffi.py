"""View models of the C ABI (`src/<op>/ffi.rs`) and the Python wrapper (`python/cutile_ports/<op>.py`).

Both are built from a kernel's manifest record alone, so the ABI describes exactly what the manifest
says was generated. Constant expressions (variant predicates, derived constants, tile shapes) are
Python expressions over the kernel's constants; `rust_const_expr` turns them into Rust over i64 locals
with Python's floor semantics.
"""

from __future__ import annotations

import ast
import math
import itertools
import re

from ..config import DTYPES
from ..model.ir import GENERIC_DTYPES, element_combinations, is_generic
from .derived_names import extent_names
from .lower import INT_KINDS, rust_ident

# how the Python wrapper recognizes each dtype: torch's name, the __cuda_array_interface__ typestr, DLPack's
# (type code, bits) (kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6; the fp8 types have no DLPack code)
INTEROP = {
    "f32": ("torch.float32", "<f4", (2, 32)), "f16": ("torch.float16", "<f2", (2, 16)),
    "bf16": ("torch.bfloat16", None, (4, 16)), "i32": ("torch.int32", "<i4", (0, 32)),
    "i64": ("torch.int64", "<i8", (0, 64)), "f8e5m2": ("torch.float8_e5m2", None, None),
    "f8e4m3fn": ("torch.float8_e4m3fn", None, None), "i8": ("torch.int8", "|i1", (0, 8)),
    "u8": ("torch.uint8", "|u1", (1, 8)), "i16": ("torch.int16", "<i2", (0, 16)), "bool": ("torch.bool", "|b1", (6, 8)),
}
# return codes in order (the code is the position), with when each is returned
ABI_CODES = [
    ("CUTILE_OK", "Success."),
    ("CUTILE_ERR_NULL", "A descriptor pointer or a tensor's data pointer is null."),
    ("CUTILE_ERR_RANK", "`ndim` differs from the rank the kernel takes for that array."),
    ("CUTILE_ERR_DTYPE", "Unknown dtype code, or a dtype this array or kernel does not take."),
    ("CUTILE_ERR_DTYPE_MISMATCH", "Arrays that share one of the kernel's element types (`E`, `E2`) have different dtypes."),
    ("CUTILE_ERR_SHAPE", "A dimension is negative, or the addressed extent does not fit the i32 index type."),
    ("CUTILE_ERR_STRIDE", "A stride is negative or does not fit i32, a written array has overlapping (zero) "
                          "strides, or a pointer-accessed array is not contiguous in its last dimension."),
    ("CUTILE_ERR_ALIGN", "The data pointer is not aligned to the element size."),
    ("CUTILE_ERR_GRID", "A grid dimension is not positive or exceeds the CUDA limit."),
    ("CUTILE_ERR_GRID_MISMATCH", "The grid differs from the partition grid of a checked (`&mut Tensor`) output."),
    ("CUTILE_ERR_VARIANT", "Unknown variant, or a variant whose predicate does not hold for the constants."),
    ("CUTILE_ERR_CONST", "A constant does not fit i32, a bool constant is not 0 or 1, a tile size set by the "
                         "constants is not a positive power of two, or a derived constant divides by zero."),
    ("CUTILE_ERR_DEVICE", "The device ordinal is invalid, or no CUDA driver or context is available."),
    ("CUTILE_ERR_LAUNCH", "cuTile Rust refused the launch, or JIT compilation or the launch itself failed."),
    ("CUTILE_ERR_PANIC", "A panic was caught at the boundary (a bug; the message says where)."),
]
MAX_RANK = 8  # the descriptor's shape/stride capacity
FIRE_WORDS = 64  # the most value words (arrays and scalars) the compiled fast path fires (`cutile_fire`)
SCALAR_C_TYPES = {"i32": "i32", "i64": "i64", "f32": "f32", "f64": "f64", "bool": "bool"}
SCALAR_PARAMS = {"i32": "I32", "i64": "I64", "f32": "F32", "f64": "F64", "bool": "Bool"}  # abi::Param's variants


def abi_tables() -> dict:
    """The ABI's dtype and code tables, for abi.rs.j2 and the Python wrapper's mirror."""
    return {
        "max_rank": MAX_RANK, "fire_words": FIRE_WORDS,
        "codes": [{"name": n, "doc": doc, "code": i} for i, (n, doc) in enumerate(ABI_CODES)],
        "dtypes": [{"name": n, "variant": n.upper(), "code": c, "size": size} for n, (c, _, size) in DTYPES.items()],
        "py_dtypes": repr({n: (c, size) for n, (c, _, size) in DTYPES.items()}),
        "int_kinds": [{"variant": n.upper(), "kind": k} for n, k in INT_KINDS.items()],
        "py_torch": repr({t: n for n, (t, _, _) in INTEROP.items()}),
        "py_cai": repr({c: n for n, (_, c, _) in INTEROP.items() if c}),
        "py_dlpack": repr({d: n for n, (_, _, d) in INTEROP.items() if d}),
        "py_generics": repr(GENERIC_DTYPES),
        "py_codes": repr({i: n for i, (n, _) in enumerate(ABI_CODES)}),
    }


class AbiUnsupported(Exception):
    """The kernel has a parameter the C ABI cannot carry (reported, the kernel gets no symbol)."""


def rust_const_expr(src: str, names: set[str], want: str = "int", floats: frozenset[str] = frozenset()) -> str:
    """A constant expression in Python syntax as Rust over i64 locals (`want`: int | bool). Names in `floats`
    are ct.Constant[float] values, read from their f64 locals (`name__value`) and compared as Python does."""
    tree = ast.parse(src.strip(), mode="eval").body
    code, kind = _expr(tree, names, floats)
    return _coerce(code, kind, want)


def _coerce(code: str, kind: str, want: str) -> str:
    if kind == want:
        return code
    if want == "float":
        return f"(({_coerce(code, kind, 'int')}) as f64)"
    if kind == "float":  # Python's int(x) / bool(x) of a float are not needed by any predicate: refused
        raise AbiUnsupported("a float constant expression used as an integer has no C-ABI form")
    return f"({code} != 0)" if want == "bool" else f"(({code}) as i64)"


# triton.next_power_of_2 (0 for n <= 0) and tl.standard._log2 (0 for i <= 1) over an i64, as verify/specs.py's
_INT_FUNCS = {"next_power_of_2": "({{ let n: i64 = {x}; if n <= 0 {{ 0i64 }} else {{ (n as u64).next_power_of_two() as i64 }} }})",
              "log2_floor": "({{ let i: i64 = {x}; if i <= 1 {{ 0i64 }} else {{ (63 - i.leading_zeros()) as i64 }} }})"}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
_BITOPS = {ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def _expr(node: ast.AST, names: set[str], floats: frozenset[str] = frozenset()) -> tuple[str, str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return ("true" if node.value else "false"), "bool"
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return f"{node.value}i64", "int"
    if isinstance(node, ast.Constant) and isinstance(node.value, float) and math.isfinite(node.value):
        return f"{node.value!r}f64", "float"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" \
            and len(node.args) == 1 and not node.keywords:  # a folded float constant (Infer.derived_float_name)
        return _coerce(*_expr(node.args[0], names, floats), "float"), "float"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt" \
            and len(node.args) == 1 and not node.keywords:  # Python's math.sqrt of constants (Triton): IEEE, exact
        return f"({_coerce(*_expr(node.args[0], names, floats), 'float')}).sqrt()", "float"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "pow" \
            and len(node.args) == 2 and not node.keywords:  # Python's float `**` of constants (Triton): libm's pow
        a, b = (_coerce(*_expr(x, names, floats), "float") for x in node.args)
        return f"({a}).powf({b})", "float"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _INT_FUNCS \
            and len(node.args) == 1 and not node.keywords:  # Triton's constexpr functions (verify/specs.py)
        x = _coerce(*_expr(node.args[0], names, floats), "int")
        return _INT_FUNCS[node.func.id].format(x=x), "int"
    if isinstance(node, ast.Name) and node.id in floats:
        return f"{rust_ident(node.id)}__value", "float"
    if isinstance(node, ast.Name) and node.id in names:
        return rust_ident(node.id), "int"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        code, kind = _expr(node.operand, names, floats)
        return (f"(-{code})", "float") if kind == "float" else (f"(-{_coerce(code, kind, 'int')})", "int")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        code, kind = _expr(node.operand, names, floats)
        return f"(!{_coerce(code, kind, 'bool')})", "bool"
    if isinstance(node, ast.BoolOp):
        op = " && " if isinstance(node.op, ast.And) else " || "
        return "(" + op.join(_coerce(*_expr(v, names, floats), "bool") for v in node.values) + ")", "bool"
    if isinstance(node, ast.BinOp):
        left, right = _expr(node.left, names, floats), _expr(node.right, names, floats)
        if "float" in (left[1], right[1]) or isinstance(node.op, ast.Div):  # f64 arithmetic, as Python's
            a, b = _coerce(*left, "float"), _coerce(*right, "float")
            if type(node.op) in _BINOPS:
                return f"({a} {_BINOPS[type(node.op)]} {b})", "float"
            if isinstance(node.op, ast.Div):
                return f"abi::truediv({a}, {b})?", "float"
        else:
            a, b = _coerce(*left, "int"), _coerce(*right, "int")
            if type(node.op) in _BINOPS:
                return f"({a} {_BINOPS[type(node.op)]} {b})", "int"
            if type(node.op) in _BITOPS:  # two's complement: Python's on every i64
                return f"({a} {_BITOPS[type(node.op)]} {b})", "int"
            if isinstance(node.op, ast.FloorDiv):
                return f"abi::floordiv({a}, {b})?", "int"
            if isinstance(node.op, ast.Mod):
                return f"abi::floormod({a}, {b})?", "int"
    if isinstance(node, ast.IfExp):  # a choice on constants (a derived latency hint)
        a, b = _expr(node.body, names, floats), _expr(node.orelse, names, floats)
        want = "float" if "float" in (a[1], b[1]) else "int"
        return (f"(if {_coerce(*_expr(node.test, names, floats), 'bool')} {{ {_coerce(*a, want)} }} "
                f"else {{ {_coerce(*b, want)} }})"), want
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMPOPS:
        left, right = _expr(node.left, names, floats), _expr(node.comparators[0], names, floats)
        want = "float" if "float" in (left[1], right[1]) else "int"
        a, b = _coerce(*left, want), _coerce(*right, want)
        return f"({a} {_CMPOPS[type(node.ops[0])]} {b})", "bool"
    raise AbiUnsupported(f"constant expression `{ast.unparse(node)}` has no C-ABI form")


def kernel_ffi_view(kernel: dict, symbol: str, source: str) -> dict:
    """Everything `ffi.rs.j2` needs for one kernel (one symbol, one launch function per entry)."""
    params = kernel["params"]
    consts = [p for p in params if p["kind"] == "const"]
    arrays = [p for p in params if p["kind"] == "array"]
    for p in params:
        if p["kind"] == "scalar" and p["dtype"] not in SCALAR_C_TYPES:
            raise AbiUnsupported(f"scalar `{p['name']}` of type {p['dtype']}")
        if p["kind"] == "array" and p["rank"] > MAX_RANK:
            raise AbiUnsupported(f"array `{p['name']}` has rank {p['rank']}; descriptors carry at most {MAX_RANK}")
        for d in p.get("dtypes") or [p.get("dtype")]:
            if p["kind"] == "array" and not is_generic(d) and d not in DTYPES:
                raise AbiUnsupported(f"array `{p['name']}` of dtype {d}")
    if any(p["name"].startswith("__") for p in params):
        raise AbiUnsupported("parameter names starting with `__` are reserved for the ABI wrapper")
    names = {p["name"] for p in consts}
    entries = kernel["entries"]
    written = {o["array"] for e in entries for o in e["outputs"]}
    pointers = {a for e in entries for a in e.get("pointer_arrays", [])}
    c_params, arg_checks = [], []
    predicate_names = {n for e in entries for pr in list(e["predicates"]) + list(e.get("derived", {}).values())
                       for n in re.findall(r"[A-Za-z_]\w*", pr)}
    predicate_names |= {n for p in params if p.get("read_when") for n in re.findall(r"[A-Za-z_]\w*", p["read_when"])}
    floats = frozenset(p["name"] for p in params if p["kind"] == "const" and p.get("const_type") == "float")
    # an array read only under a constant condition (Param read_when): where it is false the entry never touches
    # it, so the symbol takes any descriptor or null and passes an empty placeholder of the entry's type
    unread: list[str] = []
    # the hidden constants that say whether an optional constexpr or scalar was given (not None; its own
    # argument's value is then unused): arguments after the kernel's own, in the order of those parameters
    value_flags = [next(f for f in params if f.get("given_of") == p["name"]) for p in params
                   if p["kind"] != "array" and p.get("given")]
    for p in [q for q in params if q not in value_flags] + value_flags:
        n = rust_ident(p["name"])
        if p in value_flags:
            c_params.append(f"{n}: i64")
            arg_checks.append(f'let {n} = abi::flag({n}, "{p["name"]}")?;')
        elif p.get("given_of"):  # not an argument: whether the optional pointer's descriptor is non-null
            arg_checks.append(f"let {n}: i64 = {rust_ident(p['given_of'])}.given as i64;")
        elif p.get("unit_of"):  # not an argument: whether the scalar is 1 (a tensor view's unit stride)
            arg_checks.append(f"let {n}: i64 = ({rust_ident(p['unit_of'])} == 1) as i64;")
        elif p["kind"] == "array":
            c_params.append(f"{n}: *const abi::CutileTensor")
            access = (f"abi::Access {{ written: {str(p['name'] in written).lower()}, "
                      f"pointer: {str(p['name'] in pointers).lower()} }}")
            reader = "abi::optional_tensor_arg" if p.get("given") else "abi::tensor_arg"
            rank = p["rank"]
            if p.get("ranks"):  # a rank that depends on a constant: each entry checks its own (`expect_rank`)
                rank = f'abi::given_rank({n}, "{p["name"]}", &[{", ".join(map(str, p["ranks"]))}])?'
            if p.get("unused"):  # never read: any descriptor or null, passed as an empty f32 vector (Param.unused)
                arg_checks.append(f"let {n} = abi::unused_arg({n});")
            elif p.get("read_when"):  # read only where its condition holds: checked after the constants
                cond = rust_const_expr(p["read_when"], names, "bool", floats)
                # (a rank per entry: the selected entry gives its placeholder that rank, `placeholder_rank`)
                unread.append(f"let {n} = if {cond} {{ {reader}({n}, \"{p['name']}\", {rank}, {access})? }} "
                              f"else {{ abi::unread_arg({0 if p.get('ranks') else rank}) }};")
            else:
                arg_checks.append(f'let {n} = {reader}({n}, "{p["name"]}", {rank}, {access})?;')
        elif p["kind"] == "scalar":
            c_params.append(f"{n}: {SCALAR_C_TYPES[p['dtype']]}")
        elif p.get("const_type") == "float":  # a double; the entries take its f32 bits as an i32 generic
            c_params.append(f"{n}: f64")
            if p["name"] in predicate_names:  # the value as Python has it, for the variant predicates
                arg_checks.append(f"let {n}__value: f64 = {n};")
            arg_checks.append(f'let {n} = abi::float_constant({n}, "{p["name"]}")?;')
        elif p.get("const_type") == "bool":  # 0 or 1: the entries test `== 1`, the variant predicates `!= 0`
            c_params.append(f"{n}: i64")
            arg_checks.append(f'let {n} = abi::flag({n}, "{p["name"]}")?;')
        else:
            c_params.append(f"{n}: i64")
            arg_checks.append(f'let {n} = abi::constant({n}, "{p["name"]}")?;')
    arg_checks += unread  # (the constants they test are read above)
    e_arrays = [p for p in arrays if is_generic(p["dtype"])]
    generics = [g for g in GENERIC_DTYPES if any(p["dtype"] == g for p in arrays)]
    for p in arrays:
        if p.get("dtypes") and not p.get("unused"):  # a dtype per entry: each entry checks its own (`expect_dtype`)
            allowed = ", ".join(f"abi::Dtype::{d.upper()}" for d in p["dtypes"])
            arg_checks.append(f'abi::expect_dtype_in(&{rust_ident(p["name"])}, "{p["name"]}", &[{allowed}])?;')
        elif not is_generic(p["dtype"]) and not p.get("unused"):
            arg_checks.append(f'abi::expect_dtype(&{rust_ident(p["name"])}, "{p["name"]}", '
                              f'abi::Dtype::{p["dtype"].upper()})?;')
    dtypes = [d for d in kernel.get("dtypes", []) if d in DTYPES] if e_arrays else []
    if e_arrays and not dtypes:
        raise AbiUnsupported("no verified element type has an ABI dtype code")
    for g in generics:  # each generic's dtype, read from the arrays that share it
        pairs = ", ".join(f'("{p["name"]}", &{rust_ident(p["name"])})' for p in arrays if p["dtype"] == g)
        allowed = ", ".join(f"abi::Dtype::{d.upper()}" for d in generic_domain(kernel, g))
        arg_checks.append(f"let {_element_var(g)} = abi::element_type(\"{g}\", &[{pairs}], &[{allowed}])?;")
    for p in arrays:  # an unread array's placeholder takes the element type the entry has for it
        if p.get("read_when"):
            dtype = _element_var(p["dtype"]) if is_generic(p["dtype"]) else f"abi::Dtype::{p['dtype'].upper()}"
            arg_checks.append(f"let {rust_ident(p['name'])} = abi::placeholder_of({rust_ident(p['name'])}, {dtype});")
    arg_checks.append("let __grid = abi::grid([__grid_x, __grid_y, __grid_z])?;")
    variants = len(entries) > 1
    erased = untyped_pointers(kernel)
    if len(generics) == 1 and not erased:  # one generic: its domain (integers for a count table) picks the launch
        dtypes = [d for d in generic_domain(kernel, generics[0]) if d in DTYPES]
    entry_views = [_entry_view(kernel, e, i, names, dtypes, [] if erased else generics) for i, e in enumerate(entries)]
    variant_doc = []
    if variants:  # the caller names the entry; it must be the one the constants select
        c_params.append("__variant: i32")
        variant_doc = ["`__variant` selects the entry and must agree with the constants:"]
        variant_doc += [f"{e['index']} = `{e['name']}` when `{' and '.join(e['conditions'])}`." for e in entry_views]
        arg_checks.append("let __entry = match __variant {")
        arg_checks += [f"    {e['index']} if {e['predicate']} => {e['index']}," for e in entry_views]
        arg_checks.append('    _ => return abi::fail(abi::CUTILE_ERR_VARIANT, format!("variant {__variant} is unknown '
                          'or does not match the constants")),')
        arg_checks.append("};")
    else:
        # one entry can still hold only for some constants (dimensions unified: `BV == BK`): a C caller that
        # passes others gets an error, never the entry run at values it was not made for
        only = entry_views[0]
        if only["predicate"] != "true":
            arg_checks.append(f"if !({only['predicate']}) {{")
            conditions = " and ".join(only["conditions"]).replace('"', '\\"')
            arg_checks.append(f'    return abi::fail(abi::CUTILE_ERR_VARIANT, "the constants do not satisfy '
                              f'`{conditions}` (the only entry `{only["name"]}`)".to_string());')
            arg_checks.append("}")
        arg_checks.append("let __entry = 0;")
    c_params += ["__grid_x: i64", "__grid_y: i64", "__grid_z: i64", "__device: i32", "__stream: *mut c_void"]
    doc_params = []
    for p in [q for q in params if q not in value_flags] + value_flags:
        if p in value_flags:
            doc_params.append(f"`{p['name']}`: 1 if `{p['given_of']}` is given, 0 if it is None (its value is then "
                              "not read)")
            continue
        if p.get("given_of") or p.get("unit_of"):
            continue
        if p.get("unused"):
            doc_params.append(f"`{p['name']}`: never read: any tensor descriptor, or null")
        elif p["kind"] == "array":
            rank = " or ".join(map(str, p["ranks"])) + " (as the constants select)" if p.get("ranks") else p["rank"]
            dtype = " or ".join(p["dtypes"]) + " (as `__variant` selects)" if p.get("dtypes") else p["dtype"]
            doc_params.append(f"`{p['name']}`: tensor of {dtype}, rank {rank}"
                              + (" or null (Python's None)" if p.get("given") else "")
                              + (f"; read only where `{p['read_when']}`: else any tensor descriptor, or null"
                                 if p.get("read_when") else ""))
        elif p["kind"] == "scalar":
            doc_params.append(f"`{p['name']}`: {p['dtype']}" + (" (any value where None)" if p.get("given") else ""))
        else:
            doc_params.append(f"`{p['name']}`: constant ({p['const_type']})"
                              + (" (any value where None)" if p.get("given") else ""))
    return {
        "symbol": symbol, "kernel": kernel["name"], "source": source, "line": kernel["line"],
        "c_params": c_params, "packed_args": [_unpack_word(c, i) for i, c in enumerate(c_params)],
        "packed_symbol": packed_symbol(symbol), "arg_checks": arg_checks, "variant_doc": variant_doc,
        "entries": entry_views, "doc_params": doc_params,
        # (a bounded set of combinations: the launch takes E's type only, see _entry_view)
        "launch_generics": f"<{', '.join(f'{_host_type(g)}: cutile::DType' for g in generics[:1 if 'element_combinations' in kernel else None])}>"
        if generics and not erased else "",
    }


# a C parameter's type -> how the packed form (`cutilepk_<name>`, one u64 word per parameter) reads it
_WORD_READS = {"*const abi::CutileTensor": "{w} as usize as *const abi::CutileTensor", "i32": "{w} as u32 as i32",
               "i64": "{w} as i64", "f32": "f32::from_bits({w} as u32)", "f64": "f64::from_bits({w})",
               "bool": "{w} != 0", "*mut c_void": "{w} as usize as *mut c_void"}


def packed_symbol(symbol: str) -> str:
    """The packed form of `cutile_<name>`: `cutilepk_<name>`, a name no kernel's symbol (`cutile_...`) can take."""
    return "cutilepk_" + symbol.removeprefix("cutile_")


def _unpack_word(c_param: str, index: int) -> str:
    return _WORD_READS[c_param.split(":", 1)[1].strip()].format(w=f"__words[{index}]")


def int_kind_of(name: str) -> str | None:
    """The generic whose kind the const generic `name` holds (`__E2_INT` -> `E2`), or None."""
    m = re.fullmatch(r"__(E\d*)_INT", name)
    return m.group(1) if m and is_generic(m.group(1)) else None


def untyped_pointers(kernel: dict) -> bool:
    """A Triton kernel: its pointers reach the device untyped (`*mut u8`, see emit/lower.py), so one launch
    function serves every combination of element types; the generics name them."""
    arrays = [p for p in kernel["params"] if p["kind"] == "array"]
    return bool(arrays) and all(p.get("flat") for p in arrays)


def generic_domain(kernel: dict, generic: str) -> list[str]:
    """The dtypes a generic may take: its arrays' domain (Triton pointers, see passes/domains.py), else those it
    takes in the exported combinations of a bounded set (exported_combinations), else the kernel's dtypes."""
    domain = next((p["domain"] for p in kernel["params"] if p["kind"] == "array" and p["dtype"] == generic
                   and p.get("domain")), None)
    if domain is None and "element_combinations" in kernel:
        i = _generics(kernel).index(generic)
        taken = [c[i] for c in kernel["element_combinations"]]  # in the kernel's dtype order, then the others'
        domain = [d for d in dict.fromkeys(list(kernel.get("dtypes", [])) + taken) if d in taken]
    return [d for d in (domain or kernel.get("dtypes", [])) if d in DTYPES]


def _generics(kernel: dict) -> list[str]:
    return [g for g in GENERIC_DTYPES if any(p["kind"] == "array" and p["dtype"] == g for p in kernel["params"])]


def exported_combinations(kernel: dict) -> list[tuple[str, ...]]:
    """The combinations of its generics' dtypes (E, E2, ... in order) a kernel's symbol exports and verify
    checks: the manifest's `element_combinations` (a kernel of more than two generics: model/ir.py's
    element_combinations), else every combination of its dtypes."""
    if "element_combinations" in kernel:
        return [tuple(c) for c in kernel["element_combinations"]]
    every = [d for d in kernel.get("dtypes", []) if d in DTYPES]
    return list(itertools.product(every, repeat=len(_generics(kernel))))


def recorded_combinations(kernel: dict) -> list[list[str]] | None:
    """What the manifest records as `element_combinations`: the bounded set of a cuTile Python kernel of more
    than two generics (None: every combination, which the manifest leaves unsaid)."""
    generics = _generics(kernel)
    partners = partner_generics(kernel)
    if len(generics) <= 2 and not partners or untyped_pointers(kernel):
        return None
    rank = {g: max(max(p.get("ranks") or [p["rank"]]) for p in kernel["params"]
                   if p["kind"] == "array" and p["dtype"] == g) for g in generics}
    top = max(r for g, r in rank.items() if g not in partners)
    return [list(c) for c in element_combinations([d for d in kernel.get("dtypes", []) if d in DTYPES],
                                                  [rank[g] == top for g in generics],
                                                  [generics.index(partners[g]) if g in partners else None
                                                   for g in generics])]


def partner_generics(kernel: dict) -> dict[str, str]:
    """generic -> the generic it is a partner of (Param.partner), where the two differ and the partner's is
    not a partner itself."""
    of = {p["name"]: p["dtype"] for p in kernel["params"] if p["kind"] == "array" and is_generic(p["dtype"])}
    found = {of[p["name"]]: of[p["partner"]] for p in kernel["params"]
             if p.get("partner") and p["name"] in of and p["partner"] in of and of[p["name"]] != of[p["partner"]]}
    return {g: h for g, h in found.items() if h not in found}


def _element_var(generic: str) -> str:
    return "__" + generic.lower()  # __e, __e2


def _host_type(generic: str) -> str:
    return "T" + generic[1:]  # T, T2: the launch function's type parameter for the generic


def _entry_view(kernel: dict, entry: dict, index: int, names: set[str], dtypes: list[str],
                kernel_generics: list[str]) -> dict:
    ranks = entry.get("ranks", {})  # an array whose rank depends on a constant: this entry's
    params = [{**p, "rank": ranks[p["name"]]} if p["name"] in ranks else p for p in kernel["params"]]
    derived = entry.get("derived", {})
    all_names = names | set(derived)
    floats = frozenset(p["name"] for p in params if p["kind"] == "const" and p.get("const_type") == "float")
    lets = [f"let {rust_ident(n)}: i64 = abi::float_constant({rust_const_expr(expr, names | set(derived), 'float', floats)}, \"{n}\")?;"
            if expr.startswith("float(") else
            f"let {rust_ident(n)}: i64 = abi::constant({rust_const_expr(expr, names, 'int', floats)}, \"{n}\")?;"
            for n, expr in derived.items()]
    python_of = entry.get("generic_params", {})
    generics = []
    for g in entry["generics"]:
        if is_generic(g):
            generics.append(f"{_element_var(g)}.name().to_string()")
        elif int_kind_of(g):  # a Triton pointer generic's kind (emit/lower.py, int_dispatch)
            generics.append(f"abi::int_kind({_element_var(int_kind_of(g))}).to_string()")
        else:
            generics.append(f"{rust_ident(python_of.get(g, g))}.to_string()" if python_of.get(g, g) in names
                            else f"{rust_ident(g)}.to_string()")
    forms = {o["array"]: o["form"] for o in entry["outputs"]}
    tiles = entry.get("tiles", {})
    pointers = set(entry.get("pointer_arrays", []))
    spans = set(entry.get("span_inputs", []))  # Triton pointers the entry only reads: `&Tensor` of their span
    checks, fn_params, call_args, pass_args = [], [], [], []
    pinned: set[str] = set()  # scalars a prepared launch re-fires for only at their value (abi::Launch::pinned)
    extents = extent_names([(rust_ident(p["name"]), p["rank"]) for p in params if p["kind"] == "array"
                            and (p.get("flat") or p["name"] in pointers)], {rust_ident(p["name"]) for p in params})
    scalars = {p["name"] for p in params if p["kind"] == "scalar"}
    # a stride the entry is specialized on being 1 (`stride_ak_IS_1`, computed from the scalar here): a prepared
    # launch must not re-fire for another value of it (that would run the unit-stride entry on stride 3)
    pinned |= {p["unit_of"] for p in params if p.get("unit_of") in scalars}
    checks += [f'abi::expect_rank(&{rust_ident(n)}, "{n}", {r})?;' for n, r in ranks.items()]
    # an unread array whose rank depends on a constant: its placeholder at this entry's rank
    checks += [f'let {rust_ident(n)} = abi::placeholder_rank({rust_ident(n)}, {r});' for n, r in ranks.items()
               if next(p for p in params if p["name"] == n).get("read_when")]
    array_dtypes = entry.get("array_dtypes", {})  # an array whose dtype differs per entry: this entry's
    checks += [f'abi::expect_dtype(&{rust_ident(n)}, "{n}", abi::Dtype::{d.upper()})?;' for n, d in array_dtypes.items()
               if not next(p for p in params if p["name"] == n).get("unused")]
    for dim in entry_tile_dims(entry, all_names):  # every tile extent the constants set: a positive power of two
        checks.append(f'abi::tile_dim({rust_const_expr(dim, all_names)}, "{dim}")?;')
    for p in params:
        n = rust_ident(p["name"])
        if p["kind"] == "array":
            fn_params.append(f"{n}: &abi::TensorArg")
            pass_args.append(f"&{n}")
            if p["name"] in spans:
                call_args.append(f'abi::Param::Tensor("{n}", {n})')
            elif p.get("view") and forms.get(p["name"]) == "checked":
                # a Triton output whose every store is its program's own tile: the view of its span the stores
                # address, split into tiles as a cuTile Python output is (the view is checked to lie in the span
                # and its elements not to overlap)
                dims = ", ".join(rust_const_expr(d, all_names) for d in tiles[p["name"]])
                extents_, strides_ = (", ".join(_view_expr(x, all_names, scalars) for x in p["view"][k])
                                      for k in ("extents", "strides"))
                pinned |= {x.id for src in p["view"]["extents"] + p["view"]["strides"]
                           for x in ast.walk(ast.parse(src.strip(), mode="eval"))
                           if isinstance(x, ast.Name) and x.id in scalars}
                checks.append(f'let {n}_tile = abi::tile_shape([{dims}], "{p["name"]}")?;')
                checks.append(f'let {n} = abi::triton_view(&{n}, "{p["name"]}", &[{extents_}], &[{strides_}])?;')
                checks.append(f'abi::check_partition_grid("{p["name"]}", &{n}, &{n}_tile, __grid)?;')
                fn_params.append(f"{n}_tile: [usize; {len(tiles[p['name']])}]")
                pass_args.append(f"{n}_tile")
                call_args.append(f'abi::Param::Partition("{n}", {n}, &{n}_tile)')
            elif p.get("flat") or p["name"] in pointers:  # a raw pointer, then its shape and strides as i32s
                call_args.append(f'abi::Param::Pointer("{n}", {n})')
                shapes, strides = extents[n]  # the kernel's own names for them (emit/derived_names.py)
                call_args += [f'abi::Param::Extent("{e}", {n}.shape[{i}])' for i, e in enumerate(shapes)]
                call_args += [f'abi::Param::Extent("{e}", {n}.strides[{i}])' for i, e in enumerate(strides)]
            elif forms.get(p["name"]) == "checked":
                dims = ", ".join(rust_const_expr(d, all_names) for d in tiles[p["name"]])
                checks.append(f'let {n}_tile = abi::tile_shape([{dims}], "{p["name"]}")?;')
                checks.append(f'abi::check_partition_grid("{p["name"]}", &{n}, &{n}_tile, __grid)?;')
                fn_params.append(f"{n}_tile: [usize; {p['rank']}]")
                pass_args.append(f"{n}_tile")
                call_args.append(f'abi::Param::Partition("{n}", {n}, &{n}_tile)')
            else:
                call_args.append(f'abi::Param::Tensor("{n}", {n})')
        elif p["kind"] == "scalar":
            fn_params.append(f"{n}: {SCALAR_C_TYPES[p['dtype']]}")
            pass_args.append(n)
            call_args.append(f'abi::Param::{SCALAR_PARAMS[p["dtype"]]}("{n}", {n})')
    conditions = [rust_const_expr(pr, names, "bool", floats) for pr in entry["predicates"]]
    if entry.get("dtypes") and dtypes:  # an entry of some element types only (see Variant.dtypes)
        dtypes = [d for d in dtypes if d in entry["dtypes"]]
        if not dtypes:
            raise AbiUnsupported(f"entry `{entry['name']}` has no element type with an ABI dtype code")
        conditions.append(f"matches!(__e, {' | '.join(f'abi::Dtype::{d.upper()}' for d in dtypes)})")
    predicate = " && ".join(conditions) or "true"
    launch_fn = f"launch_{entry['name']}"
    call = f"(__device, __stream, __generics, __grid{''.join(', ' + a for a in pass_args)})"
    if not kernel_generics:  # no generics, or untyped pointers
        dispatch = [f"{launch_fn}{call}"]
    elif dtypes and len(kernel_generics) == 1:  # the element type picks the monomorphized launch
        dispatch = ["match __e {"]
        dispatch += [f"    abi::Dtype::{d.upper()} => {launch_fn}::<{DTYPES[d][1]}>{call}," for d in dtypes]
        dispatch += ['    _ => abi::fail(abi::CUTILE_ERR_DTYPE, format!("element type {} has no port", __e.name())),',
                     "}"]
    elif dtypes:
        # one match arm per monomorphized launch, its patterns the exported combinations it serves: a launch per
        # combination of the generics' dtypes (E's limited to the entry's), or, for a bounded set, per dtype of E
        # alone (the only type it reads: the other generics reach cuTile Rust as names), so the crate builds one
        # launch function per dtype of E however many combinations there are
        bounded = "element_combinations" in kernel
        arms: dict[tuple, list[tuple]] = {}
        for c in exported_combinations(kernel):
            if c[0] in dtypes:
                arms.setdefault(c[:1] if bounded else c, []).append(c)
        dispatch = [f"match ({', '.join(_element_var(g) for g in kernel_generics)}) {{"]
        dispatch += [f"    {' | '.join('(' + ', '.join(f'abi::Dtype::{x.upper()}' for x in c) + ')' for c in combos)} => "
                     f"{launch_fn}::<{', '.join(DTYPES[d][1] for d in types)}>{call},"
                     for types, combos in sorted(arms.items(), key=lambda a: dtypes.index(a[0][0]))]
        dispatch += ['    _ => abi::fail(abi::CUTILE_ERR_DTYPE, format!("element types {} have no port", '
                     f'[{", ".join(f"{_element_var(g)}.name()" for g in kernel_generics)}].join(", "))),', "}"]
    else:
        dispatch = [f"{launch_fn}{call}"]
    # what the dry run reports: the same values the launch passes on (see abi::dry_run)
    element = "Some(T::DTYPE.as_str())" if dtypes and kernel_generics else "None"
    partitions = [f'("{p["name"]}", &{rust_ident(p["name"])}_tile[..])' for p in params
                  if p["kind"] == "array" and p["name"] not in pointers and forms.get(p["name"]) == "checked"]
    described = list(entry["predicates"]) + ([f"E in {{{', '.join(dtypes)}}}"] if entry.get("dtypes") and dtypes else []) \
        + [f"{n} is {d}" for n, d in array_dtypes.items()]
    return {"index": index, "name": entry["name"], "predicates": entry["predicates"], "predicate": predicate,
            "conditions": described,
            "element": element, "partitions": partitions,
            "lets": lets, "generics": generics, "checks": checks, "fn_params": fn_params,
            "params": call_args, "launch_fn": launch_fn, "dispatch": dispatch,
            "pinned": [f'"{rust_ident(x)}"' for x in sorted(pinned)]}


def _view_expr(src: str, names: set[str], scalars: set[str]) -> str:
    """A Triton output view's extent or stride (passes/views.py) as Rust over i64: the constants' locals, the
    scalar arguments (i32) and the launch grid widened."""
    tree = ast.parse(src.strip(), mode="eval")
    widened = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in scalars:
            widened[node.id] = f"(({rust_ident(node.id)}) as i64)"
        elif isinstance(node, ast.Name) and re.fullmatch(r"__grid[0-2]", node.id):
            widened[node.id] = f"((__grid.{node.id[-1]}) as i64)"
    code = rust_const_expr(src, names | set(widened))
    for name, wide in widened.items():
        code = re.sub(rf"\b{re.escape(rust_ident(name))}\b", wide, code)
    return code


def tile_dims(kernel) -> list[str]:
    """The tile dimensions of a typed kernel variant that depend on its constants (Python expressions, sorted):
    the extent of every tile-typed value. The manifest records them per entry (`tile_dims`), so the C ABI
    refuses a constant that would make a tile extent zero, negative or not a power of two."""
    from ..model.walk import walk_exprs
    dims: set[str] = set()
    for e in walk_exprs(kernel.body):
        shape = getattr(getattr(e, "ty", None), "shape", None)
        if shape:
            dims.update(str(d) for d in shape)
    return sorted(d for d in dims if not d.strip().lstrip("-").isdigit())


def entry_tile_dims(entry: dict, names: set[str]) -> list[str]:
    """The constant-dependent tile dimensions of a manifest entry (`tile_dims`) that have a Rust form. The
    tiles of checked outputs are checked by `abi::tile_shape` as well."""
    out = []
    for d in dict.fromkeys(str(d) for d in entry.get("tile_dims", [])):
        if d.strip().lstrip("-").isdigit():
            continue
        try:
            rust_const_expr(d, names)
        except (AbiUnsupported, SyntaxError):  # no Rust form: cuTile Rust's JIT still refuses a bad extent
            continue
        out.append(d)
    return out


def kernel_python_view(kernel: dict, symbol: str, function: str | None = None, spec: str | None = None) -> dict:
    """Everything `python/ops.py.j2` needs for one kernel; `function`, `spec`: the module-level names of its
    wrapper and its KernelSpec (`output.names.python_names`; by default the kernel's name and SPEC_<name>)."""
    params = kernel["params"]
    written = {o["array"] for e in kernel["entries"] for o in e["outputs"]}
    # the entries' predicates read every constant, the hidden ones too (the wrapper sets them from the arguments)
    # (not the unit-stride ones: the C symbol sets those, and no predicate reads them)
    consts = [p["name"] for p in params if p["kind"] == "const" and not p.get("unit_of")]
    params = [p for p in params if not p.get("given_of") and not p.get("unit_of")]
    names = [p["name"] for p in params]
    grid_kw = "grid" if "grid" not in names else "grid_"
    stream_kw = "stream" if "stream" not in names else "stream_"
    specs = []
    for p in params:
        if p["kind"] == "array":
            specs.append(f'__cutile_rt__.Param("{p["name"]}", "array", rank={p["rank"]}, dtype="{p["dtype"]}"'
                         f'{", ranks=" + repr(tuple(p["ranks"])) if p.get("ranks") else ""}'
                         f'{", dtypes=" + repr(tuple(p["dtypes"])) if p.get("dtypes") else ""}'
                         f'{", output=True" if p["name"] in written else ""}{", flat=True" if p.get("flat") else ""}'
                         f'{", given=" + repr(p["given"]) if p.get("given") else ""}'
                         f'{", unused=True" if p.get("unused") else ""}'
                         f'{", read_when=" + _python_condition(p["read_when"]) if p.get("read_when") else ""}'
                         f'{", domain=" + repr(tuple(generic_domain(kernel, p["dtype"]))) if p.get("domain") else ""})')
        elif p["kind"] == "scalar":
            specs.append(f'__cutile_rt__.Param("{p["name"]}", "scalar", dtype="{p["dtype"]}"'
                         f'{", given=" + repr(p["given"]) if p.get("given") else ""})')
        else:
            specs.append(f'__cutile_rt__.Param("{p["name"]}", "const", const_type="{p["const_type"]}"'
                         f'{", given=" + repr(p["given"]) if p.get("given") else ""})')
    entries = [{"name": e["name"], "predicates": e["predicates"],
                "condition": " and ".join(f"({pr})" for pr in e["predicates"]) or "True",
                # an entry of some element types only: the wrapper selects it by the arrays' dtype too
                "dtypes_arg": (f", dtypes={tuple(e['dtypes'])!r}" if e.get("dtypes") else "")
                # an array whose rank depends on a constant: its rank in this entry
                + (f", ranks={tuple(sorted(e['ranks'].items()))!r}" if e.get("ranks") else "")
                # an array whose dtype differs per entry: its dtype in this entry
                + (f", array_dtypes={tuple(sorted(e['array_dtypes'].items()))!r}" if e.get("array_dtypes") else "")}
               for e in kernel["entries"]]
    return {
        "name": kernel["name"], "symbol": symbol, "packed": packed_symbol(symbol), "line": kernel["line"],
        "function": function or kernel["name"], "spec_name": spec or f"SPEC_{kernel['name']}",
        # the source this port was generated from: a port kept from an earlier run (stale) has the old hash,
        # so the router refuses it once the source changed
        "sha256": kernel.get("source_sha256", ""),
        "params": specs, "dtypes": kernel.get("dtypes", []) if any(is_generic(p.get("dtype", "")) for p in params) else [],
        # a bounded set of the generics' dtype combinations (see exported_combinations): the wrapper refuses others
        "combinations": [tuple(c) for c in kernel["element_combinations"]] if "element_combinations" in kernel else [],
        "entries": entries, "const_kwargs": (" *, " + ", ".join(consts)) if consts else "",
        "signature": ", ".join(names + ["*", grid_kw, f"{stream_kw}=None"]),
        "arg_tuple": ", ".join(names) + ("," if len(names) == 1 else ""),
        "grid_kw": grid_kw, "stream_kw": stream_kw,
        # a factory's kernel: the constants the router reads from the launched kernel's closure
        "closure_arg": (f"\n    closure={tuple(kernel['factory']['closure'])!r}," if kernel.get("factory") else "")
        # the entry hints (the decorator's): a launch of a `replace_hints` copy asking for others passes them
        + (f"\n    hints={tuple(tuple(h) for h in kernel['hints'])!r}," if kernel.get("hints") else "")
        # a Triton kernel: routed from `kernel[grid](...)`; its string constants travel as indices
        + (f"\n    language=\"triton\",\n    strings={kernel.get('strings', {})!r},"
           + (f"\n    dtype_consts={tuple(kernel['dtype_consts'])!r}," if kernel.get("dtype_consts") else "")
           + (f"\n    descriptors={_descriptor_specs(kernel)!r}," if _descriptor_specs(kernel) else "")
           if kernel.get("frontend") == "triton" else ""),
    }


def _python_condition(text: str) -> str:
    """A constant condition (predicate text) as the wrapper's keyword lambda over the constants it reads."""
    names = sorted({n.id for n in ast.walk(ast.parse(text.strip(), mode="eval")) if isinstance(n, ast.Name)})
    return f"lambda {', '.join(names + ['**_'])}: bool({text})"


def _descriptor_specs(kernel: dict) -> dict:
    """Host tensor descriptor parameters (Param.descriptor): name -> (extents, strides, block extents, whether
    each block extent is a hidden constant), as the Python wrapper's KernelSpec takes them."""
    hidden = {p["name"] for p in kernel["params"] if p.get("desc_of") and p["kind"] == "const"}
    return {p["name"]: (tuple(p["descriptor"][0]), tuple(p["descriptor"][1]), tuple(p["descriptor"][2]),
                        tuple(b in hidden for b in p["descriptor"][2]))
            for p in kernel["params"] if p.get("descriptor")}
