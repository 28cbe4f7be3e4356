#!/usr/bin/python3
"""More sequence/audio exports with dynamic axes (torch 1.13): states as inputs, STFT front end,
ConvTranspose1d upsampler, 1-D interpolate, TransformerDecoder, relative-position bias, sinusoidal PE,
list-style dynamic_axes. Files: $OUT/models2/NAME_opN_{dyn,static}.onnx"""
import math, os
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
OUT = os.environ.get("OUT", "/tmp/seq-exports") + "/models2"; os.makedirs(OUT, exist_ok=True)

class LSTMState(nn.Module):
    def __init__(s):
        super().__init__(); s.rnn = nn.LSTM(32, 48, num_layers=2, batch_first=True)
    def forward(s, x, h0, c0):
        y, (h, c) = s.rnn(x, (h0, c0)); return y, h, c

class STFTNet(nn.Module):
    def __init__(s, n_fft=256, hop=128):
        super().__init__(); s.n_fft, s.hop = n_fft, hop
        s.register_buffer("win", torch.hann_window(n_fft))
        s.conv = nn.Conv1d(n_fft // 2 + 1, 32, 3, padding=1); s.fc = nn.Linear(32, 10)
    def forward(s, wav):  # B, S
        spec = torch.stft(wav, s.n_fft, s.hop, window=s.win, center=False, return_complex=False)  # B, F, T, 2
        mag = (spec ** 2).sum(-1)
        y = F.relu(s.conv(torch.log(mag + 1e-6)))
        return s.fc(y.mean(-1))

class Upsampler(nn.Module):  # vocoder-like
    def __init__(s):
        super().__init__()
        s.pre = nn.Conv1d(40, 64, 7, padding=3)
        s.up1 = nn.ConvTranspose1d(64, 32, 16, stride=8, padding=4)
        s.up2 = nn.ConvTranspose1d(32, 16, 8, stride=4, padding=2)
        s.post = nn.Conv1d(16, 1, 7, padding=3)
    def forward(s, mel):
        x = F.leaky_relu(s.pre(mel), 0.1); x = F.leaky_relu(s.up1(x), 0.1); x = F.leaky_relu(s.up2(x), 0.1)
        return torch.tanh(s.post(x))

class Interp(nn.Module):
    def __init__(s):
        super().__init__(); s.c1 = nn.Conv1d(40, 32, 3, padding=1); s.c2 = nn.Conv1d(32, 8, 3, padding=1)
    def forward(s, x):
        y = F.relu(s.c1(x)); y = F.interpolate(y, scale_factor=2.0, mode="nearest"); y = s.c2(y)
        return F.avg_pool1d(y, 4)

class Decoder(nn.Module):
    def __init__(s):
        super().__init__(); l = nn.TransformerDecoderLayer(64, 4, 128, batch_first=True); s.dec = nn.TransformerDecoder(l, 2)
    def forward(s, tgt, memory):
        T = tgt.shape[1]
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        return s.dec(tgt, memory, tgt_mask=mask)

class RelPos(nn.Module):
    def __init__(s, d=64, h=4, maxd=32):
        super().__init__(); s.h, s.maxd = h, maxd; s.qkv = nn.Linear(d, 3 * d); s.bias = nn.Embedding(2 * maxd + 1, h); s.o = nn.Linear(d, d)
    def forward(s, x):
        B, T, C = x.shape
        q, k, v = s.qkv(x).reshape(B, T, 3, s.h, C // s.h).permute(2, 0, 3, 1, 4)
        pos = torch.arange(T)
        rel = (pos[None, :] - pos[:, None]).clamp(-s.maxd, s.maxd) + s.maxd
        bias = s.bias(rel).permute(2, 0, 1)  # h, T, T
        att = (q @ k.transpose(-1, -2)) / math.sqrt(C // s.h) + bias
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C)
        return s.o(y)

class SinPE(nn.Module):
    def __init__(s, d=64):
        super().__init__(); s.d = d; s.l = nn.Linear(d, d)
    def forward(s, x):
        T = x.shape[1]
        pos = torch.arange(T, dtype=torch.float32).unsqueeze(1)
        div = torch.exp(torch.arange(0, s.d, 2, dtype=torch.float32) * (-math.log(10000.0) / s.d))
        pe = torch.cat([torch.sin(pos * div), torch.cos(pos * div)], dim=1)
        return s.l(x + pe.unsqueeze(0))

class HalfSeq(nn.Module):  # shape arithmetic on the sequence length: frame stacking (reshape B,T/2,2C)
    def __init__(s):
        super().__init__(); s.l = nn.Linear(128, 64)
    def forward(s, x):
        B, T, C = x.shape
        return s.l(x[:, : T // 2 * 2].reshape(B, T // 2, 2 * C))

B, T = 2, 20
def specs():
    h0 = torch.zeros(2, B, 48)
    yield "lstm_state", LSTMState(), (torch.randn(B, T, 32), h0, h0.clone()), ["x", "h0", "c0"], ["y", "h", "c"], \
        {"x": {0: "batch", 1: "seq"}, "h0": {1: "batch"}, "c0": {1: "batch"}, "y": {0: "batch", 1: "seq"}, "h": {1: "batch"}, "c": {1: "batch"}}
    yield "stft", STFTNet(), (torch.randn(B, 4096),), ["wav"], ["y"], {"wav": {0: "batch", 1: "samples"}, "y": {0: "batch"}}
    yield "upsampler", Upsampler(), (torch.randn(B, 40, T),), ["mel"], ["wav"], {"mel": {0: "batch", 2: "frames"}, "wav": {0: "batch", 2: "samples"}}
    yield "interp", Interp(), (torch.randn(B, 40, 32),), ["x"], ["y"], {"x": {0: "batch", 2: "frames"}, "y": {0: "batch", 2: "out"}}
    yield "decoder", Decoder(), (torch.randn(B, T, 64), torch.randn(B, T + 7, 64)), ["tgt", "memory"], ["y"], \
        {"tgt": {0: "batch", 1: "tgt_len"}, "memory": {0: "batch", 1: "src_len"}, "y": {0: "batch", 1: "tgt_len"}}
    yield "relpos", RelPos(), (torch.randn(B, T, 64),), ["x"], ["y"], {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    yield "sinpe", SinPE(), (torch.randn(B, T, 64),), ["x"], ["y"], {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    yield "halfseq", HalfSeq(), (torch.randn(B, T, 64),), ["x"], ["y"], {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "half"}}
    yield "gru_listaxes_sf", nn.GRU(32, 48), (torch.randn(T, B, 32),), ["x"], ["y", "h"], {"x": [0, 1], "y": [0, 1], "h": [1]}

ok, bad = [], []
for name, m, inputs, inames, onames, dyn in specs():
    m.eval()
    for opset in (13, 14, 17):
        for dynamic in (True, False):
            fn = f"{OUT}/{name}_op{opset}_{'dyn' if dynamic else 'static'}.onnx"
            try:
                torch.onnx.export(m, inputs, fn, opset_version=opset, input_names=inames, output_names=onames,
                                  dynamic_axes=dyn if dynamic else None, do_constant_folding=True)
                ok.append(fn)
            except Exception as e:
                bad.append((fn, repr(e)[:160]))
print("exported", len(ok))
for b in bad: print("FAILED", *b)
