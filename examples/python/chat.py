#!/usr/bin/env python3
"""A small chat in the terminal: each line you type is a user turn, the answer streams back.

    python examples/python/chat.py [--model PATH] [--system TEXT]
    echo "What is the capital of France?" | python examples/python/chat.py

Ctrl-C stops an answer; Ctrl-D (or the end of piped input) ends the chat.
"""
import argparse
import sys

import minnow


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="models/SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--system", help="a system message")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--temp", type=float, default=0.7, help="temperature; 0 = greedy")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    try:
        model = minnow.Model(args.model)
    except minnow.MinnowError as e:
        print(f"chat.py: {e}", file=sys.stderr)
        return 1
    interactive = sys.stdin.isatty()
    messages = [{"role": "system", "content": args.system}] if args.system else []
    with model:
        while True:
            if interactive:
                print("> ", end="", flush=True)
            try:
                line = sys.stdin.readline()
            except KeyboardInterrupt:
                break
            if not line:
                break
            if not line.strip():
                continue
            messages.append({"role": "user", "content": line.strip()})
            reply = []
            try:
                # The model keeps the conversation's KV cache: each turn evaluates only what is new.
                for piece in model.chat(messages, max_tokens=args.max_tokens, temperature=args.temp,
                                        seed=args.seed, stream=True):
                    reply.append(piece)
                    print(piece, end="", flush=True)
            except KeyboardInterrupt:
                print(" [stopped]", end="")
            print()
            messages.append({"role": "assistant", "content": "".join(reply)})
    if interactive:
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
