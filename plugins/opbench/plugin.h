/*
 * opbench plugin ABI — the only header a backend plugin must include.
 *
 * A plugin is a shared library that exports exactly one C symbol,
 * OPB_PLUGIN_ENTRY_SYMBOL ("opb_plugin_entry"), of type opb_plugin_entry_fn.
 * The host calls it once with its own ABI version and receives a pointer to
 * a static opb_backend_api table.
 *
 * Versioning (checked by the host before any other call):
 *   - every struct begins with `struct_size` (sizeof as the writer compiled it)
 *     and `abi_version` (OPB_ABI_VERSION as the writer compiled it);
 *   - the major version changes on any incompatible change and must match;
 *   - the minor version grows when fields are appended; a reader never touches
 *     a field beyond the struct_size it was given;
 *   - fields are only ever appended, never reordered or removed.
 *
 * Rules of the boundary: no C++ exception and no std:: type crosses it. Every
 * fallible call returns an opb_status; on failure the plugin makes a
 * human-readable message available through `last_error`.
 *
 * Tensors are dense, row-major, in the op's dtype, and live in memory that the
 * plugin allocated with `alloc` (host memory for CPU backends, device memory
 * for device backends). The host moves data with `copy_in` / `copy_out`.
 */
#ifndef OPBENCH_PLUGIN_H
#define OPBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions and the entry symbol ------------------------------------- */

#define OPB_ABI_VERSION_MAJOR 1
#define OPB_ABI_VERSION_MINOR 7
#define OPB_ABI_VERSION ((uint32_t)((OPB_ABI_VERSION_MAJOR << 16) | OPB_ABI_VERSION_MINOR))
#define OPB_ABI_MAJOR(v) ((uint32_t)(v) >> 16)
#define OPB_ABI_MINOR(v) ((uint32_t)(v)&0xffffu)

/* The one exported symbol. Use OPB_PLUGIN_ENTRY to define it. */
#define OPB_PLUGIN_ENTRY_SYMBOL "opb_plugin_entry"

#if defined(_WIN32)
#define OPB_EXPORT __declspec(dllexport)
#else
#define OPB_EXPORT __attribute__((visibility("default")))
#endif
#ifdef __cplusplus
#define OPB_EXTERN_C extern "C"
#else
#define OPB_EXTERN_C
#endif

/* ---- status codes -------------------------------------------------------- */

typedef enum opb_status {
    OPB_OK = 0,
    OPB_ERR_UNSUPPORTED = 1, /* the op/dtype/shape is not offered by this backend */
    OPB_ERR_INVALID = 2,     /* bad argument (host bug or nonsense description) */
    OPB_ERR_OUT_OF_MEMORY = 3,
    OPB_ERR_DEVICE = 4,      /* driver / device / library failure */
    OPB_ERR_UNAVAILABLE = 5, /* backend not usable on this machine (see probe) */
    OPB_ERR_INTERNAL = 6
} opb_status;

/* ---- data types and ops -------------------------------------------------- */

typedef enum opb_dtype {
    OPB_DTYPE_F32 = 0,
    OPB_DTYPE_BF16 = 1, /* stored as uint16_t, the upper half of an IEEE f32 */
    OPB_DTYPE_F16 = 2,  /* IEEE binary16, stored as uint16_t */
    OPB_DTYPE_S8 = 3,   /* ABI 1.3: int8_t; as an op's dtype: int8 weights (MATMUL only) */
    OPB_DTYPE_U8 = 4,   /* ABI 1.3: uint8_t; an int8 matmul's activations or a QUANTIZE output, never an op's dtype */
    OPB_DTYPE_F8_E4M3 = 5 /* ABI 1.5: OCP FP8 e4m3, one byte: an FP8 matmul's dtype (ops.hpp), a roof's dtype;
                             ABI 1.7: a QUANTIZE output, an ATTENTION dtype */
} opb_dtype;

typedef enum opb_op_kind {
    OPB_OP_MATMUL = 0,
    OPB_OP_SOFTMAX = 1,
    OPB_OP_LAYERNORM = 2,
    OPB_OP_RMSNORM = 3,
    OPB_OP_GELU = 4,
    OPB_OP_SILU = 5,
    OPB_OP_ADD = 6,
    OPB_OP_ATTENTION = 7,
    OPB_OP_ROPE = 8,    /* ABI 1.2 */
    OPB_OP_QUANTIZE = 9 /* ABI 1.4 */
} opb_op_kind;
#define OPB_OP_COUNT 10

/* Variants. Each op interprets opb_op_desc.variant with its own constants;
 * 0 is always the op's default form. */
enum {
    OPB_MATMUL_DEFAULT = 0, /* full precision of the dtype */
    OPB_MATMUL_TF32 = 1,    /* f32 inputs, TF32 tensor-core math (explicit opt-in) */

    OPB_GELU_ERF = 0,  /* 0.5 x (1 + erf(x / sqrt 2)) */
    OPB_GELU_TANH = 1, /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */

    OPB_ATTENTION_COMPOSED = 0, /* QK^T -> softmax -> .V, materialises scores */
    OPB_ATTENTION_FUSED = 1,    /* tiled, online softmax, no seq_q x seq_kv buffer */

    OPB_ROPE_HALF_SPLIT = 0, /* GPT-NeoX / Llama: pairs (i, i + rotary_dim/2) */
    OPB_ROPE_INTERLEAVED = 1 /* GPT-J: pairs (2i, 2i + 1) */
};

/*
 * Per-op parameters and the tensors each op takes, in execute's order.
 * "in" tensors are read, "out" tensors are written.
 *
 * MATMUL     C[b] = op(A[b]) . op(B[b]) (+ bias)
 *            in  A: [batch, M, K]  (stored [batch, K, M] when trans_a)
 *            in  B: [batch, K, N]  (stored [batch, N, K] when trans_b)
 *            in  bias: [N]         (only when has_bias)
 *            out C: [batch, M, N]
 *            Every tensor is in the op's dtype, except for int8 weights:
 * MATMUL, dtype S8 (ABI 1.3; int8 linear layer), the tensors' own dtypes:
 *            in  A: act_dtype (U8 or S8), shaped as above
 *            in  B: S8, shaped as above
 *            in  w_scale: f32 [N]  per-output-channel weight scales, > 0
 *            in  bias: f32 [N]     (only when has_bias)
 *            out C: out_dtype (F32 or BF16) [batch, M, N]
 *            C[m, n] = act_scale * w_scale[n] * sum_k (A[m, k] - act_zero_point) * B[k, n]
 *                      (+ bias[n]), the sum exact in s32, the rest in f32.
 *            act_zero_point is 0 for S8 activations; 0..255 for U8.
 *            A plugin built before ABI 1.3 is never given an S8 description.
 * SOFTMAX    y = softmax(scale * x) along the last axis of x: [batch, rows, cols].
 *            causal masks x[b, r, c] for c > r + (cols - rows) (bottom-right
 *            aligned, as in decoding: the last row sees every column).
 *            in x, out y (same shape)
 * LAYERNORM  y = (x - mean) / sqrt(var + eps) * gamma + beta, per row of x: [rows, cols]
 *            in x, in gamma: [cols], in beta: [cols], out y
 * RMSNORM    y = x / sqrt(mean(x^2) + eps) * gamma
 *            in x, in gamma: [cols], out y
 * GELU, SILU elementwise on x: [rows, cols]; in x, out y
 * ADD        y = a + b, all [rows, cols]; in a, in b, out y
 * ATTENTION  O = softmax(scale * Q K^T (+ causal mask)) V, per (batch, head)
 *            in Q: [batch, heads, seq_q, head_dim]
 *            in K: [batch, kv_heads, seq_kv, head_dim]
 *            in V: [batch, kv_heads, seq_kv, head_dim]
 *            out O: [batch, heads, seq_q, head_dim]
 *            causal uses the same bottom-right alignment as SOFTMAX.
 *            scale 0 means 1/sqrt(head_dim).
 *            kv_heads (ABI 1.2; grouped-query attention): query head h reads
 *            K/V head h / (heads / kv_heads); heads is a multiple of kv_heads.
 *            0 means heads (what every description from an ABI 1.0/1.1 writer
 *            holds, the union being zeroed); a plugin built before 1.2 never
 *            reads it, so the host gives such a plugin only kv_heads = heads.
 * ATTENTION, dtype F8_E4M3 (ABI 1.7; FP8 attention), the tensors:
 *            in  Q, K, V: F8_E4M3, shaped as above
 *            in  q_scale, k_scale, v_scale: f32 [1] each, > 0: per-tensor
 *                dequantisation scales (a value is its scale times its
 *                stored e4m3 number, as FP8 matmul's a_scale)
 *            in  o_scale: f32 [1], > 0: O's quantisation scale, a
 *                multiplier (cuDNN's scale_o); 1 / o_scale dequantises O
 *            out O: F8_E4M3 [batch, heads, seq_q, head_dim]
 *            O = e4m3(o_scale * softmax(scale * (q_scale Q)(k_scale K)^T
 *                     (+ causal mask)) (v_scale V)),
 *            rounded to f32, then to e4m3 (nearest, ties to even), saturated
 *            to +-448. O is FP8 because cuDNN's FP8 SDPA writes FP8 only on
 *            Hopper. An implementation may quantise the probabilities to
 *            e4m3 before P.V (the cuda plugin: P * 448, descaled by 1/448)
 *            and accumulate with FP8 tensor cores' shorter sums; the
 *            tolerance (ops.hpp) allows for both. A plugin built before 1.7
 *            is never given this form.
 * ROPE       (ABI 1.2) rotary position embedding of Q and K at positions
 *            position .. position + seq - 1 (row t of seq is at position + t):
 *            for each rotated pair (x0, x1) of a head's first rotary_dim
 *            elements, pair index i in [0, rotary_dim/2), position t:
 *            angle = t * theta^(-2i / rotary_dim),
 *            (x0, x1) -> (x0 cos - x1 sin, x1 cos + x0 sin); the elements past
 *            rotary_dim are copied. The variant picks the pairs (above).
 *            in Q: [batch, heads, seq, head_dim]
 *            in K: [batch, kv_heads, seq, head_dim]
 *            out Qr, out Kr: the shapes of Q and K
 * QUANTIZE   (ABI 1.4) per-tensor affine quantisation of x: [rows, cols] in
 *            the op's dtype (F32 or BF16) to out_dtype (U8 or S8), the input
 *            of an int8 matmul (MATMUL dtype S8, act_scale and act_zero_point
 *            the same numbers):
 *            y = saturate(round_half_even(x / scale) + zero_point)
 *            saturated to 0..255 (U8) or -128..127 (S8); NaN gives zero_point.
 *            (ABI 1.7) out_dtype F8_E4M3, zero_point 0: the input of an FP8
 *            matmul (its a_scale tensor holds the same scale):
 *            y = e4m3(x / scale), the quotient rounded to f32, then to e4m3
 *            (nearest, ties to even), saturated to +-448 (CUDA's
 *            __NV_SATFINITE); NaN gives NaN. A plugin built before 1.7 is
 *            never given this form.
 *            in x, out y: [rows, cols] in out_dtype
 */
typedef struct opb_matmul_params {
    int64_t batch, m, n, k;
    int32_t trans_a, trans_b, has_bias;
    /* ABI 1.3, appended; read only when the op's dtype is OPB_DTYPE_S8 */
    int32_t act_dtype;      /* A's dtype: OPB_DTYPE_U8 or OPB_DTYPE_S8 */
    float act_scale;        /* > 0, finite */
    int32_t act_zero_point; /* U8: 0..255; S8: 0 */
    int32_t out_dtype;      /* C's dtype: OPB_DTYPE_F32 or OPB_DTYPE_BF16 */
} opb_matmul_params;

typedef struct opb_softmax_params {
    int64_t batch, rows, cols;
    float scale;
    int32_t causal;
} opb_softmax_params;

typedef struct opb_norm_params { /* LAYERNORM, RMSNORM */
    int64_t rows, cols;
    float eps;
} opb_norm_params;

typedef struct opb_eltwise_params { /* GELU, SILU, ADD */
    int64_t rows, cols;
} opb_eltwise_params;

typedef struct opb_attention_params {
    int64_t batch, heads, seq_q, seq_kv, head_dim;
    float scale;
    int32_t causal;
    int64_t kv_heads; /* ABI 1.2, appended: 0 = heads */
} opb_attention_params;

typedef struct opb_rope_params { /* ABI 1.2 */
    int64_t batch, heads, kv_heads, seq, head_dim;
    int64_t rotary_dim; /* even, <= head_dim; 0 = head_dim */
    float theta;        /* base of the frequencies, > 0 */
    int64_t position;   /* position of the first row (a decode step's cache length); >= 0 */
} opb_rope_params;

typedef struct opb_quantize_params { /* ABI 1.4 */
    int64_t rows, cols;
    float scale;        /* > 0, finite */
    int32_t zero_point; /* U8: 0..255; S8 and F8_E4M3: 0 */
    int32_t out_dtype;  /* OPB_DTYPE_U8 or OPB_DTYPE_S8; ABI 1.7: OPB_DTYPE_F8_E4M3 */
} opb_quantize_params;

typedef struct opb_op_desc {
    uint32_t struct_size; /* sizeof(opb_op_desc) */
    uint32_t abi_version; /* OPB_ABI_VERSION */
    int32_t op;           /* opb_op_kind */
    int32_t dtype;        /* opb_dtype */
    int32_t variant;      /* per-op variant constant, 0 = default */
    int32_t threads;      /* CPU threads to use; opbench always passes >= 1 (its `threads = 0` is
                             resolved to the CPUs it may run on); 0 = backend default */
    union {
        opb_matmul_params matmul;
        opb_softmax_params softmax;
        opb_norm_params norm;
        opb_eltwise_params eltwise;
        opb_attention_params attention;
        opb_rope_params rope;  /* ABI 1.2 */
        opb_quantize_params quantize; /* ABI 1.4 */
        uint8_t reserved[128]; /* keeps the union's size fixed as ops are added */
    } p;
} opb_op_desc;

/* ---- host services (host -> plugin) ------------------------------------- */

typedef enum opb_log_level { OPB_LOG_DEBUG = 0, OPB_LOG_INFO = 1, OPB_LOG_WARN = 2, OPB_LOG_ERROR = 3 } opb_log_level;

typedef struct opb_host_services {
    uint32_t struct_size;
    uint32_t abi_version;
    void *host; /* opaque; pass back as the first argument */
    /* Log a message through the host (never NULL). */
    void (*log)(void *host, int32_t level, const char *message);
    /* Allocation accounting: a plugin reports each allocation it makes of
     * memory it owns (host or device) and each release. Never NULL. */
    void (*on_alloc)(void *host, uint64_t bytes, int32_t is_device);
    void (*on_free)(void *host, uint64_t bytes, int32_t is_device);
    /* Profiling scopes: named regions inside a plugin's work (for traces).
     * Never NULL; cheap no-ops when the host is not profiling. */
    void (*scope_begin)(void *host, const char *name);
    void (*scope_end)(void *host);
    /* ABI 1.1: the host's profiling switch, a word the host owns for the life
     * of the instance: nonzero while the host records scopes. A plugin reads
     * it before calling scope_begin / scope_end (plugins/opbench/scope.hpp
     * does), so a scope costs one load and one branch when profiling is off.
     * The host changes it only between calls into the plugin. From an ABI 1.0
     * host (struct_size too small) it is absent: call the scope functions. */
    const uint32_t *profiling;
} opb_host_services;

/* ---- what a plugin reports about itself ---------------------------------- */

typedef enum opb_device_kind { OPB_DEVICE_CPU = 0, OPB_DEVICE_GPU = 1 } opb_device_kind;

typedef struct opb_device_info {
    uint32_t struct_size;
    uint32_t abi_version;
    int32_t kind;          /* opb_device_kind */
    char name[128];        /* e.g. "Intel Xeon Platinum 8480+", "NVIDIA H100" */
    uint64_t total_memory; /* bytes; 0 if unknown */
    uint64_t free_memory;  /* bytes; 0 if unknown */
} opb_device_info;

typedef struct opb_memory_stats {
    uint32_t struct_size;
    uint32_t abi_version;
    uint64_t current_bytes;   /* bytes currently held through alloc + plans */
    uint64_t peak_bytes;      /* high-water mark since the last reset_peak */
    uint64_t workspace_bytes; /* bytes of workspace held by live plans */
} opb_memory_stats;

/* ---- ABI 1.5: the device measured (roofs, clocks) ------------------------ */

/* The unit a roof belongs to. */
typedef enum opb_roof_unit {
    OPB_ROOF_SIMT = 0,   /* scalar/vector pipes (a GPU's CUDA cores): FLOP/s */
    OPB_ROOF_TENSOR = 1, /* matrix units (tensor cores): FLOP/s, integer ops/s for S8;
                          * TENSOR with dtype F32 is TF32 (f32 operands, tensor-core math) */
    OPB_ROOF_DRAM = 2,   /* device memory bandwidth: bytes/s */
    OPB_ROOF_L2 = 3      /* last-level cache bandwidth: bytes/s */
} opb_roof_unit;

/* One roof of the device, as the plugin measured it (ABI 1.5). */
typedef struct opb_device_roof {
    uint32_t struct_size;
    uint32_t abi_version;
    int32_t unit;        /* opb_roof_unit */
    int32_t dtype;       /* opb_dtype of the operands for SIMT / TENSOR; -1 for DRAM / L2 */
    double measured;     /* the best sustained rate per second (FLOP, ops or bytes); 0 = not measured */
    double datasheet;    /* the vendor's dense figure, same unit; 0 = the plugin does not know the device */
    double sm_clock_mhz; /* the SM clock while it was measured; 0 = unknown */
    char method[96];     /* how: "cuBLASLt GEMM 8192^3, best of 3 shapes", "triad over 4x L2" */
} opb_device_roof;

/* Called once per roof by measure_roofs; the host copies what it keeps. */
typedef void (*opb_roof_fn)(void *user, const opb_device_roof *roof);

/* Who the device is, for the host's roof cache, and its clocks (ABI 1.5). */
typedef struct opb_device_clocks {
    uint32_t struct_size;
    uint32_t abi_version;
    char uuid[48];        /* "GPU-8c3f0b2e-..."; "" = unknown (no cache is kept) */
    char driver[32];      /* the driver's version, "580.65.06"; "" = unknown */
    double sustained_mhz; /* the SM clock the device holds under sustained load; 0 = unknown */
    double max_mhz;       /* the boost ceiling; 0 = unknown */
} opb_device_clocks;

/* What the device's clock did over one repetition (ABI 1.5). */
typedef struct opb_clock_reading {
    uint32_t struct_size;
    uint32_t abi_version;
    double sm_clock_mhz;       /* the SM clock over the repetition (the lowest probe); 0 = unknown */
    double power_watts;        /* board power at its end; < 0 = unknown */
    double temperature_c;      /* GPU temperature at its end; < -273 = unknown */
    uint64_t throttle_reasons; /* NVML's clock-event reasons mask; 0 = none or unknown */
} opb_clock_reading;

/* ---- ABI 1.6: the kernel timeline (issue 42) ---------------------------- */

/* What one activity record is. */
typedef enum opb_activity_kind {
    OPB_ACTIVITY_KERNEL = 0, /* a kernel */
    OPB_ACTIVITY_MEMCPY = 1, /* a copy the device's engines made */
    OPB_ACTIVITY_MEMSET = 2
} opb_activity_kind;

/* One piece of device work recorded between activity_begin and activity_end
 * (ABI 1.6). Every record of one window is on one device clock. */
typedef struct opb_activity {
    uint32_t struct_size;
    uint32_t abi_version;
    int32_t kind;      /* opb_activity_kind */
    int32_t call;      /* the execute call that launched it, counted from 0 at activity_begin; -1 = unknown */
    uint64_t start_ns; /* on the device's activity clock (ns) */
    uint64_t end_ns;   /* same clock; >= start_ns */
    uint32_t stream;   /* the stream's id; 0 = unknown */
    uint32_t reserved;
    const char *name;  /* the kernel's (demangled) name, "memcpy HtoD", ...; valid during the callback only */
    const char *scope; /* the plugin's profiling scope it was launched in ("qk"); NULL = none. Same lifetime */
} opb_activity;

/* Called once per record by activity_end, in start order; the host copies what it keeps. */
typedef void (*opb_activity_fn)(void *user, const opb_activity *activity);

/* Callback for backend-specific key/value facts (library versions,
 * dispatched ISA, compute capability...). Strings are copied by the host. */
typedef void (*opb_info_fn)(void *user, const char *key, const char *value);

typedef struct opb_backend opb_backend; /* a plugin's instance, opaque */
typedef struct opb_plan opb_plan;       /* a prepared op, opaque */

/* ---- the backend table (plugin -> host) ---------------------------------- */

typedef struct opb_backend_api {
    uint32_t struct_size; /* sizeof(opb_backend_api) as the plugin compiled it */
    uint32_t abi_version; /* OPB_ABI_VERSION as the plugin compiled it */

    const char *name;             /* short, lowercase, unique: "naive", "onednn" */
    const char *version;          /* the plugin's own version */
    const char *description;      /* one line for `opbench list` */
    const char *library_versions; /* "oneDNN 2.6.3", "cuBLAS 13.0, cuDNN 9.13"; "" if none */

    /* Create an instance. Must succeed on any machine where the library
     * loaded, even without a usable device: `probe` reports usability.
     * Returns OPB_OK and sets *out, or an error (no message channel yet:
     * log through `services`). */
    opb_status (*create)(const opb_host_services *services, opb_backend **out);
    void (*destroy)(opb_backend *b);

    /* Message for the last failed call on this instance; never NULL, valid
     * until the next call. */
    const char *(*last_error)(opb_backend *b);

    /* OPB_OK when the backend can run here; otherwise OPB_ERR_UNAVAILABLE
     * with the reason in last_error ("no CUDA driver", ...). */
    opb_status (*probe)(opb_backend *b);

    /* Fill *out (caller sets struct_size/abi_version) for device 0. */
    opb_status (*device_info)(opb_backend *b, opb_device_info *out);

    /* OPB_OK when the op can be prepared, else OPB_ERR_UNSUPPORTED with the
     * reason in last_error ("rmsnorm: no oneDNN 2.6 primitive"). */
    opb_status (*supports)(opb_backend *b, const opb_op_desc *desc);

    /* Memory the backend owns: host memory for CPU backends, device memory
     * for device backends. alloc returns 64-byte aligned memory. */
    opb_status (*alloc)(opb_backend *b, uint64_t bytes, void **out);
    void (*free)(opb_backend *b, void *ptr);
    opb_status (*copy_in)(opb_backend *b, void *dst, const void *host_src, uint64_t bytes);
    opb_status (*copy_out)(opb_backend *b, void *host_dst, const void *src, uint64_t bytes);

    /* Build everything execute needs (primitives, plans, workspace), outside
     * the timed region. *workspace_bytes receives the bytes the plan holds. */
    opb_status (*prepare)(opb_backend *b, const opb_op_desc *desc, opb_plan **out, uint64_t *workspace_bytes);
    /* Run a prepared op. tensors[] holds the op's tensors in the documented
     * order (inputs, then outputs); count is checked by the plugin. May be
     * asynchronous on device backends: the host calls synchronize. */
    opb_status (*execute)(opb_backend *b, opb_plan *plan, void *const *tensors, int32_t count);
    void (*release)(opb_backend *b, opb_plan *plan);

    /* Wait until all work submitted by execute has finished. */
    opb_status (*synchronize)(opb_backend *b);

    /* Memory statistics of memory the backend owns. */
    opb_status (*memory_stats)(opb_backend *b, opb_memory_stats *out);
    void (*reset_peak)(opb_backend *b);

    /* (optional, NULL allowed) Device timer: start records a start mark on the
     * backend's stream; stop records the end, waits, and returns the elapsed
     * device time in seconds. Host default: no device time is reported. */
    opb_status (*timer_start)(opb_backend *b);
    opb_status (*timer_stop)(opb_backend *b, double *seconds);

    /* (optional, NULL allowed) Report backend facts for the result context.
     * Host default: only name, version and library_versions are recorded. */
    void (*info)(opb_backend *b, opb_info_fn fn, void *user);

    /* (optional, NULL allowed) Evict the device's caches (e.g. GPU L2) for
     * cold-cache measurement. Host default: the host evicts CPU caches only. */
    opb_status (*flush_cache)(opb_backend *b);

    /* ---- ABI 1.5, appended. A host reads these only through OPB_API_HAS:
     * a table built against 1.4 or earlier ends before them. ---- */

    /* (optional, NULL allowed) Device 0's identity and clocks (caller sets
     * struct_size / abi_version). Host default: no roof cache is kept and no
     * repetition is judged throttled. */
    opb_status (*device_clocks)(opb_backend *b, opb_device_clocks *out);
    /* (optional, NULL allowed) Measure the device's roofs: call `fn` once per
     * unit and dtype measured. Slow (up to a minute); the host caches the
     * result per device UUID, driver and sustained clock. Host default: no
     * device roof; entries get no share of a roof. */
    opb_status (*measure_roofs)(opb_backend *b, opb_roof_fn fn, void *user);
    /* (optional, NULL allowed; both or neither) The clock of one repetition:
     * clock_begin before its first sample, clock_end after its last (the
     * host has synchronized) fills *out. Host default: no clock recorded. */
    opb_status (*clock_begin)(opb_backend *b);
    opb_status (*clock_end)(opb_backend *b, opb_clock_reading *out);
    /* (optional, NULL allowed) Host seconds the plugin spent inside execute
     * (the launches' own cost) since the last timer_start, read after
     * timer_stop. Host default: no host time per call is recorded. */
    opb_status (*timer_host_seconds)(opb_backend *b, double *seconds);

    /* ---- ABI 1.6, appended: the kernel timeline (issue 42). A host reads
     * these only through OPB_API_HAS: a 1.5 table ends before them. ---- */

    /* (optional, NULL allowed; both or neither) Record the device's activity
     * (kernels, copies) of this instance: activity_begin before a profiled
     * sample's first execute (execute calls are counted from 0 from here);
     * activity_end after the host's synchronize flushes what was recorded,
     * calls `fn` once per record in start order and stops recording. Either
     * returns OPB_ERR_UNAVAILABLE with the reason in last_error when the
     * device or its profiler refuses ("CUPTI: insufficient privileges"):
     * the host says so once and carries on. Host default: no timeline. */
    opb_status (*activity_begin)(opb_backend *b);
    opb_status (*activity_end)(opb_backend *b, opb_activity_fn fn, void *user);

    /* ---- ABI 1.6, appended: warm, back-to-back launches (issue 41). A host
     * reads these only through OPB_API_HAS. ---- */

    /* (optional, NULL allowed; all three or none) `opbench run --launch
     * graph`: graph_prepare captures `calls` executions of `plan` on
     * `tensors` (as execute takes them), back to back on the instance's
     * stream, into one replayable graph (a CUDA graph); the instance holds
     * at most one, and a second graph_prepare replaces it. graph_launch
     * replays it once (asynchronous: the host calls synchronize; between
     * timer_start and timer_stop its host time counts as execute's does);
     * graph_release frees it (also done by destroy; nothing when none is
     * held). graph_prepare returns OPB_ERR_UNAVAILABLE with the reason in
     * last_error when the device or a library refuses capture: the host
     * then measures the calls back to back without a graph, and says so.
     * Host default: no graph; `--launch graph` measures batch. */
    opb_status (*graph_prepare)(opb_backend *b, opb_plan *plan, void *const *tensors, int32_t count,
                                int32_t calls);
    opb_status (*graph_launch)(opb_backend *b);
    void (*graph_release)(opb_backend *b);
} opb_backend_api;

/* Whether `api` (a plugin's table) holds the optional entry `field`: its
 * struct_size covers the field and the field is set. Use it for every entry
 * appended after ABI 1.0. */
#define OPB_API_HAS(api, field)                                                                                        \
    ((api)->struct_size >= offsetof(opb_backend_api, field) + sizeof((api)->field) && (api)->field != NULL)

/* The entry point: returns the plugin's static table, or NULL if the plugin
 * cannot serve a host of `host_abi_version` at all. */
typedef const opb_backend_api *(*opb_plugin_entry_fn)(uint32_t host_abi_version);

/* Defines the entry point. Usage, in exactly one source file of the plugin:
 *   OPB_PLUGIN_ENTRY(host_version) { (void)host_version; return &my_api; }  */
#define OPB_PLUGIN_ENTRY(host_version_param)                                                                           \
    OPB_EXTERN_C OPB_EXPORT const opb_backend_api *opb_plugin_entry(uint32_t host_version_param)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPBENCH_PLUGIN_H */
