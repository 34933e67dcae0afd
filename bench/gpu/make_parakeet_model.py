#!/usr/bin/env python3
"""Random-weight Parakeet TDT models for bench/gpu.sh on a machine without bun: a port of
scripts/test-models/parakeet-ggml.ts (whisper.cpp's ggml Parakeet format, f16 as
convert-parakeet-to-ggml.py writes it). The layout, shapes and types are the TypeScript
writer's (test/model-files/parakeet-python-writer.test.ts compares them); the random values
differ. The joint bias is steered as there (blank never, the longest duration always: one
token every 4 encoder frames), so the decoder's share of the time is a conversation's.
numpy only.

Usage: make_parakeet_model.py OUT.bin [tdt-0.6b-v3|tiny] [seed]
       make_parakeet_model.py --describe SHAPE   (the shape and tensor table as JSON, for the test)
"""
import json
import re
import struct
import sys

import numpy as np

TDT_DURATIONS = [0, 1, 2, 3, 4]
WINDOW_PUBLISHED = 400
F32, F16 = 0, 1
# The header's order (src/model-files/parakeet-header.ts, PARAKEET_HPARAM_ORDER); ftype 1 is f16.
SHAPES = {
    "tiny": dict(n_vocab=32, n_audio_ctx=3200, n_audio_state=8, n_audio_head=2, n_audio_layer=1, n_mels=16, n_fft=64,
                 subsampling_factor=8, n_subsampling_channels=4, n_conv_kernel=3, n_pred_dim=8, n_pred_layers=1,
                 n_tdt_durations=len(TDT_DURATIONS), n_max_tokens=10),
    "tdt-0.6b-v3": dict(n_vocab=8192, n_audio_ctx=5000, n_audio_state=1024, n_audio_head=8, n_audio_layer=24, n_mels=128, n_fft=512,
                        subsampling_factor=8, n_subsampling_channels=256, n_conv_kernel=9, n_pred_dim=640, n_pred_layers=2,
                        n_tdt_durations=len(TDT_DURATIONS), n_max_tokens=10),
}


def tensors(h):
    """NeMo's state-dict order with parakeet.cpp's declared types (ne innermost first): matrices f16, the rest f32."""
    n, c, p = h["n_audio_state"], h["n_subsampling_channels"], h["n_pred_dim"]
    out = []
    t = lambda name, ne, typ=F32: out.append((name, ne, typ))
    for i, ne in [(0, [3, 3, 1, c]), (2, [3, 3, 1, c]), (3, [1, 1, c, c]), (5, [3, 3, 1, c]), (6, [1, 1, c, c])]:
        t(f"encoder.pre_encode.conv.{i}.weight", ne); t(f"encoder.pre_encode.conv.{i}.bias", [1, 1, c, 1])
    t("encoder.pre_encode.out.weight", [h["n_mels"] // h["subsampling_factor"] * c, n], F16)
    t("encoder.pre_encode.out.bias", [n])
    for i in range(h["n_audio_layer"]):
        l = f"encoder.layers.{i}"
        norm = lambda name: (t(f"{l}.{name}.weight", [n]), t(f"{l}.{name}.bias", [n]))
        ff = lambda k: (t(f"{l}.feed_forward{k}.linear1.weight", [n, 4 * n], F16), t(f"{l}.feed_forward{k}.linear2.weight", [4 * n, n], F16))
        norm("norm_feed_forward1"); ff(1); norm("norm_conv")
        t(f"{l}.conv.pointwise_conv1.weight", [n, 2 * n], F16)
        t(f"{l}.conv.depthwise_conv.weight", [h["n_conv_kernel"], n])
        for x in ["weight", "bias", "running_mean", "running_var"]:
            t(f"{l}.conv.batch_norm.{x}", [n])
        t(f"{l}.conv.batch_norm.num_batches_tracked", [])
        t(f"{l}.conv.pointwise_conv2.weight", [n, n], F16)
        norm("norm_self_att")
        t(f"{l}.self_attn.pos_bias_u", [n // h["n_audio_head"], h["n_audio_head"]])
        t(f"{l}.self_attn.pos_bias_v", [n // h["n_audio_head"], h["n_audio_head"]])
        for x in ["q", "k", "v", "out", "pos"]:
            t(f"{l}.self_attn.linear_{x}.weight", [n, n], F16)
        norm("norm_feed_forward2"); ff(2); norm("norm_out")
    t("decoder.prediction.embed.weight", [p, h["n_vocab"] + 1], F16)
    for i in range(h["n_pred_layers"]):
        t(f"decoder.prediction.dec_rnn.lstm.weight_ih_l{i}", [p, 4 * p], F16)
        t(f"decoder.prediction.dec_rnn.lstm.weight_hh_l{i}", [p, 4 * p], F16)
        t(f"decoder.prediction.dec_rnn.lstm.bias_h_l{i}", [4 * p])
    t("joint.pred.weight", [p, p], F16); t("joint.pred.bias", [p])
    t("joint.enc.weight", [n, p], F16); t("joint.enc.bias", [p])
    t("joint.joint_net.2.weight", [p, h["n_vocab"] + h["n_tdt_durations"] + 1], F16)
    t("joint.joint_net.2.bias", [h["n_vocab"] + h["n_tdt_durations"] + 1])
    return out


def piece(i):
    """The stand-in vocabulary: most pieces start a word (SentencePiece's mark), some continue one, two are punctuation."""
    if i < 3:
        return ["<unk>", ".", ","][i]
    return f"ian{np.base_repr(i, 36).lower()}" if i % 3 == 0 else f"\u2581w{np.base_repr(i, 36).lower()}"


def main():
    if sys.argv[1] == "--describe":
        h = SHAPES[sys.argv[2]]
        return print(json.dumps({"hparams": h, "tensors": [{"name": n, "ne": ne, "type": typ} for n, ne, typ in tensors(h)]}))
    path = sys.argv[1]
    shape = sys.argv[2] if len(sys.argv) > 2 else "tdt-0.6b-v3"
    rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    h = SHAPES[shape]
    i32 = lambda *v: struct.pack(f"<{len(v)}i", *v)
    with open(path, "wb") as f:
        f.write(i32(0x67676D6C))
        f.write(i32(h["n_vocab"], h["n_audio_ctx"], h["n_audio_state"], h["n_audio_head"], h["n_audio_layer"], h["n_mels"], 1,
                    h["n_fft"], h["subsampling_factor"], h["n_subsampling_channels"], h["n_conv_kernel"], h["n_pred_dim"],
                    h["n_pred_layers"], h["n_tdt_durations"], h["n_max_tokens"]))
        bins = h["n_fft"] // 2 + 1
        f.write(i32(h["n_mels"], bins))
        f.write((rng.random(h["n_mels"] * bins, dtype=np.float32) * 0.01).tobytes())
        window = min(WINDOW_PUBLISHED, h["n_fft"])
        f.write(i32(window))
        f.write((0.5 - 0.5 * np.cos(2 * np.pi * np.arange(window) / window)).astype(np.float32).tobytes())  # Hann, as NeMo's
        f.write(struct.pack(f"<{len(TDT_DURATIONS)}I", *TDT_DURATIONS))
        f.write(i32(h["n_vocab"]))
        for i in range(h["n_vocab"]):
            text = piece(i).encode()
            f.write(i32(len(text)) + text)
        for name, ne, typ in tensors(h):
            count = int(np.prod(ne))
            one = 1.0 if re.search(r"norm.*\.weight$|running_var$", name) else 0.0
            data = one + (rng.random(count, dtype=np.float32) - 0.5) * 0.2
            if name.endswith("num_batches_tracked"):
                data[:] = 0
            if name == "joint.joint_net.2.bias":
                data[h["n_vocab"]] = -20  # blank: never the argmax
                data[h["n_vocab"] + h["n_tdt_durations"]] = 20  # the longest duration
            f.write(i32(len(ne), len(name.encode()), typ, *ne) + name.encode())
            f.write(data.astype(np.float16 if typ == F16 else np.float32).tobytes())
    print(f"wrote {path} (parakeet {shape}, f16)")


if __name__ == "__main__":
    main()
