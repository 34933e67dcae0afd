#!/usr/bin/env python3
"""Random-weight whisper.cpp models with published shapes, for bench/gpu.sh on a machine
without bun: a port of scripts/test-models/whisper-ggml.ts (the legacy ggml format, f16
tensors as whisper.cpp's published ggml-*.bin files). Speed depends on shapes and types, not
on the weights' values; random weights give random words. numpy only.

Usage: make_model.py OUT.bin base.en|small [tokens_per_window] [seed]
"""
import struct
import sys

import numpy as np

ENGLISH, MULTILINGUAL = 51864, 51865
FIXED = dict(n_audio_ctx=1500, n_text_ctx=448, n_mels=80)
SHAPES = {
    "base.en": dict(n_vocab=ENGLISH, **FIXED, n_audio_state=512, n_audio_head=8, n_audio_layer=6, n_text_state=512, n_text_head=8, n_text_layer=6),
    "small": dict(n_vocab=MULTILINGUAL, **FIXED, n_audio_state=768, n_audio_head=12, n_audio_layer=12, n_text_state=768, n_text_head=12, n_text_layer=12),
}
F32, F16 = 0, 1
N_FFT = 201


def tensors(h):
    """The tensors in the order OpenAI's state dict lists them (convert-pt-to-ggml.py), f16 matrices and conv weights, f32 vectors."""
    out = []
    mat = lambda name, ne: out.append((name, ne, F16))
    vec = lambda name, ne: out.append((name, ne, F32))

    def block(p, n, cross):
        def attn(a):
            mat(f"{a}.query.weight", [n, n]); vec(f"{a}.query.bias", [n])
            mat(f"{a}.key.weight", [n, n])
            mat(f"{a}.value.weight", [n, n]); vec(f"{a}.value.bias", [n])
            mat(f"{a}.out.weight", [n, n]); vec(f"{a}.out.bias", [n])
        attn(f"{p}.attn"); vec(f"{p}.attn_ln.weight", [n]); vec(f"{p}.attn_ln.bias", [n])
        if cross:
            attn(f"{p}.cross_attn"); vec(f"{p}.cross_attn_ln.weight", [n]); vec(f"{p}.cross_attn_ln.bias", [n])
        mat(f"{p}.mlp.0.weight", [n, 4 * n]); vec(f"{p}.mlp.0.bias", [4 * n])
        mat(f"{p}.mlp.2.weight", [4 * n, n]); vec(f"{p}.mlp.2.bias", [n])
        vec(f"{p}.mlp_ln.weight", [n]); vec(f"{p}.mlp_ln.bias", [n])

    a, t = h["n_audio_state"], h["n_text_state"]
    vec("encoder.positional_embedding", [a, h["n_audio_ctx"]])
    out.append(("encoder.conv1.weight", [3, h["n_mels"], a], F16)); vec("encoder.conv1.bias", [1, a])
    out.append(("encoder.conv2.weight", [3, a, a], F16)); vec("encoder.conv2.bias", [1, a])
    for i in range(h["n_audio_layer"]):
        block(f"encoder.blocks.{i}", a, False)
    vec("encoder.ln_post.weight", [a]); vec("encoder.ln_post.bias", [a])
    vec("decoder.positional_embedding", [t, h["n_text_ctx"]])
    mat("decoder.token_embedding.weight", [t, h["n_vocab"]])
    for i in range(h["n_text_layer"]):
        block(f"decoder.blocks.{i}", t, True)
    vec("decoder.ln.weight", [t]); vec("decoder.ln.bias", [t])
    return out


def main():
    path, shape = sys.argv[1], sys.argv[2]
    tokens_per_window = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    rng = np.random.default_rng(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    h = dict(SHAPES[shape])
    if tokens_per_window:
        # whisper.cpp decodes at most n_text_ctx / 2 - 4 tokens a window: random weights never stop sooner.
        h["n_text_ctx"] = 2 * (tokens_per_window + 4)
    i32 = lambda *v: struct.pack(f"<{len(v)}i", *v)
    with open(path, "wb") as f:
        f.write(i32(0x67676D6C))
        f.write(i32(h["n_vocab"], h["n_audio_ctx"], h["n_audio_state"], h["n_audio_head"], h["n_audio_layer"], h["n_text_ctx"],
                    h["n_text_state"], h["n_text_head"], h["n_text_layer"], h["n_mels"], 1))
        f.write(i32(h["n_mels"], N_FFT))
        f.write((rng.random(h["n_mels"] * N_FFT, dtype=np.float32) * 0.01).tobytes())
        # Text tokens below end-of-text; id 220 must be the single space (whisper.cpp looks it up).
        text_tokens = 50257 if h["n_vocab"] == MULTILINGUAL else 50256
        f.write(i32(text_tokens))
        for i in range(text_tokens):
            word = b" " if i == 220 else f" w{np.base_repr(i, 36).lower()}".encode()
            f.write(i32(len(word)) + word)
        for name, ne, typ in tensors(h):
            count = int(np.prod(ne))
            base = 1.0 if name.endswith("ln.weight") or name.endswith("ln_post.weight") else 0.0
            data = base + (rng.random(count, dtype=np.float32) - 0.5) * 0.2
            f.write(i32(len(ne), len(name.encode()), typ, *ne) + name.encode())
            f.write(data.astype(np.float16 if typ == F16 else np.float32).tobytes())
    print(f"wrote {path} ({shape}, f16)")


if __name__ == "__main__":
    main()
