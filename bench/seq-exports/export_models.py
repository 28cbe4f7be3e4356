#!/usr/bin/python3
"""Export small random sequence/audio models with dynamic axes (torch 1.13)."""
import math, os, sys, traceback
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
OUT = os.environ.get("OUT", "/tmp/seq-exports") + "/models"
os.makedirs(OUT, exist_ok=True)

class LSTMNet(nn.Module):
    def __init__(s, layers, bidi, bf, cell=nn.LSTM):
        super().__init__(); s.rnn = cell(32, 48, num_layers=layers, bidirectional=bidi, batch_first=bf)
        s.fc = nn.Linear(48 * (2 if bidi else 1), 10)
    def forward(s, x):
        y, _ = s.rnn(x); return s.fc(y)

class TEnc(nn.Module):
    def __init__(s, layers=3, mask=False):
        super().__init__(); s.mask = mask
        l = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)
        s.enc = nn.TransformerEncoder(l, layers, enable_nested_tensor=False)
    def forward(s, x, pad=None):
        return s.enc(x, src_key_padding_mask=pad) if s.mask else s.enc(x)

class GPTBlock(nn.Module):
    def __init__(s, d=64, h=4):
        super().__init__(); s.h = h; s.d = d
        s.ln1 = nn.LayerNorm(d); s.qkv = nn.Linear(d, 3 * d); s.proj = nn.Linear(d, d)
        s.ln2 = nn.LayerNorm(d); s.fc1 = nn.Linear(d, 4 * d); s.fc2 = nn.Linear(4 * d, d)
    def forward(s, x):
        B, T, C = x.shape
        q, k, v = s.qkv(s.ln1(x)).split(C, dim=2)
        q = q.view(B, T, s.h, C // s.h).transpose(1, 2)
        k = k.view(B, T, s.h, C // s.h).transpose(1, 2)
        v = v.view(B, T, s.h, C // s.h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // s.h))
        causal = torch.triu(torch.ones(T, T, device=x.device), diagonal=1).bool()
        att = att.masked_fill(causal, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + s.proj(y)
        return x + s.fc2(F.gelu(s.fc1(s.ln2(x))))

class GPT(nn.Module):
    def __init__(s, vocab=500, d=64, n=2, maxlen=256):
        super().__init__(); s.tok = nn.Embedding(vocab, d); s.pos = nn.Embedding(maxlen, d)
        s.blocks = nn.ModuleList([GPTBlock(d) for _ in range(n)]); s.ln = nn.LayerNorm(d); s.head = nn.Linear(d, vocab)
    def forward(s, ids):
        T = ids.shape[1]
        pos = torch.arange(0, T, dtype=torch.long, device=ids.device).unsqueeze(0)
        x = s.tok(ids) + s.pos(pos)
        for b in s.blocks: x = b(x)
        return s.head(s.ln(x))

class MHA(nn.Module):
    def __init__(s, bf=True):
        super().__init__(); s.m = nn.MultiheadAttention(64, 4, batch_first=bf)
    def forward(s, q, k, v):
        y, w = s.m(q, k, v); return y, w

class TextCls(nn.Module):
    def __init__(s, vocab=1000, d=64, maxlen=512):
        super().__init__(); s.emb = nn.Embedding(vocab, d); s.pos = nn.Parameter(torch.randn(1, maxlen, d))
        l = nn.TransformerEncoderLayer(d, 4, 128, batch_first=True)
        s.enc = nn.TransformerEncoder(l, 2, enable_nested_tensor=False); s.fc = nn.Linear(d, 5)
    def forward(s, ids, mask):
        x = s.emb(ids) + s.pos[:, : ids.shape[1]]
        x = s.enc(x, src_key_padding_mask=mask == 0)
        m = mask.unsqueeze(-1).float()
        x = (x * m).sum(1) / m.sum(1).clamp(min=1.0)
        return s.fc(x)

class M5(nn.Module):
    def __init__(s, n_in=1, n_out=35, stride=16, ch=32):
        super().__init__()
        s.conv1 = nn.Conv1d(n_in, ch, 80, stride=stride); s.bn1 = nn.BatchNorm1d(ch); s.pool1 = nn.MaxPool1d(4)
        s.conv2 = nn.Conv1d(ch, ch, 3); s.bn2 = nn.BatchNorm1d(ch); s.pool2 = nn.MaxPool1d(4)
        s.conv3 = nn.Conv1d(ch, 2 * ch, 3); s.bn3 = nn.BatchNorm1d(2 * ch); s.pool3 = nn.MaxPool1d(4)
        s.conv4 = nn.Conv1d(2 * ch, 2 * ch, 3); s.bn4 = nn.BatchNorm1d(2 * ch); s.pool4 = nn.MaxPool1d(4)
        s.fc1 = nn.Linear(2 * ch, n_out)
    def forward(s, x):
        x = s.pool1(F.relu(s.bn1(s.conv1(x))))
        x = s.pool2(F.relu(s.bn2(s.conv2(x))))
        x = s.pool3(F.relu(s.bn3(s.conv3(x))))
        x = s.pool4(F.relu(s.bn4(s.conv4(x))))
        x = F.adaptive_avg_pool1d(x, 1).permute(0, 2, 1)
        return F.log_softmax(s.fc1(x), dim=2)

class Wav2Letter(nn.Module):
    def __init__(s, n_mels=40, n_cls=29):
        super().__init__()
        s.net = nn.Sequential(
            nn.Conv1d(n_mels, 64, 11, stride=2, padding=5), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Conv1d(64, 64, 7, padding=3), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Conv1d(64, 64, 7, padding=3), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Conv1d(64, 128, 15, padding=7, dilation=1), nn.BatchNorm1d(128), nn.ReLU(),
            nn.Conv1d(128, 128, 1), nn.ReLU(), nn.Conv1d(128, n_cls, 1))
    def forward(s, x):
        return F.log_softmax(s.net(x), dim=1)

class ConformerBlock(nn.Module):
    def __init__(s, d=64, h=4, k=15):
        super().__init__()
        s.ff1 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        s.ln_att = nn.LayerNorm(d); s.att = nn.MultiheadAttention(d, h, batch_first=True)
        s.ln_conv = nn.LayerNorm(d); s.pw1 = nn.Conv1d(d, 2 * d, 1); s.dw = nn.Conv1d(d, d, k, padding=k // 2, groups=d)
        s.bn = nn.BatchNorm1d(d); s.pw2 = nn.Conv1d(d, d, 1)
        s.ff2 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d)); s.ln = nn.LayerNorm(d)
    def forward(s, x):
        x = x + 0.5 * s.ff1(x)
        y = s.ln_att(x); x = x + s.att(y, y, y, need_weights=False)[0]
        y = s.ln_conv(x).transpose(1, 2)
        y = F.glu(s.pw1(y), dim=1); y = F.silu(s.bn(s.dw(y))); y = s.pw2(y).transpose(1, 2)
        x = x + y
        x = x + 0.5 * s.ff2(x)
        return s.ln(x)

class Conformer(nn.Module):
    def __init__(s, n_mels=40, d=64):
        super().__init__(); s.sub = nn.Conv1d(n_mels, d, 3, stride=2, padding=1); s.blocks = nn.Sequential(ConformerBlock(d), ConformerBlock(d)); s.out = nn.Linear(d, 29)
    def forward(s, x):  # x: B, n_mels, T
        x = s.sub(x).transpose(1, 2)
        return s.out(s.blocks(x))

def specs(B=2, T=20, S=8000):
    # name, model, inputs(tuple), input_names, output_names, dynamic_axes
    for layers in (1, 2):
        for bidi in (False, True):
            for bf in (True, False):
                for cell, cn in ((nn.LSTM, "lstm"), (nn.GRU, "gru")):
                    x = torch.randn(B, T, 32) if bf else torch.randn(T, B, 32)
                    dyn = {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}} if bf else \
                          {"x": {0: "seq", 1: "batch"}, "y": {0: "seq", 1: "batch"}}
                    yield f"{cn}_l{layers}_{'bi' if bidi else 'uni'}_{'bf' if bf else 'sf'}", LSTMNet(layers, bidi, bf, cell), (x,), ["x"], ["y"], dyn
    yield "tenc", TEnc(3, False), (torch.randn(B, T, 64),), ["x"], ["y"], {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    pad = torch.zeros(B, T, dtype=torch.bool); pad[0, -5:] = True
    yield "tenc_mask", TEnc(3, True), (torch.randn(B, T, 64), pad), ["x", "pad"], ["y"], {"x": {0: "batch", 1: "seq"}, "pad": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    yield "gpt", GPT(), (torch.randint(0, 500, (B, T)),), ["ids"], ["logits"], {"ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    yield "gpt_block", GPTBlock(), (torch.randn(B, T, 64),), ["x"], ["y"], {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    yield "mha", MHA(True), (torch.randn(B, T, 64), torch.randn(B, T + 4, 64), torch.randn(B, T + 4, 64)), ["q", "k", "v"], ["y", "w"], \
        {"q": {0: "batch", 1: "tq"}, "k": {0: "batch", 1: "tk"}, "v": {0: "batch", 1: "tk"}, "y": {0: "batch", 1: "tq"}, "w": {0: "batch", 1: "tq", 2: "tk"}}
    yield "mha_sf", MHA(False), (torch.randn(T, B, 64), torch.randn(T, B, 64), torch.randn(T, B, 64)), ["q", "k", "v"], ["y", "w"], \
        {"q": {0: "seq", 1: "batch"}, "k": {0: "seq", 1: "batch"}, "v": {0: "seq", 1: "batch"}, "y": {0: "seq", 1: "batch"}, "w": {0: "batch", 1: "seq", 2: "seq"}}
    ids = torch.randint(0, 1000, (B, T)); mask = torch.ones(B, T, dtype=torch.long); mask[B - 1, -3:] = 0
    yield "textcls", TextCls(), (ids, mask), ["input_ids", "attention_mask"], ["logits"], {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}, "logits": {0: "batch"}}
    yield "m5", M5(), (torch.randn(B, 1, S),), ["wave"], ["logp"], {"wave": {0: "batch", 2: "samples"}, "logp": {0: "batch"}}
    yield "wav2letter", Wav2Letter(), (torch.randn(B, 40, T),), ["mel"], ["logp"], {"mel": {0: "batch", 2: "frames"}, "logp": {0: "batch", 2: "frames_out"}}
    yield "conformer", Conformer(), (torch.randn(B, 40, T),), ["mel"], ["logits"], {"mel": {0: "batch", 2: "frames"}, "logits": {0: "batch", 1: "frames_out"}}

REF_SIZES = [(1, 16, 8000), (4, 128, 16000)]
ok, bad = [], []
def export(m, inputs, fn, opset, inames, onames, dyn):
    try:
        # grad enabled on purpose: torch 1.13's fast path (aten::_transformer_encoder_layer_fwd,
        # aten::_native_multi_head_attention) is taken under no_grad and has no ONNX symbolic
        torch.onnx.export(m, inputs, fn, opset_version=opset, input_names=inames, output_names=onames,
                          dynamic_axes=dyn, do_constant_folding=True)
        ok.append(fn)
    except Exception as e:
        bad.append((fn, repr(e)[:150]))
only = sys.argv[1:]
models = {}
for name, m, inputs, inames, onames, dyn in specs():
    if only and name not in only: continue
    m.eval(); models[name] = m
    for opset in (13, 14, 17):
        for dynamic in (True, False):
            export(m, inputs, f"{OUT}/{name}_op{opset}_{'dyn' if dynamic else 'static'}.onnx", opset, inames, onames, dyn if dynamic else None)
# static references at the probe sizes, same weights/module: shapes to compare ordo against
os.makedirs(OUT + "/ref", exist_ok=True)
for (b, t, smp) in REF_SIZES:
    for name, _m, inputs, inames, onames, dyn in specs(b, t, smp):
        if name not in models: continue
        for opset in (13, 14, 17):
            export(models[name], inputs, f"{OUT}/ref/{name}_op{opset}_b{b}_t{t}.onnx", opset, inames, onames, None)
print("exported", len(ok))
for b in bad: print("FAILED", *b)
