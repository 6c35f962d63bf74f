/*
 * The compiled fast path of `_runtime.call` (optional: without it, the same steps run in Python).
 * `cutile-transpile build` compiles it against CPython's stable ABI into target/release/_fastlaunch.abi3.so.
 *
 * key(symbol, kinds, args, grid, T): the layout key of a launch, the same tuple as `_runtime._layout_keyer`'s
 *     (None when an argument is not what the fast path takes).
 * route(hot, layouts, stream, grid, kernel, args): `ct.launch` routed, for a kernel and layout with a prepared
 *     launch, in one call (see `route` below).
 * run(layout, words, args, stream): patches a checked layout's data pointers, scalars and stream into the
 *     words of the symbol's packed form (`cutilepk_<kernel>`) and calls it; or, for a layout with a
 *     prepared launch (`abi.rs`: `cutile_fire`), writes the data pointers and scalars into its value words
 *     and fires it on the stream. Returns the symbol's code, or FALLBACK (-1) where this C code does not
 *     judge an argument (a null or misaligned pointer, a scalar of another type, a stream without an int
 *     `cuda_stream`) or the prepared launch does not apply (`CUTILE_FIRE_MISS`, also -1): the Python path
 *     then calls the symbol, whose checks raise their own errors, so both paths refuse the same arguments
 *     with the same messages.
 */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <stdint.h>
#include <string.h>

#define FALLBACK (-1)
#define FIRE_WORDS 64 /* the most value words of a prepared launch (`_runtime._FastCall`; emit/ffi.py FIRE_WORDS) */
/* the digest of this very source, which `cutile-transpile build` passes (`-DFASTLAUNCH_DIGEST`): the runtime loads
   only the build of the source its `_crate.py` names; a build without it is never loaded */
#ifndef FASTLAUNCH_DIGEST
#define FASTLAUNCH_DIGEST ""
#endif

/* kinds (one byte per parameter, `key`) */
enum { K_ARRAY = 0, K_OPTIONAL_ARRAY = 1, K_SCALAR = 2, K_CONST = 3, K_OPTIONAL_SCALAR = 4 };
/* scalar kinds (`run`) */
enum { S_I32 = 0, S_F32 = 1, S_BOOL = 2 };

/* layout (bytes, `run`): a header, then `narrays` arrays, then `nscalars` scalars. With a prepared launch
   (`record` not 0), `fn` is `cutile_fire` and an array's pointer goes to word `word`; else `fn` is the
   packed symbol, the pointer goes to the descriptor at `desc`, and the stream to word `stream_word`. */
typedef struct { uint64_t fn, record; uint32_t nwords, narrays, nscalars, stream_word; } header_t;
typedef struct { uint64_t desc; uint32_t arg, size, word, pad; } array_t; /* desc: a CutileTensor (ptr first) */
typedef struct { uint32_t arg, word, kind, pad; } scalar_t;
typedef int32_t (*packed_fn)(const uint64_t *);
typedef int32_t (*fire_fn)(uint64_t, const uint64_t *, uint64_t);

static PyObject *s_shape, *s_stride, *s_dtype, *s_get_device, *s_data_ptr, *s_cuda_stream;

static int is_instance(PyObject *a, PyObject *T) {
    if ((PyObject *)Py_TYPE(a) == T) return 1;
    return PyObject_IsInstance(a, T);
}

/* borrowed item `i` of a tuple (`args` are made a tuple first: a list's items could go away while a
   tensor's Python method runs) */
static PyObject *item(PyObject *seq, Py_ssize_t i) {
    return PyTuple_GetItem(seq, i);
}

/* appends shape, stride(), dtype and get_device() of `a` to `out` from index `*at` */
static int put_array(PyObject *out, Py_ssize_t *at, PyObject *a) {
    PyObject *v[4];
    v[0] = PyObject_GetAttr(a, s_shape);
    v[1] = v[0] ? PyObject_CallMethodObjArgs(a, s_stride, NULL) : NULL;
    v[2] = v[1] ? PyObject_GetAttr(a, s_dtype) : NULL;
    v[3] = v[2] ? PyObject_CallMethodObjArgs(a, s_get_device, NULL) : NULL;
    if (!v[3]) {
        for (int i = 0; i < 3; i++) Py_XDECREF(v[i]);
        return -1;
    }
    for (int i = 0; i < 4; i++) PyTuple_SetItem(out, (*at)++, v[i]); /* steals */
    return 0;
}

static PyObject *key_of(PyObject *symbol, const char *k, Py_ssize_t n, PyObject *args, PyObject *grid, PyObject *T);

static PyObject *key(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
    if (argc != 5) {
        PyErr_SetString(PyExc_TypeError, "key(symbol, kinds, args, grid, T)");
        return NULL;
    }
    PyObject *symbol = argv[0], *kinds = argv[1], *grid = argv[3], *T = argv[4];
    char *k;
    Py_ssize_t n;
    if (PyBytes_AsStringAndSize(kinds, &k, &n) < 0) return NULL;
    PyObject *args = PySequence_Tuple(argv[2]); /* a new reference, also for a tuple */
    if (!args) return NULL;
    PyObject *out = key_of(symbol, k, n, args, grid, T);
    Py_DECREF(args);
    return out;
}

static PyObject *key_of(PyObject *symbol, const char *k, Py_ssize_t n, PyObject *args, PyObject *grid, PyObject *T) {
    Py_ssize_t got = PyTuple_Size(args);
    if (got != n) Py_RETURN_NONE;
    Py_ssize_t size = 2;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = item(args, i);
        if (!a) return NULL;
        if (k[i] == K_ARRAY || (k[i] == K_OPTIONAL_ARRAY && a != Py_None)) {
            int ok = is_instance(a, T);
            if (ok < 0) return NULL;
            if (!ok) Py_RETURN_NONE;
        }
        size += k[i] == K_ARRAY ? 4 : k[i] == K_OPTIONAL_ARRAY || k[i] == K_OPTIONAL_SCALAR ? 1 : k[i] == K_CONST ? 2 : 0;
    }
    PyObject *out = PyTuple_New(size);
    if (!out) return NULL;
    Py_ssize_t at = 0;
    Py_INCREF(symbol);
    PyTuple_SetItem(out, at++, symbol);
    Py_INCREF(grid);
    PyTuple_SetItem(out, at++, grid);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = item(args, i);
        if (k[i] == K_ARRAY) {
            if (put_array(out, &at, a) < 0) goto fail;
        } else if (k[i] == K_OPTIONAL_ARRAY) {
            if (a == Py_None) {
                Py_INCREF(Py_None);
                PyTuple_SetItem(out, at++, Py_None);
            } else {
                PyObject *t = PyTuple_New(4);
                Py_ssize_t j = 0;
                if (!t) goto fail;
                if (put_array(t, &j, a) < 0) {
                    Py_DECREF(t);
                    goto fail;
                }
                PyTuple_SetItem(out, at++, t);
            }
        } else if (k[i] == K_OPTIONAL_SCALAR) { /* whether it is None (another entry) */
            PyTuple_SetItem(out, at++, PyBool_FromLong(a == Py_None));
        } else if (k[i] == K_CONST) {
            PyObject *type = (PyObject *)Py_TYPE(a);
            Py_INCREF(type);
            PyTuple_SetItem(out, at++, type);
            Py_INCREF(a);
            PyTuple_SetItem(out, at++, a);
        }
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *run_with(PyObject *layout, PyObject *words_obj, PyObject *args, PyObject *stream);

static PyObject *run(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
    if (argc != 4) {
        PyErr_SetString(PyExc_TypeError, "run(layout, words, args, stream)");
        return NULL;
    }
    PyObject *args = PySequence_Tuple(argv[2]); /* a new reference, also for a tuple */
    if (!args) return NULL;
    PyObject *out = run_with(argv[0], argv[1], args, argv[3]);
    Py_DECREF(args);
    return out;
}

static PyObject *run_with(PyObject *layout, PyObject *words_obj, PyObject *args, PyObject *stream) {
    char *l;
    Py_ssize_t ln;
    if (PyBytes_AsStringAndSize(layout, &l, &ln) < 0) return NULL;
    if (ln < (Py_ssize_t)sizeof(header_t)) goto bad_layout;
    header_t h;
    memcpy(&h, l, sizeof h);
    if ((size_t)ln != sizeof h + h.narrays * sizeof(array_t) + h.nscalars * sizeof(scalar_t)) goto bad_layout;
    if (!PyByteArray_Check(words_obj) || PyByteArray_Size(words_obj) != (Py_ssize_t)(h.nwords * 8)) goto bad_layout;
    uint64_t *words = (uint64_t *)PyByteArray_AsString(words_obj);
    uint64_t values[FIRE_WORDS];
    if (h.record) { /* patched in a copy: a tensor's method may run Python code, and another thread this layout */
        if (h.nwords > FIRE_WORDS) return PyLong_FromLong(FALLBACK);
        memcpy(values, words, h.nwords * sizeof *words);
        words = values;
    }
    if (!h.record && h.stream_word >= h.nwords) goto bad_layout;
    const char *p = l + sizeof h;
    for (uint32_t i = 0; i < h.narrays; i++, p += sizeof(array_t)) {
        array_t a;
        memcpy(&a, p, sizeof a);
        PyObject *t = item(args, a.arg);
        if (!t) return NULL;
        PyObject *r = PyObject_CallMethodObjArgs(t, s_data_ptr, NULL);
        if (!r) {
            PyErr_Clear();
            return PyLong_FromLong(FALLBACK);
        }
        unsigned long long ptr = PyLong_AsUnsignedLongLong(r);
        Py_DECREF(r);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return PyLong_FromLong(FALLBACK);
        }
        if (ptr == 0 || a.size == 0 || ptr % a.size) return PyLong_FromLong(FALLBACK);
        uint64_t v = ptr;
        if (h.record) {
            if (a.word >= h.nwords) goto bad_layout;
            words[a.word] = v;
        } else {
            memcpy((void *)(uintptr_t)a.desc, &v, sizeof v); /* CutileTensor.ptr, its first field */
        }
    }
    for (uint32_t i = 0; i < h.nscalars; i++, p += sizeof(scalar_t)) {
        scalar_t s;
        memcpy(&s, p, sizeof s);
        if (s.word >= h.nwords) goto bad_layout;
        PyObject *o = item(args, s.arg);
        if (!o) return NULL;
        if (s.kind == S_I32) {
            if (!PyLong_Check(o) || PyBool_Check(o)) return PyLong_FromLong(FALLBACK);
            long long v = PyLong_AsLongLong(o);
            if (PyErr_Occurred()) {
                PyErr_Clear();
                return PyLong_FromLong(FALLBACK);
            }
            if (v < INT32_MIN || v > INT32_MAX) return PyLong_FromLong(FALLBACK);
            words[s.word] = (uint32_t)(int32_t)v;
        } else if (s.kind == S_F32) {
            if (!PyFloat_Check(o) && !PyLong_Check(o)) return PyLong_FromLong(FALLBACK);
            double d = PyFloat_AsDouble(o);
            if (PyErr_Occurred()) {
                PyErr_Clear();
                return PyLong_FromLong(FALLBACK);
            }
            if (d == d && (d > FLT_MAX || d < -FLT_MAX) && d - d == 0) return PyLong_FromLong(FALLBACK); /* rounds to inf */
            float f = (float)d;
            uint32_t bits;
            memcpy(&bits, &f, sizeof bits);
            words[s.word] = bits;
        } else if (s.kind == S_BOOL) {
            int v = PyObject_IsTrue(o);
            if (v < 0) {
                PyErr_Clear();
                return PyLong_FromLong(FALLBACK);
            }
            words[s.word] = (uint64_t)v;
        } else {
            goto bad_layout;
        }
    }
    uint64_t handle = 0;
    if (stream != Py_None) {
        PyObject *hs = PyObject_GetAttr(stream, s_cuda_stream);
        if (!hs) {
            PyErr_Clear();
            return PyLong_FromLong(FALLBACK);
        }
        if (!PyLong_CheckExact(hs)) {
            Py_DECREF(hs);
            return PyLong_FromLong(FALLBACK);
        }
        handle = PyLong_AsUnsignedLongLong(hs);
        Py_DECREF(hs);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return PyLong_FromLong(FALLBACK);
        }
    }
    int32_t rc;
    if (h.record) { /* a launch only: the GIL stays held, as around cuTile Python's launch */
        rc = ((fire_fn)(uintptr_t)h.fn)(h.record, words, handle);
        return PyLong_FromLong(rc);
    }
    words[h.stream_word] = handle;
    packed_fn fn = (packed_fn)(uintptr_t)h.fn;
    Py_BEGIN_ALLOW_THREADS /* a new specialization compiles first, as through ctypes */
    rc = fn(words);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(rc);
bad_layout:
    PyErr_SetString(PyExc_ValueError, "malformed fast-launch layout");
    return NULL;
}

/* route(hot, layouts, stream, grid, kernel, args): a routed `ct.launch` of a kernel and layout launched
   before, whole in C: `hot` maps id(kernel) to (kernel, symbol, kinds, T), and `layouts` maps a layout key
   to (layout, words, owner) of a prepared launch (`run`'s fire form). Returns the code, or None where it does
   not apply (the Python path then routes the launch: a new kernel or layout, an argument this code does
   not judge, a prepared launch that misses). */
static PyObject *route(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
    if (argc != 6) {
        PyErr_SetString(PyExc_TypeError, "route(hot, layouts, stream, grid, kernel, args)");
        return NULL;
    }
    PyObject *hot = argv[0], *layouts = argv[1], *stream = argv[2], *grid = argv[3], *kernel = argv[4];
    if (!PyDict_Check(hot) || !PyDict_Check(layouts)) Py_RETURN_NONE;
    PyObject *id = PyLong_FromVoidPtr(kernel);
    if (!id) return NULL;
    PyObject *entry = PyDict_GetItemWithError(hot, id); /* borrowed */
    Py_DECREF(id);
    if (!entry) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    if (!PyTuple_Check(entry) || PyTuple_Size(entry) != 4 || PyTuple_GetItem(entry, 0) != kernel) Py_RETURN_NONE;
    Py_INCREF(entry); /* a tensor's method may run any Python code, which could change `hot` */
    Py_INCREF(layouts);
    PyObject *out = NULL, *args = NULL, *key = NULL, *hit = NULL;
    char *k;
    Py_ssize_t n;
    PyObject *kinds = PyTuple_GetItem(entry, 2);
    if (PyBytes_AsStringAndSize(kinds, &k, &n) < 0) goto none;
    args = PySequence_Tuple(argv[5]);
    if (!args) goto none;
    key = key_of(PyTuple_GetItem(entry, 1), k, n, args, grid, PyTuple_GetItem(entry, 3));
    if (!key || key == Py_None) goto none;
    hit = PyDict_GetItemWithError(layouts, key); /* an unhashable constant raises: the Python path reports it */
    if (!hit || !PyTuple_Check(hit) || PyTuple_Size(hit) != 3) goto none;
    Py_INCREF(hit);
    out = run_with(PyTuple_GetItem(hit, 0), PyTuple_GetItem(hit, 1), args, stream);
    if (out && PyLong_Check(out) && PyLong_AsLong(out) == FALLBACK) {
        Py_DECREF(out);
        out = NULL;
        goto none;
    }
    goto done;
none:
    PyErr_Clear(); /* whatever failed, the Python path meets it again and reports it */
    Py_INCREF(Py_None);
    out = Py_None;
done:
    Py_XDECREF(hit);
    Py_XDECREF(key);
    Py_XDECREF(args);
    Py_DECREF(layouts);
    Py_DECREF(entry);
    return out;
}

static PyMethodDef methods[] = {
    {"key", (PyCFunction)(void (*)(void))key, METH_FASTCALL, "The layout key of a launch (see the file's comment)."},
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL, "Launches a checked layout (see the file's comment)."},
    {"route", (PyCFunction)(void (*)(void))route, METH_FASTCALL, "A routed launch of a prepared layout (see above)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastlaunch", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastlaunch(void) {
    s_shape = PyUnicode_InternFromString("shape");
    s_stride = PyUnicode_InternFromString("stride");
    s_dtype = PyUnicode_InternFromString("dtype");
    s_get_device = PyUnicode_InternFromString("get_device");
    s_data_ptr = PyUnicode_InternFromString("data_ptr");
    s_cuda_stream = PyUnicode_InternFromString("cuda_stream");
    if (!s_shape || !s_stride || !s_dtype || !s_get_device || !s_data_ptr || !s_cuda_stream) return NULL;
    PyObject *m = PyModule_Create(&module);
    /* the runtime takes only the build of its own source: the layout format is theirs alone */
    if (m && PyModule_AddStringConstant(m, "DIGEST", FASTLAUNCH_DIGEST) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
