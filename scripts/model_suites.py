#!/usr/bin/env python3
"""Writes suites/models/<model>.toml and <model>-full.toml from the models'
published configurations (MODELS below: the numbers of each model's
config.json on the Hugging Face Hub). Run from the repository root after
changing MODELS or the layout; the TOML files are what opbench reads.

One layer of each model, as opbench's ops: fused QKV and gate/up
projections (weights [out, in], trans_b), RMSNorm, RoPE on Q and K,
grouped-query causal attention, the gated MLP's activation, residual add.
"""
import pathlib

# name: (title, hidden, intermediate, heads, kv_heads, head_dim, rope theta,
#        layers, qkv bias, activation of the gated MLP, source)
MODELS = {
    "llama-3-8b": ("Llama-3-8B", 4096, 14336, 32, 8, 128, 500000.0, 32, False, "silu",
                   "meta-llama/Meta-Llama-3-8B config.json"),
    "mistral-7b": ("Mistral-7B-v0.1", 4096, 14336, 32, 8, 128, 10000.0, 32, False, "silu",
                   "mistralai/Mistral-7B-v0.1 config.json"),
    "qwen2.5-7b": ("Qwen2.5-7B", 3584, 18944, 28, 4, 128, 1000000.0, 28, True, "silu",
                   "Qwen/Qwen2.5-7B config.json (q/k/v projections carry a bias)"),
    "phi-3-mini": ("Phi-3-mini-4k", 3072, 8192, 32, 32, 96, 10000.0, 32, False, "silu",
                   "microsoft/Phi-3-mini-4k-instruct config.json (kv_heads = heads: multi-head)"),
    "gemma-2-9b": ("Gemma-2-9B", 3584, 14336, 16, 8, 256, 10000.0, 42, False, "gelu_tanh",
                   "google/gemma-2-9b config.json (head_dim 256 != hidden/heads; GeGLU, tanh GELU; "
                   "its attention logit soft-capping and sliding window are not modelled)"),
}
PREFILL = [128, 2048]
DECODE_BATCH = [1, 8]
KV_CACHE = [1024, 8192]


def layer_cases(key, m, full):
    title, d, f, h, kvh, dh, theta, layers, qkv_bias, act, source = m
    out = []
    qkv_n = (h + 2 * kvh) * dh

    def case(lines):
        out.append("[[case]]\n" + "\n".join(lines) + "\n")

    # The four projections at M = m tokens, weights stored [out, in] (trans_b).
    def projections(tag, m, be, dtype=None):
        case([f'op = "matmul"', f'name = "{tag}"', *([f'dtype = "{dtype}"'] if dtype else []), f"m = {m}",
              "trans_b = true", *be, "shapes = [",
              f'  {{name = "attn.qkv", n = {qkv_n}, k = {d}, bias = {str(qkv_bias).lower()}}},',
              f'  {{name = "attn.o", n = {d}, k = {h * dh}}},',
              f'  {{name = "mlp.gate_up", n = {2 * f}, k = {d}}},',
              f'  {{name = "mlp.down", n = {d}, k = {f}}},',
              "]"])

    # FP8 (dtype f8e4m3: e4m3 operands with per-tensor scales, f32 output) is
    # the level after bf16 on GPUs of sm_89 and later: the same projections,
    # under the same names (so the level table puts f32, bf16 and f8e4m3 side
    # by side), in the TN layout cuBLASLt's FP8 GEMM takes. onednn skips them
    # with the reason; naive runs them where it runs the f32 ones.

    # The naive backend runs well under 1 GFLOP/s on a loaded 2-core machine
    # (a 128-token QKV projection timed out after 65 s), so the default suite
    # gives it the cheap cases only: batch-1 decode and the streaming ops.
    # The matmuls of prefill and of batch-8 decode, and 2048-token attention,
    # run on the optimised backends; the -full suite runs all of it on naive.
    opt_only = [] if full else ['backends = ["onednn", "cuda"]  # naive: the -full suite']
    for tokens in PREFILL:
        big = tokens > 128 and not full
        be = opt_only if big else []
        tag = f"{key}.prefill{tokens}"
        projections(tag, tokens, opt_only)
        projections(tag, tokens, opt_only, "f8e4m3")
        case([f'op = "rope"', f'name = "{tag}.rope"', f"heads = {h}", f"kv_heads = {kvh}", f"seq = {tokens}",
              f"head_dim = {dh}", f"theta = {theta:.0f}", *be])
        case([f'op = "attention"', f'name = "{tag}.attn"', f"heads = {h}", f"kv_heads = {kvh}", f"seq = {tokens}",
              f"head_dim = {dh}", "causal = true", 'variant = ["composed", "fused"]', *be])
        case([f'op = "rmsnorm"', f'name = "{tag}.norm"', f"rows = {tokens}", f"cols = {d}", *be])
        if act == "silu":
            case([f'op = "silu"', f'name = "{tag}.mlp.act"', f"rows = {tokens}", f"cols = {f}", *be])
        else:
            case([f'op = "gelu"', f'name = "{tag}.mlp.act"', f"rows = {tokens}", f"cols = {f}", 'variant = "tanh"',
                  *be])
        case([f'op = "add"', f'name = "{tag}.residual"', f"rows = {tokens}", f"cols = {d}", *be])

    # Decode: one new token per sequence against a KV cache.
    for batch in DECODE_BATCH:
        tag = f"{key}.decode.b{batch}"
        be = opt_only if batch > 1 else []
        projections(tag, batch, be)
        projections(tag, batch, be, "f8e4m3")
        case([f'op = "rope"', f'name = "{tag}.rope"', f"batch = {batch}", f"heads = {h}", f"kv_heads = {kvh}",
              "seq = 1", f"head_dim = {dh}", f"theta = {theta:.0f}"])
        case([f'op = "attention"', f'name = "{tag}.attn"', f"batch = {batch}", f"heads = {h}", f"kv_heads = {kvh}",
              "seq_q = 1", f"seq_kv = {KV_CACHE}", f"head_dim = {dh}", "causal = true",
              'variant = ["composed", "fused"]', *be])

    # int8 weights (dtype s8: per-output-channel scales, u8 activations): the
    # same projections stored [in, out], as an int8 inference engine lays its
    # weights out once at load (oneDNN 2.6 repacks a transposed int8 B on
    # every call), with the quantisation of their input beside them. The
    # naive backend runs the batch-1 decode only (its int8 matmul is exact
    # integer code, about as slow as its f32 one).
    for tag, m, be in ([(f"{key}.int8.decode.b{b}", b, opt_only if b > 1 else []) for b in DECODE_BATCH] +
                       [(f"{key}.int8.prefill{t}", t, opt_only) for t in PREFILL]):
        case([f'op = "matmul"', f'name = "{tag}"', 'dtype = "s8"', f"m = {m}", *be, "shapes = [",
              f'  {{name = "attn.qkv", n = {qkv_n}, k = {d}, bias = {str(qkv_bias).lower()}}},',
              f'  {{name = "attn.o", n = {d}, k = {h * dh}}},',
              f'  {{name = "mlp.gate_up", n = {2 * f}, k = {d}}},',
              f'  {{name = "mlp.down", n = {d}, k = {f}}},',
              "]"])
        case([f'op = "quantize"', f'name = "{tag}.quantize"', 'dtype = "f32"', f"rows = {m}", f"cols = {d}",
              *([] if m <= 128 or full else opt_only)])
    return out


HEADER = """# {title}: one decoder layer as opbench ops, from the published configuration
# ({source}): hidden {d}, intermediate {f}, {h} heads, {kvh} K/V heads,
# head_dim {dh}, RoPE theta {theta:.0f} ({layers} layers in the model; one is measured).
# Written by scripts/model_suites.py; edit that and re-run it.
#
# Prefill at {p0} and {p1} tokens (batch 1) and decode at batch {b0} and {b1}
# against KV caches of {kv0} and {kv1} tokens, in f32 and bf16 (bf16 only where
# the backend offers it: a backend without it skips with the reason), the
# projections in FP8 (dtype f8e4m3: cuda on sm_89+ and naive; onednn skips),
# and the linear layers with int8 weights (dtype s8) at the same widths.
{how}
[suite]
name = "{name}"
description = "{title} layer: prefill {p0}/{p1} tokens, decode batch {b0}/{b1} with {kv0}/{kv1}-token KV caches, f32, bf16 and fp8 projections, int8 linear layers{desc_tail}."

[defaults]
backends = ["naive", "onednn", "cuda"]
dtypes = ["f32", "bf16"]
{settings}
"""
DEFAULT_HOW = """# Sized for a 2-core machine (suites/README.md, "Model suites", has the run
# times): one repetition of few samples, and on the naive backend only the
# batch-1 decode cases, the streaming ops and 128-token attention (a naive
# prefill matmul takes minutes); the prefill and batch-8 matmuls and the
# 2,048-token attention run on onednn/cuda. {name}-full.toml runs everything
# on every backend with repeated samples and a 1-hour timeout per call."""
FULL_HOW = """# The full variant: every case on every backend (naive included: its
# 2,048-token prefill matmuls take minutes each), three repetitions."""
DEFAULT_SETTINGS = "warmup = 0\nmin_time = 0.05\nmax_time = 0.5\nmin_samples = 1\nrepetitions = 1"
FULL_SETTINGS = "warmup = 1\nmin_time = 0.2\nmax_time = 5.0\nmin_samples = 3\nrepetitions = 3\ntimeout = 3600"


def write(root):
    for key, m in MODELS.items():
        title, d, f, h, kvh, dh, theta, layers, _, _, source = m
        for full in (False, True):
            name = key + ("-full" if full else "")
            text = HEADER.format(title=title, source=source, d=d, f=f, h=h, kvh=kvh, dh=dh, theta=theta,
                                 layers=layers, p0=PREFILL[0], p1=PREFILL[1], b0=DECODE_BATCH[0],
                                 b1=DECODE_BATCH[1], kv0=KV_CACHE[0], kv1=KV_CACHE[1],
                                 how=(FULL_HOW if full else DEFAULT_HOW.format(name=key)), name=name,
                                 desc_tail=" (full: every backend, 3 repetitions)" if full else "",
                                 settings=FULL_SETTINGS if full else DEFAULT_SETTINGS)
            text += "\n" + "\n".join(layer_cases(key, m, full))
            (root / f"{name}.toml").write_text(text)


if __name__ == "__main__":
    write(pathlib.Path("suites/models"))
