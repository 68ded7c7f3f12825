# SPDX-License-Identifier: MIT
"""flashcl as a Hugging Face transformers attention function.

A small Llama model with random weights (nothing downloaded) runs once with transformers' eager attention
and once with flashcl's (registered as "opencl": transformers looks a hub kernel up for attention names
with "flash" in them, and passes masks to a function only when its name is registered with a mask
interface too). The logits must agree, for a left-padded prefill batch and for KV-cache decode steps.

    python3 python/examples/transformers_llama.py      # needs torch and transformers (>= 4.53)

Exit status 0 when every comparison holds, 1 when one does not, 77 without torch or transformers.
"""
import sys

import numpy as np

try:
    import torch
    from transformers import AttentionInterface, LlamaConfig, LlamaForCausalLM
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
except ImportError as ex:
    print(f"skipped: {ex}")
    sys.exit(77)

import flashcl


def opencl_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """transformers' attention signature: query (B, Hq, Sq, D), key and value (B, Hkv, Skv, D); returns
    (B, Sq, Hq, D) and no weights. flashcl takes (B, S, H, D) and GQA as it is, and strided views as they
    are: the transposes and the mask's slice reach it without a copy."""
    q, k, v = (t.transpose(1, 2).float().cpu().numpy() for t in (query, key, value))
    if attention_mask is not None:  # sdpa_mask's boolean (B, 1, Sq, Skv), True: attend
        mask = attention_mask.cpu().numpy()
        mask = mask if mask.dtype == np.bool_ else mask.astype(np.float32)
        out = flashcl.attention(q, k, v, scale=scaling, mask=mask[:, :, :, : k.shape[1]])
    else:  # no mask: PyTorch's is_causal (top-left) for more than one query, none for a decode step
        out = flashcl.attention(q, k, v, scale=scaling, causal=q.shape[1] > 1, alignment="top-left")
    return torch.from_numpy(out).to(query.dtype).to(query.device), None


AttentionInterface.register("opencl", opencl_attention)
AttentionMaskInterface.register("opencl", sdpa_mask)


def use(model, impl):
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(impl)
    else:
        model.config._attn_implementation = impl


def main():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                         num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=512)
    model = LlamaForCausalLM(config).eval()
    ids = torch.randint(0, config.vocab_size, (2, 16))
    pad = torch.ones_like(ids)
    pad[1, :5] = 0  # the second sequence left-padded by 5
    ok = True
    with torch.no_grad():
        logits, steps = {}, {}
        for impl in ("eager", "opencl"):
            use(model, impl)
            out = model(input_ids=ids, attention_mask=pad, use_cache=True)
            logits[impl] = out.logits
            cache, mask, nxt, seq = out.past_key_values, pad, out.logits[:, -1:].argmax(-1), []
            for _ in range(4):  # decode steps over the cache
                mask = torch.cat([mask, torch.ones_like(nxt)], dim=1)
                step = model(input_ids=nxt, attention_mask=mask, past_key_values=cache, use_cache=True)
                cache, nxt = step.past_key_values, step.logits[:, -1:].argmax(-1)
                seq.append(step.logits)
            steps[impl] = torch.cat(seq, dim=1)
        valid = pad.bool()  # (padded positions' logits are not compared: no token is predicted there)
        d_prefill = (logits["eager"] - logits["opencl"]).abs()[valid].max().item()
        d_decode = (steps["eager"] - steps["opencl"]).abs().max().item()
    for name, d in (("prefill (left-padded batch)", d_prefill), ("4 KV-cache decode steps", d_decode)):
        good = d < 1e-4
        ok &= good
        print(f"{name}: max |eager - flashcl| over the logits = {d:.2e} {'ok' if good else 'TOO LARGE'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
