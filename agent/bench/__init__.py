"""The brain bench, in a room of its own: the runner (`rlpilot bench brain`), the Prime API stand-in
its tools reach, and the scenarios it plays. The chat agent's core never imports it."""
