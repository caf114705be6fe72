/* dralint's optional native loader: libyaml events straight to positioned data.
 *
 * `dralint.inputs.load` composes a file with PyYAML's C composer, which makes a Python node (and its
 * marks) for every key and value and asks Python for every scalar's tag, then walks the nodes into
 * LMap/LSeq data with character offsets. Most of that time is spent making objects that are thrown
 * away. This module reads libyaml's events and makes the LMap/LSeq data directly, as the walk
 * (`_Walker`) does: an alias is its anchor's data itself (shared, not copied), a merge key (`<<`) naming
 * mappings by alias adds their keys after the explicit ones. It leaves to the Python path explicit
 * tags, repeated keys and anchors, a collection or an anchor as a key, an alias it cannot resolve
 * (undefined, or recursive), other merge values, and anything near the nesting and node limits (it
 * counts an alias as its whole expanded size). For those, and for any syntax error, `compose` returns
 * None and the caller parses the text the usual way, so the results are those of the Python path by
 * construction; tests compare the two on every corpus.
 *
 * Scalar tags and values come from the same Python functions the Python path uses (passed to
 * `setup`), so YAML 1.1 resolution lives in one place. Short ASCII texts met before are taken from a
 * small cache (`text_of`), and positions are written straight into LMap's and LSeq's slots: the
 * decoding, interning and attribute lookups they replace were a sixth of a large repository's load.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE /* memmem */
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <yaml.h>
#ifndef Py_T_OBJECT_EX
#include <structmember.h>
#define Py_T_OBJECT_EX T_OBJECT_EX
#define Py_READONLY READONLY
#endif

/* set once by setup() */
static PyObject *LMapType, *LSeqType, *ArrayType, *PlainTags, *PlainTagFn, *ScalarFn, *KeyFn, *TagStr;
static PyObject *s_lc, *s_s, *s_e, *s_q;
/* 1 for each ASCII byte an implicit resolver is registered for (set by setup()): a plain scalar
 * that starts with any other byte resolves to a string without asking the memo or the resolver */
static char Resolvable[128];
/* 1 when a resolver may take any text (one registered without first characters): no fast path */
static int AnyResolvable = 1;

/* where LMap's and LSeq's `lc`, `s` and `e` slots sit in their objects ([0]: LMap, [1]: LSeq), found
 * by setup() from their member descriptors; -1 when a slot is not a plain object slot, and then the
 * attribute is set the usual way */
static Py_ssize_t SlotOffset[2][3] = {{-1, -1, -1}, {-1, -1, -1}};

/* Short ASCII texts met before: the same keys (`name`, `image`, `resources`) and many of the same
 * values come back in every document, and taking the string made the first time saves decoding it,
 * interning it (keys) and hashing it again (its hash is kept). Direct-mapped and bounded: a slot holds
 * the last text that hashed to it, compared byte for byte before it is used. [0]: keys (interned),
 * [1]: values. */
#define TEXT_CACHE_BITS 12
#define TEXT_CACHE_MAX 48
static PyObject *TextCache[2][1 << TEXT_CACHE_BITS];

/* deeper than this the C stack is not used: the Python path (and its limit) takes over */
#define HARD_DEPTH 1000

typedef struct {
    yaml_parser_t parser;
    yaml_event_t event;  /* the current event, owned while `have` */
    int have;
    long max_nesting;
    long long max_nodes;
    long long count;
    int bail;            /* 1: not for this module (or a syntax error): the caller parses in Python */
    PyObject *anchors;   /* this document's anchors: name -> (data, start, end, expanded size) */
} Ctx;

typedef struct {
    int64_t *v;
    size_t n, cap;
} Offsets;

static int off_push(Offsets *o, int64_t x) {
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 16;
        int64_t *v = PyMem_Realloc(o->v, cap * sizeof(int64_t));
        if (v == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n++] = x;
    return 0;
}

/* the next event into ctx->event; 0 on success, -1 with ctx->bail set on a syntax error */
static int next(Ctx *c) {
    if (c->have) {
        yaml_event_delete(&c->event);
        c->have = 0;
    }
    if (!yaml_parser_parse(&c->parser, &c->event)) {
        c->bail = 1;
        return -1;
    }
    c->have = 1;
    return 0;
}

/* the tag of a plain scalar's text: the memo first, then the resolver */
static PyObject *plain_tag(PyObject *value) {
    PyObject *tag = PyDict_GetItemWithError(PlainTags, value);
    if (tag != NULL) {
        Py_INCREF(tag);
        return tag;
    }
    if (PyErr_Occurred())
        return NULL;
    return PyObject_CallOneArg(PlainTagFn, value);
}

/* 1 when a plain scalar's text is a string whatever the resolver's memo holds: it starts with a
 * byte no implicit resolver is registered for (every resolver has a first character) */
static int plainly_str(yaml_event_t *e) {
    unsigned char first = e->data.scalar.length ? e->data.scalar.value[0] : 0;
    return !AnyResolvable && e->data.scalar.length && (first >= 128 || !Resolvable[first]);
}

/* 1 when the current scalar event is one this module reads: no anchor, no tag */
static int simple_scalar(yaml_event_t *e) {
    return e->data.scalar.anchor == NULL && e->data.scalar.tag == NULL;
}

/* a scalar's text (a new reference): from the cache for a short ASCII text, else decoded; a key's
 * text (``key``) is interned */
static PyObject *text_of(yaml_event_t *e, int key) {
    const unsigned char *v = e->data.scalar.value;
    size_t n = e->data.scalar.length;
    PyObject **slot = NULL;
    if (n > 0 && n <= TEXT_CACHE_MAX) {
        uint32_t h = 2166136261u;  /* FNV-1a */
        unsigned char any = 0;
        for (size_t i = 0; i < n; i++) {
            h = (h ^ v[i]) * 16777619u;
            any |= v[i];
        }
        if (any < 128) {  /* ASCII: the cached string's data is these bytes */
            slot = &TextCache[key][(h ^ (h >> TEXT_CACHE_BITS)) & ((1u << TEXT_CACHE_BITS) - 1)];
            PyObject *hit = *slot;
            if (hit != NULL && (size_t)PyUnicode_GET_LENGTH(hit) == n && memcmp(PyUnicode_DATA(hit), v, n) == 0) {
                Py_INCREF(hit);
                return hit;
            }
        }
    }
    PyObject *text = PyUnicode_DecodeUTF8((const char *)v, (Py_ssize_t)n, "strict");
    if (text == NULL)
        return NULL;
    if (key)
        PyUnicode_InternInPlace(&text);
    if (slot != NULL) {
        Py_INCREF(text);
        Py_XSETREF(*slot, text);
    }
    return text;
}

/* the value of the current scalar event (a new reference); NULL with an exception */
static PyObject *scalar_value(yaml_event_t *e) {
    PyObject *text = text_of(e, 0);
    if (text == NULL || !e->data.scalar.plain_implicit || plainly_str(e))
        return text;  /* quoted and block scalars are strings */
    PyObject *tag = plain_tag(text);
    if (tag == NULL) {
        Py_DECREF(text);
        return NULL;
    }
    int is_str = PyUnicode_Compare(tag, TagStr) == 0;
    if (is_str) {
        Py_DECREF(tag);
        return text;
    }
    PyObject *out = PyObject_CallFunctionObjArgs(ScalarFn, tag, text, NULL);
    Py_DECREF(tag);
    Py_DECREF(text);
    return out;
}

/* a key's text (a new reference), None for a merge key (`<<`), NULL with an exception */
static PyObject *key_value(yaml_event_t *e) {
    PyObject *text = text_of(e, 1);  /* interned */
    if (text == NULL || !e->data.scalar.plain_implicit || plainly_str(e))
        return text;
    PyObject *tag = plain_tag(text);
    if (tag == NULL) {
        Py_DECREF(text);
        return NULL;
    }
    PyObject *out;
    if (PyUnicode_Compare(tag, TagStr) == 0) {
        Py_INCREF(text);
        out = text;
    } else {
        out = PyObject_CallFunctionObjArgs(KeyFn, tag, text, NULL);  /* None: a merge key (`<<`) */
    }
    Py_DECREF(tag);
    Py_DECREF(text);
    return out;
}

/* set attribute ``i`` (0: lc, 1: s, 2: e) of ``obj``, an LMap (``seq`` 0) or LSeq (1), to ``v`` (stolen) */
static int set_slot(PyObject *obj, int seq, int i, PyObject *v) {
    if (v == NULL)
        return -1;
    Py_ssize_t off = SlotOffset[seq][i];
    /* the offsets hold for an object of exactly the type they were read from */
    if (off < 0 || Py_TYPE(obj) != (PyTypeObject *)(seq ? LSeqType : LMapType)) {
        static PyObject **names[3] = {&s_lc, &s_s, &s_e};
        int r = PyObject_SetAttr(obj, *names[i], v);
        Py_DECREF(v);
        return r;
    }
    Py_XSETREF(*(PyObject **)((char *)obj + off), v);
    return 0;
}

static int set_positions(PyObject *obj, int seq, Offsets *o, int64_t s, int64_t e) {
    PyObject *raw = PyBytes_FromStringAndSize((const char *)o->v, (Py_ssize_t)(o->n * sizeof(int64_t)));
    if (raw == NULL)
        return -1;
    PyObject *arr = PyObject_CallFunctionObjArgs(ArrayType, s_q, raw, NULL);
    Py_DECREF(raw);
    if (set_slot(obj, seq, 0, arr) < 0 || set_slot(obj, seq, 1, PyLong_FromLongLong(s)) < 0)
        return -1;
    return set_slot(obj, seq, 2, PyLong_FromLongLong(e));
}

static PyObject *node(Ctx *c, long depth, int64_t *start, int64_t *end);

/* ``data`` (at start..end, ``size`` nodes when expanded) kept under the anchor ``name`` for the aliases
 * after it; 0, or -1 with an exception or ctx->bail (an anchor defined twice: the composer's error) */
static int remember(Ctx *c, const yaml_char_t *name, PyObject *data, int64_t start, int64_t end, long long size) {
    PyObject *key = PyUnicode_FromString((const char *)name);
    if (key == NULL)
        return -1;
    int r = PyDict_Contains(c->anchors, key);
    if (r == 0) {
        PyObject *t = Py_BuildValue("(OLLL)", data, (long long)start, (long long)end, size);
        r = t == NULL ? -1 : PyDict_SetItem(c->anchors, key, t);
        Py_XDECREF(t);
    } else if (r == 1) {
        c->bail = 1;
        r = -1;
    }
    Py_DECREF(key);
    return r;
}

/* what the current alias event names (a borrowed tuple, see `remember`); NULL with an exception or
 * ctx->bail (an undefined anchor, or one whose node is still open: a recursive alias, which the full
 * walk refuses) */
static PyObject *recall(Ctx *c) {
    PyObject *key = PyUnicode_FromString((const char *)c->event.data.alias.anchor);
    if (key == NULL)
        return NULL;
    PyObject *t = PyDict_GetItemWithError(c->anchors, key);
    Py_DECREF(key);
    if (t == NULL && !PyErr_Occurred())
        c->bail = 1;
    return t;
}

/* the value of a merge key (`<<`), whose first event is current: an alias to a mapping, or a sequence
 * of them, appended to ``sources``. Anything else (an inline mapping, an alias to another node) is left
 * to the full walk: 0, or -1 with an exception or ctx->bail */
static int merge_sources(Ctx *c, PyObject *sources) {
    yaml_event_t *e = &c->event;
    int many = e->type == YAML_SEQUENCE_START_EVENT;
    if (many && (e->data.sequence_start.anchor != NULL || e->data.sequence_start.tag != NULL)) {
        c->bail = 1;
        return -1;
    }
    for (;;) {
        if (many && next(c) < 0)
            return -1;
        if (many && e->type == YAML_SEQUENCE_END_EVENT)
            return 0;
        if (e->type != YAML_ALIAS_EVENT) {
            c->bail = 1;
            return -1;
        }
        PyObject *t = recall(c);
        if (t == NULL)
            return -1;
        PyObject *data = PyTuple_GET_ITEM(t, 0);
        if (Py_TYPE(data) != (PyTypeObject *)LMapType) {
            c->bail = 1;
            return -1;
        }
        c->count += PyLong_AsLongLong(PyTuple_GET_ITEM(t, 3));
        if (c->count > c->max_nodes) {
            c->bail = 1;  /* before any key is copied: many aliases to a large mapping copy it many times */
            return -1;
        }
        if (PyList_Append(sources, data) < 0)
            return -1;
        if (!many)
            return 0;
    }
}

/* the keys of ``src`` that ``out`` lacks, with their positions, after ``out``'s own (explicit keys win,
 * and the first source to have a key gives it); 0, or -1 with an exception or ctx->bail */
static int merge_into(Ctx *c, PyObject *out, Offsets *lc, PyObject *src) {
    PyObject *arr = PyObject_GetAttr(src, s_lc);
    if (arr == NULL)
        return -1;
    Py_buffer view;
    if (PyObject_GetBuffer(arr, &view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(arr);
        return -1;
    }
    const int64_t *pos = (const int64_t *)view.buf;
    Py_ssize_t npos = view.len / (Py_ssize_t)sizeof(int64_t), i = 0, j = 0;
    PyObject *k, *v;
    int r = 0;
    while (r == 0 && PyDict_Next(src, &i, &k, &v)) {
        if (4 * j + 3 >= npos) {
            c->bail = 1;  /* not positions this module made */
            r = -1;
            break;
        }
        r = PyDict_Contains(out, k);
        if (r == 0) {
            r = PyDict_SetItem(out, k, v);
            for (int q = 0; r == 0 && q < 4; q++)
                r = off_push(lc, pos[4 * j + q]);
        } else if (r == 1) {
            r = 0;
        }
        j++;
    }
    PyBuffer_Release(&view);
    Py_DECREF(arr);
    return r;
}

/* the collection whose start event is current; its end event is current on return */
static PyObject *collection(Ctx *c, long depth, int mapping) {
    if (depth > c->max_nesting || depth > HARD_DEPTH) {
        c->bail = 1;  /* the full walk reports the limit */
        return NULL;
    }
    yaml_event_t *e = &c->event;
    if (mapping ? e->data.mapping_start.tag != NULL : e->data.sequence_start.tag != NULL) {
        c->bail = 1;
        return NULL;
    }
    /* the anchor's name, copied: the start event is gone once the next one is read */
    const yaml_char_t *a = mapping ? e->data.mapping_start.anchor : e->data.sequence_start.anchor;
    char *anchor = NULL;
    if (a != NULL && (anchor = PyMem_Malloc(strlen((const char *)a) + 1)) == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    if (anchor != NULL)
        strcpy(anchor, (const char *)a);
    long long count0 = c->count;
    int64_t s = (int64_t)e->start_mark.index;
    PyObject *merges = NULL;  /* the mappings merge keys name, in order */
    PyObject *out = PyObject_CallNoArgs(mapping ? LMapType : LSeqType);
    if (out == NULL) {
        PyMem_Free(anchor);
        return NULL;
    }
    Offsets lc = {NULL, 0, 0};
    yaml_event_type_t end_type = mapping ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
    for (;;) {
        if (next(c) < 0)
            goto fail;
        if (e->type == end_type)
            break;
        c->count++;
        int64_t ks = 0, ke = 0, vs, ve;
        PyObject *key = NULL;
        if (mapping) {
            if (e->type != YAML_SCALAR_EVENT || !simple_scalar(e)) {
                c->bail = 1;  /* a collection, an alias, an anchor or a tag as a key */
                goto fail;
            }
            ks = (int64_t)e->start_mark.index;
            ke = (int64_t)e->end_mark.index;
            key = key_value(e);
            if (key == NULL)
                goto fail;
            if (next(c) < 0) {
                Py_DECREF(key);
                goto fail;
            }
            if (key == Py_None) {  /* a merge key: its mappings join after the explicit keys */
                Py_DECREF(key);
                if ((merges == NULL && (merges = PyList_New(0)) == NULL) || merge_sources(c, merges) < 0)
                    goto fail;
                continue;
            }
        }
        PyObject *value = node(c, depth + 1, &vs, &ve);
        if (value == NULL) {
            Py_XDECREF(key);
            goto fail;
        }
        int r;
        if (mapping) {
            r = PyDict_Contains(out, key);
            if (r == 1)
                c->bail = 1;  /* a repeated key: the full walk records it */
            if (r == 0)
                r = PyDict_SetItem(out, key, value);
            else
                r = -1;
            Py_DECREF(key);
        } else {
            r = PyList_Append(out, value);
        }
        Py_DECREF(value);
        if (r < 0)
            goto fail;
        if ((mapping && (off_push(&lc, ks) < 0 || off_push(&lc, ke) < 0)) || off_push(&lc, vs) < 0 ||
            off_push(&lc, ve) < 0)
            goto fail;
    }
    int64_t end = (int64_t)e->end_mark.index;
    for (Py_ssize_t i = 0; merges != NULL && i < PyList_GET_SIZE(merges); i++) {
        if (merge_into(c, out, &lc, PyList_GET_ITEM(merges, i)) < 0)
            goto fail;
    }
    /* the count is at least the expanded size the full walk limits: over the limit, it decides */
    if (c->count > c->max_nodes) {
        c->bail = 1;
        goto fail;
    }
    if (set_positions(out, !mapping, &lc, s, end) < 0)
        goto fail;
    if (anchor != NULL && remember(c, (const yaml_char_t *)anchor, out, s, end, c->count - count0 + 1) < 0)
        goto fail;
    PyMem_Free(anchor);
    Py_XDECREF(merges);
    PyMem_Free(lc.v);
    return out;
fail:
    PyMem_Free(anchor);
    Py_XDECREF(merges);
    PyMem_Free(lc.v);
    Py_DECREF(out);
    return NULL;
}

/* the node whose first event is current (a new reference); NULL with an exception or ctx->bail */
static PyObject *node(Ctx *c, long depth, int64_t *start, int64_t *end) {
    yaml_event_t *e = &c->event;
    *start = (int64_t)e->start_mark.index;
    switch (e->type) {
    case YAML_SCALAR_EVENT: {
        if (e->data.scalar.tag != NULL) {
            c->bail = 1;
            return NULL;
        }
        *end = (int64_t)e->end_mark.index;
        PyObject *value = scalar_value(e);
        if (value != NULL && e->data.scalar.anchor != NULL &&
            remember(c, e->data.scalar.anchor, value, *start, *end, 1) < 0)
            Py_CLEAR(value);
        return value;
    }
    case YAML_ALIAS_EVENT: {
        /* the anchored node itself, where it is written (as the composer gives it) */
        PyObject *t = recall(c);
        if (t == NULL)
            return NULL;
        *start = PyLong_AsLongLong(PyTuple_GET_ITEM(t, 1));
        *end = PyLong_AsLongLong(PyTuple_GET_ITEM(t, 2));
        c->count += PyLong_AsLongLong(PyTuple_GET_ITEM(t, 3));
        PyObject *data = PyTuple_GET_ITEM(t, 0);
        Py_INCREF(data);
        return data;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        PyObject *out = collection(c, depth, e->type == YAML_MAPPING_START_EVENT);
        if (out != NULL)
            *end = (int64_t)e->end_mark.index;
        return out;
    }
    default:
        c->bail = 1;
        return NULL;
    }
}

/* compose(text, max_nesting, max_nodes) -> [(data, start, end, is_null)] | None */
static PyObject *compose(PyObject *self, PyObject *args) {
    PyObject *text;
    long max_nesting;
    long long max_nodes;
    if (!PyArg_ParseTuple(args, "UlL", &text, &max_nesting, &max_nodes))
        return NULL;
    if (LMapType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "setup() was not called");
        return NULL;
    }
    /* an ASCII text is its own UTF-8: read in place (most manifests); any other is encoded */
    PyObject *utf8 = NULL;
    const char *buf;
    Py_ssize_t len;
    if (PyUnicode_IS_COMPACT_ASCII(text)) {
        buf = (const char *)PyUnicode_DATA(text);
        len = PyUnicode_GET_LENGTH(text);
    } else {
        if ((utf8 = PyUnicode_AsUTF8String(text)) == NULL)
            return NULL;
        buf = PyBytes_AS_STRING(utf8);
        len = PyBytes_GET_SIZE(utf8);
    }
    PyObject *docs = PyList_New(0);
    if (docs == NULL) {
        Py_XDECREF(utf8);
        return NULL;
    }
    Ctx c;
    memset(&c, 0, sizeof c);
    c.max_nesting = max_nesting;
    if ((c.anchors = PyDict_New()) == NULL || !yaml_parser_initialize(&c.parser)) {
        Py_XDECREF(c.anchors);
        Py_XDECREF(utf8);
        Py_DECREF(docs);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    yaml_parser_set_input_string(&c.parser, (const unsigned char *)buf, (size_t)len);
    yaml_parser_set_encoding(&c.parser, YAML_UTF8_ENCODING);
    int ok = 0;
    if (next(&c) < 0 || c.event.type != YAML_STREAM_START_EVENT)
        goto done;
    for (;;) {
        if (next(&c) < 0)
            goto done;
        if (c.event.type == YAML_STREAM_END_EVENT)
            break;
        if (c.event.type != YAML_DOCUMENT_START_EVENT || next(&c) < 0) {
            c.bail = 1;
            goto done;
        }
        c.count = 1;
        PyDict_Clear(c.anchors);  /* anchors hold within their document */
        c.max_nodes = max_nodes;
        int64_t s, e;
        int null_root = c.event.type == YAML_SCALAR_EVENT && c.event.data.scalar.tag == NULL &&
                        c.event.data.scalar.plain_implicit;
        PyObject *data = node(&c, 0, &s, &e);
        if (data == NULL)
            goto done;
        /* a root that resolves to null (an empty document, `~`) holds nothing: the caller skips it */
        int is_null = null_root && data == Py_None;
        PyObject *item = Py_BuildValue("(NLLO)", data, (long long)s, (long long)e, is_null ? Py_True : Py_False);
        if (item == NULL || PyList_Append(docs, item) < 0) {
            Py_XDECREF(item);
            goto done;
        }
        Py_DECREF(item);
        if (next(&c) < 0 || c.event.type != YAML_DOCUMENT_END_EVENT) {
            c.bail = 1;
            goto done;
        }
    }
    ok = 1;
done:
    if (c.have)
        yaml_event_delete(&c.event);
    yaml_parser_delete(&c.parser);
    Py_DECREF(c.anchors);
    Py_XDECREF(utf8);
    if (!ok) {
        Py_DECREF(docs);
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;  /* c.bail: the Python path parses this text */
    }
    return docs;
}

/* where ``needle`` (n bytes, n > 0) first starts in ``hay`` (hn bytes), or NULL */
static const char *search(const char *hay, size_t hn, const char *needle, size_t n) {
    if (n == 2) {
        const char *end = hay + hn;
        while (hay + 1 < end) {
            const char *p = memchr(hay, needle[0], (size_t)(end - hay) - 1);
            if (p == NULL)
                return NULL;
            if (p[1] == needle[1])
                return p;
            hay = p + 1;
        }
        return NULL;
    }
#if defined(__GLIBC__) || defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
    return memmem(hay, hn, needle, n);
#else
    const char *end = hay + hn;
    while (hn >= n) {
        const char *p = memchr(hay, needle[0], hn - n + 1);
        if (p == NULL)
            return NULL;
        if (memcmp(p, needle, n) == 0)
            return p;
        hay = p + 1;
        hn = (size_t)(end - hay);
    }
    return NULL;
#endif
}

/* find(text, needle, start=0) -> int: ``text.find(needle, start)`` for a text of one byte per
 * character (bytes, an ASCII or Latin-1 str) and a non-empty needle of ASCII bytes or characters,
 * searched with the C library; any other text or needle asks ``text.find`` itself. Whole-file searches
 * for short tokens (`{{`, `# Source:`, a kind's name) run on every file of a repository. */
static PyObject *find(PyObject *self, PyObject *args) {
    PyObject *text, *needle;
    Py_ssize_t start = 0;
    if (!PyArg_ParseTuple(args, "OO|n", &text, &needle, &start))
        return NULL;
    const char *hay = NULL, *pat = NULL;
    Py_ssize_t hn = 0, n = 0;
    if (PyBytes_CheckExact(text) && PyBytes_CheckExact(needle)) {
        hay = PyBytes_AS_STRING(text);
        hn = PyBytes_GET_SIZE(text);
        pat = PyBytes_AS_STRING(needle);
        n = PyBytes_GET_SIZE(needle);
    } else if (PyUnicode_CheckExact(text) && PyUnicode_CheckExact(needle) &&
               PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND && PyUnicode_IS_COMPACT_ASCII(needle)) {
        hay = (const char *)PyUnicode_DATA(text);
        hn = PyUnicode_GET_LENGTH(text);
        pat = (const char *)PyUnicode_DATA(needle);
        n = PyUnicode_GET_LENGTH(needle);
    }
    if (hay == NULL || n == 0 || start < 0)
        return PyObject_CallMethod(text, "find", "On", needle, start);
    if (start > hn - n)
        return PyLong_FromLong(-1);
    const char *at = search(hay + start, (size_t)(hn - start), pat, (size_t)n);
    return PyLong_FromSsize_t(at == NULL ? -1 : at - hay);
}

/* the offsets of ``type``'s `lc`, `s` and `e` slots into ``out`` (-1 for one that is not a writable
 * object slot of the type: it is then set through setattr) */
static int slot_offsets(PyObject *type, Py_ssize_t out[3]) {
    static const char *names[3] = {"lc", "s", "e"};
    for (int i = 0; i < 3; i++) {
        out[i] = -1;
        if (!PyType_Check(type))
            continue;
        PyObject *d = PyObject_GetAttrString(type, names[i]);
        if (d == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                return -1;
            PyErr_Clear();
            continue;
        }
        if (Py_IS_TYPE(d, &PyMemberDescr_Type) &&
            PyType_IsSubtype((PyTypeObject *)type, PyDescr_TYPE(d))) {
            PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
            if (m->type == Py_T_OBJECT_EX && !(m->flags & Py_READONLY))
                out[i] = m->offset;
        }
        Py_DECREF(d);
    }
    return 0;
}

/* setup(lmap, lseq, array, plain_tags, plain_tag, scalar, key, tag_str, first_chars): ``first_chars`` is
 * None when a resolver may take a text whatever it starts with */
static PyObject *setup(PyObject *self, PyObject *args) {
    PyObject *a[8];
    const char *first;
    Py_ssize_t nfirst;
    if (!PyArg_ParseTuple(args, "OOOO!OOOUz#", &a[0], &a[1], &a[2], &PyDict_Type, &a[3], &a[4], &a[5], &a[6], &a[7],
                          &first, &nfirst))
        return NULL;
    for (Py_ssize_t i = 0; first != NULL && i < nfirst; i++) {
        if ((unsigned char)first[i] >= 128) {
            PyErr_SetString(PyExc_ValueError, "first characters of implicit resolvers must be ASCII");
            return NULL;
        }
    }
    Py_ssize_t offsets[2][3];
    if (slot_offsets(a[0], offsets[0]) < 0 || slot_offsets(a[1], offsets[1]) < 0)
        return NULL;
    memcpy(SlotOffset, offsets, sizeof SlotOffset);
    AnyResolvable = first == NULL;
    memset(Resolvable, 0, sizeof Resolvable);
    for (Py_ssize_t i = 0; first != NULL && i < nfirst; i++)
        Resolvable[(unsigned char)first[i]] = 1;
    PyObject **slots[8] = {&LMapType, &LSeqType, &ArrayType, &PlainTags, &PlainTagFn, &ScalarFn, &KeyFn, &TagStr};
    for (int i = 0; i < 8; i++) {
        Py_INCREF(a[i]);
        Py_XSETREF(*slots[i], a[i]);
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"compose", compose, METH_VARARGS, "compose(text, max_nesting, max_nodes): [(data, start, end, is_null)] or None"},
    {"find", find, METH_VARARGS, "find(text, needle, start=0): text.find(needle, start), in C for byte-wide text"},
    {"setup", setup, METH_VARARGS, "setup(lmap, lseq, array, plain_tags, plain_tag, scalar, key, tag_str, first_chars)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_yamlfast", NULL, -1, methods};

/* what `setup` and `compose` take and give; `dralint.inputs.load` uses a module only of its own ABI
 * (an editable install keeps the module it built until it is installed again) */
#define ABI 3

PyMODINIT_FUNC PyInit__yamlfast(void) {
    s_lc = PyUnicode_InternFromString("lc");
    s_s = PyUnicode_InternFromString("s");
    s_e = PyUnicode_InternFromString("e");
    s_q = PyUnicode_InternFromString("q");
    if (s_lc == NULL || s_s == NULL || s_e == NULL || s_q == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ABI", ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
